# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""drift.html: one self-contained page per run (no network, no server): a hosts x settings grid
coloured by status, filters by group, status and setting (also read from the address's #fragment,
so a filtered view can be linked), each cell's record on hover or click, and the trend of drift
counts from the ledger.

The records travel as JSON inside the page and the script draws the grid from them, which keeps
the file about the size of drift.json's records. Standard library only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html
import json

from ansible_collections.dbhost.tuning.plugins.plugin_utils.drift_report.fleet import setting_keys

CSS = '''
body{font:13px/1.35 system-ui,sans-serif;margin:12px;color:#222}
h1{font-size:18px;margin:0 0 6px}
.counts span{display:inline-block;margin-right:14px}
#filters{margin:8px 0;padding:6px;background:#f3f3f3}
#filters label{margin-right:12px}
#grid{border-collapse:collapse}
#grid th{font-weight:normal;font-size:11px;text-align:left;white-space:nowrap}
#grid thead th{writing-mode:vertical-rl;transform:rotate(180deg);max-height:220px;overflow:hidden}
#grid td{width:14px;height:14px;padding:0;border:1px solid #fff;cursor:pointer}
#grid td.host{width:auto;padding:0 6px 0 0;cursor:default;white-space:nowrap}
td.s-ok{background:#5cb85c} td.s-unsupported{background:#bbb} td.s-drift{background:#d9534f}
td.s-waived{background:#f0ad4e} td.s-expired{background:#8b0000} td.s-none{background:#f7f7f7}
td.m-new{outline:2px solid #000;outline-offset:-3px}
tr.h-failed td.host,tr.h-unreachable td.host{color:#b00;font-weight:bold}
#detail{position:fixed;right:10px;top:10px;width:360px;max-height:90%;overflow:auto;background:#fff;
border:1px solid #888;padding:8px;font-size:12px;white-space:pre-wrap;display:none}
#detail.pinned{border-color:#000}
.legend span{display:inline-block;padding:0 6px;margin-right:4px;color:#fff}
svg text{font-size:10px}
'''

