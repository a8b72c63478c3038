#!/bin/bash
# .scatterfs/config loads back as a config= file (the tester's report:
# it left out the [fault] rules, and on a stack without volatile it wrote
# volatile = false and volatile_max = 1G, which a mount refuses as keys of
# a layer the stack does not have).  Each layer's keys are written only
# for layers in the device's stack (the others as comments); the fault
# rules as they stand, those of the file and those added through control.
# Dump, remount with the dump, dump again: the same keys and values, for
# a faulted stack without volatile and for two devices.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt

# keys FILE - the dump's sections and keys, without comments and blank lines
keys() { grep -v -e '^#' -e '^$' "$1"; }

# ctl CMD - one command on the control file, its reply
ctl() {
	python3 - "$M/.scatterfs/control" "$1" <<'PYEOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.write(fd, (sys.argv[2] + "\n").encode())
out = b""
while (b := os.read(fd, 65536)):
    out += b
sys.stdout.write(out.decode())
PYEOF
}

# 1. Faults, no volatile layer; a rule from the file and one from control.
cat >"$T/f.ini" <<'INI'
[device]
layers = accounting, faults, timing, base

[fault "bad"]
op = read
file = /data/*
error = EIO
count = 1
INI
sfs_mount "$T/b1" "$M" "size=64M,config=$T/f.ini"
assert_eq "$(ctl 'fault add rt op=write device=main range=4K+8K error=ENOSPC after=2')" ok "fault add rt"
cp "$M/.scatterfs/config" "$T/d1.ini"
sfs_umount "$M"
assert_eq "$(grep -e '^volatile' -e '^\[fault' -A5 "$T/d1.ini" | grep -v '^--')" '[fault "bad"]
op = read
file = data/*
count = 1
error = EIO

[fault "rt"]
op = write
device = main
range = 4K+8K
after = 2
error = ENOSPC' "the dump's fault sections, and no volatile key"
grep -qxF "# from $T/f.ini:4; as it stands: matched=0 fired=0 (loaded back, it counts anew)" "$T/d1.ini" ||
	fail "no origin line for fault bad: $(grep -B1 '^\[fault' "$T/d1.ini")"
grep -qxF "# volatile = false (only the volatile layer reads it; not in layers)" "$T/d1.ini" ||
	fail "volatile is not a comment: $(grep volatile "$T/d1.ini")"
sfs_mount "$T/b2" "$M" "config=$T/d1.ini"
cp "$M/.scatterfs/config" "$T/d2.ini"
sfs_umount "$M"
diff <(keys "$T/d1.ini") <(keys "$T/d2.ini") || fail "the reloaded dump differs (above)"
note "faults without volatile: dumped, reloaded, the same $(keys "$T/d1.ini" | wc -l) lines"

# 2. Two devices, volatile on both.
cat >"$T/two.ini" <<'INI'
[device]
layers = accounting, faults, timing, volatile, base
volatile = true
[device "wal"]
backing = wal.img
size = 16M
volatile = true
[file "wal/*"]
device = wal
INI
sfs_mount "$T/b3" "$M" "size=64M,config=$T/two.ini"
cp "$M/.scatterfs/config" "$T/d3.ini"
sfs_umount "$M"
rm -f "$T/wal.img" "$T"/wal.img.*
sfs_mount "$T/b4" "$M" "config=$T/d3.ini"
cp "$M/.scatterfs/config" "$T/d4.ini"
sfs_umount "$M"
diff <(keys "$T/d3.ini") <(keys "$T/d4.ini") || fail "the reloaded two-device dump differs (above)"
note "two devices: dumped, reloaded, the same $(keys "$T/d3.ini" | wc -l) lines"
