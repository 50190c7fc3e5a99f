create 'shell_t', 'f', {NAME => 'g', VERSIONS => 3}
list 'shell_.*'
describe 'shell_t'
exists 'shell_t'
is_enabled 'shell_t'
put 'shell_t', 'r1', 'f:a', 'v1', 1000
put 'shell_t', 'r1', 'f:b', 'v2', 1001
put 'shell_t', 'r2', 'g:c', 'v3', 1002
put 'shell_t', 'r2', 'g:c', 'v4', 1003
put 'shell_t', 'r3', 'f:a', 'v5', 1004
put 'shell_t', "r\x00\xff", 'f:bin', "\x01\x02", 1005
get 'shell_t', 'r1'
get 'shell_t', 'r2', {COLUMN => 'g:c', VERSIONS => 3}
get 'shell_t', 'r2', {COLUMN => 'g:c', TIMERANGE => [1000, 1003]}
get 'shell_t', 'nope'
scan 'shell_t'
scan 'shell_t', {COLUMNS => ['f'], LIMIT => 1}
scan 'shell_t', {STARTROW => 'r2', STOPROW => 'r3'}
scan 'shell_t', {FILTER => "ValueFilter(=, 'binary:v5')"}
scan 'shell_t', {FILTER => "PrefixFilter('r2') AND QualifierFilter(>=, 'binary:c')"}
scan 'shell_t', {FILTER => "SingleColumnValueFilter('f', 'a', =, 'binary:v1')"}
scan 'shell_t', {FILTER => "KeyOnlyFilter()"}
scan 'shell_t', {FILTER => "ColumnPrefixFilter('b') OR ColumnPrefixFilter('c')"}
scan 'shell_t', {FILTER => "FirstKeyOnlyFilter() AND ValueFilter(!=, 'substring:9')"}
scan 'shell_t', {FILTER => "NoSuchFilter(1)"}
scan 'shell_t', {REVERSED => true}
scan 'shell_t', {RAW => true, VERSIONS => 10}
scan 'shell_t', {ROWPREFIXFILTER => 'r1'}
count 'shell_t'
incr 'shell_t', 'r4', 'f:n', 5
incr 'shell_t', 'r4', 'f:n', 2
get_counter 'shell_t', 'r4', 'f:n'
append 'shell_t', 'r1', 'f:b', '-x'
delete 'shell_t', 'r1', 'f:a', 1000
deleteall 'shell_t', 'r3'
scan 'shell_t', {COLUMNS => ['f:a', 'f:b', 'g']}
flush 'shell_t'
major_compact 'shell_t'
alter 'shell_t', {NAME => 'f', VERSIONS => 4, TTL => 86400}
describe 'shell_t'
split 'shell_t', 'r2'
disable 'shell_t'
is_enabled 'shell_t'
scan 'shell_t'
enable 'shell_t'
scan 'shell_t', {STARTROW => 'r2'}
count 'shell_t'
list_regions 'shell_t', {}, ['START_KEY', 'END_KEY']
snapshot 'shell_t', 'shell_snap'
list_snapshots 'shell_.*'
snapshot 'shell_t', 'shell_snap'
clone_snapshot 'shell_snap', 'shell_clone'
scan 'shell_clone'
clone_snapshot 'shell_snap', 'shell_clone'
put 'shell_t', 'r9', 'f:a', 'after the snapshot', 1500
restore_snapshot 'shell_snap'
disable 'shell_t'
restore_snapshot 'shell_snap'
enable 'shell_t'
scan 'shell_t'
delete_snapshot 'shell_snap'
list_snapshots
clone_snapshot 'shell_snap', 'shell_other'
disable 'shell_clone'
drop 'shell_clone'
truncate 'shell_t'
scan 'shell_t'
get 'shell_nosuch', 'r'
create 'sensor', {NAME => 'r', VERSIONS => 1}, SPLITS => ['dev-4', 'dev-8']
put 'sensor', "dev-5#\x7F\xFF\xFE\x74\x5A\x9B\x3F\xFF", 'r:temp', '21.5', 1000
put 'sensor', "dev-5#\x7F\xFF\xFE\x74\x5A\x9B\x3F\x00", 'r:temp', '21.9', 1001
scan 'sensor', {ROWPREFIXFILTER => 'dev-5#', LIMIT => 1}
scan 'sensor'
disable 'sensor'
drop 'sensor'
disable 'shell_t'
drop 'shell_t'
list 'shell_.*'
exit