SCRIPT = r'''
(function(){
var data=JSON.parse(document.getElementById('drift-data').textContent);
var clean=data.clean, filt={group:'',status:'',setting:''};
function cellClass(r){
  if(!r) return 'none';
  if(r.w&&r.w.active) return 'waived';
  if(r.w&&!r.w.active) return 'expired';
  if(r.s==='unsupported') return 'unsupported';
  return clean.indexOf(r.s)>=0?'ok':'drift';
}
function text(v){return v===null||v===undefined?'-':(typeof v==='object'?JSON.stringify(v):String(v));}
var counts={hosts:0,settings:0,drifted:0,waived:0,unsupported:0,clean:0,drift:0,failed:0,unreachable:0};
data.hosts.forEach(function(h){
  counts.hosts++; counts[h.state]++;
  h.r.forEach(function(r){ if(!r) return; counts.settings++; var c=cellClass(r);
    if(c==='drift'||c==='expired') counts.drifted++; if(c==='waived') counts.waived++;
    if(c==='unsupported') counts.unsupported++; });
});
Object.keys(counts).forEach(function(k){var e=document.getElementById('count-'+k); if(e) e.textContent=counts[k];});
var groups={}; data.hosts.forEach(function(h){h.g.forEach(function(g){groups[g]=1;});});
var gsel=document.getElementById('f-group');
Object.keys(groups).sort().forEach(function(g){var o=document.createElement('option');o.value=g;o.textContent=g;gsel.appendChild(o);});
// Built as one string: at 1,000 hosts x 20 settings, 20,000 createElement calls take seconds.
function esc(t){return String(t).replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/"/g,'&quot;');}
var html=['<thead><tr><th></th>'];
data.settings.forEach(function(s){html.push('<th title="'+esc(s)+'">'+esc(s)+'</th>');});
html.push('</tr></thead><tbody>');
data.hosts.forEach(function(h,hi){
  html.push('<tr class="h-'+esc(h.state)+'" data-host="'+esc(h.name)+'"><td class="host">'+esc(h.name+(h.state!=='clean'?' ('+h.state+')':''))+'</td>');
  h.r.forEach(function(r,si){var c=cellClass(r);
    html.push('<td class="s-'+c+(r&&r.m==='new'?' m-new':'')+'" data-status="'+c+'" data-cell="'+hi+':'+si+'"></td>');});
  html.push('</tr>');
});
html.push('</tbody>');
var table=document.getElementById('grid'); table.innerHTML=html.join('');
var hr=table.tHead.rows[0], body=table.tBodies[0];
var detail=document.getElementById('detail'), pinned=false;
function show(td){var p=td.getAttribute('data-cell'); if(!p) return; p=p.split(':');
  var h=data.hosts[+p[0]], r=h.r[+p[1]], s=data.settings[+p[1]];
  if(!r){detail.textContent=h.name+'\n'+s+'\nnot checked on this host';}
  else {var lines=[h.name,s,'status: '+r.s+(r.m?' ('+r.m+')':''),'desired: '+text(r.d),'live: '+text(r.l),
    'persisted: '+text(r.p),'reason: '+text(r.why),'source: '+text(r.src)];
    if(r.since) lines.push('drifted since '+r.since+' ('+r.runs+' runs)');
    if(r.w) lines.push((r.w.active?'waived until ':'waiver EXPIRED on ')+r.w.expires+' by '+r.w.owner+': '+r.w.reason);
    detail.textContent=lines.join('\n');}
  detail.style.display='block';}
table.addEventListener('mouseover',function(e){if(!pinned&&e.target.tagName==='TD') show(e.target);});
table.addEventListener('click',function(e){if(e.target.tagName==='TD'){pinned=true;detail.className='pinned';show(e.target);}});
detail.addEventListener('click',function(){pinned=false;detail.className='';detail.style.display='none';});
var filtered=false;
function apply(){
  var shownHosts=0, shownCells=0, cols=[];
  if(!filt.group&&!filt.status&&!filt.setting&&!filtered){
    // Nothing filtered, now or before: every row and cell is shown as built.
    document.getElementById('shown-hosts').textContent=data.hosts.length;
    document.getElementById('shown-cells').textContent=counts.settings;
    return;
  }
  filtered=true;
  data.settings.forEach(function(s,i){cols[i]=!filt.setting||s.toLowerCase().indexOf(filt.setting.toLowerCase())>=0;});
  Array.prototype.forEach.call(hr.children,function(th,i){if(i>0) th.style.display=cols[i-1]?'':'none';});
  Array.prototype.forEach.call(body.children,function(tr,hi){var h=data.hosts[hi], matching=0;
    Array.prototype.forEach.call(tr.children,function(td,i){ if(i===0) return; var r=h.r[i-1];
      var hit=cols[i-1]&&r&&(!filt.status||td.getAttribute('data-status')===filt.status||(filt.status==='new'&&r.m==='new'));
      td.style.display=cols[i-1]?'':'none'; td.style.opacity=(hit||!filt.status)?'':'0.15';
      if(hit) matching++;});
    var show=(!filt.group||h.g.indexOf(filt.group)>=0)&&(matching>0||(!filt.status&&!filt.setting));
    tr.style.display=show?'':'none';
    if(show){shownHosts++; shownCells+=matching;}});
  document.getElementById('shown-hosts').textContent=shownHosts;
  document.getElementById('shown-cells').textContent=shownCells;
  var cell=(location.hash.match(/cell=[^&]*/)||[])[0];
  var kept=['group','status','setting'].filter(function(k){return filt[k];});
  kept=kept.map(function(k){return k+'='+encodeURIComponent(filt[k]);});
  location.replace('#'+kept.concat(cell?[cell]:[]).join('&'));
}
location.hash.replace(/^#/,'').split('&').forEach(function(part){var kv=part.split('=');
  if(kv[0] in filt) filt[kv[0]]=decodeURIComponent(kv[1]||'');});
['group','status','setting'].forEach(function(k){var e=document.getElementById('f-'+k); e.value=filt[k];
  e.addEventListener(k==='setting'?'input':'change',function(){filt[k]=e.value; apply();});});
apply();
// #cell=HOST|SETTING opens that cell's record, as a click does (a link to one finding).
var want=(location.hash.match(/cell=([^&]*)/)||[])[1];
if(want){want=decodeURIComponent(want).split('|'); var hi=data.hosts.map(function(h){return h.name;}).indexOf(want[0]);
  var si=data.settings.indexOf(want[1]); if(hi>=0&&si>=0){pinned=true;detail.className='pinned';
  show(body.children[hi].children[si+1]);}}
document.body.setAttribute('data-render-ms',String(Math.round(performance.now())));
document.body.setAttribute('data-ready','1');
})();
'''


def _cell(record):
    cell = {'s': record.get('status'), 'd': record.get('desired'), 'l': record.get('live'), 'p': record.get('persisted'),
            'why': record.get('reason') or record.get('detail'), 'src': record.get('source')}
    marked = record.get('since_last') or {}
    if marked:
        cell['m'] = marked['mark']
        if marked.get('drift_since'):
            cell['since'], cell['runs'] = marked['drift_since'], marked.get('drift_runs')
    waiver = record.get('waiver')
    if waiver:
        cell['w'] = dict((key, waiver[key]) for key in ('active', 'expires', 'owner', 'reason'))
    return cell


