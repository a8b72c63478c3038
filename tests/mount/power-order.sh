#!/bin/bash
# Ordered durability under a simulated power failure ([device] volatile),
# with exact contents after the crash and a remount, in every cache mode
# and on a second device:
#   1. a catalog sync never makes rows durable before the data they point
#      at (README: "a crash never shows one file's bytes in another"):
#      file A (900 KiB of 'S') fsynced and removed, the removal made
#      durable; then B (800 KiB of 'B', never fsynced) and a directory
#      fsync, or 1,200 creates that make SQLite checkpoint its WAL: after
#      the crash B holds its own bytes, never A's;
# TIMEOUT: 120
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
cat >"$T/two.ini" <<'INI'
[device]
volatile = true
[device "wal"]
backing = wal.img
size = 16M
volatile = true
[file "wal/*"]
device = wal
INI

# py CODE ARGS... - runs python3 CODE with os and sys imported, in $M
py() {
	(cd "$M" && python3 -c "import os, sys
def fill(p, byte, n, sync=0):
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | sync, 0o644)
    os.write(fd, byte * n)
    return fd
def dsync(p):
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.close(fd)
$1" "${@:2}")
}

# what FILE - 'SIZE BYTES' of FILE: its size and its distinct bytes in order of appearance
what() {
	python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
seen = []
for b in d:
    if b not in seen:
        seen.append(b)
        if len(seen) > 3: break
print(len(d), bytes(seen).replace(b"\0", b"0").decode())' "$1"
}

# start MODE CONFIG - a new file system on $T/b (and wal.img) with CONFIG, in cache mode MODE
start() {
	rm -f "$T/b" "$T"/b.scatterfs* "$T/wal.img"
	sfs_mount "$T/b" "$M" "size=16M,config=$T/$2,$(sfs_cache_opts "$1")"
	mkdir "$M/wal"
}

for mode in none kernel writeback; do
	# 1a. A directory fsync after an unsynced new file, on each device.
	start "$mode" two.ini
	py "for d in ['', 'wal/']:
    fd = fill(d + 'A', b'S', 900 << 10); os.fsync(fd); os.close(fd); os.unlink(d + 'A'); dsync(d or '.')
for d in ['', 'wal/']: os.close(fill(d + 'B', b'B', 800 << 10))
for d in ['', 'wal/']: dsync(d or '.')"
	sfs_crash "$M" crash
	sfs_mount "$T/b" "$M" "config=$T/two.ini,$(sfs_cache_opts "$mode")"
	for dir in "" wal/; do
		assert_eq "$(what "$M/${dir}B")" "819200 B" "$mode: ${dir}B after a directory fsync and a crash"
	done
	sfs_umount "$M"
done
# 1b. No fsync at all after the removal's: the catalog's checkpoint alone
# (1,200 creates fill SQLite's WAL past its 1,000-page checkpoint).
start none two.ini
py "for d in ['', 'wal/']:
    fd = fill(d + 'A', b'S', 6 << 20); os.fsync(fd); os.close(fd); os.unlink(d + 'A')
    fd = fill(d + 'C', b'c', 1); os.fsync(fd); os.close(fd)
for d in ['', 'wal/']: os.close(fill(d + 'B', b'B', 6 << 20))
os.mkdir('d')
for i in range(1200): os.close(os.open('d/f%d' % i, os.O_CREAT | os.O_WRONLY, 0o644))"
sfs_crash "$M" crash
sfs_mount "$T/b" "$M" "config=$T/two.ini"
n=$(find "$M/d" -type f | wc -l)
((n > 0)) || fail "no checkpoint: none of the 1,200 creates is durable"
for dir in "" wal/; do
	assert_eq "$(what "$M/${dir}B")" "6291456 B" "${dir}B after a checkpoint ($n creates durable) and a crash"
done
sfs_umount "$M"
