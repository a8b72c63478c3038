#!/bin/bash
# TIMEOUT: 600
# Full device (issue 6, item 3).  On an 8 MiB backing with 4 KiB blocks and
# 64 KiB contiguous extents: two files of known content (1 MiB and 300,000
# bytes), then a third file appended to (1 MiB, 64 KiB, 4 KiB, 1000 and 1
# byte writes) until a write fails.  The error is exactly ENOSPC; that write
# changed nothing (file size, file bytes, used_bytes); the other files keep
# their exact sha256; statfs and .scatterfs/stats free space are equal and
# less than one extent; a write or fallocate on a new file fails with ENOSPC
# too and leaves it empty; a truncate up (a hole) still works and a write
# into the hole fails with ENOSPC.  Deleting the 1 MiB file frees exactly
# 1 MiB, which a new file then gets (a 3 MiB write: short or refused, the
# file ends at 1 MiB), and the device is full again.  Everything survives a
# remount.  The other patterns (interleaved, random, reverse in
# cache.mode=kernel, single) fill the device the same way; there free space
# can remain in runs shorter than an extent, so "full" means no free run of
# a whole extent is left.  With autoextend.max_size = 1M a file grows to
# exactly 1 MiB and the next write or fallocate fails with EFBIG (exactly),
# changing nothing, while the device still has room.  After every phase
# .scatterfs/stats used_bytes equals the sum of all extent and gap lengths
# in the catalog.  The kernel-mode pattern writes through
# (cache.writeback = false); with the kernel's write-back cache write(2)
# cannot fail for space, and a 12 MiB file on the 8 MiB device gets ENOSPC
# from fsync instead, exactly, the other files intact.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
EXTENT=65536
DEV=8388608
OPTS=device.block_size=4K,layout.pattern=contiguous,layout.extent_size=64K,autoextend.zero_fill=write

stat_field() { sfs_stats "$M" "$1"; }

# check_used PHASE - stats used_bytes == the catalog's extents + gaps
check_used() {
	local used ext gap
	used=$(stat_field used_bytes)
	[[ -n $used ]] || fail "$1: no used_bytes in .scatterfs/stats: $(cat "$M/.scatterfs/stats")"
	ext=$(sqlite3 -readonly "$B.scatterfs" 'select coalesce(sum(length), 0) from extent')
	gap=$(sqlite3 -readonly "$B.scatterfs" 'select coalesce(sum(length), 0) from gap')
	assert_eq "$used" "$((ext + gap))" "$1: .scatterfs/stats used_bytes vs the catalog's extents ($ext) + gaps ($gap)"
}

declare -A SUM=()
# remember NAME - record NAME's sha256 and size
remember() { SUM[$1]="$(stat -c %s "$M/$1") $(sha256sum <"$M/$1" | cut -d' ' -f1)"; }
# intact PHASE - every remembered file has its recorded size and sha256
intact() {
	local f
	for f in "${!SUM[@]}"; do
		[[ -f $M/$f ]] || fail "$1: $f is missing"
		assert_eq "$(stat -c %s "$M/$f") $(sha256sum <"$M/$f" | cut -d' ' -f1)" "${SUM[$f]}" \
			"$1: size and sha256 of $f"
	done
}

# fill.py PATH ERRNO SEED CHUNK... - append pseudo-random bytes to PATH in
# writes of each CHUNK size in turn, each size until a write fails.  Every
# failure must be errno ERRNO and change nothing: the file's size, its bytes
# and .scatterfs/stats used_bytes are what they were before the write.
# Prints the final size.
cat >"$T/fill.py" <<'EOF'
import errno, hashlib, os, random, re, sys

path, want, seed = sys.argv[1], getattr(errno, sys.argv[2]), int(sys.argv[3])
stats = os.path.join(os.path.dirname(path), ".scatterfs", "stats")
rng = random.Random(seed)

def used():
    with open(stats) as f:
        return int(re.search(r'"used_bytes": *(\d+)', f.read()).group(1))

def digest():
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()

fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
off = os.fstat(fd).st_size
written = hashlib.sha256()
with open(path, "rb") as f:
    written.update(f.read())
