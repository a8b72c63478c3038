#!/bin/bash
# Exact logging: 3,000 random 8 KiB O_DIRECT reads by fio give exactly 3,000
# read rows of size 8192 for that file; 100 buffered dd reads of 16 KiB in
# cache.mode=none give exactly 100 read rows of 16384.  Each phase has a
# mount of its own, so its request log holds only that phase's rows and is
# complete once the daemon has exited.  fallocate --punch-hole and
# --zero-range give exactly one punch and one zero row each.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require fio

T=$SFS_TMP
M=$T/mnt
B=$T/backing
F=data.bin

# Layout step: write the 64 MiB file (its reads and extends go to req0.log).
sfs_mount "$B" "$M" "size=256M,log=$T/req0.log"
head -c 64M /dev/urandom >"$T/src"
cp "$T/src" "$M/$F"
sync "$M/$F"
sfs_umount "$M"

# fio, with the default configuration.
sfs_mount "$B" "$M" "log=$T/req1.log"
out=$(fio --name=randread8k --filename="$M/$F" --rw=randread --bs=8k --direct=1 \
	--number_ios=3000 --size=64M --ioengine=psync --numjobs=1 --randrepeat=1 2>&1) ||
	fail "fio: $out"
grep -q 'issued rwts: total=3000,0,0,0' <<<"$out" || fail "fio did not issue 3000 reads: $out"
sfs_umount "$M"
L=$T/req1.log
sfs_log_check_header "$L"
assert_eq "$(sfs_log_count "$L" read "$F")" 3000 "read rows for $F after 3000 fio reads (all sizes); top rows:
$(sfs_log_summary "$L")
"
assert_eq "$(sfs_log_count "$L" read "$F" 8192)" 3000 "read rows of size 8192 for $F"
# Every row: an 8 KiB aligned offset inside the file, result 8192, one caller.
assert_eq "$(sfs_log_rows "$L" read "$F" | sfs_log_awk "$L" '$f_offset % 8192 == 0 && $f_offset + 8192 <= 67108864 && $f_result == 8192' | wc -l)" \
	3000 "read rows with an aligned offset inside the file and result 8192"
pids=$(sfs_log_rows "$L" read "$F" | sfs_log_awk "$L" '{ print $f_pid }' | sort -u | tr '\n' ' ')
[[ $pids =~ ^[1-9][0-9]*\ $ ]] || fail "pid column of the read rows: '$pids', expected one pid (fio's worker)"
note "fio: 3000 read rows of 8192 bytes"

# dd, buffered, with cache.mode=none: every read() reaches the daemon.
sfs_mount "$B" "$M" "log=$T/req2.log,cache.mode=none"
dd if="$M/$F" of=/dev/null bs=16k count=100 status=none || fail "dd from $M/$F failed"
sfs_umount "$M"
L=$T/req2.log
sfs_log_check_header "$L"
assert_eq "$(sfs_log_count "$L" read "$F")" 100 "read rows for $F after 100 dd reads of 16 KiB (all sizes); top rows:
$(sfs_log_summary "$L")
"
assert_eq "$(sfs_log_rows "$L" read "$F" | sfs_log_awk "$L" '$f_size == 16384 && $f_result == 16384' | wc -l)" 100 \
	"read rows of size 16384 and result 16384 for $F"
assert_eq "$(sfs_log_rows "$L" read "$F" | sfs_log_awk "$L" '{ print $f_offset }' | sort -n | tr '\n' ' ' | md5sum)" \
	"$(for ((i = 0; i < 100; i++)); do printf '%d ' $((i * 16384)); done | md5sum)" \
	"offsets of the 100 dd reads (0, 16384, ...)"
note "dd: 100 read rows of 16384 bytes"

# The bytes read back are the bytes written.
sfs_mount "$B" "$M" "log=$T/req3.log"
cmp "$M/$F" "$T/src" || fail "content of $F differs from what was written"
sfs_umount "$M"

# fallocate: a punched hole is a punch row and a zeroed range a zero row, each
# with the caller's pid, the request's offset and size, and its size as the
# result; log.ops=punch:zero logs nothing else (the writes that made h).
sfs_mount "$B" "$M" "log=$T/req4.log,log.ops=punch:zero"
head -c 1M /dev/urandom >"$M/h"
want=
for args in "--punch-hole -o 65536 -l 131072" "--zero-range -o 4096 -l 8192" \
	"--punch-hole -o 1000 -l 5000" "--zero-range -o 300000 -l 1000000"; do
	# shellcheck disable=SC2086 # one word per fallocate argument
	fallocate $args "$M/h" &
	pid=$!
	wait "$pid" || fail "fallocate $args $M/h failed"
	read -r mode _ off _ len <<<"$args"
	op=punch
	[[ $mode == --zero-range ]] && op=zero
	want+="$op,$pid,h,$off,$len,$len"$'\n'
done
sfs_umount "$M"
L=$T/req4.log
sfs_log_check_header "$L"
assert_eq "$(sfs_log_awk "$L" -v OFS=, 'NR > 1 { print $f_op, $f_pid, $f_path, $f_offset, $f_size, $f_result }' "$L")" \
	"${want%$'\n'}" "punch and zero rows (op, pid, path, offset, size, result) of four fallocate calls"
note "fallocate: 2 punch and 2 zero rows"
