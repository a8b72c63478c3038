#!/bin/bash
# Queued device reads (device.async_reads, on an O_DIRECT backing): a
# block-aligned read submitted to the completion thread gives the same
# bytes and the same request-log row (device I/Os included) as one the
# worker thread reads itself, aligned or not; holes read as zeros;
# async_reads counts every queued read exactly; and 16 threads reading a
# file while another renames it, changes its mode and times (each waits
# for the file's queued reads: inode_wrlock) and rewrites and truncates
# another file get the right bytes, every read queued, and log rows that
# name the file by one of its names.  (That a writer waits for the pins is
# tested directly in test_pins.)  With SCATTERFS_TRANSPORT=uring the same
# runs on FUSE over io_uring, where a ring thread queues its reads on its
# own io_uring and answers them itself (fs/transport.c): the renames,
# chmods and truncates then come to the thread that holds the reads'
# pins, which must complete them before it serves anything else; the
# mounts check that the ring carried the reads and that every queued read
# went to a ring thread's own io_uring (ring_reads = async_reads).  Otherwise they take
# transport=dev, where the completion thread answers.
source "$(dirname "$0")/../lib.sh"
sfs_require python3

TP=dev
[[ ${SCATTERFS_TRANSPORT:-} == uring ]] && TP=uring
note "transport=$TP"

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
T=$SFS_TMP
# async_reads = always: every aligned read is queued (by default, only
# reads that find another in flight, or requests waiting, are).
BASE="transport=$TP,size=256M,device.direct=true,cache.mode=none,device.async_reads=always,layout.pattern=random,layout.extent_size=16K,layout.seed=7"

# A 4 MiB sparse file over 16 KiB random extents: data, holes, data.
# Then 1 MiB and 8 KiB aligned reads (several runs and holes each) and
# three unaligned ones, the last past the end of the file; prints "reads
# async_reads" added by the reads.
read_pass() { # OPTIONS LOG
	local before
	sfs_mount "$B" "$M" "$BASE,log=$2,log.ops=read$1" >&2
	sparse_file write || fail "queued reads ($1): cannot write f"
	before=$(sfs_stats "$M" reads async_reads)
	sparse_file read || fail "queued reads ($1): the bytes read differ from those written"
	sfs_stats_delta "$before" "$(sfs_stats "$M" reads async_reads)"
	ring_check "$1"
	sfs_umount "$M" >&2
}
# ring_check WHAT - on the ring, the mount at $M uses it and it carried requests
ring_check() {
	[[ $TP == uring ]] || return 0
	local t n q r
	read -r t n q r <<<"$(sfs_stats "$M" transport ring_requests async_reads ring_reads)"
	assert_eq "$t" "uring" "transport of the mount ($1)"
	((n > 0)) || fail "no request came through the ring ($1)"
	# READs come only through the ring: every queued read on its threads' rings.
	assert_eq "$r" "$q" "ring_reads against async_reads ($1)"
}
sparse_file() { # MODE: "write" lays out f (once), "read" makes the reads above
	python3 - "$M/f" "$1" <<'PY'
import mmap, os, sys
f = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
size = 4 << 20
runs = ((0, 1 << 20), (1536 << 10, 2560 << 10), (3 << 20, (3 << 20) + 40960))
want = bytearray(size)
for lo, hi in runs:
    want[lo:hi] = bytes((i * 7 + lo // 4096) % 253 for i in range(hi - lo))
if sys.argv[2] == "write":
    if os.fstat(f).st_size != size:
        for lo, hi in runs:
            os.pwrite(f, want[lo:hi], lo)
        os.ftruncate(f, size)
        os.fsync(f)
    sys.exit(0)
def read(off, n):
    # into a page-aligned buffer: FUSE direct I/O splits a request where
    # the caller's buffer crosses pages, so alignment fixes the count
    buf = mmap.mmap(-1, n)
    got = os.preadv(f, [buf], off)
    return bytes(buf[:got])
for off in range(0, size, 1 << 20):
    if read(off, 1 << 20) != want[off:off + (1 << 20)]:
        sys.exit(1)
for off in range(1536 << 10, 1536 << 10 | 8 * 8192, 8192):
    if read(off, 8192) != want[off:off + 8192]:
        sys.exit(1)
for off, n in ((5, 1000), (4096 * 3 + 17, 9000), (size - 100, 4096)):
    if read(off, n) != want[off:off + n]:
        sys.exit(1)
PY
}

rm -f "$T"/q1.log "$T"/q2.log
read -r reads queued <<<"$(read_pass "" "$T/q1.log")"
assert_eq "$reads $queued" "15 15" "reads, async_reads: 4 x 1 MiB, 8 x 8 KiB and 3 unaligned reads, all queued"
read -r reads queued <<<"$(read_pass ",device.async_reads=false" "$T/q2.log")"
assert_eq "$reads $queued" "15 0" "reads, async_reads with device.async_reads = false"
read -r reads queued <<<"$(read_pass ",disk.model=hdd" "$T/q3.log")"
assert_eq "$reads $queued" "15 0" "reads, async_reads under the disk model"
# The same rows, queued or not: offset, size, result and every device I/O.
# Sorted: a read answered as soon as it is queued (all holes) can append
# its row before the completion thread appends the previous read's.
rows() { sfs_log_rows "$1" read f | sfs_log_awk "$1" -v OFS=, '{ print $f_path, $f_offset, $f_size, $f_result, $f_device_io }' | sort; }
assert_eq "$(rows "$T/q1.log")" "$(rows "$T/q2.log")" "log rows of queued reads against synchronous ones"
runs=$(sfs_log_rows "$T/q1.log" read f | head -n 1 | sfs_log_awk "$T/q1.log" '{ print split($f_device_io, a, ";") }')
((runs > 8)) || fail "the first 1 MiB read went to the device in $runs I/Os; the random layout should give many"
note "first 1 MiB read: $runs device I/Os, same queued or not"

# 16 reader threads on g while the main thread renames it back and forth,
# changes its mode and times, and truncates and regrows h: each rename,
# chmod and utime waits for g's queued reads (inode_wrlock), none may
# change the bytes read.  Every aligned read is queued: async_reads =
# reads, exactly.
sfs_mount "$B" "$M" "$BASE,log=$T/q4.log,log.ops=read"
dd if=<(python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 13) % 251 for i in range(8 << 20)))') \
	of="$M/g" bs=1M iflag=fullblock conv=fsync status=none || fail "cannot write g"
