#!/bin/bash
# TIMEOUT: 120
# EXCLUSIVE: it times 200 fdatasyncs against the 5 s flush and a read against a flush (tests/run runs it alone)
# fdatasync as ext4 gives it (issue 17): an fdatasync of a file whose size
# and extents did not change (a database's log, overwritten in place) makes
# the data durable with the device flush alone: no synchronous catalog
# commit, so no fsync of the catalog.  fsync, and fdatasync after the size
# changed, commit the catalog as before.
# Counted with .scatterfs/stats catalog_syncs (synchronous commits):
# - 200 in-place 4 KiB overwrites, each followed by fdatasync: at most 1
#   (the background flush, every 5 s, may fall in the window, which is
#   asserted to be under 5 s); before this change, 200 or more;
# - 20 in-place overwrites each followed by fsync: 20 or 21;
# - 20 appends each followed by fdatasync: 20 or 21, and as many catalog
#   commits in all (the size, the extents and the sync in one transaction);
# - a new file's fdatasync and then its directory's: 1 (before, 2);
# and then a kill -9 of the daemon right after the last append's
# fdatasync: after the remount the file has the size and the bytes of
# every append, and the overwritten blocks hold their last bytes.
# Last, the device flush of such an fdatasync holds no lock of the file:
# with 384 MiB of another file's writes dirty in the backing's page cache
# (device.direct = false), so that flushing the backing takes a while, a
# 4 KiB read of the file issued 50 ms into its fdatasync takes less than
# half the fdatasync's time (with the lock held through the flush, it took
# all but those 50 ms); skipped when the flush took under 0.2 s (nothing
# to tell apart).  A write would not show it: the kernel's FUSE client holds
# the inode's own lock through an fsync and through each write.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
CAT=$B.scatterfs
opts="size=1G,layout.pattern=contiguous,device.direct=false"
sfs_mount "$B" "$M" "$opts"

syncs() { sfs_stats "$M" catalog_syncs; }

# sync_loop MODE N: MODE overwrite-datasync, overwrite-fsync or append-datasync;
# prints the seconds the N cycles took
sync_loop() {
	python3 - "$M/f" "$1" "$2" <<'EOF2'
import os, sys, time
path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(path, os.O_RDWR)
t0 = time.monotonic()
for i in range(n):
    if mode.startswith("overwrite"):
        os.pwrite(fd, bytes([i % 251 + 1]) * 4096, (i % 16) * 4096)
    else:
        os.pwrite(fd, bytes([0x41 + i % 26]) * 4096, os.fstat(fd).st_size)
    (os.fdatasync if mode.endswith("datasync") else os.fsync)(fd)
print("%.3f" % (time.monotonic() - t0))
os.close(fd)
EOF2
}

python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b"\0" * 65536)
os.fsync(fd)
os.close(fd)' "$M/f" || fail "creating the file"

s0=$(syncs)
secs=$(sync_loop overwrite-datasync 200) || fail "overwrite + fdatasync"
s1=$(syncs)
note "200 overwrites + fdatasync in $secs s: $((s1 - s0)) catalog syncs"
awk -v s="$secs" 'BEGIN { exit !(s < 5) }' || sfs_skip "200 fdatasync took $secs s, not under 5 s: the background flush cannot be told apart"
(((s1 - s0) <= 1)) || fail "200 fdatasync of in-place overwrites made $((s1 - s0)) synchronous catalog commits, expected 0 (1 when the background flush fell among them)"

s0=$(syncs)
secs=$(sync_loop overwrite-fsync 20) || fail "overwrite + fsync"
s1=$(syncs)
note "20 overwrites + fsync in $secs s: $((s1 - s0)) catalog syncs"
(((s1 - s0) == 20 || (s1 - s0) == 21)) || fail "20 fsync made $((s1 - s0)) synchronous catalog commits, expected 20 (21 with the background flush)"

s0=$(syncs)
c0=$(sfs_stats "$M" catalog_commits)
secs=$(sync_loop append-datasync 20) || fail "append + fdatasync"
s1=$(syncs)
c1=$(sfs_stats "$M" catalog_commits)
note "20 appends + fdatasync in $secs s: $((s1 - s0)) catalog syncs"
(((s1 - s0) == 20 || (s1 - s0) == 21)) || fail "20 fdatasync after appends made $((s1 - s0)) synchronous catalog commits, expected 20 (21 with the background flush)"
# ... and each commits the size and the extents with the sync itself: one
# transaction (before, three: the attributes, the extents, the sync).
(((c1 - c0) == 20 || (c1 - c0) == 21)) || fail "20 fdatasync after appends made $((c1 - c0)) catalog commits, expected 20 (21 with the background flush)"

