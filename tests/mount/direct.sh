#!/bin/bash
# device.direct = true opens the backing with O_DIRECT: unaligned writes
# and reads at odd offsets still give the exact bytes (aligned bounce
# buffers), holes read as zeros, SQLite in WAL mode works, and all of it
# survives a remount.  With device.poll_us above 0 a lone device read is
# polled: one reader's reads all are; none at the default, poll_us = 0, or
# under the disk model.  At the default one reader's reads are read by
# the worker that takes them, on /dev/fuse (transport=dev there: a ring
# thread queues its reads on its own io_uring); device.async_reads =
# always queues them all to the completion thread; and fio's reads at
# queue depth 16 (requests waiting for a worker) queue some at the
# default.
source "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 python3 fio

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
check() {
	python3 - "$M/x" <<'PY'
import os, sys
f = os.open(sys.argv[1], os.O_RDONLY)
d = os.pread(f, 30000, 0)
want = b'\0' * 7 + b'abc' * 1000 + b'\0' * (20000 - 3007) + b'Z' * 5000
sys.exit(0 if d == want else 1)
PY
}
sfs_mount "$B" "$M" "size=256M,device.direct=true"
grep -q 'direct = true' "$M/.scatterfs/config" || fail "effective config does not say direct = true"
python3 - "$M/x" <<'PY'
import os, sys
f = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(f, b'abc' * 1000, 7)
os.pwrite(f, b'Z' * 5000, 20000)
os.fsync(f)
PY
check || fail "unaligned writes read back wrong with device.direct"
sqlite3 "$M/t.db" "pragma journal_mode=wal; create table t(a); insert into t select value from generate_series(1, 20000);" >/dev/null
assert_eq "$(sqlite3 "$M/t.db" 'pragma integrity_check; select count(*), sum(a) from t')" "ok
20000|200010000" "sqlite on a direct backing"
sfs_umount "$M"
sfs_mount "$B" "$M" "device.direct=true"
check || fail "content after remount"
assert_eq "$(sqlite3 "$M/t.db" 'pragma integrity_check; select count(*), sum(a) from t')" "ok
20000|200010000" "sqlite after remount"
sfs_umount "$M"

# Polled reads (device.poll_us, 200 here; the default is 0): with one
# reader and nothing else reading the device, every device read is alone
# in flight and goes the polled way, so polled_reads grows by exactly one
# per read of a contiguous file (cache.mode=none: each read is one FUSE
# read, one device I/O); the bytes are the file's. With poll_us = 0 (the
# default), and under the disk model, none is polled.
# read_p MODE: "write" lays out p (once), "read" reads it back in 40 reads
read_p() {
	python3 - "$M/p" "$1" <<'PY'
import os, sys
f = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
data = bytes(i * 31 % 251 for i in range(40 * 65536))
if sys.argv[2] == "write":
    if os.fstat(f).st_size != len(data):
        os.pwrite(f, data, 0)
        os.fsync(f)
    sys.exit(0)
for k in range(40):
    if os.pread(f, 65536, k * 65536) != data[k * 65536:(k + 1) * 65536]:
        sys.exit(1)
PY
}
polled() { # OPTIONS -> "reads polled_reads polled_completions async_reads" that reading p 40 times added
	local fields=(reads polled_reads polled_completions async_reads) before
	sfs_mount "$B" "$M" "device.direct=true,cache.mode=none,layout.pattern=contiguous$1" >&2
	read_p write || fail "polled reads ($1): cannot write p"
	before=$(sfs_stats "$M" "${fields[@]}")
	read_p read || fail "polled reads ($1): the bytes read differ from those written"
	sfs_stats_delta "$before" "$(sfs_stats "$M" "${fields[@]}")"
	sfs_umount "$M" >&2
}
read -r reads preads pdone queued <<<"$(polled ",device.poll_us=200")"
assert_eq "$reads" 40 "reads of 40 x 64 KiB with cache.mode=none"
assert_eq "$preads" 40 "polled_reads with poll_us = 200, one reader"
assert_eq "$queued" 0 "async_reads with poll_us = 200, one reader (never another read in flight)"
((pdone <= preads)) || fail "polled_completions $pdone > polled_reads $preads"
note "poll_us = 200: $preads reads polled, $pdone seen complete while polling"
read -r reads preads pdone queued <<<"$(polled ",transport=dev")"
assert_eq "$reads $preads $pdone $queued" "40 0 0 0" "reads, polled_reads, polled_completions, async_reads at the defaults (poll_us 0, async_reads true: a lone read is read by its worker)"
read -r reads preads pdone queued <<<"$(polled ",transport=dev,device.async_reads=always")"
assert_eq "$reads $preads $pdone $queued" "40 0 0 40" "reads, polled_reads, polled_completions, async_reads with async_reads = always"
read -r reads preads pdone queued <<<"$(polled ",device.poll_us=0,device.async_reads=false")"
assert_eq "$reads $preads $pdone $queued" "40 0 0 0" "reads, polled_reads, polled_completions, async_reads with poll_us = 0, async_reads = false"
read -r reads preads pdone queued <<<"$(polled ",disk.model=hdd")"
assert_eq "$reads $preads $pdone $queued" "40 0 0 0" "reads, polled_reads, polled_completions, async_reads under the disk model"

# 16 reads at a time (fio, libaio): while one is read, others are in
# flight or wait for a worker, so at the defaults some are queued; every
# one is a FUSE read and a device read.
sfs_mount "$B" "$M" "device.direct=true,cache.mode=none,layout.pattern=contiguous,transport=dev"
before=$(sfs_stats "$M" reads async_reads)
fio --name=qd16 --filename="$M/p" --rw=randread --bs=8k --iodepth=16 --ioengine=libaio \
	--direct=1 --size=2560K --io_size=16000K --output="$SFS_TMP/fio.qd16" ||
	fail "fio at QD 16: $(tail -n 5 "$SFS_TMP/fio.qd16")"
read -r reads queued <<<"$(sfs_stats_delta "$before" "$(sfs_stats "$M" reads async_reads)")"
sfs_umount "$M"
assert_eq "$reads" 2000 "reads of fio's 2000 8 KiB reads at QD 16"
((queued > 0 && queued <= reads)) || fail "async_reads $queued of $reads reads at QD 16, expected some"
note "QD 16 at the defaults: $queued of $reads reads queued"
note ok
