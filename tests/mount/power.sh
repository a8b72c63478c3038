#!/bin/bash
# Simulated power failure (issue 27, item 3): [device] volatile = true and
# the control file's sync-report and crash, with exact outcomes:
#   - sync-report lists exactly the ranges not yet durable after a known
#     write pattern (an fsynced file overwritten in part: only the
#     overwritten range; a new file: its first extent, data and zero-fill);
#   - after crash and a remount, synced data is there and unsynced data is
#     gone (the overwrite is undone, the unsynced new file is gone with
#     the catalog's unsynced commits);
#   - a flush that a fault rule ignores reports success, and its data is
#     lost at the next crash (the file reads as the zeros it held before);
#   - crash torn keeps exactly the prefix that the seed gives
#     (splitmix64, as undo_apply() says), and the daemon says so;
#   - flush = linux fails once, the next fsync passes, and the failed
#     fsync's writes are forgotten: a crash loses them (sync-report marks
#     them "forgotten");
#   - commands without volatile, and malformed ones, get one error line;
#   - a write that would pass volatile_max part way is a short write of the
#     runs that fit (it was ENOSPC over bytes it had changed), and one
#     that fits nowhere is ENOSPC and changes nothing;
#   - a forgotten write into space its file never wrote reads as zeros
#     after the crash, not as a deleted file's bytes, over an older
#     forgotten write of the space too, and after a zero range; forgotten
#     writes do not hold volatile_max for good.
# TIMEOUT: 300
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
OPTS="size=32M,device.block_size=4K,device.layers=accounting:faults:timing:volatile:base,device.volatile=true"

ctl() { sfs_ctl "$@"; }
crash() { sfs_crash "$@"; }

# write FILE OFFSET LEN BYTE [fsync] - writes LEN bytes of BYTE (an int) at OFFSET
write() {
	python3 - "$@" <<'PYEOF'
import os, sys
p, off, n, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
os.pwrite(fd, bytes([b]) * n, off)
if len(sys.argv) > 5:
    os.fsync(fd)
os.close(fd)
PYEOF
}

# pyrun CODE - python with op(NAME) (an O_RDWR descriptor), w(FD, CHAR, OFF, LEN), fsync(FD) -> ok|EIO|...
pyrun() {
	python3 - "$M" "$1" <<'PYEOF'
import ctypes, errno, os, sys
m = sys.argv[1]
def op(p): return os.open(m + "/" + p, os.O_RDWR | os.O_CREAT, 0o644)
def w(fd, c, off, n):
    try: return os.pwrite(fd, c.encode() * n, off)
    except OSError as x: return errno.errorcode[x.errno]
def fsync(fd):
    try:
        os.fsync(fd)
        return "ok"
    except OSError as x:
        return errno.errorcode[x.errno]
exec(sys.argv[2])
PYEOF
}

# first_extent FILE - the device offset of the file's first extent
first_extent() {
	awk -F, 'NR == 2 { print $2; exit }' "$M/.scatterfs/extents/$1"
}

# 1. Without volatile: both commands refused with one line.
sfs_mount "$B.plain" "$M" "size=8M"
assert_eq "$(ctl "$M" sync-report crash)" \
	"error: sync-report: no device has volatile = true ([device] volatile)
error: crash: no device has volatile = true ([device] volatile)" "commands without volatile"
sfs_umount "$M"

# 2. sync-report of a known pattern.
sfs_mount "$B" "$M" "$OPTS"
assert_eq "$(ctl "$M" sync-report)" "catalog 0
ok" "sync-report of a new mount"
write "$M/a" 0 8192 65 fsync
write "$M/a" 4096 4096 66
write "$M/b" 0 4096 67
cat "$M/.scatterfs/extents/a" >"$T/a.ext"
cat "$M/.scatterfs/extents/b" >"$T/b.ext"
a_dev=$(first_extent a)
b_dev=$(first_extent b)
note "a at $a_dev, b at $b_dev"
[[ -n $a_dev && -n $b_dev ]] || fail "no extents: $(cat "$T/a.ext" "$T/b.ext")"
rep=$(ctl "$M" sync-report)
echo "$rep" >"$T/report"
assert_eq "$(grep -v '^catalog ' "$T/report")" \
	"$(printf 'file /a range 4096+4096 device main %d+4096\nfile /b range 0+65536 device main %d+65536\nok' \
		$((a_dev + 4096)) "$b_dev" | sort -t' ' -k6,6n | awk '/^ok/ {o=$0; next} {print} END {print o}')" \
	"sync-report after an fsynced file's overwrite and a new file"
