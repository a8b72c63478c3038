#!/bin/bash
# TIMEOUT: 450
# Shared mmap (issue 24, item 6).  With cache.mode = none every file is
# opened FOPEN_DIRECT_IO, and the kernel refuses MAP_SHARED on such files
# (ENODEV) unless the daemon said FUSE_DIRECT_IO_ALLOW_MMAP at INIT, which
# scatterfs adds to libfuse's reply (fs/transport.c).  In both cache modes
# and on both devices (main, and [device "d2"] through [file "d2/*"]):
# - Python's mmap, MAP_SHARED: bytes stored through the mapping and
#   msync'd read back exactly with pread; bytes written with pwrite read
#   back exactly through a mapping made before them;
# - LMDB (mdb_load, whose lock file is a shared mapping) loads 3,000
#   records; mdb_stat counts them, and mdb_dump prints exactly what the
#   same load gives on the test's own file system;
# - what msync made durable survives kill -9 of the daemon.
# The request log sees the mapping's I/O at page granularity: write-back is
# WRITEs at page offsets of whole pages (the last clipped at end of file),
# page faults are READs of whole pages, msync an fsync row.  The built-in
# rule that gave SQLite's -shm files the page cache is gone where the
# kernel maps direct-I/O files (.scatterfs/config no longer shows it), and
# SQLite in WAL mode works with its -shm file in direct I/O.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 mdb_load mdb_stat mdb_dump sqlite3

T=$SFS_TMP
M=$T/mnt
B=$T/main.img
CAT=$B.scatterfs
L=$T/log.csv
cat >"$T/two.ini" <<EOF
[device "d2"]
backing = d2.img
size = 64M
[file "d2/*"]
device = d2
[log]
ops = read,write,fsync
EOF