# A directory: a new file's fdatasync and then its directory's, as SQLite
# does after it creates its journal, make one synchronous commit: the
# entry was committed when it was made and made durable by the file's
# sync, and a directory's fdatasync, as ext4's, leaves its new mtime in
# memory (before, the directory's mtime was committed and synced again: 2).
# (No stats are read between the create and the syncs: reading them
# commits every inode's attributes.)
d_syncs=$(python3 - "$M" <<'EOF2'
import json, os, sys
m = sys.argv[1]
syncs = lambda: json.load(open(os.path.join(m, ".scatterfs/stats")))["catalog_syncs"]
counts = []
for i in range(3):  # the fewest of 3 tries: the background flush may fall in one
    s0 = syncs()
    f = os.open(os.path.join(m, "journal%d" % i), os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(f, b"j" * 4096)
    os.fdatasync(f)
    d = os.open(m, os.O_RDONLY | os.O_DIRECTORY)
    os.fdatasync(d)
    counts.append(syncs() - s0)
    os.close(d)
    os.close(f)
print(min(counts))
EOF2
) || fail "the new file's and its directory's fdatasync"
note "a new file's fdatasync, then its directory's: $d_syncs synchronous commits"
assert_eq "$d_syncs" 1 "synchronous catalog commits of a new file's fdatasync and then its directory's"

# Crash right after the last fdatasync.
kill -9 "${SFS_PID[$M]}"
wait "${SFS_PID[$M]}" 2>/dev/null || true
sfs_remount_killed "$M" "$B" "$opts" "$CAT" "kill -9"
assert_eq "$(stat -c %s "$M/f")" $((65536 + 20 * 4096)) "size after kill -9: 64 KiB and 20 appended blocks"
for ((i = 0; i < 20; i++)); do
	c=$(printf '\\%03o' $((0x41 + i % 26)))
	sfs_bytes_are "$M/f" $((65536 + i * 4096)) 4096 "$c" || fail "appended block $i is not its bytes after kill -9"
done
# The last fsync'd overwrites: cycle i wrote byte i % 251 + 1 at block i % 16 (i < 20).
for ((blk = 0; blk < 16; blk++)); do
	i=$((blk < 4 ? blk + 16 : blk))
	c=$(printf '\\%03o' $((i % 251 + 1)))
	sfs_bytes_are "$M/f" $((blk * 4096)) 4096 "$c" || fail "block $blk does not hold its last fsync'd bytes after kill -9"
done
sfs_space_verdict "the file's size and bytes survived"

out=$(python3 - "$M/f" "$M/g" <<'EOF2'
import os, sys, threading, time
f = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(f, b"\1" * 4096, 0)
os.fdatasync(f)
g = os.open(sys.argv[2], os.O_CREAT | os.O_WRONLY, 0o644)
chunk = b"\2" * 1048576
for _ in range(384):
    os.write(g, chunk)
r = os.open(sys.argv[1], os.O_RDONLY)
done = {}
def sync():
    t = time.monotonic()
    os.fdatasync(f)
    done["sync"] = (t, time.monotonic())
th = threading.Thread(target=sync)
th.start()
time.sleep(0.05)
t = time.monotonic()
data = os.pread(r, 4096, 0)
w = time.monotonic()
if data != b"\1" * 4096:
    sys.exit("the read during the fdatasync returned other bytes")
th.join()
s0, s1 = done["sync"]
print("%.3f %.3f %d" % (s1 - s0, w - t, w - t < (s1 - s0) / 2))
EOF2
) || fail "the fdatasync and the read during it"
read -r sync_s write_s before <<<"$out"
note "fdatasync during 384 MiB of dirty backing: $sync_s s; a read issued 50 ms in: $write_s s"
awk -v s="$sync_s" 'BEGIN { exit !(s >= 0.2) }' || sfs_skip "the backing flushed in $sync_s s: too fast to tell a write that waits for it"
assert_eq "$before" 1 "the read issued during the fdatasync took under half its time ($write_s s against $sync_s s)"
note "pass"