grep -Eq '^catalog [1-9][0-9]*$' "$T/report" || fail "sync-report: no catalog bytes pending: $rep"
assert_eq "$(ctl "$M" 'sync-report now')" "error: sync-report takes no arguments" "sync-report with an argument"
assert_eq "$(ctl "$M" 'crash seed=3' 'crash torn seed=x' 'crash bogus' 'crash torn torn')" \
	"error: crash: seed= and sector_size= go with torn
error: crash: seed=x: not a number from 0 to 2^64-1
error: crash: unknown or repeated argument 'bogus'; allowed: torn, seed=N, sector_size=N
error: crash: unknown or repeated argument 'torn'; allowed: torn, seed=N, sector_size=N" \
	"malformed crash commands"

# 3. Crash, remount: synced data there, unsynced gone.
crash "$M" crash
grep -F "scatterfs: crash: " "$SFS_LAST_DLOG" || fail "the daemon did not report the crash"
sfs_mount "$B" "$M" "$OPTS"
assert_eq "$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(len(d), d == b"A"*8192)' "$M/a")" \
	"8192 True" "a after the crash: its fsynced 8 KiB, the overwrite undone"
[[ -e $M/b ]] && fail "b was never synced and is still there ($(stat -c %s "$M/b") bytes)"
assert_eq "$(ctl "$M" sync-report | grep -c '^file ')" 0 "nothing pending after the remount"

# 4. An ignored flush reports success and loses the data at the next crash.
write "$M/c" 0 4096 0 fsync
assert_eq "$(ctl "$M" 'fault add lie op=flush flush=ignore')" "ok" "fault add lie"
write "$M/c" 0 4096 68 fsync || fail "fsync under flush=ignore must report success"
assert_eq "$(ctl "$M" sync-report | grep -c '^file /c ')" 1 "c's write still pending after its ignored fsync"
crash "$M" crash
sfs_mount "$B" "$M" "$OPTS"
assert_eq "$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(len(d), d.count(0))' "$M/c")" \
	"4096 4096" "c after the crash: the ignored flush's data is lost"

# 4b. A flush's delay_ms is waited for: fsync takes at least that long
# (before the fix io_fsync replied without waiting for the request's
# modelled completion).
assert_eq "$(ctl "$M" 'fault add slow op=flush delay_ms=700')" "ok" "fault add slow"
took=$(python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"x" * 4096)
t = time.monotonic(); os.fsync(fd); print(int((time.monotonic() - t) * 1000))' "$M/slow")
((took >= 700)) || fail "fsync under delay_ms=700 took $took ms"
note "fsync under delay_ms=700: $took ms"
# The wait holds no lock of the file: a read of it, sent 200 ms into a
# 700 ms flush of a file with extents to commit, is answered before the
# fsync returns (before, it waited behind the fsync's lock: 'after').
order=$(python3 -c '
import os, sys, threading, time
p = sys.argv[1] + "2"
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"y" * 4096)
t = threading.Thread(target=os.fsync, args=(fd,)); t.start()
time.sleep(0.2)
r = os.open(p, os.O_RDONLY); d = os.pread(r, 4096, 0); os.close(r)
print("before" if t.is_alive() else "after", len(d)); t.join()' "$M/slow")
assert_eq "$order" "before 4096" "a read of the file during its fsync's 700 ms flush delay"
assert_eq "$(ctl "$M" 'fault del slow')" "ok" "fault del slow"

# 5. crash torn keeps the prefix the seed says.
write "$M/d" 0 65536 69 fsync
write "$M/d" 0 65536 70
d_dev=$(first_extent d)
assert_eq "$(ctl "$M" sync-report | grep '^file ')" "file /d range 0+65536 device main $d_dev+65536" \
	"d's pending range"
