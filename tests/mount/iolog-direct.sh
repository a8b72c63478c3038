#!/bin/bash
# scatterfs-report --fio-iolog in file mode with --iolog-align replays with
# fio --direct=1.  SQLite builds and scans a table on a mount logging reads
# and writes (cache.mode=none: every request at its own, unaligned size;
# SQLite reads 100 bytes of its header).  The database is copied to an ext4
# loop image (O_DIRECT there needs 512-byte multiples).  The plain file-mode
# iolog of t.db fails there with fio --direct=1 (EINVAL, as reported); the
# one written with --iolog-align 4096 replays: fio exits 0 with no error,
# and fio's read and write bytes are exactly the sums of the iolog's read
# and write lengths, each line's offset and length being multiples of 4096
# that cover its request (checked against the log row by row).  The
# iolog's first line is the version line with the note that the ranges
# were rounded; a bad --iolog-align is refused with exit status 2.
# TIMEOUT: 240
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require fio sqlite3 mkfs.ext4 python3

T=$SFS_TMP
M=$T/mnt
E=$T/ext4
L=$T/requests.csv
REPORT=$SFS_BUILD/bench/scatterfs-report

sfs_mount "$T/backing" "$M" "size=256M,cache.mode=none,log=$L,log.ops=read:write"
sqlite3 "$M/t.db" "CREATE TABLE t (x INTEGER, s TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
INSERT INTO t SELECT i, printf('%050d', i) FROM c;" || fail "sqlite3 load"
assert_eq "$(sqlite3 "$M/t.db" 'SELECT count(*) FROM t')" 20000 "rows"
sfs_umount "$M"
sfs_mount "$T/backing" "$M" ""
truncate -s 64M "$T/ext4.img"
mkfs.ext4 -q -F -b 4096 "$T/ext4.img"
mkdir -p "$E"
mount -o loop "$T/ext4.img" "$E"
sfs_on_exit "umount -l '$E'"
cp "$M/t.db" "$E/t.db"
sfs_umount "$M"
sync

unaligned=$(sfs_log_awk "$L" 'NR > 1 && $f_path == "t.db" && ($f_offset % 512 || $f_size % 512) { n++ } END { print n + 0 }' "$L")
((unaligned > 0)) || fail "the log has no unaligned request of t.db (the test needs one)"
note "$unaligned unaligned requests of t.db in the log"

# the plain iolog: fio --direct=1 refuses it
"$REPORT" "$L" --path t.db --fio-iolog "$T/plain.iolog" --iolog-dir "$E" >/dev/null 2>"$T/plain.err" ||
	fail "scatterfs-report --fio-iolog: $(cat "$T/plain.err")"
rc=0
fio --name=plain --read_iolog="$T/plain.iolog" --direct=1 --ioengine=psync --replay_no_stall=1 \
	--output-format=json --output="$T/plain.json" >"$T/plain.fio" 2>&1 || rc=$?
sfs_add_log "$T/plain.fio"
if ((rc == 0)) && ! grep -q 'Invalid argument' "$T/plain.fio" "$T/plain.json"; then
	fail "fio --direct=1 replayed the unaligned iolog without an error (the premise of the test)"
fi
note "plain iolog: fio --direct=1 failed (exit $rc: $(grep -m1 -o 'io_u error.*' "$T/plain.fio"))"

# the aligned one replays
"$REPORT" "$L" --path t.db --fio-iolog "$T/aligned.iolog" --iolog-dir "$E" --iolog-align 4096 \
	>/dev/null 2>"$T/aligned.err" || fail "scatterfs-report --iolog-align: $(cat "$T/aligned.err")"
sfs_add_log "$T/aligned.iolog"
assert_eq "$(head -n 1 "$T/aligned.iolog")" \
	"fio version 3 iolog (scatterfs-report --iolog-align 4096: every range rounded out to 4096-byte boundaries, for fio --direct=1)" \
	"the aligned iolog's first line"
# each line against its log row, in request order (ts_us): the rounded-out range
python3 - "$L" "$T/aligned.iolog" "$E/t.db" <<'PY' || fail "the aligned iolog does not match the log"
import csv, sys
log, iolog, name = sys.argv[1:4]
want = []
with open(log, newline="") as f:
    r = csv.DictReader(f)
    for row in r:
        if row["path"] != "t.db" or row["op"] not in ("read", "write") or int(row["result"]) <= 0:
            continue
        off, n = int(row["offset"]), min(int(row["result"]), int(row["size"]))
        lo, hi = off // 4096 * 4096, -(-(off + n) // 4096) * 4096
        want.append((int(row["ts_us"]), len(want), (row["op"], lo, hi - lo)))
want = [w for _, _, w in sorted(want)]  # in request order (ts_us), as scatterfs-report takes rows
got = []
for line in open(iolog).read().splitlines()[1:]:
    x = line.split()
    if len(x) == 5 and x[2] in ("read", "write"):
        assert x[1] == name, line
        got.append((x[2], int(x[3]), int(x[4])))
if got != want:
    sys.exit(f"{len(got)} I/O lines, {len(want)} log rows; first difference: "
             f"{next(((g, w) for g, w in zip(got, want) if g != w), None)}")
print(f"{len(got)} I/O lines, each the rounded-out range of its log row", file=sys.stderr)
PY
rc=0
fio --name=aligned --read_iolog="$T/aligned.iolog" --direct=1 --ioengine=psync --replay_no_stall=1 \
	--output-format=json --output="$T/aligned.json" >"$T/aligned.fio" 2>&1 || rc=$?
sfs_add_log "$T/aligned.fio"
assert_eq "$rc" 0 "fio --direct=1 on the aligned iolog: exit status ($(cat "$T/aligned.fio"))"
read -r err rb wb <<<"$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["error"], j["read"]["io_bytes"], j["write"]["io_bytes"])' "$T/aligned.json")"
assert_eq "$err" 0 "fio's error"
assert_eq "$rb" "$(awk '$3 == "read" { s += $5 } END { print s + 0 }' "$T/aligned.iolog")" "fio's read bytes = the iolog's"
assert_eq "$wb" "$(awk '$3 == "write" { s += $5 } END { print s + 0 }' "$T/aligned.iolog")" "fio's write bytes = the iolog's"
((rb > 0 && wb > 0)) || fail "nothing replayed (read $rb, write $wb bytes)"
note "aligned iolog: fio --direct=1 replayed $rb bytes of reads and $wb of writes"

for bad in 0 1000 3M -4096 4k; do
	rc=0
	"$REPORT" "$L" --fio-iolog "$T/bad.iolog" --iolog-align "$bad" >/dev/null 2>"$T/bad.err" || rc=$?
	assert_eq "$rc" 2 "--iolog-align $bad: exit status"
	grep -q "^scatterfs-report: --iolog-align '$bad': expected a power of two of bytes from 512 to 1048576" "$T/bad.err" ||
		fail "--iolog-align $bad: $(cat "$T/bad.err")"
done
rc=0
"$REPORT" "$L" --iolog-align 4096 >/dev/null 2>"$T/bad.err" || rc=$?
assert_eq "$rc" 2 "--iolog-align without --fio-iolog: exit status"
note "pass"
