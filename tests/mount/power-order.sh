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
#   2. a write with O_DSYNC (open(2)'s, pwritev2's RWF_DSYNC) or O_SYNC is
#      durable when it returns: an overwrite, a new file, an extending
#      write all survive the crash; each such write is one flush in
#      .scatterfs/stats, and a fault rule that fails flushes fails it;
#   3. an fsync flushes its file's device only: a never-synced overwrite
#      on main is undone by the crash after the fsync of a file on wal;
#      the flush of main that a catalog sync needs first (a new file's
#      data on main) is seen by an op = flush device = main rule (here one
#      that ignores it, so that new file reads as zeros after the crash);
#   4. zeros written in place are ordered data: a truncate into a block
#      and a zero range inside one that grows the file, then a directory
#      fsync: after the crash the block's tail is zeros, not the old bytes
#      (they came back: the zeros' device was not flushed first);
#   5. an O_DSYNC write is durable by the mode of the handle, not of the
#      name: a file opened under cache.mode = none and renamed under a
#      kernel-mode rule (its write was answered undurable, no flush), and
#      the reverse (two flushes): one flush each, both survive the crash.
# TIMEOUT: 300
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
cat >"$T/two.ini" <<'INI'
[device]
layers = accounting, faults, timing, volatile, base
volatile = true
[device "wal"]
backing = wal.img
size = 16M
layers = accounting, faults, timing, volatile, base
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
seen = sorted(set(d), key=d.index)
print(len(d), bytes(seen).replace(b"\0", b"0").decode())' "$1"
}

# start MODE CONFIG - a new file system on $T/b (and wal.img) with CONFIG, in cache mode MODE
start() {
	rm -f "$T/b" "$T"/b.scatterfs* "$T/wal.img"
	sfs_mount "$T/b" "$M" "size=16M,config=$T/$2,$(sfs_cache_opts "$1")"
	mkdir "$M/wal"
}

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

# flushes DEV - the device's flush count in .scatterfs/stats
flushes() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["devices"][sys.argv[2]]["flushes"])' "$M/.scatterfs/stats" "$1"
}

for mode in none kernel writeback; do
	start "$mode" two.ini
	# 1a. A directory fsync after an unsynced new file, on each device.
	py "for d in ['', 'wal/']:
    fd = fill(d + 'A', b'S', 900 << 10); os.fsync(fd); os.close(fd); os.unlink(d + 'A'); dsync(d or '.')
for d in ['', 'wal/']: os.close(fill(d + 'B', b'B', 800 << 10))
for d in ['', 'wal/']: dsync(d or '.')"
	# 2. O_DSYNC, O_SYNC and RWF_DSYNC writes, on each device.
	py "for d in ['', 'wal/']:
    for f in 'f', 'h':
        fd = fill(d + f, b'1', 4096); os.fsync(fd); os.close(fd)
    dsync(d or '.')"
	for dir in "" wal/; do
		dev=main
		[[ -z $dir ]] || dev=wal
		before=$(flushes $dev)
		py "fd = os.open('${dir}f', os.O_WRONLY | os.O_DSYNC); os.write(fd, b'2' * 4096); os.close(fd)
fd = fill('${dir}g', b'g', 5000, os.O_SYNC); os.close(fd)
fd = os.open('${dir}h', os.O_WRONLY); os.pwritev(fd, [b'3' * 4096], 4096, os.RWF_DSYNC); os.close(fd)"
		assert_eq "$(($(flushes $dev) - before))" 3 "$mode: $dev: flushes of three sync writes"
	done
	# 4. In-place zeros (a truncate into a block, a zero range inside one), on each device.
	py "import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for d in ['', 'wal/']:
    for f, n in ('z', 8192), ('r', 3000):
        fd = fill(d + f, f.upper().encode(), n); os.fsync(fd); os.close(fd)
    dsync(d or '.')
    os.truncate(d + 'z', 3000)
    fd = os.open(d + 'r', os.O_RDWR)
    assert libc.fallocate(fd, 0x10, ctypes.c_long(2000), ctypes.c_long(1500)) == 0  # FALLOC_FL_ZERO_RANGE
    os.close(fd)
    dsync(d or '.')"
	# 3. Each device's flush its own, the daemon's seen by fault rules.
	assert_eq "$(sfs_ctl "$M" 'fault add lie op=flush device=main flush=ignore')" ok "$mode: fault add lie"
	py "fd = os.open('f', os.O_WRONLY); os.pwrite(fd, b'5' * 4096, 0); os.close(fd)