keep=$(python3 - "$d_dev" <<'PYEOF'
import sys
M = (1 << 64) - 1
def nxt(s):
    s = (s + 0x9e3779b97f4a7c15) & M
    z = s
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return s, z ^ (z >> 31)
off, n, sec = int(sys.argv[1]), 65536, 4096
first = (sec - off % sec) % sec
state, x = nxt(7)
print(first + (x % ((n - first) // sec + 1)) * sec)
PYEOF
)
note "seed 7 keeps $keep bytes of 65536"
crash "$M" crash torn seed=7 sector_size=4096
grep -qF "crash: main $d_dev+65536 kept $keep" "$SFS_LAST_DLOG" ||
	fail "the daemon's log has no 'crash: main $d_dev+65536 kept $keep': $(grep 'crash' "$SFS_LAST_DLOG")"
sfs_mount "$B" "$M" "$OPTS"
assert_eq "$(python3 -c '
import sys; d = open(sys.argv[1], "rb").read(); k = int(sys.argv[2])
print(len(d), d[:k] == b"F" * k, d[k:] == b"E" * (65536 - k))' "$M/d" "$keep")" \
	"65536 True True" "d after crash torn: the seed's prefix new, the rest old"

# 6. flush = linux (fsyncgate): the failed fsync fails once, and the
# file's writes it should have made durable are forgotten: the next fsync
# succeeds and still a crash loses them (before the fix every fsync
# failed, and the next successful one made them durable).  A forgotten
# range written again is durable after the next fsync; another file's
# pending write is not forgotten.
write "$M/e" 0 8192 49 fsync
write "$M/g" 0 4096 49 fsync
e_dev=$(first_extent e)
assert_eq "$(ctl "$M" 'fault add lx op=flush file=e flush=linux')" "ok" "fault add lx"
assert_eq "$(pyrun "
e, g = op('e'), op('g')
w(e, '2', 0, 8192)
w(g, '2', 0, 4096)
r = [fsync(e)]
w(e, '3', 4096, 4096)
r += [fsync(e), fsync(e)]
print(*r)")" "EIO ok EIO" "three fsyncs of e under flush = linux"
assert_eq "$(ctl "$M" 'fault list')" "lx op=flush file=e error=EIO flush=linux matched=3 fired=2
ok" "lx's counters: the fsync after each failed one passes"
assert_eq "$(ctl "$M" sync-report | grep '^file ')" "file /e range 0+4096 device main $e_dev+4096 forgotten" \
	"sync-report: e's forgotten range"
crash "$M" crash
sfs_mount "$B" "$M" "$OPTS"
assert_eq "$(python3 -c '
import sys; e = open(sys.argv[1], "rb").read(); g = open(sys.argv[2], "rb").read()
print(e == b"1" * 4096 + b"3" * 4096, g == b"2" * 4096)' "$M/e" "$M/g")" \
	"True True" "e and g after the crash: the forgotten write lost, the rest durable"
sfs_umount "$M"

# 7. volatile_max: 64 KiB, 16 KiB extents interleaved (one device I/O a
# run); 40 KiB held, then a 48 KiB write: the first 16 KiB run fits, the
# second not: a short write of 16 KiB, the rest unchanged (before the fix:
# ENOSPC, with the first 16 KiB written); then 16 KiB more (56 KiB held):
# ENOSPC, nothing written.
rm -f "$B" "$B".scatterfs*
sfs_mount "$B" "$M" "$OPTS,device.volatile_max=64K,layout.pattern=interleaved,layout.extent_size=16K"
for ((i = 0; i < 8; i++)); do write "$M/v" $((i * 16384)) 16384 65 fsync; done # (held: 16 KiB at most)
assert_eq "$(python3 - "$M/v" <<'PYEOF'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(fd, b"1" * 40960, 0)
r = [os.pwrite(fd, b"2" * 49152, 65536)]
try:
    r.append(os.pwrite(fd, b"3" * 16384, 98304))
except OSError as x:
    r.append(errno.errorcode[x.errno])
d = os.pread(fd, 131072, 0)
print(*r, d == b"1" * 40960 + b"A" * 24576 + b"2" * 16384 + b"A" * 49152)
PYEOF
)" "16384 ENOSPC True" "writes past volatile_max: short, then refused; the bytes"
sfs_umount "$M"

# 8. A forgotten write into space the file got since its last durable
# state reads as zeros after the crash, not as the freed space's old
# bytes (another file's: a leak).  As ext4 leaves an extent whose write
# failed unwritten.  Each way a file gets such space: (a) a write that
# allocates (whole blocks, and the zero-fill of the extent's rest), (b) a
# write of part of a block (bounced), (c) space fallocated and durable
# but never written.  The first fsync fails (flush = linux), the second
# makes the file's extents and size durable.  An overwrite in place that
# is forgotten still gets the file's own old bytes back (section 6).
# Before the fix each read the deleted file's bytes.
rm -f "$B" "$B".scatterfs*
sfs_mount "$B" "$M" "$OPTS,layout.extent_size=1M"
write "$M/secret" 0 3145728 83 fsync
rm "$M/secret"
sync -f "$M"
sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS,layout.extent_size=1M"
for f in a b; do
	assert_eq "$(ctl "$M" "fault add l$f op=flush file=$f flush=linux count=1")" "ok" "fault add l$f"
done
# fsyncs F... - for each file: its writes, then two fsyncs (EIO, ok)
fsyncs() {
	local f code="r = []"
	for f; do
		case $f in
		a) code+=$'\n'"fd = op('a'); w(fd, 'a', 0, 262144)" ;; # a 1 MiB extent: 256 KiB written, the rest zero-filled
		b) code+=$'\n'"fd = op('b'); w(fd, 'b', 100, 1000)" ;; # part of a block
		c) code+=$'\n'"fd = op('c'); w(fd, 'c', 0, 65536)" ;;  # into fallocated space
		esac
		code+=$'\n'"r += [fsync(fd), fsync(fd)]"
	done
	pyrun "$code"$'\n'"print(*r)"
}
assert_eq "$(fsyncs a b)" "EIO ok EIO ok" "fsyncs of a and b under flush = linux"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644); os.posix_fallocate(fd, 0, 1048576); os.fsync(fd)' "$M/c"
assert_eq "$(ctl "$M" "fault add lc op=flush file=c flush=linux count=1")" "ok" "fault add lc"
assert_eq "$(fsyncs c)" "EIO ok" "fsyncs of c (fallocated, durable) under flush = linux"
crash "$M" crash
sfs_mount "$B" "$M" "$OPTS,layout.extent_size=1M"
assert_eq "$(python3 - "$M" <<'PYEOF'
import sys
m = sys.argv[1]
for f, n in (("a", 262144), ("b", 1100), ("c", 1048576)):
    d = open(m + "/" + f, "rb").read()
    print(f, len(d), d.count(0) == len(d), d.count(b"S"))