for chunk in map(int, sys.argv[4:]):
    while True:
        data = rng.randbytes(chunk)
        before = used()
        try:
            n = os.pwrite(fd, data, off)
        except OSError as e:
            if e.errno != want:
                sys.exit(f"{path}: write of {chunk} bytes at {off}: {errno.errorcode.get(e.errno)} "
                         f"({e.strerror}), expected {errno.errorcode[want]}")
            size = os.fstat(fd).st_size
            if size != off:
                sys.exit(f"{path}: the failed write of {chunk} bytes at {off} changed the size to {size}")
            if used() != before:
                sys.exit(f"{path}: the failed write of {chunk} bytes at {off} changed used_bytes "
                         f"from {before} to {used()}")
            if digest() != written.hexdigest():
                sys.exit(f"{path}: the failed write of {chunk} bytes at {off} changed the file's bytes")
            break
        if n <= 0:
            sys.exit(f"{path}: write of {chunk} bytes at {off} returned {n}")
        written.update(data[:n])
        off += n
os.close(fd)
print(off)
EOF

# expect_errno ERRNO WHAT PY-STATEMENT - the statement raises OSError ERRNO
expect_errno() {
	python3 - "$1" "$2" "$3" <<'EOF' || fail "$2"
import errno, os, sys
want, what, stmt = getattr(errno, sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    exec(stmt)
except OSError as e:
    if e.errno != want:
        sys.exit(f"{what}: {errno.errorcode.get(e.errno)} ({e.strerror}), expected {errno.errorcode[want]}")
    sys.exit(0)
sys.exit(f"{what}: succeeded, expected {errno.errorcode[want]}")
EOF
}

# largest_free_run - the longest device range that no extent or gap of the
# catalog covers, in bytes
largest_free_run() {
	sqlite3 -readonly "$B.scatterfs" "with r as (select device, length from extent union all
		select device, length from gap union all select $DEV, 0),
		s as (select device, max(device + length) over (order by device rows between unbounded preceding
		and 1 preceding) as prev_end from r)
		select coalesce(max(device - coalesce(prev_end, 0)), 0) from s"
}

# statfs_free - free bytes as statfs(2) reports them
statfs_free() { python3 -c 'import os, sys; s = os.statvfs(sys.argv[1]); print(s.f_bfree * s.f_frsize)' "$M"; }

# --- ENOSPC ---------------------------------------------------------------
sfs_mount "$B" "$M" "size=$DEV,$OPTS"
assert_eq "$(stat_field device_size)" $DEV "device_size"
assert_eq "$(stat_field used_bytes)" 0 "used_bytes of the empty device"
check_used "empty"

python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(1).randbytes(1048576))' >"$M/one"
python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(2).randbytes(300000))' >"$M/other"
remember one
remember other
# 16 extents for one, ceil(300000 / 65536) = 5 for other
assert_eq "$(stat_field used_bytes)" $(((16 + 5) * EXTENT)) "used_bytes after writing one and other"
check_used "two files written"

size=$(python3 "$T/fill.py" "$M/big" ENOSPC 3 1048576 65536 4096 1000 1) || fail "filling big: $size"
note "big: $size bytes when the device filled"
# the rest of the device: 128 - 21 = 107 extents
assert_eq "$size" $(((128 - 21) * EXTENT)) "size of big when the device is full"
remember big
intact "after ENOSPC"
check_used "after ENOSPC"
free=$(statfs_free)
((free < EXTENT)) || fail "statfs reports $free bytes free on the full device (one extent is $EXTENT)"
assert_eq "$(stat_field free_bytes)" "$free" ".scatterfs/stats free_bytes vs statfs free bytes"
assert_eq "$(stat_field used_bytes)" $((DEV - free)) "used_bytes on the full device"

# a new file gets no space either, and stays empty
expect_errno ENOSPC "a 4 KiB write to a new file on the full device" \
	'fd = os.open("'"$M"'/new", os.O_WRONLY | os.O_CREAT, 0o644); os.write(fd, b"x" * 4096)'
