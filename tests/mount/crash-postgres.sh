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
psql_val() { "$PGBIN/psql" -h "$S" -p "$PORT" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

pm_pid=
writer_pid=
bench_pid=
# shellcheck disable=SC2016 # expanded when the hook runs
sfs_on_exit 'for p in $writer_pid $bench_pid; do kill -9 $p; done; [[ -n $pm_pid ]] && kill -9 $pm_pid'

pg_start() {
	sfs_pg_start "$D" "$1"
	pm_pid=$(head -n 1 "$D/postmaster.pid")
}

# pg_kill - PostgreSQL after its file system died: immediate shutdown
# (SIGQUIT) of the postmaster, SIGKILL after 10 s; waits for the postmaster
# and the children it had.
pg_kill() {
	local kids p t
	[[ -n $pm_pid ]] || return 0
	kids=$(ps -o pid= --ppid "$pm_pid" || true)
	kill -QUIT "$pm_pid" 2>/dev/null || true
	for ((t = 0; t < 100; t++)); do
		kill -0 "$pm_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pm_pid" 2>/dev/null || true
	for p in $kids; do
		for ((t = 0; t < 100; t++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null || true
	done
	pm_pid=
}

# The client: one psql session, one INSERT per transaction; an id is
# acknowledged once its RETURNING line came back (the COMMIT returned).
cat >"$T/writer.sh" <<EOF
#!/bin/bash
n=\$("$PGBIN/psql" -h "$S" -p "$PORT" -U postgres -d postgres -XAtq -c 'SELECT coalesce(max(id), 0) FROM acked') || exit 2
coproc P { exec "$PGBIN/psql" -h "$S" -p "$PORT" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 2>&1; }
echo "SET synchronous_commit = on;" >&\${P[1]}
echo "writer: started at id \$((n + 1))"
while :; do
	n=\$((n + 1))
	echo "INSERT INTO acked VALUES (\$n, repeat(md5(\$n::text), 1 + \$n % 16)) RETURNING id;" >&\${P[1]} || break
	IFS= read -r -t 60 line <&\${P[0]} || { echo "writer: no answer for id \$n"; exit 3; }
	[[ \$line == "\$n" ]] || { echo "writer: id \$n: \$line"; exit 3; }
	echo \$n >>"$T/ack"
	if ((n % 100 == 0)); then
		echo "CHECKPOINT; SELECT 'cp';" >&\${P[1]} || break
		IFS= read -r -t 60 line <&\${P[0]} || { echo "writer: no answer for checkpoint"; exit 3; }
		[[ \$line == cp ]] || { echo "writer: checkpoint: \$line"; exit 3; }
	fi
done
EOF

# check_db PHASE - acknowledged ids, payloads, pgbench balances
check_db() {
	local ack=0 out cnt mx bad
	[[ -s $T/ack ]] && ack=$(tail -n 1 "$T/ack")
	out=$(psql_val 'SELECT count(*), coalesce(max(id), 0),
		count(*) FILTER (WHERE pad IS DISTINCT FROM repeat(md5(id::text), 1 + (id % 16)::int)) FROM acked') ||
		fail "$1: querying acked: $out"
	IFS='|' read -r cnt mx bad <<<"$out"
	((mx >= ack)) || fail "$1: acknowledged inserts lost: max(id) = $mx, last acknowledged id = $ack"
	((mx <= ack + 1)) || fail "$1: max(id) = $mx but only $ack were acknowledged (at most one in flight)"
	assert_eq "$cnt" "$mx" "$1: count(*) of acked (ids 1..max(id) without gaps)"
	assert_eq "$bad" 0 "$1: rows of acked whose payload differs from what was inserted"
	((mx > ack)) && echo "$mx" >>"$T/ack"
	out=$(psql_val 'SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(bbalance) FROM pgbench_branches),
		(SELECT sum(tbalance) FROM pgbench_tellers), (SELECT coalesce(sum(delta), 0) FROM pgbench_history),
		(SELECT count(*) FROM pgbench_history)') || fail "$1: querying the pgbench tables: $out"
	IFS='|' read -r a b t h nh <<<"$out"
	[[ $a == "$b" && $a == "$t" && $a == "$h" ]] ||
		fail "$1: pgbench balances disagree (a transaction half there): accounts $a, branches $b, tellers $t, history $h"
	note "$1: acked ok, $cnt rows (last acknowledged $ack); pgbench balances $a over $nh history rows"
}

sfs_mount "$B" "$M" "$opts"
chown postgres:postgres "$M"
out=$(as_pg "$PGBIN/initdb" -D "$D" -U postgres --auth=trust -E UTF8 --no-locale -k 2>&1) ||
	fail "initdb on the mount: $out"
cat >>"$D/postgresql.conf" <<EOF
fsync = on
synchronous_commit = on
full_page_writes = on
shared_buffers = 4MB
min_wal_size = 32MB
max_wal_size = 48MB
checkpoint_timeout = 30s
EOF
pg_start "setup"
psql_val 'CREATE TABLE acked (id bigint PRIMARY KEY, pad text NOT NULL); CREATE EXTENSION amcheck;' >/dev/null
out=$("$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -i -s 1 postgres 2>&1) || fail "pgbench -i -s 1: $out"
note "initdb and pgbench -i -s 1 done"

start=$SECONDS
total=0
for ((r = 1; r <= rounds; r++)); do
	delay_ms=$((1000 + RANDOM % 3000))
	before=0
	[[ -s $T/ack ]] && before=$(tail -n 1 "$T/ack")
	"$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -n -c 2 -T 120 postgres >"$T/pgbench.$r.log" 2>&1 &
	bench_pid=$!
	bash "$T/writer.sh" >"$T/writer.$r.log" 2>&1 &
	writer_pid=$!
	sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
	kill -0 "$writer_pid" 2>/dev/null ||
		fail "round $r: the client stopped before the daemon was killed: $(cat "$T/writer.$r.log")"
	dpid=${SFS_PID[$M]}
	kill -9 "$dpid"
	wait "$dpid" 2>/dev/null || true
	unset "SFS_PID[$M]"
	pg_kill
	for p in $writer_pid $bench_pid; do
		for ((t = 0; t < 100; t++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	writer_pid='' bench_pid=''
	after=0
	[[ -s $T/ack ]] && after=$(tail -n 1 "$T/ack")
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