PYEOF
)" "a 262144 True 0
b 1100 True 0
c 1048576 True 0" "forgotten writes into new space read as zeros after the crash (no freed bytes)"
sfs_umount "$M"

# 9. What a break-it tester found after section 8's fix:
#   (a) a's overwrite forgotten, a deleted, b given a's space and its
#       write forgotten too: b read a's bytes (the older forgotten entry
#       won over b's fresh one); zeros now, as ext4 gives;
#   (b) an overwrite, a zero range, then a write, forgotten: the file read
#       its bytes from before the zero range; zeros now;
#   (c) forgotten writes counted against volatile_max for good: once they
#       reached it every write was ENOSPC and no fsync helped; now a
#       rewrite and another file's write go through.
rm -f "$B" "$B".scatterfs*
O="${OPTS/size=32M,/size=1M,},layout.extent_size=64K"
sfs_mount "$B" "$M" "$O"
# contents F... - per file: bytes, then the count of each of b"\0SDQR"
contents() {
	python3 -c 'import sys
for f in sys.argv[1:]:
    d = open(f, "rb").read()
    print(len(d), *(d.count(c) for c in b"\0SDQR"))' "$@"
}
assert_eq "$(pyrun "a = op('a'); w(a, 'S', 0, 1 << 20); print(fsync(a))")" ok "a fills the device"
assert_eq "$(ctl "$M" 'fault add la op=flush file=a flush=linux count=1')" ok "fault add la"
assert_eq "$(pyrun "a = op('a'); w(a, 'T', 0, 65536); print(fsync(a))")" EIO "a's overwrite forgotten"
rm "$M/a"
assert_eq "$(ctl "$M" 'fault add lb op=flush file=b flush=linux count=1')" ok "fault add lb"
assert_eq "$(pyrun "b = op('b'); w(b, 'b', 0, 65536); print(fsync(b), fsync(b))")" "EIO ok" "b in a's space, forgotten"
assert_eq "$(cut -d, -f2 <<<"$(tail -n 1 "$M/.scatterfs/extents/b")")" 0 "b at a's device offset 0"
crash "$M" crash
sfs_mount "$B" "$M" "$O"
assert_eq "$(contents "$M/b")" "65536 65536 0 0 0 0" "b after the crash: zeros, not the deleted a's bytes"
assert_eq "$(pyrun "z = op('z'); w(z, 'D', 0, 65536); print(fsync(z))")" ok "z synced"
assert_eq "$(ctl "$M" 'fault add lz op=flush file=z flush=linux count=1')" ok "fault add lz"
assert_eq "$(pyrun "
z = op('z')
libc = ctypes.CDLL(None, use_errno=True)
w(z, 'X', 0, 65536)
print(libc.fallocate(z, 0x10, ctypes.c_long(0), ctypes.c_long(65536)))  # FALLOC_FL_ZERO_RANGE
w(z, 'Y', 0, 65536); print(fsync(z), fsync(z))")" "0
EIO ok" "z: overwrite, zero range, write, forgotten"
crash "$M" crash
sfs_mount "$B" "$M" "$O"
assert_eq "$(contents "$M/z")" "65536 65536 0 0 0 0" "z after the crash: zeros, not the bytes the zero range removed"
# (c) 128 KiB forgotten (b and z's), then a rewrite and another file's write
sfs_umount "$M"
O+=",device.volatile_max=128K"
sfs_mount "$B" "$M" "$O"
for f in b z; do
	assert_eq "$(ctl "$M" "fault add l$f op=flush file=$f flush=linux count=1")" ok "fault add l$f (c)"
	assert_eq "$(pyrun "f = op('$f'); print(w(f, 'c', 0, 65536), fsync(f), fsync(f))")" "65536 EIO ok" "$f forgotten"
