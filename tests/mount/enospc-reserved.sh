#!/bin/bash
# ENOSPC on a device that is mostly reservation says so, once.
# 1. A 1 MiB main device with the defaults (extent_size auto: 64 KiB first
#    extents, 4 KiB blocks): 16 files of 4,096 bytes fill it (16 x 64 KiB);
#    the 17th file's write fails with ENOSPC.  .scatterfs/stats devices.main
#    has used 1048576, reserved 983040 (16 x 60 KiB past the ends of files)
#    and enospc 1, and the daemon printed exactly one line: the device, the
#    bytes and the file refused, 1048576 of 1048576 bytes in use, 983040
#    (94%) reserved, "mostly reservation" with what to change.  A second
#    refused write counts (enospc 2) without a second line; a write into a
#    file's reserved space still works and leaves reserved 978944.
# 2. A second device ([device "wal"], 1 MiB) filled with 16 files of 64 KiB
#    (all data): its ENOSPC line names 'wal', says "0 of them (0%)
#    reserved" and not "mostly reservation"; devices.wal.enospc is 1 and
#    devices.main.enospc 0, reserved 0 on both.
# 3. A daemon (no -f) started with stderr to a file on a system without
#    syslog (no /dev/log): its ENOSPC line is in that file.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt

# dev_stat MNT DEVICE FIELD... - fields of .scatterfs/stats devices.DEVICE
dev_stat() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"][sys.argv[2]]
print(*(d[k] for k in sys.argv[3:]))' "$1/.scatterfs/stats" "$2" "${@:3}"
}

# write_new FILE BYTES - writes BYTES bytes of FILE; prints dd's error line when it fails
write_new() {
	{ dd if=/dev/urandom of="$1" bs="$2" count=1 iflag=fullblock conv=notrunc status=none 2>&1 || true; } |
		sed 's/^dd: //'
}

# --- 1. main, mostly reservation ----------------------------------------
sfs_mount "$T/backing" "$M" "size=1M"
dlog=$SFS_LAST_DLOG
for i in $(seq 0 15); do
	out=$(write_new "$M/f$i" 4096)
	assert_eq "$out" "" "write of 4096 bytes to f$i"
done
out=$(write_new "$M/f16" 4096)
assert_eq "$out" "error writing '$M/f16': No space left on device" "write to f16 on a full device"
assert_eq "$(dev_stat "$M" main used reserved enospc)" "1048576 983040 1" \
	"devices.main used, reserved, enospc after the first ENOSPC"
want="scatterfs: device 'main' is full: no room for bytes 0 to 4096 of /f16 (ENOSPC); 1048576 of its 1048576 bytes are in use, 983040 of them (94%) reserved, not data: allocated past the ends of files (the rest of an extent, autoextend.next, fallocate --keep-size) or kept as interleaved gaps; mostly reservation: smaller extents (layout.extent_size, autoextend.next) leave more room for data; counted in .scatterfs/stats (devices.main.enospc, .reserved), not reported again"
assert_eq "$(grep "is full" "$dlog")" "$want" "the daemon's ENOSPC message"
out=$(write_new "$M/f17" 8192)
assert_eq "$out" "error writing '$M/f17': No space left on device" "write to f17 on a full device"
assert_eq "$(grep -c "is full" "$dlog")" 1 "ENOSPC messages after the second ENOSPC"
assert_eq "$(dev_stat "$M" main enospc)" 2 "devices.main.enospc after the second ENOSPC"
# Into f3's reserved space: no new extent.
out=$(dd if=/dev/zero of="$M/f3" bs=4096 count=1 seek=1 conv=notrunc status=none 2>&1)
assert_eq "$out" "" "a write into f3's reserved space"
assert_eq "$(dev_stat "$M" main used reserved enospc)" "1048576 978944 2" \
	"devices.main after writing into reserved space"
sfs_umount "$M"

# --- 2. a second device, all data ----------------------------------------
cat >"$T/two.ini" <<EOF
[device "wal"]
backing = $T/wal.img
size = 1M
[file "wal/*"]
device = wal
EOF
sfs_mount "$T/backing2" "$M" "size=4M,config=$T/two.ini"
dlog=$SFS_LAST_DLOG
mkdir "$M/wal"
for i in $(seq 0 15); do
	out=$(write_new "$M/wal/s$i" 65536)
	assert_eq "$out" "" "write of 65536 bytes to wal/s$i"
done
out=$(write_new "$M/wal/s16" 65536)
assert_eq "$out" "error writing '$M/wal/s16': No space left on device" "write to wal/s16"
want="scatterfs: device 'wal' is full: no room for bytes 0 to 65536 of /wal/s16 (ENOSPC); 1048576 of its 1048576 bytes are in use, 0 of them (0%) reserved, not data: allocated past the ends of files (the rest of an extent, autoextend.next, fallocate --keep-size) or kept as interleaved gaps; counted in .scatterfs/stats (devices.wal.enospc, .reserved), not reported again"
assert_eq "$(grep "is full" "$dlog")" "$want" "the ENOSPC message of device wal"
assert_eq "$(dev_stat "$M" wal used reserved enospc)" "1048576 0 1" "devices.wal"
assert_eq "$(dev_stat "$M" main reserved enospc)" "0 0" "devices.main with wal full"
sfs_umount "$M"

# --- 3. a daemon (no -f): the message is not lost ------------------------
# It goes to syslog; where the system has none (no /dev/log, as in a
# container) the daemon keeps the stderr it was started with when that is
# a file or a terminal, and the message lands there.
rm -f "$T/backing3" "$T/backing3.scatterfs"*
"$SFS_BIN" "$T/backing3" "$M" -o size=1M >/dev/null 2>"$T/daemon.err" </dev/null || fail "daemon mount: $(cat "$T/daemon.err")"
for i in $(seq 0 15); do write_new "$M/f$i" 4096 >/dev/null; done
out=$(write_new "$M/f16" 4096)
assert_eq "$out" "error writing '$M/f16': No space left on device" "daemon: write to f16 on a full device"
if [[ -e /dev/log ]]; then
	assert_eq "$(grep -c "is full" "$T/daemon.err")" 0 "daemon with syslog: ENOSPC lines in its stderr file (they go to syslog)"
	note "daemon: /dev/log exists: the message went to syslog"
else
	assert_eq "$(grep -c "scatterfs: device 'main' is full: no room for bytes 0 to 4096 of /f16" "$T/daemon.err")" 1 \
		"daemon without syslog: the ENOSPC line in the stderr file it was started with"
	note "daemon: no /dev/log: the message is in the daemon's stderr file"
fi
sfs_fusermount_u "$M" "the daemon's mount"
