#!/bin/bash
# The fault layer and its control file (issue 27): .scatterfs/control is
# root's (0600; nobody gets EACCES on open for reading or writing), each
# command line gets its reply on the same open file, a malformed command
# gets one error line and changes nothing, a 4,000-byte path works as a
# target through the control file, and [fault "NAME"] sections load at
# mount (a bad one refuses the mount, naming file, line and key).  Then
# each effect on a mount whose stack has the fault layer, with exact
# outcomes: the Nth read of a device range fails with EIO and its log row
# names the file, offset and rule; a delay shows in latency_us; a bitflip
# and a torn write change exactly what the seed says; flush = ignore,
# linux and keep-dirty; a glob target and a 4,000-byte path.
# TIMEOUT: 900
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3
id nobody >/dev/null 2>&1 || fail "no user nobody"

T=$SFS_TMP
M=$T/mnt
B=$T/backing

# ctl M CMD... - sends each command on one open control file, prints the replies
ctl() { sfs_ctl "$@"; }

cat >"$T/f.ini" <<'INI'
[fault "boot"]
op = read
file = data/*
error = EIO
count = 1
INI
sfs_mount "$B" "$M" "size=32M,allow_other,device.block_size=4K,device.layers=accounting:faults:timing:base,config=$T/f.ini"

assert_eq "$(stat -c '%a %u %g %F %s' "$M/.scatterfs/control")" "600 0 0 regular empty file 0" \
	"mode, owner, type and size of control"
for mode in r w rw; do
	got=$(runuser -u nobody -- python3 -c '
import errno, os, sys
f = {"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR}[sys.argv[2]]
try:
    os.close(os.open(sys.argv[1], f)); print("OK")
except OSError as e:
    print(errno.errorcode[e.errno])' "$M/.scatterfs/control" $mode)
	assert_eq "$got" EACCES "nobody opens control ($mode)"
done
note "control: 0600 root's; nobody gets EACCES"
SECONDS=0

assert_eq "$(ctl "$M" "fault list")" "boot op=read file=data/* count=1 error=EIO matched=0 fired=0
ok" "the [fault] section's rule"

# One open file, several commands, replies in order; a bad one changes nothing.
got=$(ctl "$M" "fault add slow op=write delay_ms=5" "fault add slow op=read error=EIO" \
	"fault add x op=reed error=EIO" "bogus" "" "fault del nosuch" "fault list")
assert_eq "$got" "ok
error: fault add slow: a fault named 'slow' exists
error: fault add x: key 'op': 'reed' is not valid; allowed: read, write, flush, trim or any, several joined by ',' (':' in -o)
error: unknown command 'bogus'; allowed: fault add, fault del, fault list, sync-report, crash
error: fault del: no fault named 'nosuch'
boot op=read file=data/* count=1 error=EIO matched=0 fired=0
slow op=write delay_ms=5 matched=0 fired=0
ok" "replies of one open file"

# The shell's way: a descriptor open for reading and writing.
exec 3<>"$M/.scatterfs/control"
echo "fault del slow" >&3
assert_eq "$(cat <&3)" ok "echo >&3; cat <&3"
exec 3>&-
# echo > control: the open's truncation is accepted; the command runs.
echo "fault del boot" >"$M/.scatterfs/control"
assert_eq "$(ctl "$M" "fault list")" ok "after echo 'fault del boot' > control"

# file = /PATH is the mount root's PATH (sync-report writes paths so):
# before, it was accepted and never matched.  A device range past the
# device's end and sector_size without torn are refused (were accepted).
mkdir -p "$M/data"
got=$(ctl "$M" "fault add sl op=write file=/data/x error=ENOSPC" \
	"fault add far op=read device=main range=31M+2M error=EIO" \
	"fault add ss op=write sector_size=4K error=EIO" "fault list")
assert_eq "$got" "ok
error: fault add far: key 'range': 31M+2M ends past the end of device 'main'; allowed: OFFSET+LENGTH within 0+32M
error: fault add: fault 'ss': sector_size goes with torn = true
sl op=write file=data/x error=ENOSPC matched=0 fired=0
ok" "file = /data/x, a range past the end, sector_size without torn"
assert_eq "$(python3 -c '
import errno, os, sys
try:
    with open(sys.argv[1], "wb", buffering=0) as f: f.write(b"x" * 4096); os.fsync(f.fileno())
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$M/data/x")" ENOSPC "a write of data/x under file = /data/x"
ctl "$M" "fault del sl" >/dev/null

# A 4,000-byte path as a target (components of 99 bytes).
long=$(python3 -c 'print("/".join(["d%02d" % i + "x" * 96 for i in range(40)])[:3999] + "z")')
assert_eq "${#long}" 4000 "length of the long path"
got=$(ctl "$M" "fault add long file=$long error=EIO")
assert_eq "$got" ok "fault add with a 4,000-byte file ="
assert_eq "$(ctl "$M" "fault list")" "long file=$long error=EIO matched=0 fired=0
ok" "the long rule listed"
# A line past 64 KiB is refused whole, and the next command still works.
got=$(ctl "$M" "fault add big file=$(head -c 70000 /dev/zero | tr '\0' a) error=EIO" "fault del long")
assert_eq "$got" "error: command line longer than 65536 bytes
ok" "an overlong line, then a command"
note "control: replies, malformed commands, 4,000-byte path ($SECONDS s)"
sfs_umount "$M"

# The effects, on a mount whose stack has the fault layer.
cat >"$T/l.ini" <<'INI'
[device]
block_size = 4K
layers = accounting, faults, timing, base
[layout]
pattern = contiguous
extent_size = 64K
INI
L=$T/req.csv
sfs_mount "$B" "$M" "config=$T/l.ini,log=$L,log.ops=read:write:extend:fsync"
mkdir -p "$M/data"
# io PATH OP OFFSET [BYTE] - pread 4 KiB (prints its bytes' hex digest), pwrite
# 4 KiB of BYTE, fsync: "ok ..." or the errno's name.
io() {
	python3 - "$@" <<'PYEOF'
import errno, hashlib, os, sys
path, op, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if op == "read":
            print("ok", hashlib.sha256(os.pread(fd, 4096, off)).hexdigest())
        elif op == "write":
            os.pwrite(fd, bytes([int(sys.argv[4], 16)]) * 4096, off)
            print("ok")
        elif op == "fsync":
            os.fsync(fd)
            print("ok")
    finally:
        os.close(fd)
except OSError as e:
    print(errno.errorcode[e.errno])
PYEOF
}
# splitmix64 SEED N - the first draw of seed SEED, modulo N (fault.h's draws)
splitmix64() {
	python3 -c '
import sys
M = (1 << 64) - 1
z = (int(sys.argv[1]) + 0x9e3779b97f4a7c15) & M
z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
print((z ^ (z >> 31)) % int(sys.argv[2]))' "$1" "$2"
}
python3 -c 'import os; open(os.sys.argv[1], "wb").write(bytes(range(256)) * 1024)' "$M/data/t"
sync "$M/data/t"
# logical 64K of data/t: its device offset from the extent map
dev64=$(awk -F, 'NR > 1 && $1 <= 65536 && 65536 < $1 + $3 { print $2 + 65536 - $1 }' "$M/.scatterfs/extents/data/t")
[[ -n $dev64 ]] || fail "no extent holds logical 64K of data/t"

# 1. The 2nd read of a device range fails with EIO; the log row names the file, offset and rule.
assert_eq "$(ctl "$M" "fault add dr op=read device=main range=$dev64+4K after=1 count=1 error=EIO")" ok "add dr"
want=$(python3 -c 'import hashlib; print(hashlib.sha256(bytes(range(256)) * 16).hexdigest())')
assert_eq "$(io "$M/data/t" read 65536)" "ok $want" "1st read of the range"
assert_eq "$(io "$M/data/t" read 65536)" EIO "2nd read of the range"
assert_eq "$(io "$M/data/t" read 65536)" "ok $want" "3rd read (count = 1)"
assert_eq "$(io "$M/data/t" read 0)" "ok $want" "a read outside the range"
got=$(ctl "$M" "fault list")
assert_eq "${got#dr op=read device=main range=*+4K }" "after=1 count=1 error=EIO matched=3 fired=1
ok" "dr's counters"
cat "$M/.scatterfs/stats" >/dev/null # flushes the log
assert_eq "$(sfs_log_awk "$L" 'NR > 1 && $f_fault != "" { print $f_op, $f_path, $f_offset, $f_size, $f_result, $f_device_io, $f_fault }' "$L")" \
	"read data/t 65536 4096 -5 $dev64+4096 dr" "the log's row of the failed read"
assert_eq "$(head -1 "$L")" "ts_us,op,pid,path,offset,size,result,latency_us,device_io,fault" "the log's header"
ctl "$M" "fault del dr" >/dev/null
note "the 2nd read of device range $dev64+4K failed with EIO; the log names data/t, 65536 and dr"

# 2. A delay shows in latency_us.
assert_eq "$(ctl "$M" "fault add slow op=write file=data/s delay_ms=300")" ok "add slow"
assert_eq "$(io "$M/data/s" write 0 5a)" ok "a delayed write"
cat "$M/.scatterfs/stats" >/dev/null
lat=$(sfs_log_awk "$L" 'NR > 1 && $f_fault == "slow" && $f_op == "write" { print $f_latency_us }' "$L")
[[ -n $lat ]] && ((lat >= 300000 && lat < 2000000)) || fail "the delayed write's latency_us: '$lat', expected 300000 or more"
ctl "$M" "fault del slow" >/dev/null
note "delay_ms = 300: latency_us $lat"

# 3. A bitflip changes exactly the one bit the seed says.
python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\0" * 4096)' "$M/data/b"
assert_eq "$(ctl "$M" "fault add flip op=read file=data/b corrupt=bitflip seed=1 count=1")" ok "add flip"
got=$(io "$M/data/b" read 0)
bit=$(splitmix64 1 32768)
want=$(python3 -c 'import hashlib, sys; b = bytearray(4096); b[int(sys.argv[1]) // 8] ^= 1 << (int(sys.argv[1]) % 8); print(hashlib.sha256(b).hexdigest())' "$bit")
assert_eq "$got" "ok $want" "the read with bit $bit flipped"
assert_eq "$(io "$M/data/b" read 0)" "ok $(python3 -c 'import hashlib; print(hashlib.sha256(b"\0" * 4096).hexdigest())')" "the next read (count = 1)"
ctl "$M" "fault del flip" >/dev/null
note "corrupt = bitflip: bit $bit of 32768, as splitmix64(seed 1) says"

# 4. A torn write keeps exactly the prefix the seed says (512-byte sectors).
python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\0" * 4096)' "$M/data/w"
assert_eq "$(ctl "$M" "fault add tear op=write file=data/w torn=true seed=2 count=1")" ok "add tear"
assert_eq "$(io "$M/data/w" write 0 aa)" ok "the torn write reports success"
keep=$((512 * $(splitmix64 2 8)))
want=$(python3 -c 'import hashlib, sys; k = int(sys.argv[1]); print(hashlib.sha256(b"\xaa" * k + b"\0" * (4096 - k)).hexdigest())' "$keep")
assert_eq "$(io "$M/data/w" read 0)" "ok $want" "the torn write's bytes"
ctl "$M" "fault del tear" >/dev/null
note "torn: $keep of 4096 bytes kept, as splitmix64(seed 2) says"

# 5. Flushes: ignore reports success; linux reports EIO once; keep-dirty every time.
assert_eq "$(ctl "$M" "fault add ig op=flush file=data/t flush=ignore count=1")" ok "add ig"
assert_eq "$(io "$M/data/t" fsync 0)" ok "fsync under flush = ignore"
assert_eq "$(ctl "$M" "fault add lx op=flush file=data/t flush=linux count=1")" ok "add lx"
assert_eq "$(io "$M/data/t" fsync 0)" EIO "1st fsync under flush = linux"
assert_eq "$(io "$M/data/t" fsync 0)" ok "2nd fsync under flush = linux"
assert_eq "$(ctl "$M" "fault add kd op=flush file=data/t flush=keep-dirty error=ENOSPC")" ok "add kd"
for i in 1 2 3; do
	assert_eq "$(io "$M/data/t" fsync 0)" ENOSPC "fsync $i under flush = keep-dirty"
done
assert_eq "$(io "$M/data/s" fsync 0)" ok "another file's fsync"
# every fsync of data/t since a rule was added counts for it: 6, 5 and 3
assert_eq "$(ctl "$M" "fault list")" "ig op=flush file=data/t count=1 flush=ignore matched=6 fired=1
lx op=flush file=data/t count=1 error=EIO flush=linux matched=5 fired=1
kd op=flush file=data/t error=ENOSPC flush=keep-dirty matched=3 fired=3
ok" "the flush rules' counters"
ctl "$M" "fault del ig" "fault del lx" "fault del kd" >/dev/null
note "flush: ignore ok, linux EIO once, keep-dirty ENOSPC every time"

# 6. A glob target, and a 4,000-byte path.
assert_eq "$(ctl "$M" "fault add logs op=write file=data/*.log error=ENOSPC")" ok "add logs"
assert_eq "$(io "$M/data/a.log" write 0 11)" ENOSPC "a write of data/a.log"
assert_eq "$(io "$M/data/a.dat" write 0 11)" ok "a write of data/a.dat"
mkdir -p "$M/$(dirname "$long")"
assert_eq "$(ctl "$M" "fault add long file=$long op=write error=EIO")" ok "add long"
assert_eq "$(io "$M/$long" write 0 11)" EIO "a write of the 4,000-byte path"
ctl "$M" "fault del logs" "fault del long" >/dev/null
note "file = data/*.log: ENOSPC; a 4,000-byte path: EIO"
sfs_umount "$M"

# Without the fault layer, a rule is refused: it could never fire.
sfs_mount "$B" "$M" "device.block_size=4K"
assert_eq "$(ctl "$M" "fault add x error=EIO")" "error: fault add x: no device has the fault layer; name faults in [device] layers (such as layers = accounting, faults, timing, base)" \
	"fault add without the layer"
sfs_umount "$M"

# A bad section refuses the mount and names where.
printf '[fault "x"]\nop = read\nerror = EIOO\n' >"$T/bad.ini"
if "$SFS_BIN" "$B" "$M" -f -o "config=$T/bad.ini" >"$T/bad.out" 2>&1; then
	fail "a mount with error = EIOO was not refused"
fi
assert_eq "$(cat "$T/bad.out")" "scatterfs: $T/bad.ini:3: [fault \"x\"] key 'error': 'EIOO' is not valid; allowed: an errno name (such as EIO, ENOSPC, EROFS)" \
	"the refusal"

# A cross-key error names the key's line (before: the section's); a
# device range past the end refuses the mount.
printf '[fault "r"]\nop = read\nerror = EIO\nrange = 0+4K\n' >"$T/bad2.ini"
printf '[fault "r"]\nop = read\ndevice = main\nrange = 1G+4K\nerror = EIO\n' >"$T/bad3.ini"
for f in bad2 bad3; do
	if "$SFS_BIN" "$B" "$M" -f -o "config=$T/$f.ini,device.layers=accounting:faults:timing:base" >"$T/$f.out" 2>&1; then
		fail "a mount with $f.ini was not refused"
	fi
done
assert_eq "$(cat "$T/bad2.out" "$T/bad3.out")" "scatterfs: $T/bad2.ini:4: [fault \"r\"]: fault 'r': range needs file or device
scatterfs: $T/bad3.ini:4: [fault \"r\"]: key 'range': 1G+4K ends past the end of device 'main'; allowed: OFFSET+LENGTH within 0+32M" \
	"the refusals name the range key's line"
note "a bad [fault] section refuses the mount"
