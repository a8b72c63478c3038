#!/bin/bash
# TIMEOUT: 420
# The kernel's write-back cache (cache.writeback, on by default in kernel
# mode; FUSE_CAP_WRITEBACK_CACHE) and what it changes, checked against
# what the other two cache modes keep (tests/lib.sh SFS_CACHE_MODES):
#
# - the log: ten write(2)s of 1,000 bytes are ten write rows of 1,000
#   bytes in none mode, exactly as before, and in kernel (write-through)
#   mode the same, split where a write crosses a page; with
#   the write-back cache none while the file is open and unsynced, then at
#   fsync one row of 10,000 bytes at offset 0 (what the daemon receives),
#   then the fsync row;
# - size and mtime, which the kernel owns while it caches: stat shows the
#   size of the unsynced writes, and after close, unmount and mount the
#   size, the bytes and the mtime (to the nanosecond) are what stat showed
#   before; a utime set after a write stays;
# - O_APPEND from two descriptors at once, the kernel computing offsets;
# - an O_WRONLY descriptor's write of 2 bytes into a page not in the cache:
#   the kernel reads the page through that descriptor first (a read row of
#   whole pages around offset 5000), and the bytes around it survive;
# - writes past the end of file (a hole of 1 MiB reads as zeros), and a
#   truncate between unsynced writes;
# - fsync makes data durable through the daemon: kill -9 of the daemon
#   after fsync, remount, the bytes are there;
# - a mount whose files are in both cache modes keeps write-through and
#   says why on stderr (stats writeback_cache False).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
L=$T/log.csv
CAT=$B.scatterfs
BASE="size=64M,log=$L,log.ops=read:write:fsync"

# rows OP PATH - "offset+size" of each OP row of PATH, in log order, space-separated
rows() {
	cat "$M/.scatterfs/stats" >/dev/null # the log barrier
	sfs_log_awk "$L" -v op="$1" -v p="$2" 'NR > 1 && $f_op == op && $f_path == p { printf "%s+%s ", $f_offset, $f_size }' "$L"
}

# TEN: ten write(2)s of 1,000 bytes ('a'..'j') to argv[1]; prints the
# fstat size, waits for a line on stdin (the log is read then), fsyncs
TEN='import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(10):
    assert os.write(fd, bytes([97 + i]) * 1000) == 1000
print(os.fstat(fd).st_size, flush=True)
sys.stdin.readline()
os.fsync(fd)
os.close(fd)'

for mode in "${SFS_CACHE_MODES[@]}"; do
	rm -f "$B" "$CAT"
	sfs_mount "$B" "$M" "$BASE,$(sfs_cache_opts "$mode")"
	sfs_check_cache_mode "$M" "$mode"

	# --- the log sees writes at the size the daemon receives them
	coproc W { python3 -c "$TEN" "$M/w.$mode"; }
	read -r size <&"${W[0]}"
	assert_eq "$size" 10000 "$mode: fstat size after ten writes of 1000"
	before=$(rows write "w.$mode")
	echo >&"${W[1]}"
	wait "$W_PID" || fail "$mode: the writer failed"
	after=$(rows write "w.$mode")
	if [[ $mode == writeback ]]; then
		assert_eq "$before" "" "$mode: write rows before fsync"
		assert_eq "$after" "0+10000 " "$mode: write rows after fsync"
	elif [[ $mode == none ]]; then
		ten="0+1000 1000+1000 2000+1000 3000+1000 4000+1000 5000+1000 6000+1000 7000+1000 8000+1000 9000+1000 "
		assert_eq "$before" "$ten" "$mode: write rows before fsync (one per write(2))"
		assert_eq "$after" "$ten" "$mode: write rows after fsync"
	else
		# write-through: each write(2) before it returns, split at pages
		ten="0+1000 1000+1000 2000+1000 3000+1000 4000+96 4096+904 5000+1000 6000+1000 7000+1000 8000+192 8192+808 9000+1000 "
		assert_eq "$before" "$ten" "$mode: write rows before fsync (one per write(2))"
		assert_eq "$after" "$ten" "$mode: write rows after fsync"
	fi
	assert_eq "$(rows fsync "w.$mode")" "0+0 " "$mode: fsync rows"

	# --- size, mtime, O_APPEND, O_WRONLY, past EOF, truncate; then remount
	python3 - "$M" "$mode" <<'PY' || fail "$mode: the file operations failed"