before=$(sfs_stats "$M" reads async_reads)
python3 - "$M" <<'PY' || fail "concurrent queued reads with renames and truncates: wrong bytes"
import os, sys, threading
mnt = sys.argv[1]
size = 8 << 20
data = bytes((i * 13) % 251 for i in range(size))
fd = os.open(mnt + "/g", os.O_RDONLY)
bad = []
stop = False
def reader(k):
    n = 0
    while not stop or n < 50:
        off = ((n * 16 + k) * 40961 % (size // 8192)) * 8192
        if os.pread(fd, 8192, off) != data[off:off + 8192]:
            bad.append(off)
        n += 1
ts = [threading.Thread(target=reader, args=(k,)) for k in range(16)]
for t in ts:
    t.start()
names = [mnt + "/g", mnt + "/g2"]
for i in range(200):
    os.rename(names[i % 2], names[(i + 1) % 2])
    os.chmod(names[(i + 1) % 2], 0o600 if i % 2 else 0o644)
    os.utime(names[(i + 1) % 2], (i, i))
    with open(mnt + "/h", "wb") as h:
        h.write(b"x" * 65536 * (1 + i % 4))
    os.truncate(mnt + "/h", 4096 * (i % 3))
stop = True
for t in ts:
    t.join()
if bad:
    print("wrong bytes at offsets", bad[:5], file=sys.stderr)
    sys.exit(1)
PY
read -r reads queued <<<"$(sfs_stats_delta "$before" "$(sfs_stats "$M" reads async_reads)")"
ring_check "16 readers"
((reads >= 800)) || fail "only $reads reads by 16 threads of at least 50 each"
assert_eq "$queued" "$reads" "async_reads against reads, 16 readers, every read queued"
sfs_umount "$M"
# Every row of the readers names the file by one of its two names.
other=$(sfs_log_rows "$T/q4.log" read | sfs_log_awk "$T/q4.log" '$f_path != "g" && $f_path != "g2"' | head -n 3)
assert_eq "$other" "" "read rows whose path is neither g nor g2"
note ok
