#!/bin/bash
# PostgreSQL 15 from Debian, as user postgres, on a mount with allow_other:
# initdb, start, pgbench -i -s 2, pgbench -T 10, stop; unmount and remount;
# start; pgbench_accounts has exactly 200,000 rows, and the request log of
# the second mount shows the table read in 8192-byte reads.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
B=$T/backing
D=$M/pgdata
opts="allow_other,config=$SFS_ROOT/conf/postgres.ini,size=2G"
sfs_pg_setup 54329

pg_start() {
	sfs_pg_start "$D" PostgreSQL
	pg_running=1
}

pg_stop() {
	local out
	out=$(as_pg "$PGBIN/pg_ctl" -D "$D" -w -t 120 -m fast stop 2>&1) || fail "pg_ctl stop: $out"
	pg_running=0
}

# shellcheck disable=SC2034 # read by the exit hook
pg_running=0
# shellcheck disable=SC2016 # expanded when the hook runs
sfs_on_exit '((pg_running)) && as_pg "$PGBIN/pg_ctl" -D "$D" -w -t 20 -m immediate stop'

psql_val() { as_pg "$PGBIN/psql" -h "$S" -p "$PORT" -d postgres -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

sfs_mount "$B" "$M" "$opts,log=$T/req1.log"
chown postgres:postgres "$M"
assert_eq "$(ls -A "$M")" "" "readdir of a new mount (initdb needs an empty directory)"

sfs_pg_initdb "$D" "initdb on the mount"
note "initdb done"
pg_start
out=$(as_pg "$PGBIN/pgbench" -h "$S" -p "$PORT" -i -s 2 postgres 2>&1) || fail "pgbench -i -s 2: $out"
note "pgbench -i -s 2 done"
out=$(as_pg "$PGBIN/pgbench" -h "$S" -p "$PORT" -T 10 postgres 2>&1) || fail "pgbench -T 10: $out"
grep -q 'number of failed transactions: 0 ' <<<"$out" || fail "pgbench -T 10 reported failures: $out"
tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
if [[ -z $tx ]] || ((tx == 0)); then
	fail "pgbench -T 10 processed no transaction: $out"
fi
note "pgbench -T 10: $tx transactions"
assert_eq "$(psql_val 'select count(*) from pgbench_accounts')" 200000 "pgbench_accounts rows before remount"
pg_stop
sfs_umount "$M"

sfs_mount "$B" "$M" "$opts,log=$T/req2.log"
assert_eq "$(stat -c %U:%a "$D")" postgres:700 "owner and mode of the data directory after remount"
pg_start
assert_eq "$(psql_val 'select count(*) from pgbench_accounts')" 200000 "pgbench_accounts rows after remount"
assert_eq "$(psql_val "select count(*) from pgbench_branches")" 2 "pgbench_branches rows after remount"
assert_eq "$(psql_val "select (select sum(delta) from pgbench_history) = (select sum(abalance) from pgbench_accounts)")" t \
	"pgbench_history deltas match the account balances after remount"
pages=$(psql_val "select pg_relation_size('pgbench_accounts') / 8192")
relpath=$(psql_val "select pg_relation_filepath('pgbench_accounts')")
pg_stop
sfs_umount "$M"

sfs_log_check_header "$T/req2.log"
# The cold count(*) read every page of the table, 8 KiB at a time.
n8k=$(sfs_log_count "$T/req2.log" read "pgdata/$relpath" 8192)
((n8k >= pages)) ||
	fail "request log: $n8k reads of 8192 bytes of pgdata/$relpath, expected at least its $pages pages; top rows:
$(sfs_log_summary "$T/req2.log")"
note "pass: $n8k reads of 8192 bytes logged for pgbench_accounts ($pages pages)"