done
assert_eq "$(pyrun "
z = op('z'); print(w(z, 'Q', 0, 4096), fsync(z))
y = op('y'); print(w(y, 'R', 0, 4096), fsync(y))")" "4096 ok
4096 ok" "writes after the forgotten ones reached volatile_max"
crash "$M" crash
sfs_mount "$B" "$M" "$O"
assert_eq "$(contents "$M/z" "$M/y")" "65536 61440 0 0 4096 0
4096 0 0 0 0 4096" "z and y after the crash: their synced 4 KiB"
sfs_umount "$M"

# 10. A forgotten write is reported to each open file once, as Linux's
# errseq does: (d) a second descriptor of the file (its fsync said ok);
# (e) a file whose writes the allocator's own flush forgot (a rule with no
# file=, failing the flush that makes freed space reusable: every file's
# writes are forgotten, and each file's fsync said ok).  (f) A clean
# unmount drops the forgotten writes too.
rm -f "$B" "$B".scatterfs*
O="${OPTS/size=32M,/size=1M,},layout.extent_size=64K"
sfs_mount "$B" "$M" "$O"
assert_eq "$(pyrun "f = op('f'); w(f, '1', 0, 65536); print(fsync(f))")" ok "f synced"
assert_eq "$(ctl "$M" 'fault add lf op=flush file=f flush=linux count=1')" ok "fault add lf"
assert_eq "$(pyrun "
fd1, fd2 = op('f'), op('f')
w(fd2, '2', 0, 65536)
print(fsync(fd1), fsync(fd2), fsync(fd2), fsync(fd1))")" "EIO EIO ok ok" "two descriptors of f: each told once"
rm "$M/f"
assert_eq "$(pyrun "
a = op('a'); w(a, 'S', 0, 1 << 19); print(fsync(a))
b = op('b'); w(b, '1', 0, (1 << 19) - 65536); print(fsync(b))")" "ok
ok" "a and b fill the device"
assert_eq "$(pyrun "b = op('b'); print(w(b, '2', 0, 65536))")" 65536 "b overwritten, not synced"
rm "$M/a"
assert_eq "$(ctl "$M" 'fault add any op=flush flush=linux count=1')" ok "fault add any"
assert_eq "$(pyrun "
c = op('c'); print(w(c, 'c', 0, 65536))
b = op('b'); print(fsync(b), fsync(b))")" "ENOSPC
EIO ok" "the allocator's flush failed: c ENOSPC, b told once"
# (f) a clean unmount after a forgotten write: the next mount reads what
# the disk held (the new bytes read back before: they were on the backing)
assert_eq "$(pyrun "g = op('g'); w(g, '1', 0, 65536); print(fsync(g))")" ok "g synced"
assert_eq "$(ctl "$M" 'fault add lg op=flush file=g flush=linux count=1')" ok "fault add lg"
assert_eq "$(pyrun "g = op('g'); w(g, '2', 0, 65536); print(fsync(g), fsync(g))")" "EIO ok" "g's write forgotten"
sfs_umount "$M"
sfs_mount "$B" "$M" "$O"
assert_eq "$(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(len(d), d == b"1" * 65536)' "$M/g")" \
	"65536 True" "g after a clean unmount: the synced bytes, not the forgotten ones"
sfs_umount "$M"
