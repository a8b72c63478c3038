#!/bin/bash
# TIMEOUT: 120
# Bad device configurations (issue 15, item 1), table-driven: 17 cases, each
# refused with a non-zero exit and one message naming the device (or the
# file, the rule, the key), mounts nothing and leaves every backing and the
# catalog byte for byte unchanged, and creates no file.  The file system
# first gets a file on main and one on [device "wal"] (wal.img, 16M).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3

T=$SFS_TMP
M=$T/mnt
B=$T/main.img
W=$T/wal.img
good='[device "wal"]\nbacking = wal.img\nsize = 16M\n[file "wal/*"]\ndevice = wal\n'
printf '%b' "$good" >"$T/good.ini"
sfs_mount "$B" "$M" "size=64M,config=$T/good.ini"
mkdir "$M/wal" "$M/data"
# (wal/seg holds 4 bytes in one first extent: 64 KiB with extent_size = auto, the default)
echo wal >"$M/wal/seg"
echo data >"$M/data/t"
sfs_umount "$M"
# Another file system's backing, with its catalog beside it.
sfs_mount "$T/other.img" "$M" "size=16M"
sfs_umount "$M"
# A file of wal's size that is not wal's backing.
truncate -s 16M "$T/impostor.img"

state() {
	sha256sum "$T"/*.img "$B".scatterfs "$T"/other.img.scatterfs
	find "$T" -mindepth 1 -maxdepth 1 ! -name '*.stderr' ! -name '*.ini' ! -name 'daemon.*' | sort
}

n=0
# case NAME REGEX INI-TEXT [-o OPTIONS]: the mount of main.img with INI-TEXT as its configuration
case_() {
	local name=$1 re=$2 ini=$3 opts=${4:-} rc=0 before
	n=$((n + 1))
	printf '%b' "$ini" >"$T/$name.ini"
	before=$(state)
	timeout 30 "$SFS_BIN" "$B" "$M" -o "config=$T/$name.ini${opts:+,$opts}" >/dev/null 2>"$T/$name.stderr" </dev/null || rc=$?
	((rc != 0 && rc != 124)) || fail "$name: exit $rc, expected a refusal"
	assert_eq "$(wc -l <"$T/$name.stderr")" 1 "$name: lines of the message ($(cat "$T/$name.stderr"))"
	grep -Eq -- "$re" "$T/$name.stderr" || fail "$name: message does not match /$re/: $(cat "$T/$name.stderr")"
	! sfs_is_mounted "$M" || fail "$name: mounted"
	assert_eq "$(state)" "$before" "$name: backings and catalog after the refusal"
}

case_ no-backing "no-backing.ini:1: \\[device \"wal\"\\] has no backing = PATH" \
	'[device "wal"]\nsize = 16M\n[file "wal/*"]\ndevice = wal\n'
case_ unknown-device-in-rule "unknown-device-in-rule.ini:5: \\[file \"wal/\\*\"\\] device = wall: no such device; allowed: main, wal" \
	'[device "wal"]\nbacking = wal.img\nsize = 16M\n[file "wal/*"]\ndevice = wall\n'
case_ main-backing-twice "devices 'main' and 'wal' are one backing \\($B\\)" \
	'[device "wal"]\nbacking = main.img\n[file "wal/*"]\ndevice = wal\n'
case_ one-backing-two-devices "devices 'wal' and 'wal2' are one backing \\($W\\)" \
	"$good"'[device "wal2"]\nbacking = ./wal.img\n'
# wal.img cut to 8M (what it held past 8M was never written: zeros), then back.
truncate -s 8M "$W"
case_ one-new-backing-two-devices "devices 'n1' and 'n2' are one backing \\($T/new.img\\)" \
	"$good"'[device "n1"]\nbacking = new.img\nsize = 8M\n[device "n2"]\nbacking = new.img\nsize = 8M\n'
case_ backing-too-small "device 'wal': the catalog describes a device of 16777216 bytes but backing $W has only 8388608" \
	'[device "wal"]\nbacking = wal.img\n[file "wal/*"]\ndevice = wal\n'
truncate -s 16M "$W"
mv "$W" "$T/wal.moved"
case_ backing-missing "device 'wal': backing $W is missing, and the catalog records the device" "$good"
mv "$T/wal.moved" "$W"
case_ backing-of-another-catalog "device 'x': backing $T/other.img belongs to another catalog \\($T/other.img.scatterfs\\)" \
	"$good"'[device "x"]\nbacking = other.img\n'
case_ backing-not-recorded "device 'wal': backing $T/impostor.img is not the one this catalog records for it \\($W\\)" \
	'[device "wal"]\nbacking = impostor.img\n[file "wal/*"]\ndevice = wal\n'
case_ device-dropped "the catalog has 65536 bytes of files on device 'wal' \\(backing $W\\), but the configuration has no \\[device \"wal\"\\]" \
	'[layout]\npattern = contiguous\n'
case_ rule-moves-a-file "file 'data/t' has its extents on device 'main' but the configuration's rules put it on 'wal'" \
	"$good"'[file "data/*"]\ndevice = wal\n'
case_ new-backing-without-size "device 'new': backing $T/new.img: No such file or directory \\(set size = BYTES" \
	"$good"'[device "new"]\nbacking = new.img\n'
case_ block-size-changed "device 'wal': the catalog's extents on it are in blocks of 4096 bytes but \\[device \"wal\"\\] block_size is 8192" \
	'[device "wal"]\nbacking = wal.img\nblock_size = 8K\n[file "wal/*"]\ndevice = wal\n'
case_ device-main "\\[device \"main\"\\]: main is the command line's BACKING" \
	'[device "main"]\nbacking = wal.img\n'
case_ preset-missing "preset = nosuch.ini: .*nosuch.ini: No such file or directory" \
	'[device "wal"]\nbacking = wal.img\npreset = nosuch.ini\n'
case_ device-by-option "\\[device \"NAME\"\\] sections can only be written in the configuration file" \
	"$good" 'device "wal".size=1G'
# A new device's backing that the mount would create: a refused mount removes it again.
case_ created-then-refused "file 'data/t' has its extents on device 'main' but the configuration's rules put it on 'new'" \
	"$good"'[device "new"]\nbacking = new.img\nsize = 8M\n[file "data/*"]\ndevice = new\n'
note "$n bad device configurations refused, nothing changed"
assert_eq "$n" 17 "cases run"

# The good configuration still mounts, and the files are where they were.
sfs_mount "$B" "$M" "config=$T/good.ini"
assert_eq "$(cat "$M/wal/seg") $(cat "$M/data/t")" "wal data" "the files after the refusals"
assert_eq "$(tail -n +2 "$M/.scatterfs/extents/wal/seg" | cut -d, -f4)" wal "device of wal/seg"
sfs_umount "$M"
note "pass"
