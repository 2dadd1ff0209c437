# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""execution-environment.yml and the CI examples: what can be checked without a container or a CI server.

Always: the files parse, their pins match requirements/, the collection tarball they name is
the one `ansible-galaxy collection build` makes, and installing that tarball the way the EE does
gives a working drift_report callback. When the tools are installed: `ansible-builder create`
writes the build context, and check-jsonschema validates the CI files against the GitLab CI and
GitHub workflow schemas it bundles.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
BIN = os.path.dirname(sys.executable)
EE_FILE = os.path.join(CHECKOUT, 'execution-environment.yml')
GITLAB = os.path.join(CHECKOUT, 'examples', 'ci', 'gitlab-ci.yml')
GITHUB = os.path.join(CHECKOUT, 'examples', 'ci', 'github-drift.yml')


def load(path):
    with open(path) as stream:
        return yaml.safe_load(stream)


def pin(requirements, package):
    with open(os.path.join(CHECKOUT, 'requirements', requirements)) as stream:
        for line in stream:
            if re.match(r'%s==' % re.escape(package), line.strip()):
                return line.strip()
    raise AssertionError('%s is not pinned in requirements/%s' % (package, requirements))


def tool(name):
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else shutil.which(name)


def collection_tarball_name():
    galaxy = load(os.path.join(CHECKOUT, 'galaxy.yml'))
    return '%s-%s-%s.tar.gz' % (galaxy['namespace'], galaxy['name'], galaxy['version'])