assert_eq "$(stat -c %s "$M/new")" 0 "size of new after its failed write"
expect_errno ENOSPC "fallocate of 1 MiB on the full device" \
	'fd = os.open("'"$M"'/new", os.O_WRONLY); os.posix_fallocate(fd, 0, 1048576)'
assert_eq "$(stat -c %s "$M/new")" 0 "size of new after its failed fallocate"
rm "$M/new"
# a hole needs no space: growing big by truncate works, its new bytes read as
# zeros, and a write into that hole fails with ENOSPC
truncate -s $((size + 1048576)) "$M/big" || fail "truncate big up by 1 MiB on the full device"
cmp <(tail -c +$((size + 1)) "$M/big") <(head -c 1048576 /dev/zero) || fail "the hole past big's old end is not zeros"
expect_errno ENOSPC "a write into the hole of big on the full device" \
	'fd = os.open("'"$M"'/big", os.O_WRONLY); os.pwrite(fd, b"y" * 4096, '$((size + 65536))')'
truncate -s "$size" "$M/big" || fail "truncate big back to $size"
intact "after the failed writes to new"
check_used "after the failed writes to new"
assert_eq "$(stat_field used_bytes)" $((DEV - free)) "used_bytes after the failed writes to new"

sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS"
intact "full device, after a remount"
check_used "full device, after a remount"
assert_eq "$(stat_field used_bytes)" $((DEV - free)) "used_bytes after a remount"

# --- deleting frees the space for reuse -----------------------------------
rm "$M/one"
unset 'SUM[one]'
sync "$M"
assert_eq "$(stat_field used_bytes)" $((DEV - free - 1048576)) "used_bytes after deleting one (1 MiB)"
check_used "after deleting one"
assert_eq "$(statfs_free)" $((free + 1048576)) "statfs free bytes after deleting one"
size=$(python3 "$T/fill.py" "$M/again" ENOSPC 4 3145728 65536 4096 1) || fail "filling again: $size"
assert_eq "$size" 1048576 "size of again: the 1 MiB that deleting one freed, and no more"
remember again
intact "after reusing the freed space"
check_used "after reusing the freed space"
assert_eq "$(stat_field used_bytes)" $((DEV - free)) "used_bytes after reusing the freed space"
sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS"
intact "after reuse, after a remount"
check_used "after reuse, after a remount"
sfs_umount "$M"

# --- ENOSPC with the other placement patterns -----------------------------
# Their free space can end up in runs shorter than an extent (random jumps
# are whole blocks), so "full" means: no free run of a whole extent is left.
for pat in "interleaved,layout.gap=64K" "random,layout.gap_max=1M,layout.seed=3" "reverse,$(sfs_cache_opts kernel)" "single,layout.initial_size=1M"; do
	name=${pat%%,*}
	rm -f "$B" "$B".scatterfs*
	SUM=()
	popts=device.block_size=4K,layout.extent_size=64K,autoextend.zero_fill=none,layout.pattern=$pat
	sfs_mount "$B" "$M" "size=$DEV,$popts"
	python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(2).randbytes(300000))' >"$M/other"
	remember other
	size=$(python3 "$T/fill.py" "$M/big" ENOSPC 8 1048576 65536 4096 1) || fail "$name: filling big: $size"
	remember big
	intact "$name: after ENOSPC"
	check_used "$name: after ENOSPC"
	run=$(largest_free_run)
	((run < EXTENT)) || fail "$name: ENOSPC with a free run of $run bytes on the device (one extent is $EXTENT)"
	assert_eq "$(statfs_free)" "$(stat_field free_bytes)" "$name: statfs free bytes vs .scatterfs/stats free_bytes"
	sfs_umount "$M"
	sfs_mount "$B" "$M" "$popts"
	intact "$name: after ENOSPC and a remount"
	check_used "$name: after ENOSPC and a remount"
	sfs_umount "$M"
	note "$name: big is $size bytes at ENOSPC; largest free run $run bytes"
done

