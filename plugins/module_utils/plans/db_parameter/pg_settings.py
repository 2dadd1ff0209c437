# -*- coding: utf-8 -*-
# Copyright: contributors to dbhost.tuning
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal to dbhost.tuning: the parameters of each PostgreSQL major, as its server lists them.

Written by scripts/pg-settings-table.py (do not edit by hand), from ``postgres --describe-config``
and pg_settings of a throwaway cluster of the build SOURCES names for each major.
One parameter a line: name, context, type, unit, minimum, maximum, enum values (comma-
separated), and 1 when --describe-config lists it (postgresql.conf.sample does), else 0;
"-" where a field is empty.  BASE is the table of the oldest major; CHANGES[major] what
changed since the major before it: "+ " and the whole line of a parameter added or changed,
"- " and the name of one removed.  TABLES ({major: Table}) holds each major's whole table
(MAJOR, SOURCE, TABLE: the lines), computed at import.  Read by pg_catalog.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

SOURCES = {
    13: 'PostgreSQL 13.16 (Debian 13.16-0+deb11u1) in a Debian GNU/Linux 11 (bullseye) tree',
    15: 'PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on Debian GNU/Linux 12 (bookworm)',
    17: 'PostgreSQL 17.12 (Debian 17.12-0+deb13u1) in a Debian GNU/Linux 13 (trixie) tree',
}
BASE = '''
DateStyle user string - - - - 1
IntervalStyle user enum - - - postgres,postgres_verbose,sql_standard,iso_8601 1
TimeZone user string - - - - 1
allow_in_place_tablespaces superuser bool - - - - 0
allow_system_table_mods superuser bool - - - - 0
application_name user string - - - - 0
archive_cleanup_command sighup string - - - - 1
archive_command sighup string - - - - 1
archive_mode postmaster enum - - - always,on,off 1
archive_timeout sighup integer s 0 1073741823 - 1
array_nulls user bool - - - - 1
authentication_timeout sighup integer s 1 600 - 1
autovacuum sighup bool - - - - 1
autovacuum_analyze_scale_factor sighup real - 0 100 - 1
autovacuum_analyze_threshold sighup integer - 0 2147483647 - 1
autovacuum_freeze_max_age postmaster integer - 100000 2000000000 - 1
autovacuum_max_workers postmaster integer - 1 262143 - 1
autovacuum_multixact_freeze_max_age postmaster integer - 10000 2000000000 - 1
autovacuum_naptime sighup integer s 1 2147483 - 1
autovacuum_vacuum_cost_delay sighup real ms -1 100 - 1
autovacuum_vacuum_cost_limit sighup integer - -1 10000 - 1
autovacuum_vacuum_insert_scale_factor sighup real - 0 100 - 1
autovacuum_vacuum_insert_threshold sighup integer - -1 2147483647 - 1
autovacuum_vacuum_scale_factor sighup real - 0 100 - 1
autovacuum_vacuum_threshold sighup integer - 0 2147483647 - 1
autovacuum_work_mem sighup integer kB -1 2147483647 - 1
backend_flush_after user integer 8kB 0 256 - 1
backslash_quote user enum - - - safe_encoding,on,off 1
backtrace_functions superuser string - - - - 0
bgwriter_delay sighup integer ms 10 10000 - 1
bgwriter_flush_after sighup integer 8kB 0 256 - 1
bgwriter_lru_maxpages sighup integer - 0 1073741823 - 1
bgwriter_lru_multiplier sighup real - 0 10 - 1
block_size internal integer - 8192 8192 - 0
bonjour postmaster bool - - - - 1
bonjour_name postmaster string - - - - 1
bytea_output user enum - - - escape,hex 1
check_function_bodies user bool - - - - 1
checkpoint_completion_target sighup real - 0 1 - 1
checkpoint_flush_after sighup integer 8kB 0 256 - 1
checkpoint_timeout sighup integer s 30 86400 - 1
checkpoint_warning sighup integer s 0 2147483647 - 1
client_encoding user string - - - - 1
client_min_messages user enum - - - debug5,debug4,debug3,debug2,debug1,log,notice,warning,error 1
cluster_name postmaster string - - - - 1
commit_delay superuser integer - 0 100000 - 1
commit_siblings user integer - 0 1000 - 1
config_file postmaster string - - - - 0
constraint_exclusion user enum - - - partition,on,off 1
cpu_index_tuple_cost user real - 0 1.79769e+308 - 1
cpu_operator_cost user real - 0 1.79769e+308 - 1
cpu_tuple_cost user real - 0 1.79769e+308 - 1
cursor_tuple_fraction user real - 0 1 - 1
data_checksums internal bool - - - - 0
data_directory postmaster string - - - - 1
data_directory_mode internal integer - 0 511 - 0
data_sync_retry postmaster bool - - - - 1
db_user_namespace sighup bool - - - - 1
deadlock_timeout superuser integer ms 1 2147483647 - 1
debug_assertions internal bool - - - - 0
debug_pretty_print user bool - - - - 1
debug_print_parse user bool - - - - 1
debug_print_plan user bool - - - - 1
debug_print_rewritten user bool - - - - 1
default_statistics_target user integer - 1 10000 - 1
default_table_access_method user string - - - - 1
default_tablespace user string - - - - 1
default_text_search_config user string - - - - 1
default_transaction_deferrable user bool - - - - 1
default_transaction_isolation user enum - - - serializable,repeatableread,readcommitted,readuncommitted 1
default_transaction_read_only user bool - - - - 1
dynamic_library_path superuser string - - - - 1
dynamic_shared_memory_type postmaster enum - - - posix,sysv,mmap 1
effective_cache_size user integer 8kB 1 2147483647 - 1
effective_io_concurrency user integer - 0 1000 - 1
enable_bitmapscan user bool - - - - 1
enable_gathermerge user bool - - - - 1
enable_hashagg user bool - - - - 1
enable_hashjoin user bool - - - - 1
enable_incremental_sort user bool - - - - 1
enable_indexonlyscan user bool - - - - 1
enable_indexscan user bool - - - - 1
enable_material user bool - - - - 1
enable_mergejoin user bool - - - - 1
enable_nestloop user bool - - - - 1
enable_parallel_append user bool - - - - 1
enable_parallel_hash user bool - - - - 1
enable_partition_pruning user bool - - - - 1
enable_partitionwise_aggregate user bool - - - - 1
enable_partitionwise_join user bool - - - - 1
enable_seqscan user bool - - - - 1
enable_sort user bool - - - - 1
enable_tidscan user bool - - - - 1
escape_string_warning user bool - - - - 1
event_source postmaster string - - - - 1
exit_on_error user bool - - - - 1
extension_destdir superuser string - - - - 1
external_pid_file postmaster string - - - - 1
extra_float_digits user integer - -15 3 - 1
force_parallel_mode user enum - - - off,on,regress 1
from_collapse_limit user integer - 1 2147483647 - 1
fsync sighup bool - - - - 1
full_page_writes sighup bool - - - - 1
geqo user bool - - - - 1
geqo_effort user integer - 1 10 - 1
geqo_generations user integer - 0 2147483647 - 1
geqo_pool_size user integer - 0 2147483647 - 1
geqo_seed user real - 0 1 - 1
geqo_selection_bias user real - 1.5 2 - 1
geqo_threshold user integer - 2 2147483647 - 1
gin_fuzzy_search_limit user integer - 0 2147483647 - 1
gin_pending_list_limit user integer kB 64 2147483647 - 1
hash_mem_multiplier user real - 1 1000 - 1
hba_file postmaster string - - - - 1
hot_standby postmaster bool - - - - 1
hot_standby_feedback sighup bool - - - - 1
huge_pages postmaster enum - - - off,on,try 1
ident_file postmaster string - - - - 1
idle_in_transaction_session_timeout user integer ms 0 2147483647 - 1
ignore_checksum_failure superuser bool - - - - 0
ignore_invalid_pages postmaster bool - - - - 0
ignore_system_indexes backend bool - - - - 0
integer_datetimes internal bool - - - - 0
jit user bool - - - - 1
jit_above_cost user real - -1 1.79769e+308 - 1
jit_debugging_support superuser-backend bool - - - - 0
jit_dump_bitcode superuser bool - - - - 0
jit_expressions user bool - - - - 0
jit_inline_above_cost user real - -1 1.79769e+308 - 1
jit_optimize_above_cost user real - -1 1.79769e+308 - 1
jit_profiling_support superuser-backend bool - - - - 0
jit_provider postmaster string - - - - 1
jit_tuple_deforming user bool - - - - 0
join_collapse_limit user integer - 1 2147483647 - 1
krb_caseins_users sighup bool - - - - 1
krb_server_keyfile sighup string - - - - 1
lc_collate internal string - - - - 0
lc_ctype internal string - - - - 0
lc_messages superuser string - - - - 1
lc_monetary user string - - - - 1
lc_numeric user string - - - - 1
lc_time user string - - - - 1
listen_addresses postmaster string - - - - 1
lo_compat_privileges superuser bool - - - - 1
local_preload_libraries user string - - - - 1
lock_timeout user integer ms 0 2147483647 - 1
log_autovacuum_min_duration sighup integer ms -1 2147483647 - 1
log_checkpoints sighup bool - - - - 1
log_connections superuser-backend bool - - - - 1
log_destination sighup string - - - - 1
log_directory sighup string - - - - 1
log_disconnections superuser-backend bool - - - - 1
log_duration superuser bool - - - - 1
log_error_verbosity superuser enum - - - terse,default,verbose 1
log_executor_stats superuser bool - - - - 1
log_file_mode sighup integer - 0 511 - 1
log_filename sighup string - - - - 1
log_hostname sighup bool - - - - 1
log_line_prefix sighup string - - - - 1
log_lock_waits superuser bool - - - - 1
log_min_duration_sample superuser integer ms -1 2147483647 - 1
log_min_duration_statement superuser integer ms -1 2147483647 - 1
log_min_error_statement superuser enum - - - debug5,debug4,debug3,debug2,debug1,info,notice,warning,error,log,fatal,panic 1
log_min_messages superuser enum - - - debug5,debug4,debug3,debug2,debug1,info,notice,warning,error,log,fatal,panic 1
log_parameter_max_length superuser integer B -1 1073741823 - 1
log_parameter_max_length_on_error user integer B -1 1073741823 - 1
log_parser_stats superuser bool - - - - 1
log_planner_stats superuser bool - - - - 1
log_replication_commands superuser bool - - - - 1
log_rotation_age sighup integer min 0 35791394 - 1
log_rotation_size sighup integer kB 0 2097151 - 1
log_statement superuser enum - - - none,ddl,mod,all 1
log_statement_sample_rate superuser real - 0 1 - 1
log_statement_stats superuser bool - - - - 1
log_temp_files superuser integer kB -1 2147483647 - 1
log_timezone sighup string - - - - 1
log_transaction_sample_rate superuser real - 0 1 - 1
log_truncate_on_rotation sighup bool - - - - 1
logging_collector postmaster bool - - - - 1
logical_decoding_work_mem user integer kB 64 2147483647 - 1
maintenance_io_concurrency user integer - 0 1000 - 1
maintenance_work_mem user integer kB 1024 2147483647 - 1
max_connections postmaster integer - 1 262143 - 1
max_files_per_process postmaster integer - 64 2147483647 - 1
max_function_args internal integer - 100 100 - 0
max_identifier_length internal integer - 63 63 - 0
max_index_keys internal integer - 32 32 - 0
max_locks_per_transaction postmaster integer - 10 2147483647 - 1
max_logical_replication_workers postmaster integer - 0 262143 - 1
max_parallel_maintenance_workers user integer - 0 1024 - 1
max_parallel_workers user integer - 0 1024 - 1
max_parallel_workers_per_gather user integer - 0 1024 - 1
max_pred_locks_per_page sighup integer - 0 2147483647 - 1
max_pred_locks_per_relation sighup integer - -2147483648 2147483647 - 1
max_pred_locks_per_transaction postmaster integer - 10 2147483647 - 1
max_prepared_transactions postmaster integer - 0 262143 - 1
max_replication_slots postmaster integer - 0 262143 - 1
max_slot_wal_keep_size sighup integer MB -1 2147483647 - 1
max_stack_depth superuser integer kB 100 2147483647 - 1
max_standby_archive_delay sighup integer ms -1 2147483647 - 1
max_standby_streaming_delay sighup integer ms -1 2147483647 - 1
max_sync_workers_per_subscription sighup integer - 0 262143 - 1
max_wal_senders postmaster integer - 0 262143 - 1
max_wal_size sighup integer MB 2 2147483647 - 1
max_worker_processes postmaster integer - 0 262143 - 1
min_parallel_index_scan_size user integer 8kB 0 715827882 - 1
min_parallel_table_scan_size user integer 8kB 0 715827882 - 1
min_wal_size sighup integer MB 2 2147483647 - 1
old_snapshot_threshold postmaster integer min -1 86400 - 1
operator_precedence_warning user bool - - - - 1
parallel_leader_participation user bool - - - - 1
parallel_setup_cost user real - 0 1.79769e+308 - 1
parallel_tuple_cost user real - 0 1.79769e+308 - 1
password_encryption user enum - - - md5,scram-sha-256 1
plan_cache_mode user enum - - - auto,force_generic_plan,force_custom_plan 1
port postmaster integer - 1 65535 - 1
post_auth_delay backend integer s 0 2147 - 0
pre_auth_delay sighup integer s 0 60 - 0
primary_conninfo sighup string - - - - 1
primary_slot_name sighup string - - - - 1
promote_trigger_file sighup string - - - - 1
quote_all_identifiers user bool - - - - 1
random_page_cost user real - 0 1.79769e+308 - 1
recovery_end_command sighup string - - - - 1
recovery_min_apply_delay sighup integer ms 0 2147483647 - 1
recovery_target postmaster string - - - - 1
recovery_target_action postmaster enum - - - pause,promote,shutdown 1
recovery_target_inclusive postmaster bool - - - - 1
recovery_target_lsn postmaster string - - - - 1
recovery_target_name postmaster string - - - - 1
recovery_target_time postmaster string - - - - 1
recovery_target_timeline postmaster string - - - - 1
recovery_target_xid postmaster string - - - - 1
restart_after_crash sighup bool - - - - 1
restore_command postmaster string - - - - 1
restrict_nonsystem_relation_kind user string - - - - 0
row_security user bool - - - - 1
search_path user string - - - - 1
segment_size internal integer 8kB 131072 131072 - 0
seq_page_cost user real - 0 1.79769e+308 - 1
server_encoding internal string - - - - 0
server_version internal string - - - - 0
server_version_num internal integer - 130016 130016 - 0
session_preload_libraries superuser string - - - - 1
session_replication_role superuser enum - - - origin,replica,local 1
shared_buffers postmaster integer 8kB 16 1073741823 - 1
shared_memory_type postmaster enum - - - sysv,mmap 1
shared_preload_libraries postmaster string - - - - 1
ssl sighup bool - - - - 1
ssl_ca_file sighup string - - - - 1
ssl_cert_file sighup string - - - - 1
ssl_ciphers sighup string - - - - 1
ssl_crl_file sighup string - - - - 1
ssl_dh_params_file sighup string - - - - 1
ssl_ecdh_curve sighup string - - - - 1
ssl_key_file sighup string - - - - 1
ssl_library internal string - - - - 0
ssl_max_protocol_version sighup enum - - - ,TLSv1,TLSv1.1,TLSv1.2,TLSv1.3 1
ssl_min_protocol_version sighup enum - - - TLSv1,TLSv1.1,TLSv1.2,TLSv1.3 1
ssl_passphrase_command sighup string - - - - 1
ssl_passphrase_command_supports_reload sighup bool - - - - 1
ssl_prefer_server_ciphers sighup bool - - - - 1
standard_conforming_strings user bool - - - - 1
statement_timeout user integer ms 0 2147483647 - 1
stats_temp_directory sighup string - - - - 1
superuser_reserved_connections postmaster integer - 0 262143 - 1
synchronize_seqscans user bool - - - - 1
synchronous_commit user enum - - - local,remote_write,remote_apply,on,off 1
synchronous_standby_names sighup string - - - - 1
syslog_facility sighup enum - - - local0,local1,local2,local3,local4,local5,local6,local7 1
syslog_ident sighup string - - - - 1
syslog_sequence_numbers sighup bool - - - - 1
syslog_split_messages sighup bool - - - - 1
tcp_keepalives_count user integer - 0 2147483647 - 1
tcp_keepalives_idle user integer s 0 2147483647 - 1
tcp_keepalives_interval user integer s 0 2147483647 - 1
tcp_user_timeout user integer ms 0 2147483647 - 1
temp_buffers user integer 8kB 100 1073741823 - 1
temp_file_limit superuser integer kB -1 2147483647 - 1
temp_tablespaces user string - - - - 1
timezone_abbreviations user string - - - - 1
trace_notify user bool - - - - 0
trace_recovery_messages sighup enum - - - debug5,debug4,debug3,debug2,debug1,log,notice,warning,error 1
trace_sort user bool - - - - 0
track_activities superuser bool - - - - 1
track_activity_query_size postmaster integer B 100 1048576 - 1
track_commit_timestamp postmaster bool - - - - 1
track_counts superuser bool - - - - 1
track_functions superuser enum - - - none,pl,all 1
track_io_timing superuser bool - - - - 1
transaction_deferrable user bool - - - - 0
transaction_isolation user enum - - - serializable,repeatableread,readcommitted,readuncommitted 0
transaction_read_only user bool - - - - 0
transform_null_equals user bool - - - - 1
unix_socket_directories postmaster string - - - - 1
unix_socket_group postmaster string - - - - 1
unix_socket_permissions postmaster integer - 0 511 - 1
update_process_title superuser bool - - - - 1
vacuum_cleanup_index_scale_factor user real - 0 1e+10 - 1
vacuum_cost_delay user real ms 0 100 - 1
vacuum_cost_limit user integer - 1 10000 - 1
vacuum_cost_page_dirty user integer - 0 10000 - 1
vacuum_cost_page_hit user integer - 0 10000 - 1
vacuum_cost_page_miss user integer - 0 10000 - 1
vacuum_defer_cleanup_age sighup integer - 0 1000000 - 1
vacuum_freeze_min_age user integer - 0 1000000000 - 1
vacuum_freeze_table_age user integer - 0 2000000000 - 1
vacuum_multixact_freeze_min_age user integer - 0 1000000000 - 1
vacuum_multixact_freeze_table_age user integer - 0 2000000000 - 1
wal_block_size internal integer - 8192 8192 - 0
wal_buffers postmaster integer 8kB -1 262143 - 1
wal_compression superuser bool - - - - 1
wal_consistency_checking superuser string - - - - 0
wal_init_zero superuser bool - - - - 1
wal_keep_size sighup integer MB 0 2147483647 - 1
wal_level postmaster enum - - - minimal,replica,logical 1
wal_log_hints postmaster bool - - - - 1
wal_receiver_create_temp_slot sighup bool - - - - 1
wal_receiver_status_interval sighup integer s 0 2147483 - 1
wal_receiver_timeout sighup integer ms 0 2147483647 - 1
wal_recycle superuser bool - - - - 1
wal_retrieve_retry_interval sighup integer ms 1 2147483647 - 1
wal_segment_size internal integer B 1048576 1073741824 - 0
wal_sender_timeout user integer ms 0 2147483647 - 1
wal_skip_threshold user integer kB 0 2147483647 - 1
wal_sync_method sighup enum - - - fsync,fdatasync,open_sync,open_datasync 1
wal_writer_delay sighup integer ms 1 10000 - 1
wal_writer_flush_after sighup integer 8kB 0 2147483647 - 1
work_mem user integer kB 64 2147483647 - 1
xmlbinary user enum - - - base64,hex 1
xmloption user enum - - - content,document 1
zero_damaged_pages superuser bool - - - - 0
'''
CHANGES = {
    15: '''
- operator_precedence_warning
- stats_temp_directory
- vacuum_cleanup_index_scale_factor
+ archive_library sighup string - - - - 1
+ client_connection_check_interval user integer ms 0 2147483647 - 1
+ compute_query_id superuser enum - - - auto,regress,on,off 1
+ debug_discard_caches superuser integer - 0 0 - 0
+ default_toast_compression user enum - - - pglz,lz4 1
+ enable_async_append user bool - - - - 1
+ enable_memoize user bool - - - - 1
+ force_parallel_mode user enum - - - off,on,regress 0
+ huge_page_size postmaster integer kB 0 2147483647 - 1
+ idle_session_timeout user integer ms 0 2147483647 - 1
+ in_hot_standby internal bool - - - - 0
+ log_recovery_conflict_waits sighup bool - - - - 1
+ log_startup_progress_interval sighup integer ms 0 2147483647 - 1
+ min_dynamic_shared_memory postmaster integer MB 0 2147483647 - 1
+ recovery_init_sync_method sighup enum - - - fsync,syncfs 1
+ recovery_prefetch sighup enum - - - off,on,try 1
+ recursive_worktable_factor user real - 0.001 1e+06 - 1
+ remove_temp_files_after_crash sighup bool - - - - 0
+ restore_command sighup string - - - - 1
+ server_version_num internal integer - 150018 150018 - 0
+ shared_memory_size internal integer MB 0 2147483647 - 0
+ shared_memory_size_in_huge_pages internal integer - -1 2147483647 - 0
+ ssl_crl_dir sighup string - - - - 1
+ stats_fetch_consistency user enum - - - none,cache,snapshot 1
+ trace_recovery_messages sighup enum - - - debug5,debug4,debug3,debug2,debug1,log,notice,warning,error 0
+ track_wal_io_timing superuser bool - - - - 1
+ vacuum_failsafe_age user integer - 0 2100000000 - 1
+ vacuum_multixact_failsafe_age user integer - 0 2100000000 - 1
+ wal_compression superuser enum - - - pglz,lz4,zstd,on,off 1
+ wal_decode_buffer_size postmaster integer B 65536 1073741823 - 1
''',
    17: '''
- db_user_namespace
- force_parallel_mode
- lc_collate
- lc_ctype
- old_snapshot_threshold
- promote_trigger_file
- trace_recovery_messages
- vacuum_defer_cleanup_age
+ allow_alter_system sighup bool - - - - 1
+ commit_timestamp_buffers postmaster integer 8kB 0 131072 - 1
+ composite_type_mismatch superuser enum - - - error,warn,disabled 0
+ createrole_self_grant user string - - - - 1
+ debug_io_direct postmaster string - - - - 0
+ debug_logical_replication_streaming user enum - - - buffered,immediate 0
+ debug_parallel_query user enum - - - off,on,regress 0
+ enable_group_by_reordering user bool - - - - 1
+ enable_presorted_aggregate user bool - - - - 1
+ event_triggers superuser bool - - - - 1
+ file_extend_method sighup enum - - - posix_fallocate,write_zeros 1
+ gss_accept_delegation sighup bool - - - - 1
+ huge_pages_status internal enum - - - off,on,unknown 0
+ icu_validation_level user enum - - - disabled,debug5,debug4,debug3,debug2,debug1,log,notice,warning,error 1
+ io_combine_limit user integer 8kB 1 32 - 1
+ maintenance_work_mem user integer kB 64 2147483647 - 1
+ max_notify_queue_pages postmaster integer - 64 2147483647 - 1
+ max_parallel_apply_workers_per_subscription sighup integer - 0 1024 - 1
+ multixact_member_buffers postmaster integer 8kB 16 131072 - 1
+ multixact_offset_buffers postmaster integer 8kB 16 131072 - 1
+ notify_buffers postmaster integer 8kB 16 131072 - 1
+ output_plugin_libraries superuser string - - - - 1
+ reserved_connections postmaster integer - 0 262143 - 1
+ scram_iterations user integer - 1 2147483647 - 1
+ send_abort_for_crash sighup bool - - - - 0
+ send_abort_for_kill sighup bool - - - - 0
+ serializable_buffers postmaster integer 8kB 16 131072 - 1
+ server_version_num internal integer - 170012 170012 - 0
+ subtransaction_buffers postmaster integer 8kB 0 131072 - 1
+ summarize_wal sighup bool - - - - 1
+ sync_replication_slots sighup bool - - - - 1
+ synchronized_standby_slots sighup string - - - - 1
+ trace_connection_negotiation postmaster bool - - - - 0
+ transaction_buffers postmaster integer 8kB 0 131072 - 1
+ transaction_timeout user integer ms 0 2147483647 - 1
+ vacuum_buffer_usage_limit user integer kB 0 16777216 - 1
+ wal_summary_keep_time sighup integer min 0 35791394 - 1
''',
}


class Table(object):
    """The table of one major: MAJOR, SOURCE (the build it was read from), TABLE (its lines)."""

    __slots__ = ('MAJOR', 'SOURCE', 'TABLE')

    def __init__(self, major, source, table):
        self.MAJOR = major
        self.SOURCE = source
        self.TABLE = table


def apply_changes(lines, changes):
    """The lines of a table after ``changes`` (a CHANGES entry), sorted by name."""
    by_name = dict((line.split(' ', 1)[0], line) for line in lines)
    for change in changes.splitlines():
        if change.startswith('- '):
            del by_name[change[2:]]
        elif change.startswith('+ '):
            by_name[change[2:].split(' ', 1)[0]] = change[2:]
    return sorted(by_name.values())


def _tables():
    lines = [line for line in BASE.splitlines() if line]
    tables = {}
    for major in sorted(SOURCES):
        if major in CHANGES:
            lines = apply_changes(lines, CHANGES[major])
        tables[major] = Table(major, SOURCES[major], '\n%s\n' % '\n'.join(lines))
    return tables


TABLES = _tables()
