#!/bin/bash
# SQLite under simulated power failure (issue 27, item 4): a writer commits
# one row per transaction (PRAGMA synchronous=FULL for WAL, EXTRA for the
# rollback journal: with FULL, SQLite does not sync the directory after
# unlinking the journal, and this test lost the last acknowledged commit
# to the hot journal the crash brought back, as SQLite's documentation of
# EXTRA says it may; increasing ids) and
# appends each id to an acknowledgement file outside the mount as soon as
# its COMMIT returned.  At a seeded random moment after the first
# acknowledgement the control file's crash drops everything not yet
# durable ([device] volatile = true) and the daemon ends; the mount is
# mounted again and:
#   - PRAGMA integrity_check is ok;
#   - no acknowledged commit is lost: max(id) >= the last acknowledged id,
#     max(id) <= that id + 1 (one commit may have been in flight),
#     count(*) = max(id), every payload as written.
# The rounds alternate delete.db (rollback journal) and wal.db (WAL).
# Then the broken-flush variant: the same writer on a mount whose fault
# rule ignores every flush (flush = ignore: fsync reports success, nothing
# becomes durable); every round must detect lost commits (a check that
# fails, or max(id) below the last acknowledged id): the test can fail.
#
# Environment: SCATTERFS_CRASH_SEED (default 20261203),
# SCATTERFS_CRASH_ROUNDS (default 20; 4 with SCATTERFS_QUICK=1 and with
# SCATTERFS_ASAN=1, which tests/run sets in its ASan pass: there the value
# is the daemon's code paths, crash, remount and recovery, which every
# round takes alike; the 20 moments are the native pass's),
# SCATTERFS_BROKEN_ROUNDS (default 4; 2 with SCATTERFS_QUICK=1).
# TIMEOUT: 900
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
quick=${SCATTERFS_QUICK:-}
seed=${SCATTERFS_CRASH_SEED:-20261203}
rounds=${SCATTERFS_CRASH_ROUNDS:-$([[ -n $quick || -n ${SCATTERFS_ASAN:-} ]] && echo 4 || echo 20)}
broken=${SCATTERFS_BROKEN_ROUNDS:-$([[ -n $quick ]] && echo 2 || echo 4)}
RANDOM=$seed
note "seed $seed (SCATTERFS_CRASH_SEED=$seed replays the same moments), $rounds rounds, $broken broken-flush rounds"
opts="size=256M,device.layers=accounting:faults:timing:volatile:base,device.volatile=true"
cat >"$T/lie.ini" <<'INI'
[fault "lie"]
op = flush
flush = ignore
INI

# The writer and the checker (shared with crash-sqlite.sh).  FULL; EXTRA
# for the rollback journal, whose commit is the journal's unlink: SQLite
# syncs the directory after it only with EXTRA
# (sqlite.org/pragma.html#pragma_synchronous), so under FULL a power
# failure right after COMMIT may roll the last transaction back.
# shellcheck source=SCRIPTDIR/../sqlite_crash.sh
. "$SFS_ROOT/tests/sqlite_crash.sh"

# one_round DB MODE ACK OPTS PHASE - a writer on DB, crashed at a random
# moment after its first acknowledgement; the mount is back afterwards.
one_round() {
	local db=$1 mode=$2 ack=$3 o=$4 phase=$5 delay_ms t before pid
	delay_ms=$((50 + RANDOM % 1200))
	before=$(last_ack "$ack")
	"$PY" "$SQLW" write "$db" "$mode" "$ack" "$([[ $mode == delete ]] && echo EXTRA || echo FULL)" 2>"$T/writer.log" &
	writer_pid=$!
	for ((t = 0; t < 300; t++)); do
		(($(last_ack "$ack") > before)) && break
		kill -0 "$writer_pid" 2>/dev/null || fail "$phase: the writer stopped: $(cat "$T/writer.log")"
		sleep 0.05
	done
	(($(last_ack "$ack") > before)) || fail "$phase: no commit acknowledged in 15 s"
	sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
	kill -0 "$writer_pid" 2>/dev/null || fail "$phase: the writer stopped before the crash: $(cat "$T/writer.log")"
	sfs_power_fail "$M" crash
	sfs_reap "$writer_pid"
	kill -0 "$writer_pid" 2>/dev/null && { kill -9 "$writer_pid"; fail "$phase: the writer still ran 10 s after the crash"; }
	wait "$writer_pid" 2>/dev/null || true
	writer_pid=
	note "$phase: $mode, crash ${delay_ms} ms after the first acknowledgement, ids $((before + 1))..$(last_ack "$ack") acknowledged; $(grep -o 'crash: [0-9]* bytes.*dropped' "$SFS_LAST_DLOG" | tail -n 1)"
	sfs_umount_dead "$M" "$phase"
	sfs_mount "$B" "$M" "$o"
}

start=$SECONDS
sfs_mount "$B" "$M" "$opts"
for ((r = 1; r <= rounds; r++)); do
	mode=delete
	((r % 2 == 0)) && mode=wal
	one_round "$M/$mode.db" $mode "$T/ack.$mode" "$opts" "round $r"
	[[ -e $M/delete.db ]] && check_db "$M/delete.db" delete "$T/ack.delete" "round $r"
	[[ -e $M/wal.db ]] && check_db "$M/wal.db" wal "$T/ack.wal" "round $r"
done
sfs_umount "$M"
note "$rounds crashes, none lost an acknowledged commit ($((SECONDS - start)) s)"

# The broken-flush variant: every round must see lost commits.
B=$T/backing.lie
bopts="$opts,config=$T/lie.ini"
start=$SECONDS
sfs_mount "$B" "$M" "$bopts"
for ((r = 1; r <= broken; r++)); do
	mode=delete
	((r % 2 == 0)) && mode=wal
	db=$M/lie.$r.db ack=$T/ack.lie.$r
	one_round "$db" $mode "$ack" "$bopts" "broken round $r"
	a=$(last_ack "$ack")
	if out=$("$PY" "$SQLW" check "$db" 2>&1); then
		IFS='|' read -r ic cnt mx bad jm <<<"$out"
		[[ $ic != ok ]] || ((mx < a)) ||
			fail "broken round $r: flush = ignore lost nothing: max(id) = $mx, last acknowledged $a ($out)"
		note "broken round $r: detected: integrity $ic, max(id) ${mx} < last acknowledged $a"
	else
		note "broken round $r: detected: $out (last acknowledged $a)"
	fi
done
sfs_umount "$M"
note "pass: $rounds crashes without loss, $broken broken-flush crashes each detected ($((SECONDS - start)) s)"
