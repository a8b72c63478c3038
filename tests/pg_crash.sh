# shellcheck shell=bash
# PostgreSQL crash-test helpers, sourced by tests/mount/crash-postgres.sh and
# devices-postgres.sh after tests/lib.sh and sfs_pg_setup, with D (the data
# directory) and T set:
#   psql_val SQL           one query's result (rows |-separated)
#   pg_start PHASE / pg_stop PHASE / pg_kill
#                          the server, its postmaster's pid in pm_pid
#   pg_down                pg_kill, then the writer and pgbench
#                          (writer_pid, bench_pid) reaped
#   crash_daemon           kill -9 of the daemon of mount $M (its pid left
#                          in dpid), then pg_down
#   pg_round R DELAY_MS WHAT
#                          pgbench and the writer started for round R,
#                          DELAY_MS of load (before: the last id
#                          acknowledged until then, ack_last)
#   $T/writer.sh           the client that inserts one row per transaction
#                          into acked and appends each acknowledged id to
#                          $T/ack (a CHECKPOINT every PG_CHECKPOINT_EVERY
#                          rows when that is set and not 0)
#   check_db PHASE         every acknowledged id there, payloads intact,
#                          pgbench's balances agree
# writer_pid and bench_pid are for the caller's background jobs; a hook
# kills them and the postmaster when the test ends.

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

pg_stop() {
	local out
	out=$(as_pg "$PGBIN/pg_ctl" -D "$D" -w -t 120 -m fast stop 2>&1) || fail "$1: pg_ctl stop: $out"
	pm_pid=
}

# pg_kill - PostgreSQL after its file system died: immediate shutdown
# (SIGQUIT) of the postmaster, SIGKILL after 10 s; waits for the postmaster
# and the children it had.
pg_kill() {
	local kids
	[[ -n $pm_pid ]] || return 0
	kids=$(ps -o pid= --ppid "$pm_pid" || true)
	kill -QUIT "$pm_pid" 2>/dev/null || true
	# shellcheck disable=SC2086 # one pid a word
	sfs_reap -9 "$pm_pid" $kids
	pm_pid=
}

# pg_down - after the file system died under PostgreSQL: pg_kill, then
# the writer and pgbench (writer_pid, bench_pid) reaped
pg_down() {
	pg_kill
	# shellcheck disable=SC2086 # empty when not running
	sfs_reap -9 $writer_pid $bench_pid
	writer_pid='' bench_pid=''
}

# crash_daemon - the file system dies under PostgreSQL: kill -9 of M's
# daemon (pid in dpid), then pg_down.
crash_daemon() {
	dpid=${SFS_PID[$M]}
	kill -9 "$dpid"
	wait "$dpid" 2>/dev/null || true
	unset "SFS_PID[$M]"
	pg_down
}

# pg_round R DELAY_MS WHAT [CORRUPT_OK] - round R's load: pgbench (2
# clients) and the writer in the background (bench_pid, writer_pid), from
# acknowledged id before+1 (before set); after DELAY_MS, fails when the
# writer has already stopped ("... before WHAT").  With CORRUPT_OK (a round
# after one whose flushes were ignored, whose loss was detected then), a
# writer that stopped on a corrupt page (PostgreSQL's "page verification
# failed", "invalid page", a checksum) is that loss found again: it sets
# writer_corrupt to the writer's error line instead of failing.
pg_round() {
	local r=$1 delay_ms=$2
	before=$(ack_last)
	writer_corrupt=
	"$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -n -c 2 -T 120 postgres >"$T/pgbench.$r.log" 2>&1 &
	bench_pid=$!
	bash "$T/writer.sh" >"$T/writer.$r.log" 2>&1 &
	writer_pid=$!
	sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
	kill -0 "$writer_pid" 2>/dev/null && return 0
	if [[ -n ${4:-} ]]; then
		writer_corrupt=$(grep -m 1 -E 'page verification failed|invalid page|checksum' "$T/writer.$r.log")
		[[ -n $writer_corrupt ]] && return 0
	fi
	fail "round $r: the client stopped before $3: $(cat "$T/writer.$r.log")"
}

# ack_last - the last id the writer saw acknowledged (0 before any)
ack_last() { if [[ -s $T/ack ]]; then tail -n 1 "$T/ack"; else echo 0; fi; }

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
	if ((${PG_CHECKPOINT_EVERY:-0} && n % ${PG_CHECKPOINT_EVERY:-1} == 0)); then
		echo "CHECKPOINT; SELECT 'cp';" >&\${P[1]} || break
		IFS= read -r -t 60 line <&\${P[0]} || { echo "writer: no answer for checkpoint"; exit 3; }
		[[ \$line == cp ]] || { echo "writer: checkpoint: \$line"; exit 3; }
	fi
done
EOF

# check_db PHASE - acknowledged ids, payloads, pgbench balances
check_db() {
	local ack out cnt mx bad a b t h nh
	ack=$(ack_last)
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