# --- ENOSPC with the kernel's write-back cache ----------------------------
# write(2) fills the page cache and cannot fail for space; the write-back
# that finds none fails, and fsync (and close) report ENOSPC, exactly.
# The other file keeps its bytes, what did reach the device is consistent.
rm -f "$B" "$B".scatterfs*
SUM=()
sfs_mount "$B" "$M" "size=$DEV,device.block_size=4K,layout.extent_size=64K,$(sfs_cache_opts writeback)"
sfs_check_cache_mode "$M" writeback
python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(3).randbytes(300000))' >"$M/other"
remember other
out=$(python3 - "$M/big" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(12):
    assert os.write(fd, bytes([i + 1]) * 1048576) == 1048576
try:
    os.fsync(fd)
    print("fsync succeeded")
except OSError as e:
    print("fsync", errno.errorcode[e.errno])
try:
    os.close(fd)
    print("close succeeded")
except OSError as e:
    print("close", errno.errorcode[e.errno])
PY
) || fail "writeback: writing big past the device: $out"
assert_eq "$(head -n 1 <<<"$out")" "fsync ENOSPC" "writeback: fsync of 12 MiB written to an 8 MiB device"
intact "writeback: after ENOSPC"
check_used "writeback: after ENOSPC"
sfs_umount "$M"
sfs_mount "$B" "$M" "device.block_size=4K,layout.extent_size=64K,$(sfs_cache_opts writeback)"
intact "writeback: after ENOSPC and a remount"
check_used "writeback: after ENOSPC and a remount"
sfs_umount "$M"
note "writeback: write(2) past the device succeeded, fsync: ${out//$'\n'/, }"

# --- EFBIG at autoextend.max_size -----------------------------------------
rm -f "$B" "$B".scatterfs*
SUM=()
sfs_mount "$B" "$M" "size=$DEV,$OPTS,autoextend.max_size=1M"
python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(5).randbytes(200000))' >"$M/other"
remember other
size=$(python3 "$T/fill.py" "$M/capped" EFBIG 6 3145728 65536 4096 1000 1) || fail "filling capped: $size"
assert_eq "$size" 1048576 "size of capped at autoextend.max_size"
remember capped
intact "after EFBIG"
check_used "after EFBIG"
assert_eq "$(stat_field used_bytes)" $((1048576 + 4 * EXTENT)) "used_bytes after EFBIG (capped 1 MiB, other 4 extents)"
free=$(statfs_free)
assert_eq "$free" $((DEV - 1048576 - 4 * EXTENT)) "statfs free bytes after EFBIG: the device still has room"
# fallocate past max_size: EFBIG too, nothing changes
expect_errno EFBIG "fallocate past autoextend.max_size" \
	'fd = os.open("'"$M"'/capped", os.O_WRONLY); os.posix_fallocate(fd, 0, 2097152)'
intact "after the failed fallocate"
check_used "after the failed fallocate"
# another file still gets space
python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(7).randbytes(500000))' >"$M/third" ||
	fail "writing third after EFBIG"
remember third
check_used "after writing third"
sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS,autoextend.max_size=1M"
intact "max_size, after a remount"
check_used "max_size, after a remount"
sfs_umount "$M"

# --- a hole punched in a full device frees its whole blocks ---------------
# [100000, 400000) covers the blocks [102400, 397312): 294,912 bytes, which
# cut into extents at both ends.
rm -f "$B" "$B".scatterfs*
SUM=()
sfs_mount "$B" "$M" "size=$DEV,$OPTS"
size=$(python3 "$T/fill.py" "$M/big" ENOSPC 9 1048576 65536 4096 1) || fail "punch: filling big: $size"
assert_eq "$size" $DEV "punch: size of big on the full device"
free=$(statfs_free)
cp "$M/big" "$T/big.ref"
fallocate -p -o 100000 -l 300000 "$T/big.ref" || fail "punch: fallocate -p on the host copy"
fallocate -p -o 100000 -l 300000 "$M/big" || fail "punch: fallocate -p -o 100000 -l 300000 big"
cmp "$M/big" "$T/big.ref" || fail "punch: big differs from its host copy punched the same way"
remember big
assert_eq "$(statfs_free)" $((free + 294912)) "punch: statfs free bytes after punching [100000, 400000)"
check_used "punch: after punching [100000, 400000) in big"
sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS"
intact "punch: after a remount"
check_used "punch: after a remount"
sfs_umount "$M"
note "ok"
