#!/bin/bash
# TIMEOUT: 120
# Two backing devices (issue 15, item 1): main (the command line's BACKING)
# and [device "wal"] (backing wal.img beside the configuration file, 32M),
# with [file "wal/*"] device = wal.  A 3 MiB file under wal/ gets its
# extents on wal and a 2 MiB file elsewhere on main, as
# .scatterfs/extents/PATH's device column says; .scatterfs/stats gives
# each device's size and used bytes, and the total adds them up; every
# device_io item of the request log is NAME:offset+length on the file's
# device.  A rename or link that would move a file (or a directory's files)
# to another device's rule gets EXDEV, so mv copies the file to wal.
# After a remount the bytes, the maps and the used bytes are the same, and
# the catalog records wal (meta device.wal.*, extents with dev 1).
# A new device declared before wal makes wal device 2: its catalog rows are
# renumbered, and back again when the new one goes.
# scatterfs-plan with the same configuration prints the same two maps.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_two_devices
# 1 MiB extents (not the default auto) keep the extent maps short.
cat >"$T/two.ini" <<EOF
[layout]
extent_size = 1M
[device "wal"]
backing = wal.img
size = 32M
[file "wal/*"]
device = wal
[log]
ops = read,write,extend
EOF
opts="config=$T/two.ini,size=64M,log=$L"

# dev_stat DEVICE FIELD - a field of one device's object in .scatterfs/stats
dev_stat() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["devices"][sys.argv[2]][sys.argv[3]])' "$M/.scatterfs/stats" "$1" "$2"
}

sfs_mount "$B" "$M" "$opts"
[[ -f $W ]] || fail "the wal backing $W was not created"
assert_eq "$(stat -c %s "$W")" $((32 << 20)) "size of the created wal backing"
mkdir "$M/wal" "$M/data"
head -c $((3 << 20)) /dev/urandom >"$T/w.src"
head -c $((2 << 20)) /dev/urandom >"$T/d.src"
cp "$T/w.src" "$M/wal/seg"
cp "$T/d.src" "$M/data/t"
sync "$M/wal/seg" "$M/data/t"

want_w='logical_offset,device_offset,length,device
0,0,1048576,wal
1048576,1048576,1048576,wal
2097152,2097152,1048576,wal'
want_d='logical_offset,device_offset,length,device
0,0,1048576,main
1048576,1048576,1048576,main'
assert_eq "$(sfs_extents "$M" wal/seg)" "$want_w" "extents of wal/seg"
assert_eq "$(sfs_extents "$M" data/t)" "$want_d" "extents of data/t"
# scatterfs-plan takes the same configuration and predicts both maps.
assert_eq "$("$SFS_BUILD/bench/scatterfs-plan" "$T/two.ini" wal/seg 3M 2>/dev/null)" "$want_w" "scatterfs-plan of wal/seg"
assert_eq "$("$SFS_BUILD/bench/scatterfs-plan" --device-size 64M "$T/two.ini" data/t 2M 2>/dev/null)" "$want_d" "scatterfs-plan of data/t"

assert_eq "$(dev_stat main size) $(dev_stat main used)" "67108864 2097152" "main: size, used_bytes"
assert_eq "$(dev_stat wal size) $(dev_stat wal used)" "33554432 3145728" "wal: size, used_bytes"
assert_eq "$(dev_stat wal backing)" "$(readlink -f "$W")" "wal: backing"
assert_eq "$(sfs_stats "$M" device_size used_bytes)" "100663296 5242880" "the mount's size and used bytes"
assert_eq "$(dev_stat wal block) $(dev_stat main block)" "4096 4096" "block sizes"

cmp "$M/wal/seg" "$T/w.src" || fail "wal/seg reads back differently"
cmp "$M/data/t" "$T/d.src" || fail "data/t reads back differently"