fd = os.open('wal/h', os.O_WRONLY); os.pwrite(fd, b'5' * 4096, 0); os.fsync(fd); os.close(fd)"
	assert_eq "$(sfs_ctl "$M" 'fault list' | grep -o 'matched=.*')" "matched=0 fired=0" \
		"$mode: main not flushed by the fsync of wal/h"
	if [[ $mode != writeback ]]; then # (there the new file's pages may reach us later)
		py "os.close(fill('new', b'n', 4096))
fd = fill('wal/new', b'w', 4096); os.fsync(fd); os.close(fd)"
		assert_eq "$(sfs_ctl "$M" 'fault list' | grep -o 'matched=.*')" "matched=1 fired=1" \
			"$mode: main flushed before the catalog that points at new's data"
	fi
	assert_eq "$(sfs_ctl "$M" 'fault add nf op=flush device=wal error=EIO')" ok "$mode: fault add"
	assert_eq "$(py "fd = os.open('wal/f', os.O_WRONLY | os.O_DSYNC)
try:
    os.write(fd, b'4' * 4096); print('no error')
except OSError as e:
    print(e.strerror)")" "Input/output error" "$mode: an O_DSYNC write whose flush fails"
	sfs_crash "$M" crash
	sfs_mount "$T/b" "$M" "config=$T/two.ini,$(sfs_cache_opts "$mode")"
	for dir in "" wal/; do
		assert_eq "$(what "$M/${dir}B")" "819200 B" "$mode: ${dir}B after a directory fsync and a crash"
	done
	assert_eq "$(what "$M/f") $(what "$M/g") $(what "$M/h")" "4096 2 5000 g 8192 13" \
		"$mode: f, g, h after sync writes, f's overwrite never synced, and a crash"
	assert_eq "$(what "$M/wal/f") $(what "$M/wal/g") $(what "$M/wal/h")" "4096 2 5000 g 8192 53" \
		"$mode: wal/f, g, h after sync writes, h's fsynced overwrite, and a crash"
	if [[ $mode != writeback ]]; then
		assert_eq "$(what "$M/new") $(what "$M/wal/new")" "4096 0 4096 w" \
			"$mode: new (its flush ignored) and wal/new after a crash"
	fi
	for dir in "" wal/; do
		truncate -s 8192 "$M/${dir}z"
		assert_eq "$(what "$M/${dir}z") $(what "$M/${dir}r")" "8192 Z0 3500 R0" \
			"$mode: ${dir}z truncated to 3000 and grown back, ${dir}r zeroed from 2000 to 3500, after a crash"
		# (what shows the distinct bytes: Z0 and R0 with the old bytes back too)
		assert_eq "$(head -c 3000 "$M/${dir}z" | tr -d Z | wc -c) $(tail -c +3001 "$M/${dir}z" | tr -d '\0' | wc -c)" "0 0" \
			"$mode: ${dir}z: bytes not Z before 3000, not zero after"
		assert_eq "$(head -c 2000 "$M/${dir}r" | tr -d R | wc -c) $(tail -c +2001 "$M/${dir}r" | tr -d '\0' | wc -c)" "0 0" \
			"$mode: ${dir}r: bytes not R before 2000, not zero after"
	done
	sfs_umount "$M"
done

# 5. O_DSYNC by the handle's mode: opened in one cache mode, renamed under the other.
cat >"$T/mixed.ini" <<'INI'
[device]
volatile = true
[cache]
mode = none
[file "k/*"]
cache.mode = kernel
INI
rm -f "$T/b" "$T"/b.scatterfs*
sfs_mount "$T/b" "$M" "size=16M,config=$T/mixed.ini"
mkdir "$M/k"
py "for f in 'a', 'k/b':
    fd = fill(f, b'1', 8192); os.fsync(fd); os.close(fd)
for d in '.', 'k': dsync(d)"
for move in "a k/a" "k/b b"; do
	read -r from to <<<"$move"
	before=$(flushes main)
	py "fd = os.open('$from', os.O_WRONLY | os.O_DSYNC)
os.rename('$from', '$to'); dsync('.'); dsync('k')
os.pwrite(fd, b'2' * 4096, 0); os.close(fd)"
	after=$(flushes main)
	# the two directory fsyncs flush main when they find new data, never here
	assert_eq "$((after - before))" 1 "an O_DSYNC write to $from (renamed $to): flushes"
done
sfs_crash "$M" crash
sfs_mount "$T/b" "$M" "config=$T/mixed.ini"
assert_eq "$(what "$M/k/a") $(what "$M/b")" "8192 21 8192 21" "k/a and b after O_DSYNC writes and a crash"
sfs_umount "$M"
