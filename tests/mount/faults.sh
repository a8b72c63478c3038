#!/bin/bash
# The fault layer and its control file (issue 27): .scatterfs/control is
# root's (0600; nobody gets EACCES on open for reading or writing), each
# command line gets its reply on the same open file, a malformed command
# gets one error line and changes nothing, a 4,000-byte path works as a
# target through the control file, and [fault "NAME"] sections load at
# mount (a bad one refuses the mount, naming file, line and key).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3
id nobody >/dev/null 2>&1 || fail "no user nobody"

T=$SFS_TMP
M=$T/mnt
B=$T/backing

# ctl M CMD... - sends each command on one open control file, prints the replies
ctl() {
	python3 - "$1/.scatterfs/control" "${@:2}" <<'PYEOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
for cmd in sys.argv[2:]:
    os.write(fd, (cmd + "\n").encode())
out = b""
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    out += b
os.close(fd)
sys.stdout.write(out.decode())
PYEOF
}

cat >"$T/f.ini" <<'INI'
[fault "boot"]
op = read
file = data/*
error = EIO
count = 1
INI
sfs_mount "$B" "$M" "size=32M,allow_other,device.block_size=4K,config=$T/f.ini"

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
note "control: replies, malformed commands, 4,000-byte path"
sfs_umount "$M"

# A bad section refuses the mount and names where.
printf '[fault "x"]\nop = read\nerror = EIOO\n' >"$T/bad.ini"
if "$SFS_BIN" "$B" "$M" -f -o "config=$T/bad.ini" >"$T/bad.out" 2>&1; then
	fail "a mount with error = EIOO was not refused"
fi
assert_eq "$(cat "$T/bad.out")" "scatterfs: $T/bad.ini:3: [fault \"x\"] key 'error': 'EIOO' is not valid; allowed: an errno name (such as EIO, ENOSPC, EROFS)" \
	"the refusal"
note "a bad [fault] section refuses the mount"
