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
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)
"$PY" -c 'import sqlite3' || fail "$PY has no sqlite3 module"
RANDOM=$seed
note "seed $seed (SCATTERFS_CRASH_SEED=$seed replays the same delays), $rounds rounds"

# The writer and the checker.  Payload of id n: deterministic, 64 bytes to
# 1.5 KiB, and 19 KiB (overflow pages) for every 50th id.
cat >"$T/sqlw.py" <<'EOF'
import hashlib, os, sqlite3, sys

def payload(n):
    h = hashlib.sha256(str(n).encode()).hexdigest()
    return h * (300 if n % 50 == 0 else 1 + n % 24)

def write(db, mode, ackpath, scratch):
    # A scratch file, fsynced, then unlinked but kept open for the life of
    # the writer (as programs do with temporary files): every kill finds
    # an unlinked, still-open file whose extents are in the catalog.
    s = os.open(scratch, os.O_RDWR | os.O_CREAT, 0o600)
    os.write(s, b"S" * 100000)
    os.fsync(s)
    os.unlink(scratch)
    c = sqlite3.connect(db, isolation_level=None, timeout=10)
    c.execute("PRAGMA synchronous=FULL")
    jm = c.execute("PRAGMA journal_mode=%s" % mode).fetchone()[0]
    if jm != mode:
        sys.exit("journal_mode is %s, expected %s" % (jm, mode))
    c.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, data TEXT NOT NULL)")
    n = c.execute("SELECT coalesce(max(id), 0) FROM t").fetchone()[0]
    fd = os.open(ackpath, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    print("writer: started at id %d" % (n + 1), file=sys.stderr, flush=True)
    while True:
        n += 1
        c.execute("BEGIN")
        c.execute("INSERT INTO t VALUES (?, ?)", (n, payload(n)))
        c.execute("COMMIT")
        os.write(fd, b"%d\n" % n)  # acknowledged: COMMIT returned

def check(db):
    # prints: integrity|count|max|bad payloads|journal_mode
    c = sqlite3.connect(db, isolation_level=None, timeout=10)
    ic = "/".join(r[0] for r in c.execute("PRAGMA integrity_check"))
    if ic != "ok":
        print("%s|-|-|-|-" % ic)
        return
    cnt, mx = c.execute("SELECT count(*), coalesce(max(id), 0) FROM t").fetchone()
    bad = [i for i, d in c.execute("SELECT id, data FROM t") if d != payload(i)]
    jm = c.execute("PRAGMA journal_mode").fetchone()[0]
    print("ok|%d|%d|%s|%s" % (cnt, mx, ",".join(map(str, bad[:10])) or "none", jm))

if __name__ == "__main__":
    try:
        if sys.argv[1] == "write":
            write(*sys.argv[2:6])
        else:
            check(sys.argv[2])
    except Exception as e:
        print("%s: %s: %s" % (sys.argv[1], type(e).__name__, e), file=sys.stderr)
        sys.exit(3)
EOF

writer_pid=
# shellcheck disable=SC2016 # expanded when the hook runs
sfs_on_exit '[[ -n $writer_pid ]] && kill -9 $writer_pid'

# check_db MODE PHASE - integrity, acknowledged ids, payloads
check_db() {
	local mode=$1 phase=$2 db=$M/$1.db ack=0 out ic cnt mx bad jm
	[[ -e $db ]] || return 0
	[[ -s $T/ack.$mode ]] && ack=$(tail -n 1 "$T/ack.$mode")
	out=$("$PY" "$T/sqlw.py" check "$db" 2>&1) || fail "$phase: checking $db: $out"
	IFS='|' read -r ic cnt mx bad jm <<<"$out"
	assert_eq "$ic" ok "$phase: PRAGMA integrity_check of $db"
	assert_eq "$jm" "$mode" "$phase: journal_mode of $db"
	((mx >= ack)) || fail "$phase: $db lost acknowledged commits: max(id) = $mx, last acknowledged id = $ack"
	((mx <= ack + 1)) || fail "$phase: $db has max(id) = $mx but only $ack were acknowledged (at most one in flight)"
	assert_eq "$cnt" "$mx" "$phase: count(*) of $db (ids 1..max(id) without gaps)"
	assert_eq "$bad" none "$phase: ids of $db whose payload differs from what was written"
	# The first writer of the next round continues after max(id): record a
	# commit that was in flight and survived as acknowledged by recovery.
	((mx > ack)) && echo "$mx" >>"$T/ack.$mode"
	note "$phase: $mode.db ok, $cnt rows (last acknowledged $ack)"
}

sfs_mount "$B" "$M" "$opts"
start=$SECONDS
total=0
for ((r = 1; r <= rounds; r++)); do
	mode=delete
	((r % 2 == 0)) && mode=wal
	delay_ms=$((300 + RANDOM % 1700))
	before=0
	[[ -s $T/ack.$mode ]] && before=$(tail -n 1 "$T/ack.$mode")
	"$PY" "$T/sqlw.py" write "$M/$mode.db" "$mode" "$T/ack.$mode" "$M/scratch.$r" 2>"$T/writer.$r.log" &
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
	check_db delete "round $r"
	check_db wal "round $r"
	sfs_check_space "$M" "$CAT" "round $r after the checks"
done
((total > 0)) || fail "no commit was acknowledged in $rounds rounds"
sfs_umount "$M"
sfs_space_verdict "over $rounds rounds; every acknowledged commit was there"
note "pass: $rounds kills, $total commits acknowledged, none lost ($((SECONDS - start)) s)"
