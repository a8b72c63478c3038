#!/bin/bash
# TIMEOUT: 400
# (it took 93 s on 2 vCPUs shared with other builds, 2026-12-01)
# Crash consistency with PostgreSQL 15 (issue 6, item 1b).  initdb (with
# data checksums) and pgbench -i -s 1 on a mount of conf/postgres.ini, then
# rounds of: start PostgreSQL (crash recovery from the second round on),
# run pgbench -n -c 2 as background load (-n: no VACUUM, and above all no
# TRUNCATE of pgbench_history, whose sum of deltas is checked) and a client that inserts one row per
# transaction with an increasing id (synchronous_commit = on, autocommit)
# and appends each id to an acknowledgement file once psql has printed the
# INSERT's RETURNING value, issuing a CHECKPOINT every 100 rows so data
# files are written and fsynced and WAL segments recycled; at a random
# moment (fixed seed, printed) kill -9 the daemon, kill what is left of
# PostgreSQL (SIGQUIT, then SIGKILL), unmount (lazily if needed), remount
# and check:
#   - .scatterfs/stats used_bytes equals the catalog's extents plus gaps
#     (a mismatch fails the test at the end, so later rounds still run),
#     and no two catalog runs overlap on the device;
#   - PostgreSQL starts (recovers);
#   - every acknowledged insert is there: max(id) >= the last acknowledged
#     id, max(id) <= that id + 1, count(*) = max(id), payloads intact;
#   - pgbench's transactions are atomic: sum(abalance) of the accounts =
#     sum(bbalance) of the branches = sum(tbalance) of the tellers =
#     sum(delta) of the history;
#   - pg_amcheck (heap and B-tree indexes) reports nothing, at the end.
#
# Environment: SCATTERFS_CRASH_SEED (default 20261130),
# SCATTERFS_CRASH_ROUNDS (default 10).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
CAT=$B.scatterfs
D=$M/pgdata
opts="allow_other,config=$SFS_ROOT/conf/postgres.ini,size=1G"
seed=${SCATTERFS_CRASH_SEED:-20261130}
rounds=${SCATTERFS_CRASH_ROUNDS:-10}
RANDOM=$seed
note "seed $seed (SCATTERFS_CRASH_SEED=$seed replays the same delays), $rounds rounds"

sfs_pg_setup 54331
PG_CHECKPOINT_EVERY=100
# shellcheck source=SCRIPTDIR/../pg_crash.sh
. "$SFS_ROOT/tests/pg_crash.sh"

sfs_mount "$B" "$M" "$opts"
chown postgres:postgres "$M"
sfs_pg_initdb "$D" "initdb on the mount" -k -- "fsync = on" "synchronous_commit = on" "full_page_writes = on" \
	"shared_buffers = 4MB" "min_wal_size = 32MB" "max_wal_size = 48MB" "checkpoint_timeout = 30s"
pg_start "setup"
psql_val 'CREATE TABLE acked (id bigint PRIMARY KEY, pad text NOT NULL); CREATE EXTENSION amcheck;' >/dev/null
out=$("$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -i -s 1 postgres 2>&1) || fail "pgbench -i -s 1: $out"
note "initdb and pgbench -i -s 1 done"

start=$SECONDS
total=0
for ((r = 1; r <= rounds; r++)); do
	delay_ms=$((1000 + RANDOM % 3000))
	pg_round "$r" "$delay_ms" "the daemon was killed"
	crash_daemon
	after=$(ack_last)
	total=$((total + after - before))
	note "round $r: killed daemon $dpid after ${delay_ms} ms, ids $((before + 1))..$after acknowledged; client: $(tail -n 1 "$T/writer.$r.log")"
	sfs_remount_killed "$M" "$B" "$opts" "$CAT" "round $r"
	logpos=$(wc -l <"$PGLOG")
	pg_start "round $r"
	tail -n +$((logpos + 1)) "$PGLOG" | grep -q "was not properly shut down; automatic recovery in progress" ||
		fail "round $r: no crash recovery in the server log"
	check_db "round $r"
	if ((r == rounds)); then
		out=$(as_pg "$PGBIN/pg_amcheck" -h "$S" -p "$PORT" -U postgres --heapallindexed -d postgres 2>&1) ||
			fail "pg_amcheck after round $r: $out"
		note "pg_amcheck: no corruption"
		out=$(as_pg "$PGBIN/pg_ctl" -D "$D" -w -t 120 -m fast stop 2>&1) || fail "pg_ctl stop: $out"
		pm_pid=
	fi
	sfs_check_space "$M" "$CAT" "round $r after recovery"
done
((total > 0)) || fail "no insert was acknowledged in $rounds rounds"
sfs_umount "$M"
sfs_space_verdict "over $rounds rounds; every acknowledged insert was there"
note "pass: $rounds kills, $total inserts acknowledged, none lost ($((SECONDS - start)) s)"