import os, sys
m, mode = sys.argv[1], sys.argv[2]
def put(name, data):
    fd = os.open(f"{m}/{name}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)
# O_APPEND from two descriptors, interleaved
put("append", b"")
a = os.open(f"{m}/append", os.O_WRONLY | os.O_APPEND)
b = os.open(f"{m}/append", os.O_WRONLY | os.O_APPEND)
for i in range(50):
    os.write(a, b"A" * 100)
    os.write(b, b"B" * 37)
assert os.fstat(a).st_size == 50 * 137, os.fstat(a).st_size
os.close(a); os.close(b)
# past EOF: a hole of 1 MiB, then 100 bytes
fd = os.open(f"{m}/past", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"x" * 10)
os.pwrite(fd, b"y" * 100, (1 << 20) + 10)
assert os.fstat(fd).st_size == (1 << 20) + 110
os.close(fd)
# a truncate between unsynced writes
fd = os.open(f"{m}/trunc", os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"t" * 20000)
os.ftruncate(fd, 5000)
os.pwrite(fd, b"u" * 100, 8000)
assert os.fstat(fd).st_size == 8100
os.close(fd)
# a utime after the writes stays, to the nanosecond
put("utime", b"z" * 5000)
fd = os.open(f"{m}/utime", os.O_WRONLY)
os.pwrite(fd, b"w" * 10, 100)
os.pwrite(fd, b"v" * 10, 200)
os.utime(fd, ns=(1000000000123456789, 1000000000123456789))
os.close(fd)
# a file of 8 KiB for the O_WRONLY write after the remount
put("wronly", b"a" * 8192)
PY
	st_before=$(cd "$M" && stat -c '%n %s %.9Y' append past trunc utime w."$mode")
	sum_before=$(cd "$M" && md5sum append past trunc utime w."$mode")
	sfs_umount "$M"
	sfs_mount "$B" "$M" "$BASE,$(sfs_cache_opts "$mode")"
	assert_eq "$(cd "$M" && stat -c '%n %s %.9Y' append past trunc utime w."$mode")" "$st_before" \
		"$mode: size and mtime after a remount, as stat showed them before"
	assert_eq "$(cd "$M" && md5sum append past trunc utime w."$mode")" "$sum_before" "$mode: bytes after a remount"
	python3 - "$M" <<'PY' || fail "$mode: the bytes of the file operations"
import sys
m = sys.argv[1]
d = open(f"{m}/append", "rb").read()
assert d == (b"A" * 100 + b"B" * 37) * 50, "append"
d = open(f"{m}/past", "rb").read()
assert d == b"x" * 10 + bytes(1 << 20) + b"y" * 100, "past"
d = open(f"{m}/trunc", "rb").read()
assert d == b"t" * 5000 + bytes(3000) + b"u" * 100, "trunc"
d = open(f"{m}/utime", "rb").read()
assert d == b"z" * 100 + b"w" * 10 + b"z" * 90 + b"v" * 10 + b"z" * 4790, "utime"
PY
	assert_eq "$(stat -c %.9Y "$M/utime")" 1000000000.123456789 "$mode: the mtime utime() set after the writes"
	# O_WRONLY: 2 bytes at 5000 of a page not in the cache (just mounted)
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
assert os.pwrite(fd, b"ZZ", 5000) == 2
os.close(fd)' "$M/wronly" || fail "$mode: the O_WRONLY write failed"
	reads=$(rows read wronly)
	writes=$(rows write wronly)
	if [[ $mode == writeback ]]; then
		# whole pages around 5000 read first, then written back whole
		awk -v r="$reads" 'BEGIN { n = split(r, a, " "); for (i = 1; i <= n; i++) { split(a[i], p, "+")
			if (p[1] % 4096 == 0 && p[2] % 4096 == 0 && p[1] <= 5000 && p[1] + p[2] >= 5002) ok = 1 } exit !ok }' ||
			fail "$mode: the O_WRONLY write's reads: '$reads', expected whole pages around offset 5000"
		[[ $writes == *"+"* && $writes != "5000+2 " ]] ||
			fail "$mode: the O_WRONLY write reached the daemon as '$writes', expected whole pages"
	else
		assert_eq "$reads" "" "$mode: reads of the O_WRONLY write"
		assert_eq "$writes" "5000+2 " "$mode: the O_WRONLY write, as written"
	fi
	sfs_umount "$M"
	sfs_mount "$B" "$M" "$BASE,$(sfs_cache_opts "$mode")"
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
assert d == b"a" * 5000 + b"ZZ" + b"a" * 3190, d[4990:5010]' "$M/wronly" || fail "$mode: bytes of wronly after a remount"

	# --- fsync is durable through the daemon: kill -9 after it
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"durable" * 3000)
os.fsync(fd)
os.write(fd, b"later")' "$M/durable" || fail "$mode: the durable writes failed"
	kill -9 "${SFS_PID[$M]}"
	wait "${SFS_PID[$M]}" 2>/dev/null || true
	unset "SFS_PID[$M]"
	sfs_remount_killed "$M" "$B" "$BASE,$(sfs_cache_opts "$mode")" "$CAT" "$mode: kill -9 after fsync"
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
assert d[:21000] == b"durable" * 3000, (len(d), d[:20])' "$M/durable" ||
		fail "$mode: fsynced bytes of durable lost by kill -9"
	sfs_umount "$M"
	note "$mode: log rows, size, mtime, O_APPEND, O_WRONLY, past EOF, truncate, fsync as expected"
done

# --- a mount with files in both modes: write-through, and a warning saying why
rm -f "$B" "$CAT"
cat >"$T/mixed.ini" <<EOF
[cache]
mode = kernel
[file "wal/*"]
cache.mode = none
EOF
sfs_mount "$B" "$M" "size=64M,config=$T/mixed.ini"
assert_eq "$(sfs_stats "$M" writeback_cache)" False "mixed modes: stats writeback_cache"
grep -qxF "scatterfs: warning: cache.writeback is off for this mount: it has files in both cache modes ([file \"wal/*\"] cache.mode = none), and the kernel's write-back cache would keep the size and times of every file, a direct-I/O file's going stale; set cache.writeback = false, or cache.mode = kernel for every file" \
	"$SFS_LAST_DLOG" || fail "mixed modes: no warning on stderr"
sfs_umount "$M"
sfs_mount "$B" "$M" "size=64M,config=$T/mixed.ini,cache.writeback=false"
grep -q "warning: cache.writeback" "$SFS_LAST_DLOG" && fail "mixed modes, cache.writeback=false: a warning"
sfs_umount "$M"
echo "PASS: writeback"