# A file never changes device: a rename or a link that would put it under
# another device's rule gets EXDEV, as across file systems, so mv copies it.
mkdir "$M/data/sub"
echo x >"$M/data/sub/x"
errno_of() { python3 -c 'import errno, os, sys
try:
    getattr(os, sys.argv[1])(sys.argv[2], sys.argv[3]); print("ok")
except OSError as e: print(errno.errorcode[e.errno])' "$@"; }
assert_eq "$(errno_of rename "$M/data/t" "$M/wal/t")" EXDEV "rename of data/t into wal/"
assert_eq "$(errno_of link "$M/data/t" "$M/wal/t")" EXDEV "link of data/t into wal/"
assert_eq "$(errno_of rename "$M/data/sub" "$M/wal/sub")" EXDEV "rename of data/sub (holding a file) into wal/"
assert_eq "$(errno_of rename "$M/data/sub" "$M/data/sub2")" ok "rename of data/sub within main"
assert_eq "$(errno_of rename "$M/wal/seg" "$M/wal/seg2")" ok "rename of wal/seg within wal"
mv "$M/wal/seg2" "$M/wal/seg"
mv "$M/data/t" "$M/wal/t"
sync "$M/wal/t"
assert_eq "$(sfs_extents "$M" wal/t)" 'logical_offset,device_offset,length,device
0,3145728,1048576,wal
1048576,4194304,1048576,wal' "extents of wal/t, copied by mv"
cmp "$M/wal/t" "$T/d.src" || fail "wal/t after mv differs"
assert_eq "$(dev_stat main used) $(dev_stat wal used)" "1048576 5242880" "used bytes per device after mv (data/sub2/x keeps one extent on main)"
cat "$M/.scatterfs/stats" >/dev/null # flushes the request log
sfs_umount "$M"

# The log: each file's items on its own device, and both devices named.
sfs_log_check_header "$L"
bad=$(sfs_log_awk "$L" 'NR > 1 && $f_device_io != "" {
	n = split($f_device_io, items, ";")
	for (i = 1; i <= n; i++) {
		if (items[i] !~ /^(main|wal):[0-9]+\+[0-9]+$/) { print "malformed: " items[i]; continue }
		dev = substr(items[i], 1, index(items[i], ":") - 1)
		if ($f_path == "wal/seg" && dev != "wal") print $f_path ": " items[i]
		if ($f_path == "data/t" && dev != "main") print $f_path ": " items[i]
	}
}' "$L")
assert_eq "$bad" "" "device_io items on another device than their file's"
names=$(sfs_log_awk "$L" 'NR > 1 { n = split($f_device_io, items, ";")
	for (i = 1; i <= n; i++) print substr(items[i], 1, index(items[i], ":") - 1) }' "$L" | sort -u | tr '\n' ' ')
assert_eq "$names" "main wal " "devices the log names"
rb=$(sfs_log_awk "$L" 'NR > 1 && $f_op == "read" && $f_path == "wal/seg" { n = split($f_device_io, items, ";")
	for (i = 1; i <= n; i++) { split(items[i], a, "+"); s += a[2] } } END { print s + 0 }' "$L")
assert_eq "$rb" $((3 << 20)) "bytes the log shows read from wal for wal/seg"

# The catalog: wal recorded, its extents under dev 1.
assert_eq "$(sqlite3 "$CAT" "SELECT value FROM meta WHERE key IN ('device.wal.index', 'device.wal.backing_path', 'device.wal.device_size', 'device.wal.block_size') ORDER BY key")" \
	"$(readlink -f "$W")
4096
33554432
1" "meta device.wal.*"
assert_eq "$(sqlite3 "$CAT" 'SELECT dev, sum(length) FROM extent GROUP BY dev ORDER BY dev' | tr '\n' ' ')" \
	"0|1048576 1|5242880 " "bytes of extents per device in the catalog"

# Remount: the same bytes, maps and space.
sfs_mount "$B" "$M" "config=$T/two.ini"
cmp "$M/wal/seg" "$T/w.src" || fail "wal/seg after the remount"
assert_eq "$(sfs_extents "$M" wal/seg)" "$want_w" "extents of wal/seg after the remount"
cmp "$M/wal/t" "$T/d.src" || fail "wal/t after the remount"
assert_eq "$(dev_stat main used) $(dev_stat wal used)" "1048576 5242880" "used bytes per device after the remount"
# An unlink frees its device's space.
rm "$M/wal/seg"
sync "$M"
assert_eq "$(dev_stat main used) $(dev_stat wal used)" "1048576 2097152" "used bytes per device after rm wal/seg"
sfs_umount "$M"

# A new device declared before wal: wal becomes device 2 and its rows move with it.
printf '[device "x"]\nbacking = x.img\nsize = 8M\n' >"$T/three.ini"
cat "$T/two.ini" >>"$T/three.ini"
sfs_mount "$B" "$M" "config=$T/three.ini"
cmp "$M/wal/t" "$T/d.src" || fail "wal/t with wal as the second named device"
assert_eq "$(tail -n +2 "$M/.scatterfs/extents/wal/t" | cut -d, -f4 | sort -u)" wal "device of wal/t's extents"
assert_eq "$(dev_stat x used) $(dev_stat wal used)" "0 2097152" "used bytes of x and wal"
sfs_umount "$M"
assert_eq "$(sqlite3 "$CAT" "SELECT value FROM meta WHERE key IN ('device.x.index', 'device.wal.index') ORDER BY key" | tr '\n' ' ')" \
	"2 1 " "meta device.wal.index and device.x.index"
assert_eq "$(sqlite3 "$CAT" 'SELECT dev, sum(length) FROM extent GROUP BY dev ORDER BY dev' | tr '\n' ' ')" \
	"0|1048576 2|2097152 " "bytes of extents per device after the renumbering"
# And back: wal is device 1 again, x (empty) is forgotten.
sfs_mount "$B" "$M" "config=$T/two.ini"
cmp "$M/wal/t" "$T/d.src" || fail "wal/t back as device 1"
sfs_umount "$M"
assert_eq "$(sqlite3 "$CAT" "SELECT key || '=' || value FROM meta WHERE key LIKE 'device.%.index'")" \
	"device.wal.index=1" "devices the catalog records"
assert_eq "$(sqlite3 "$CAT" 'SELECT dev, sum(length) FROM extent GROUP BY dev ORDER BY dev' | tr '\n' ' ')" \
	"0|1048576 1|2097152 " "bytes of extents per device back as before"

# Each device its own disk model: main without one, wal with the 7,200 rpm
# preset.  Writes to wal/ keep wal's modelled head busy and main's not at all.
printf '[device "wal"]\nbacking = wal2.img\nsize = 32M\npreset = %s\n[file "wal/*"]\ndevice = wal\n' \
	"$SFS_ROOT/conf/hdd-7200.ini" >"$T/model.ini"
sfs_mount "$T/main2.img" "$M" "config=$T/model.ini,size=64M"
assert_eq "$(sed -n '/^\[device "wal"\]/,/^\[/p' "$M/.scatterfs/config" | grep -c '^model = hdd$')" 1 \
	"wal's model in .scatterfs/config"
assert_eq "$(sed -n '/^\[disk\]/,/^\[/p' "$M/.scatterfs/config" | grep -c '^model = none$')" 1 \
	"main's model in .scatterfs/config"
mkdir "$M/wal"
head -c $((1 << 20)) /dev/urandom >"$M/wal/x"
sync "$M/wal/x"
wal_busy=$(dev_stat wal busy_ms)
assert_eq "$(dev_stat main busy_ms)" 0.0 "main's modelled busy time (no model)"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$wal_busy" || fail "wal's modelled busy time is $wal_busy ms"
sfs_umount "$M"
note "pass: extents, stats and log per device, across a remount; a disk model per device (wal busy $wal_busy ms)"