@pytest.fixture(scope='module')
def built_collection(tmp_path_factory):
    """The collection tarball, built the way execution-environment.yml says."""
    dist = tmp_path_factory.mktemp('ee') / 'dist'
    done = subprocess.run([tool('ansible-galaxy'), 'collection', 'build', '--force', '--output-path', str(dist), CHECKOUT],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return dist


def test_ee_definition_pins_and_collection():
    ee = load(EE_FILE)
    assert ee['version'] == 3
    deps = ee['dependencies']
    assert deps['ansible_core']['package_pip'] == pin('runtime.txt', 'ansible-core')
    assert deps['ansible_runner']['package_pip'] == pin('test.txt', 'ansible-runner')
    assert deps['python'] == [pin('runtime.txt', 'cryptography')]
    assert deps['python_interpreter']['python_path'].endswith('python3.11')
    # The base image is a placeholder, overridden with --build-arg EE_BASE_IMAGE=...
    assert '.invalid/' in ee['images']['base_image']['name']
    # No version written in the file: the tarball of any version is found by a pattern.
    with open(EE_FILE) as stream:
        assert load(os.path.join(CHECKOUT, 'galaxy.yml'))['version'] not in stream.read()
    assert 'galaxy' not in deps
    (build_file,) = ee['additional_build_files']
    assert build_file['dest'] == 'collections'
    assert fnmatch.fnmatch('dist/' + collection_tarball_name(), build_file['src'])
    steps = ee['additional_build_steps']['append_final']
    assert steps[0] == 'COPY _build/collections/ /tmp/dbhost-collections/'
    assert 'ansible-galaxy collection install' in steps[1] and '/tmp/dbhost-collections/dbhost-tuning-*.tar.gz' in steps[1]


def test_the_build_context_is_never_packed_nor_committed():
    assert 'context' in load(os.path.join(CHECKOUT, 'galaxy.yml'))['build_ignore']
    with open(os.path.join(CHECKOUT, '.gitignore')) as stream:
        assert 'context/' in stream.read().split()


def test_ee_collection_installs_with_a_working_callback(built_collection, tmp_path):
    tarball = built_collection / collection_tarball_name()
    assert tarball.exists(), os.listdir(str(built_collection))
    # The image's install step, with the pattern expanded as its shell does.
    step = load(EE_FILE)['additional_build_steps']['append_final'][1]
    pattern = [word for word in step.split() if word.endswith('.tar.gz')][0]
    (found,) = [name for name in os.listdir(str(built_collection)) if fnmatch.fnmatch(name, os.path.basename(pattern))]
    installed = tmp_path / 'collections'
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(installed))
    env.pop('ANSIBLE_CONFIG', None)
    done = subprocess.run([tool('ansible-galaxy'), 'collection', 'install', '--no-deps', '-p', str(installed),
                           str(built_collection / found)], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    root = installed / 'ansible_collections' / 'dbhost' / 'tuning'
    for path in ('plugins/callback/drift_report.py', 'plugins/plugin_utils/drift_report/records.py',
                 'plugins/plugin_utils/drift_report/files.py', 'scripts/drift-check', 'scripts/drift_check.py',
                 'playbooks/drift.yml'):
        assert (root / path).exists(), path
    # The image's last build step.
    done = subprocess.run([tool('ansible-doc'), '-t', 'callback', 'dbhost.tuning.drift_report'],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert str(root) in done.stdout and 'DBHOST_DRIFT_REPORT_DIR' in done.stdout


@pytest.mark.skipif(not tool('ansible-builder'), reason='ansible-builder is not installed')
def test_ansible_builder_creates_the_build_context(built_collection):
    context = built_collection.parent
    shutil.copy(EE_FILE, str(context / 'execution-environment.yml'))
    done = subprocess.run([tool('ansible-builder'), 'create', '-f', 'execution-environment.yml', '-c', 'context',
                           '--output-filename', 'Containerfile'],
                          cwd=str(context), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    containerfile = (context / 'context' / 'Containerfile').read_text()
    assert 'ARG EE_BASE_IMAGE="registry.example.invalid/ee-base:latest"' in containerfile
    assert pin('runtime.txt', 'ansible-core') in containerfile
    assert 'ansible-doc -t callback dbhost.tuning.drift_report' in containerfile
    assert 'RUN ansible-galaxy collection install --no-deps' in containerfile
    assert (context / 'context' / '_build' / 'collections' / collection_tarball_name()).exists()


def test_gitlab_example():
    pipeline = load(GITLAB)
    job = pipeline['drift-check']
    assert [rule['if'] for rule in job['rules']] == ['$CI_PIPELINE_SOURCE == "schedule"', '$CI_PIPELINE_SOURCE == "web"']
    script = ' '.join(job['script'])
    assert 'python3 "$DBHOST_COLLECTION_DIR/scripts/drift_check.py"' in script and '--report-dir "$DBHOST_DRIFT_REPORT_DIR"' in script
    # No allow_failure: any code but 0 fails the job (drift is 3).
    assert 'allow_failure' not in job
    assert job['artifacts']['when'] == 'always'
    assert job['artifacts']['reports'] == {'junit': 'drift-report/drift.xml'}
    assert sorted(job['artifacts']['paths']) == ['drift-report/drift.html', 'drift-report/drift.json',
                                                 'drift-report/drift.md', 'drift-report/drift.xml']
    assert '--ledger "${DRIFT_LEDGER_URL:-$CI_PROJECT_DIR/.drift-ledger/ledger.sqlite}"' in script
    assert job['cache']['paths'] == ['.drift-ledger/']
    assert pipeline['variables']['DBHOST_DRIFT_REPORT_DIR'] == '$CI_PROJECT_DIR/drift-report'


def test_github_example():
    workflow = load(GITHUB)
    assert workflow['on']['schedule'] == [{'cron': '30 2 * * *'}]
    steps = dict((step['name'], step) for step in workflow['jobs']['drift']['steps'])
    assert 'scripts/drift-check --report-dir "$DBHOST_DRIFT_REPORT_DIR"' in steps['Drift check']['run']
    assert '--ledger "${DRIFT_LEDGER_URL:-$GITHUB_WORKSPACE/.drift-ledger/ledger.sqlite}"' in steps['Drift check']['run']
    assert steps['Save the ledger']['if'] == 'always()'
    assert 'if' not in steps['Drift check'] and 'continue-on-error' not in steps['Drift check']
    summary = steps['Publish the report as the job summary']
    assert summary['if'] == 'always()'
    assert 'cat "$DBHOST_DRIFT_REPORT_DIR/drift.md" >> "$GITHUB_STEP_SUMMARY"' in summary['run']
    upload = steps['Keep the reports']
    assert upload['if'] == 'always()' and upload['uses'].startswith('actions/upload-artifact@')
    assert 'python -m pip install -r requirements/runtime.txt' in steps[
        'Install ansible-core and make the checkout the dbhost.tuning collection']['run']


@pytest.mark.skipif(not tool('check-jsonschema'), reason='check-jsonschema is not installed')
@pytest.mark.parametrize('path, schema', [(GITLAB, 'vendor.gitlab-ci'), (GITHUB, 'vendor.github-workflows')])
def test_ci_examples_match_their_schema(path, schema):
    done = subprocess.run([tool('check-jsonschema'), '--builtin-schema', schema, path],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
