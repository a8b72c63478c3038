#!/bin/bash
# TIMEOUT: 180
# (it took 36 s on 2 vCPUs shared with other builds, 2026-12-01)
# Crash consistency with SQLite (issue 6, item 1a): a writer commits one row
# per transaction with PRAGMA synchronous=FULL and an increasing id, and
# appends each id to an acknowledgement file as soon as its COMMIT returned.
# At a random moment (fixed seed, printed) the daemon is killed with
# kill -9; the mount is unmounted (lazily if needed) and mounted again, and:
#   - .scatterfs/stats used_bytes equals the catalog's extents plus
#     reserved gaps, and no two catalog runs overlap on the device;
#   - PRAGMA integrity_check is ok for every database;
#   - every acknowledged commit is there: max(id) >= the last acknowledged
#     id, max(id) <= that id + 1 (one commit may have been in flight), and
#     count(*) = max(id) (ids have no gaps), and every row's payload is the
#     one written.
# Each writer also keeps an unlinked scratch file open (100,000 bytes,
# fsynced before the unlink), so every kill leaves an orphan inode in the
# catalog, which the next mount must drop without leaking its space.  A
# used_bytes mismatch fails the test at the end (with the orphans the
# catalog held before each mount), so the later rounds still run.
# Two databases on a random-fragmented layout: delete.db (rollback journal)
# and wal.db (WAL); the odd rounds write delete.db, the even rounds wal.db,
# and both are checked after every remount.
#
# Environment: SCATTERFS_CRASH_SEED (default 20261130),
# SCATTERFS_CRASH_ROUNDS (default 20).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
CAT=$B.scatterfs
opts="config=$SFS_ROOT/conf/random-fragmented.ini,size=512M"
seed=${SCATTERFS_CRASH_SEED:-20261130}
rounds=${SCATTERFS_CRASH_ROUNDS:-20}
RANDOM=$seed
note "seed $seed (SCATTERFS_CRASH_SEED=$seed replays the same delays), $rounds rounds"

# The writer and the checker (shared with power-sqlite.sh).
# shellcheck source=SCRIPTDIR/../sqlite_crash.sh
. "$SFS_ROOT/tests/sqlite_crash.sh"

sfs_mount "$B" "$M" "$opts"
start=$SECONDS
total=0
for ((r = 1; r <= rounds; r++)); do
	mode=delete
	((r % 2 == 0)) && mode=wal
	delay_ms=$((300 + RANDOM % 1700))
	before=0
	[[ -s $T/ack.$mode ]] && before=$(tail -n 1 "$T/ack.$mode")
	"$PY" "$SQLW" write "$M/$mode.db" "$mode" "$T/ack.$mode" FULL "$M/scratch.$r" 2>"$T/writer.$r.log" &
	writer_pid=$!
	sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
	kill -0 "$writer_pid" 2>/dev/null ||
		fail "round $r: the writer stopped before the daemon was killed: $(cat "$T/writer.$r.log")"
	dpid=${SFS_PID[$M]}
	kill -9 "$dpid"
	wait "$dpid" 2>/dev/null || true
	unset "SFS_PID[$M]"
	# The writer gets errors (ENOTCONN) and exits.
	for ((t = 0; t < 100; t++)); do
		kill -0 "$writer_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$writer_pid" 2>/dev/null; then
		kill -9 "$writer_pid"
		fail "round $r: the writer still ran 10 s after the daemon was killed"
	fi
	wait "$writer_pid" 2>/dev/null || true
	writer_pid=
	after=0
	[[ -s $T/ack.$mode ]] && after=$(tail -n 1 "$T/ack.$mode")
	total=$((total + after - before))
	note "round $r: $mode, killed daemon $dpid after ${delay_ms} ms, ids $((before + 1))..$after acknowledged; writer: $(tail -n 1 "$T/writer.$r.log")"
	sfs_remount_killed "$M" "$B" "$opts" "$CAT" "round $r"
	[[ -e $M/delete.db ]] && check_db "$M/delete.db" delete "$T/ack.delete" "round $r"
	[[ -e $M/wal.db ]] && check_db "$M/wal.db" wal "$T/ack.wal" "round $r"
	sfs_check_space "$M" "$CAT" "round $r after the checks"
done
((total > 0)) || fail "no commit was acknowledged in $rounds rounds"
sfs_umount "$M"
sfs_space_verdict "over $rounds rounds; every acknowledged commit was there"
note "pass: $rounds kills, $total commits acknowledged, none lost ($((SECONDS - start)) s)"
