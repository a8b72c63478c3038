#!/bin/bash
# Space follows the file (issue 16).
#
# 1. A truncate frees every block wholly past the new end of file, a
#    KEEP_SIZE preallocation included, whatever the new size: on a 64 MiB
#    device with 4 KiB blocks and 1 MiB extents, `fallocate --keep-size -l
#    16M f`, a 100-byte append and `truncate -s 100 f` leave f 8 sectors
#    (one 4 KiB block) and df's available bytes exactly 4 KiB below the empty
#    mount's; a 100-byte file with 1 MiB kept past its end and truncated to
#    its own size goes the same way.
# 2. For every pattern (contiguous, single, interleaved, random, reverse)
#    on conf/equi-fragmented.ini (70K extents, 70K gaps for interleaved,
#    2K blocks) and a 64 MiB device: 1,000 rounds of "grow a 64 KiB file to
#    576 KiB (a 512 KiB write at 64 KiB), truncate it back to 64 KiB" never
#    fail, and after each round .scatterfs/stats used_bytes is exactly
#    65,536 and equals the catalog's extents plus gaps; the daemon reports
#    no internal error (a run freed twice).
# 3. In the same way, a punch hole of [64K, 576K) releases the gaps of the
#    extents it frees (interleaved, 200 rounds): what stays is the first
#    64 KiB, the last extent's 54 KiB past 576K and that extent's 70K gap.
# 4. Frees and syncs that overlap: on a 1 MiB device (64K extents), 20 s of
#    "write 512 KiB at 0, truncate to 0" make nearly every write find the
#    device full of runs waiting for the catalog, so it syncs while the
#    background syncer does too; each pending run must be freed exactly
#    once (no internal error in the daemon's log, no crash) and used_bytes
#    ends at 0.
# TIMEOUT: 600
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 python3

T=$SFS_TMP
M=$T/mnt
DEV=67108864

# --- 1. truncate frees what lies past the end ------------------------------
B=$T/backing.trunc
sfs_mount "$B" "$M" "size=$DEV,device.block_size=4K,layout.extent_size=1M"
# df's available bytes: statfs f_bavail x f_bsize
free_bytes() { df -B1 --output=avail "$M" | tail -n 1 | tr -d ' '; }
free0=$(free_bytes)
: >"$M/f"
fallocate --keep-size -l 16M "$M/f"
assert_eq "$(stat -c %b "$M/f")" 32768 "sectors of f after fallocate --keep-size -l 16M"
head -c 100 /dev/zero | tr '\0' a >>"$M/f"
truncate -s 100 "$M/f"
assert_eq "$(stat -c '%s %b %B' "$M/f")" "100 8 512" "size, sectors and sector size of f after truncate -s 100"
assert_eq "$(free_bytes)" $((free0 - 4096)) "df available bytes after truncate -s 100 (empty mount: $free0)"
assert_eq "$(head -c 100 "$M/f" | tr -d a | wc -c)" 0 "f still holds its 100 bytes"
# The same size: a truncate is how a caller drops a preallocation.
head -c 100 /dev/zero | tr '\0' b >"$M/g"
fallocate --keep-size -o 100 -l 1M "$M/g"
assert_eq "$(stat -c %b "$M/g")" 4096 "sectors of g: two 1 MiB extents, the second wholly past its end"
truncate -s 100 "$M/g"
assert_eq "$(stat -c '%s %b' "$M/g")" "100 8" "size and sectors of g after truncate to its own size"
assert_eq "$(free_bytes)" $((free0 - 8192)) "df available bytes with f and g"
used=$(sfs_stats "$M" used_bytes)
assert_eq "$used" 8192 ".scatterfs/stats used_bytes with f and g"
sfs_umount "$M"

# --- 2. and 3. grow and shrink, every pattern -------------------------------
# rounds.py MNT CATALOG ROUNDS MODE USED - MODE truncate or punch; USED the
# used bytes expected after each round.  Prints "ok".
cat >"$T/rounds.py" <<'EOF'
import ctypes, os, re, sqlite3, sys

