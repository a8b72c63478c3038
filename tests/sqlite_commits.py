"""The SQLite client of the crash tests (crash-sqlite.sh: kill -9 of the
daemon; power-sqlite.sh: simulated power failure).

    sqlite_commits.py write DB MODE ACKFILE SYNCHRONOUS [SCRATCH]
        journal_mode MODE (delete or wal), PRAGMA synchronous SYNCHRONOUS;
        commits one row a transaction, ids 1, 2, ... on from max(id), and
        appends each id to ACKFILE once its COMMIT returned (acknowledged),
        until killed.  With SCRATCH: first a 100,000-byte file, fsynced,
        unlinked and kept open for the writer's life (an orphan inode at
        every kill).
    sqlite_commits.py check DB
        prints integrity|count|max|bad payloads|journal_mode
        (PRAGMA integrity_check's text and dashes when it is not ok).

Payload of id n: deterministic, 64 bytes to 1.5 KiB, and 19 KiB (overflow
pages) for every 50th id.  Exit 3 with one line on stderr on an error.
"""
import hashlib, os, sqlite3, sys


def payload(n):
    h = hashlib.sha256(str(n).encode()).hexdigest()
    return h * (300 if n % 50 == 0 else 1 + n % 24)


def write(db, mode, ackpath, synchronous, scratch=None):
    if scratch:
        s = os.open(scratch, os.O_RDWR | os.O_CREAT, 0o600)
        os.write(s, b"S" * 100000)
        os.fsync(s)
        os.unlink(scratch)
    c = sqlite3.connect(db, isolation_level=None, timeout=10)
    c.execute("PRAGMA synchronous=%s" % synchronous)
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
            write(*sys.argv[2:7])
        else:
            check(sys.argv[2])
    except Exception as e:
        print("%s: %s: %s" % (sys.argv[1], type(e).__name__, e), file=sys.stderr)
        sys.exit(3)