# mmap_check FILE - MAP_SHARED stores read back by pread, pwrites through the mapping
mmap_check() {
	python3 - "$1" <<'PY' || fail "shared mmap of $1"
import mmap, os, sys
path = sys.argv[1]
size = 3 * 4096 + 100
f = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
os.ftruncate(f, size)
m = mmap.mmap(f, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
want = bytearray(size)
for off, b in ((0, b'A' * 10), (4090, b'across-a-page'), (size - 7, b'the-end')):
    m[off:off + len(b)] = b
    want[off:off + len(b)] = b
m.flush()  # msync(MS_SYNC)
got = os.pread(f, size, 0)
if got != bytes(want):
    sys.exit(f"pread after msync differs at byte {next(i for i in range(size) if got[i] != want[i])}")
b = bytes(range(256)) * 20
os.pwrite(f, b[:5000], 3000)
want[3000:8000] = b[:5000]
if m[:] != bytes(want):
    sys.exit("the mapping does not show what pwrite wrote")
m.close()
os.close(f)
PY
}

# lmdb_check DIR - mdb_load into DIR; mdb_stat and mdb_dump give what the reference load gives
lmdb_check() {
	local d=$1
	mkdir -p "$d"
	mdb_load -T -f "$T/records.txt" "$d" || fail "mdb_load into $d"
	assert_eq "$(mdb_stat "$d" | awk '/Entries:/ { print $2 }')" 3000 "mdb_stat entries of $d"
	mdb_dump -p "$d" >"$T/dump.txt" || fail "mdb_dump $d"
	cmp -s "$T/dump.txt" "$T/ref.txt" || fail "mdb_dump of $d differs from the reference load"
}

python3 - "$T/records.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(3000):
        f.write(f"key{i:05d}\nvalue of record {i} " + "x" * (i % 97) + "\n")
PY
mkdir "$T/ref"
mdb_load -T -f "$T/records.txt" "$T/ref" || fail "mdb_load on the test's own file system"
mdb_dump -p "$T/ref" >"$T/ref.txt"

for mode in "${SFS_CACHE_MODES[@]}"; do
	sfs_mount "$B" "$M" "config=$T/two.ini,size=128M,log=$L,$(sfs_cache_opts "$mode")"
	sfs_check_cache_mode "$M" "$mode"
	mkdir -p "$M/d2"
	for dir in "" d2/; do
		note "cache.mode=$mode, ${dir:-main device}"
		mmap_check "$M/${dir}mm.$mode"
		lmdb_check "$M/${dir}lmdb.$mode"
	done
	assert_eq "$(sfs_stats "$M" shared_mmap_direct)" True "stats shared_mmap_direct ($mode)"
	dev=$(awk -F, 'NR > 1 { print $4 }' "$M/.scatterfs/extents/d2/mm.$mode" | sort -u)
	assert_eq "$dev" d2 "device of d2/mm.$mode"

	# What the log sees of a file only ever mapped: pages 0 and 2-3 stored.
	python3 - "$M/pages.$mode" <<'PY' || fail "mapping pages.$mode"
import mmap, os, sys
f = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
size = 3 * 4096 + 100
os.ftruncate(f, size)
m = mmap.mmap(f, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[0:5] = b'first'
m[2 * 4096 + 10:2 * 4096 + 15] = b'third'
m[size - 4:size] = b'last'
m.flush()
m.close()
os.close(f)
PY
	cat "$M/.scatterfs/stats" >/dev/null # the log's barrier
	rows() { sfs_log_awk "$L" -v p="pages.$mode" "NR > 1 && \$f_path == p && $1" "$L"; }
	writes=$(rows '$f_op == "write" { print $f_offset "+" $f_size }' | sort -t+ -n | tr '\n' ' ')
	assert_eq "$writes" "0+4096 8192+4196 " "write-back of pages.$mode"
	bad=$(rows '$f_op == "read" && ($f_offset % 4096 || ($f_size % 4096 && $f_offset + $f_size != 12388)) { print $f_offset "+" $f_size }')
	assert_eq "$bad" "" "page-fault reads of pages.$mode not whole pages"
	assert_eq "$(rows '$f_op == "read" { n++ } END { print (n > 0) }')" 1 "page-fault reads of pages.$mode logged"
	assert_eq "$(rows '$f_op == "fsync" { n++ } END { print n + 0 }')" 1 "msync of pages.$mode: one fsync row"

	# SQLite's WAL index is a shared mapping of its -shm file.
	grep -q -- '-shm' "$M/.scatterfs/config" && fail "the built-in *-shm rule is still in .scatterfs/config"
	sqlite3 "$M/w.$mode.db" "pragma journal_mode=wal; create table t(a); insert into t select value from generate_series(1, 5000);" >/dev/null ||
		fail "sqlite3 in WAL mode ($mode)"
	assert_eq "$(sqlite3 "$M/w.$mode.db" 'select count(*), sum(a) from t')" "5000|12502500" "sqlite WAL ($mode)"

	# Durable through msync: the daemon dies at once after it.
	python3 - "$M/d2/durable.$mode" <<'PY' || fail "mapping d2/durable.$mode"
import mmap, os, sys
f = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.ftruncate(f, 8192)
m = mmap.mmap(f, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[4000:4200] = b'D' * 200
m.flush()
PY
	kill -9 "$SFS_LAST_PID"
	wait "$SFS_LAST_PID" 2>/dev/null || true
	unset "SFS_PID[$M]"
	sfs_remount_killed "$M" "$B" "config=$T/two.ini,log=$L,$(sfs_cache_opts "$mode")" "$CAT" "kill -9 after msync ($mode)"
	python3 - "$M/d2/durable.$mode" <<'PY' || fail "msync'd bytes of d2/durable.$mode lost by kill -9"
import os, sys
d = open(sys.argv[1], "rb").read()
sys.exit(d != b'\0' * 4000 + b'D' * 200 + b'\0' * 3992)
PY
	for dir in "" d2/; do
		mdb_dump -p "$M/${dir}lmdb.$mode" | cmp -s - "$T/ref.txt" || fail "LMDB ${dir}lmdb.$mode after remount"
	done
	sfs_umount "$M"
done
sfs_space_verdict "shared mmap"