mnt, catalog, rounds, mode, want = sys.argv[1:3] + [int(sys.argv[3]), sys.argv[4], int(sys.argv[5])]
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
PUNCH = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
K = 1024
path = os.path.join(mnt, "f")
stats = os.path.join(mnt, ".scatterfs", "stats")
db = sqlite3.connect("file:%s?mode=ro" % catalog, uri=True)

def used():
    with open(stats) as f:  # reading it flushes every inode to the catalog
        return int(re.search(r'"used_bytes": *(\d+)', f.read()).group(1))

def in_catalog():
    return db.execute("select (select coalesce(sum(length), 0) from extent) + "
                      "(select coalesce(sum(length), 0) from gap)").fetchone()[0]

fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.pwrite(fd, b"h" * 64 * K, 0)
data = b"d" * 512 * K
for i in range(1, rounds + 1):
    try:
        n = os.pwrite(fd, data, 64 * K)
    except OSError as e:
        sys.exit("round %d: write of 512 KiB at 64 KiB: %s (used_bytes %d)" % (i, e, used()))
    if n != len(data):
        sys.exit("round %d: short write %d" % (i, n))
    if mode == "truncate":
        os.ftruncate(fd, 64 * K)
    else:
        if libc.fallocate(fd, PUNCH, 64 * K, 512 * K) != 0:
            sys.exit("round %d: punch: %s" % (i, os.strerror(ctypes.get_errno())))
    u, c = used(), in_catalog()
    if u != c or u != want:
        sys.exit("round %d: used_bytes %d, catalog extents + gaps %d, expected %d" % (i, u, c, want))
os.close(fd)
print("ok")
EOF

for pattern in contiguous single interleaved random reverse; do
	B=$T/backing.$pattern
	opts="size=$DEV,config=$SFS_ROOT/conf/equi-fragmented.ini,layout.pattern=$pattern"
	[[ $pattern == single ]] && opts+=,layout.initial_size=1M
	sfs_mount "$B" "$M" "$opts"
	out=$(python3 "$T/rounds.py" "$M" "$B.scatterfs" 1000 truncate 65536 2>&1) ||
		fail "$pattern: grow to 576 KiB and truncate to 64 KiB: $out"
	assert_eq "$out" ok "$pattern: 1,000 rounds of grow and truncate"
	note "$pattern: 1,000 rounds of grow and truncate, used bytes exact"
	if [[ $pattern == interleaved ]]; then
		rm "$M/f"
		out=$(python3 "$T/rounds.py" "$M" "$B.scatterfs" 200 punch $((65536 + 55296 + 71680)) 2>&1) ||
			fail "$pattern: grow to 576 KiB and punch back to 64 KiB: $out"
		assert_eq "$out" ok "$pattern: 200 rounds of grow and punch"
	fi
	sfs_umount "$M"
	if grep -q "internal error" "$SFS_LAST_DLOG"; then
		fail "$pattern: the daemon reported internal errors: $(grep -m 3 "internal error" "$SFS_LAST_DLOG")"
	fi
done

# --- 4. overlapping syncs ------------------------------------------------------
cat >"$T/churn.py" <<'EOF'
import os, sys, time

path, secs = sys.argv[1], float(sys.argv[2])
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
data = b"d" * (512 * 1024)
end = time.monotonic() + secs
while time.monotonic() < end:
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, 0)
os.close(fd)
EOF
B=$T/backing.churn
sfs_mount "$B" "$M" "size=1M,device.block_size=4K,layout.extent_size=64K"
python3 "$T/churn.py" "$M/f" 20 || fail "churn: a write or truncate failed"
assert_eq "$(sfs_stats "$M" used_bytes)" 0 "churn: used_bytes at the end"
sfs_umount "$M"
if grep -q "internal error" "$SFS_LAST_DLOG"; then
	fail "churn: the daemon reported internal errors: $(grep -m 3 "internal error" "$SFS_LAST_DLOG")"
fi