def page_data(report):
    """The page's data: one column per setting key (fleet.setting_keys: name @ target, numbered when a
    host has a setting twice) in first-seen order, and one row per host, so that every record has a cell."""
    columns, index, keyed = [], {}, {}
    for host, entry in sorted(report['hosts'].items()):
        keyed[host] = list(zip(setting_keys(entry['settings']), entry['settings']))
        for column, dummy in keyed[host]:
            if column not in index:
                index[column] = len(columns)
                columns.append(column)
    clean_statuses = list(report['clean_statuses'])
    hosts = []
    for host, entry in sorted(report['hosts'].items()):
        row = [None] * len(columns)
        for column, record in keyed[host]:
            row[index[column]] = _cell(record)
        hosts.append({'name': host, 'state': entry['state'], 'g': entry.get('groups') or [], 'r': row})
    return {'clean': clean_statuses, 'settings': columns, 'hosts': hosts}


def trend_svg(trend):
    """Bars of drifted settings per run (the ledger's last runs), as inline SVG."""
    if not trend:
        return '<p>No ledger: no trend (set the ledger option to keep one).</p>'
    top = max([run['drifted'] for run in trend] + [1])
    width = 12
    bars = []
    for number, run in enumerate(trend):
        height = int(round(80.0 * run['drifted'] / top))
        bars.append('<rect class="trend-bar" x="%d" y="%d" width="%d" height="%d" fill="#d9534f" data-drifted="%d">'
                    '<title>%s: %d drifted, %d hosts, %s</title></rect>' % (
                        number * width, 90 - height, width - 2, max(height, 1), run['drifted'],
                        html.escape(str(run.get('finished') or run.get('run_id'))), run['drifted'], run['hosts'],
                        html.escape(str(run.get('state')))))
    return ('<svg id="trend" width="%d" height="100" role="img" aria-label="drifted settings per run">%s'
            '<text x="0" y="100">max %d</text></svg>' % (len(trend) * width + 40, ''.join(bars), top))


def _embedded(value):
    # Inside <script>, "</script" would end the element and "<!--" change how it is read: no "<" at
    # all, JSON's \u003c instead.
    return json.dumps(value, sort_keys=True, default=str, separators=(',', ':')).replace('<', '\\u003c')


def _hosts_gone(report):
    gone = (report.get('since_last') or {}).get('hosts_gone') or []
    if not gone:
        return ''
    return ' <span id="hosts-gone">Hosts in the last run but not in this one: %s.</span>' % html.escape(', '.join(gone))


def render_html(report):
    summary = report['summary']
    view = (report.get('since_last') or {}).get('counts') or {}
    since = ', '.join('%d %s' % (view.get(mark, 0), mark) for mark in ('new', 'changed', 'still', 'fixed')) if view else 'no ledger'
    title = 'Drift report: %s, %s' % (summary['state'], report.get('finished') or '')
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        # Nothing may be fetched: the page is read from a file, offline.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; '
        'script-src \'unsafe-inline\'; img-src data:">',
        '<title>%s</title><style>%s</style></head><body>' % (html.escape(title), CSS),
        '<h1>%s</h1>' % html.escape(title),
        '<div class="counts">', ''.join('<span>%s: <b id="count-%s">?</b></span>' % (label, key) for key, label in (
            ('hosts', 'hosts'), ('clean', 'clean'), ('drift', 'drift'), ('failed', 'failed'),
            ('unreachable', 'unreachable'), ('settings', 'settings'), ('drifted', 'drifted'),
            ('waived', 'waived'), ('unsupported', 'unsupported'))), '</div>',
        '<p>Since the last run: %s.%s Run %s, collection %s.</p>' % (
            html.escape(since), _hosts_gone(report), html.escape(str(report.get('run_id'))),
            html.escape(str(report.get('collection_version')))),
        '<h2>Drifted settings per run</h2>', trend_svg((report.get('ledger') or {}).get('trend') or []),
        '<div class="legend"><span style="background:#5cb85c">ok</span><span style="background:#d9534f">drift</span>'
        '<span style="background:#f0ad4e">waived</span><span style="background:#8b0000">waiver expired</span>'
        '<span style="background:#bbb">unsupported</span> a framed cell is new since the last run</div>',
        '<div id="filters"><label>group <select id="f-group"><option value="">all</option></select></label>'
        '<label>status <select id="f-status"><option value="">all</option><option>drift</option><option>new</option>'
        '<option>waived</option><option>expired</option><option>unsupported</option><option>ok</option></select></label>'
        '<label>setting <input id="f-setting" placeholder="part of a name"></label>'
        'showing <b id="shown-hosts">?</b> hosts, <b id="shown-cells">?</b> matching settings</div>',
        '<table id="grid"></table><div id="detail"></div>',
        '<script type="application/json" id="drift-data">%s</script>' % _embedded(page_data(report)),
        '<script>%s</script></body></html>' % SCRIPT,
    ]
    return ''.join(parts) + '\n'
