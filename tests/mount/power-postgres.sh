#!/bin/bash
# PostgreSQL under simulated power failure (issue 27, item 4): pgbench and
# a client that counts acknowledged inserts (tests/pg_crash.sh) run on a
# mount with [device] volatile = true; at a seeded random moment the
# control file's crash drops everything not yet durable and the daemon
# ends; the mount is mounted again, PostgreSQL starts (crash recovery),
# and every acknowledged insert is there, payloads intact, pgbench's
# balances agree (check_db); pg_amcheck after the last round.
# Then the broken-flush variant: a fault rule ignores every flush (fsync
# reports success, nothing becomes durable); each such round must detect
# the loss: PostgreSQL does not start (which ends the variant: no server
# for another round), or acknowledged inserts are gone.
#
# Environment: SCATTERFS_CRASH_SEED (default 20261203),
# SCATTERFS_CRASH_ROUNDS (default 20; 3 with SCATTERFS_QUICK=1; 4 with
# SCATTERFS_ASAN=1, which tests/run sets in its ASan pass: there the value
# is the daemon's code paths, crash, remount and the recovery's I/O, which
# every round takes alike; the 20 moments are the native pass's),
# SCATTERFS_BROKEN_ROUNDS (default 2; 1 with SCATTERFS_QUICK=1).
# TIMEOUT: 1200
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
D=$M/pgdata
quick=${SCATTERFS_QUICK:-}
opts="allow_other,config=$SFS_ROOT/conf/postgres.ini,size=1G,device.layers=accounting:faults:timing:volatile:base,device.volatile=true"
seed=${SCATTERFS_CRASH_SEED:-20261203}
rounds=20
[[ -n ${SCATTERFS_ASAN:-} ]] && rounds=4
[[ -n $quick ]] && rounds=3
rounds=${SCATTERFS_CRASH_ROUNDS:-$rounds}
broken=${SCATTERFS_BROKEN_ROUNDS:-$([[ -n $quick ]] && echo 1 || echo 2)}
RANDOM=$seed
note "seed $seed (SCATTERFS_CRASH_SEED=$seed replays the same moments), $rounds rounds, $broken broken-flush rounds"

sfs_pg_setup 54337
PG_CHECKPOINT_EVERY=100
. "$SFS_ROOT/tests/pg_crash.sh"

# ctl CMD - one command on the control file, its reply printed
ctl() { sfs_ctl "$M" "$1"; }

# power_fail - the control file's crash, then what is left of PostgreSQL
# and the clients; the dead mount unmounted
power_fail() {
	sfs_power_fail "$M" crash
	pg_down
	sfs_umount_dead "$M"
}

# run_round R - pgbench and the client, crashed at a random moment
run_round() { # R [CORRUPT_OK]
	local r=$1 delay_ms
	delay_ms=$((500 + RANDOM % 2500))
	pg_round "$r" "$delay_ms" "the crash" "${2:-}"
	power_fail
	after=$(ack_last)
	note "round $r: crash after ${delay_ms} ms, ids $((before + 1))..$after acknowledged; $(grep -o 'crash: [0-9]* bytes.*dropped' "$SFS_LAST_DLOG" | tail -n 1)"
	sfs_mount "$B" "$M" "$opts"
}

sfs_mount "$B" "$M" "$opts"
chown postgres:postgres "$M"
sfs_pg_initdb "$D" "initdb on the mount" -k -- "fsync = on" "synchronous_commit = on" "full_page_writes = on" \
	"shared_buffers = 4MB" "min_wal_size = 32MB" "max_wal_size = 48MB" "checkpoint_timeout = 30s"
sync "$D/postgresql.conf"
pg_start "setup"
psql_val 'CREATE TABLE acked (id bigint PRIMARY KEY, pad text NOT NULL); CREATE EXTENSION amcheck;' >/dev/null
out=$("$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -i -s 1 postgres 2>&1) || fail "pgbench -i -s 1: $out"
psql_val 'CHECKPOINT' >/dev/null
note "initdb and pgbench -i -s 1 done"

start=$SECONDS
for ((r = 1; r <= rounds; r++)); do
	run_round "$r"
	logpos=$(wc -l <"$PGLOG")
	pg_start "round $r"
	tail -n +$((logpos + 1)) "$PGLOG" | grep -q "was not properly shut down; automatic recovery in progress" ||
		fail "round $r: no crash recovery in the server log"
	check_db "round $r"
done
out=$(as_pg "$PGBIN/pg_amcheck" -h "$S" -p "$PORT" -U postgres --heapallindexed -d postgres 2>&1) ||
	fail "pg_amcheck after round $rounds: $out"
note "$rounds crashes, none lost an acknowledged insert; pg_amcheck: no corruption ($((SECONDS - start)) s)"

# The broken-flush variant: from here every flush is ignored.
assert_eq "$(ctl 'fault add lie op=flush flush=ignore')" ok "fault add lie"
ran=0
for ((b = 1; b <= broken; b++)); do
	r=$((rounds + b))
	ran=$b
	# From the second on, the writer may find a page the last round lost
	# (its loss detected then) and stop: that loss again, so the last round.
	run_round "$r" "$( ((b > 1)) && echo 1)"
	if [[ -n $writer_corrupt ]]; then
		note "broken round $b: detected: the client stopped on a page the last round lost: $writer_corrupt"
		break
	fi
	assert_eq "$(ctl 'fault add lie op=flush flush=ignore')" ok "fault add lie after the remount"
	logpos=$(wc -l <"$PGLOG")
	if out=$(as_pg "$PGBIN/pg_ctl" -D "$D" -l "$PGLOG" -w -t 60 \
		-o "-p $PORT -k $S -c listen_addresses=''" start 2>&1); then
		pm_pid=$(head -n 1 "$D/postmaster.pid")
		ack=$(tail -n 1 "$T/ack")
		mx=$(psql_val 'SELECT coalesce(max(id), 0) FROM acked' 2>&1) || mx="error: $mx"
		[[ $mx =~ ^[0-9]+$ ]] && ((mx >= ack)) &&
			fail "broken round $b: flush = ignore lost nothing: max(id) = $mx, last acknowledged $ack"
		note "broken round $b: detected: max(id) = $mx, last acknowledged $ack"
		# the server stays up for the next round's clients
	else
		note "broken round $b: detected: PostgreSQL does not start: $(tail -n +$((logpos + 1)) "$PGLOG" | grep -m1 -E 'PANIC|FATAL')"
		((b < broken)) && note "no server for the remaining broken rounds: stopping here"
		break
	fi
done
pg_kill
pm_pid=
sfs_umount "$M"
note "pass: $rounds crashes without loss, $ran broken-flush crashes each detected ($((SECONDS - start)) s)"
