#!/bin/bash
# Zero-fill: on a backing pre-filled with 0xAB, for each autoextend.zero_fill
# mode (write, fallocate, none), a 4 KiB write of 'x' at offset 0 of a new
# file allocates its first extent (an `extend` row logs offset 0 and the
# bytes added: one extent), every byte of the file past the written ones
# reads as zero (after truncating it to 1 MiB, after writing its last byte
# at 2 MiB, and after a remount), and on the device the rest of the first
# extent is zero with write and fallocate and still 0xAB with none (left
# unwritten).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
F=f
EXTENT=262144 # layout.extent_size below; autoextend.next keeps its default (one extent)

zeros() { head -c "$1" /dev/zero; }

# check_content PHASE - 4096 'x', zeros up to 2 MiB - 1, then 'y'
check_content() {
	assert_eq "$(stat -c %s "$M/$F")" 2097152 "$1: size of $F"
	cmp <(head -c 4096 "$M/$F") <(zeros 4096 | tr '\0' x) >/dev/null || fail "$1: first 4096 bytes are not 'x'"
	cmp <(tail -c +4097 "$M/$F" | head -c $((2097152 - 4097))) <(zeros $((2097152 - 4097))) ||
		fail "$1: bytes 4096..2097150 of $F are not all zero"
	assert_eq "$(tail -c 1 "$M/$F")" y "$1: last byte of $F"
}

for mode in write fallocate none; do
	B=$T/backing.$mode
	L=$T/req.$mode.log
	head -c 64M /dev/zero | tr '\0' '\253' >"$B"
	# A backing full of data and no catalog: a new file system only with -o newfs.
	sfs_mount "$B" "$M" "newfs,layout.pattern=contiguous,layout.extent_size=256K,autoextend.zero_fill=$mode,log=$L"

	zeros 4096 | tr '\0' x | dd of="$M/$F" bs=4096 count=1 conv=notrunc status=none || fail "$mode: dd write"
	assert_eq "$(stat -c %s "$M/$F")" 4096 "$mode: size after the 4 KiB write"
	sfs_extents "$M" "$F" >"$T/ext.$mode"
	read -r D LEN < <(awk -F, 'NR == 2 { print $2, $3 }' "$T/ext.$mode")
	[[ $(awk -F, 'NR == 2 { print $1 }' "$T/ext.$mode") == 0 ]] ||
		fail "$mode: first extent row is not at logical 0: $(cat "$T/ext.$mode")"
	((LEN >= EXTENT)) || fail "$mode: first extent is $LEN bytes, expected $EXTENT: $(cat "$T/ext.$mode")"

	truncate -s 1M "$M/$F"
	assert_eq "$(stat -c %s "$M/$F")" 1048576 "$mode: size after truncate to 1 MiB"
	cmp <(tail -c +4097 "$M/$F") <(zeros $((1048576 - 4096))) || fail "$mode: bytes past 4096 of the 1 MiB file are not all zero"
	printf y | dd of="$M/$F" bs=1 seek=$((2097152 - 1)) conv=notrunc status=none || fail "$mode: dd write at 2 MiB - 1"
	check_content "$mode"
	sfs_umount "$M"

	# The device: the first extent's bytes past the write.
	cmp <(tail -c +$((D + 1)) "$B" | head -c 4096) <(zeros 4096 | tr '\0' x) >/dev/null ||
		fail "$mode: device bytes at $D are not the 4 KiB of 'x'"
	case $mode in
	write | fallocate)
		cmp <(tail -c +$((D + 4097)) "$B" | head -c $((EXTENT - 4096))) <(zeros $((EXTENT - 4096))) ||
			fail "$mode: device bytes $((D + 4096))..$((D + EXTENT - 1)) (rest of the first extent) are not zero"
		;;
	none)
		cmp <(tail -c +$((D + 4097)) "$B" | head -c $((EXTENT - 4096))) <(zeros $((EXTENT - 4096)) | tr '\0' '\253') ||
			fail "none: device bytes $((D + 4096))..$((D + EXTENT - 1)) were written (expected the 0xAB fill: left unwritten)"
		;;
	esac

	# The request log: one extend row at offset 0 adding one extent.
	sfs_log_check_header "$L"
	assert_eq "$(sfs_log_rows "$L" extend "$F" | head -n 1 | sfs_log_awk "$L" '{ print $f_offset "," $f_size }')" "0,$EXTENT" \
		"$mode: offset,size of the first extend row for $F; extend rows:
$(sfs_log_rows "$L" extend)
"

	sfs_mount "$B" "$M" "autoextend.zero_fill=$mode,log=$T/req.$mode.2.log"
	check_content "$mode, after remount"
	sfs_umount "$M"
	note "$mode: ok (first extent at device offset $D)"
done
