#!/bin/bash
# A disk model added as one source file: build/tests/scatterfs-const is the
# daemon's own objects plus tests/model_const.c, which registers the
# "const" model (every device I/O completes disk.latency_us after it
# arrives) and its key latency_us, and is in no other build.  Mounted with
# model const, fio writes and verifies a file, and every logged request's
# modelled time is exactly latency_us; the model's bad value is refused
# with its own message, an hdd key with model const is refused naming
# both models, an hdd preset under -o disk.model=const mounts (the hdd's
# keys dropped, its seek check not run), and the ordinary daemon does not
# know the model.
# shellcheck source=SCRIPTDIR/../lib.sh
SCATTERFS_BIN=${SCATTERFS_BUILD:-$(dirname "$0")/../../build}/tests/scatterfs-const
. "$(dirname "$0")/../lib.sh"
sfs_require fio

T=$SFS_TMP
M=$T/mnt
L=$T/req.log

sfs_mount "$T/b" "$M" "size=64M,disk.model=const,disk.latency_us=2000,log=$L,log.ops=read:write"
grep -qx "model = const" "$M/.scatterfs/config" || fail "no 'model = const' in .scatterfs/config"
grep -qx "latency_us = 2000" "$M/.scatterfs/config" ||
	fail "no 'latency_us = 2000' in .scatterfs/config: $(grep -n -A3 '^\[disk\]' "$M/.scatterfs/config")"
grep -q "^rpm = " "$M/.scatterfs/config" && fail ".scatterfs/config writes the hdd's keys under model const"
out=$(fio --name=constrw --filename="$M/f" --rw=randwrite --bs=64k --size=8M --direct=1 \
	--ioengine=psync --verify=crc32c --do_verify=1 --randrepeat=1 --verify_state_save=0 2>&1) || fail "fio: $out"
grep -q "err= 0" <<<"$out" || fail "fio reported an error: $out"
grep -q 'issued rwts: total=128,128,0,0' <<<"$out" || fail "fio did not issue 128 reads and 128 writes: $out"
sfs_umount "$M"
assert_eq "$(head -n 1 "$L")" "$SFS_LOG_HEADER,model_us" "header of the request log (a model adds model_us)"
reads=$(sfs_log_count "$L" read f 65536)
writes=$(sfs_log_count "$L" write f 65536)
assert_eq "$reads" 128 "fio's verify reads in the log"
assert_eq "$writes" 128 "fio's writes in the log"
# A request's device I/Os arrive with it and take 2 ms each: a write's
# modelled time is exactly 2000 us, a read's at least that (a read may wait
# for the I/O path before its device I/O: never less).
other=$(sfs_log_rows "$L" write f | sfs_log_awk "$L" '$f_model_us != 2000')
[[ -z $other ]] || fail "writes whose modelled time is not latency_us (2000 us):
$other"
other=$(sfs_log_rows "$L" read f | sfs_log_awk "$L" '$f_model_us < 2000')
[[ -z $other ]] || fail "reads modelled under latency_us (2000 us):
$other"
exact=$(sfs_log_rows "$L" read f | sfs_log_awk "$L" '$f_model_us == 2000' | wc -l)
note "const: fio wrote and verified 8 MiB; 128 writes and $exact of 128 reads modelled at exactly 2000 us"

# mustfail WANT OPTS - the daemon refuses OPTS with a message containing WANT
mustfail() {
	local rc=0
	"$SFS_BIN" "$T/b.bad" "$M" -f -o "size=64M,$2" >"$T/bad.out" 2>&1 || rc=$?
	((rc != 0)) || fail "$2 was accepted"
	grep -qF "$1" "$T/bad.out" || fail "$2: unexpected message: $(cat "$T/bad.out")"
	[[ -e $T/b.bad.scatterfs ]] && fail "$2: the refused mount created a catalog"
	true
}
mustfail "option -o disk.latency_us=-1: [disk] latency_us = -1: a constant-latency device takes from 0 to 1000000 microseconds per I/O" \
	"disk.model=const,disk.latency_us=-1"
mustfail "option -o disk.rpm=5400: [disk] rpm = 5400: model const (option -o disk.model=const) has no key rpm; it is a key of model hdd: write model = hdd before it (keys with model = const: capacity, metadata_io, metadata_offset, time_dilation, model, latency_us)" \
	"disk.model=const,disk.rpm=5400"
note "const: its bad value and an hdd key refused with their own messages"

# An hdd preset whose seek times are out of order, overridden by model const:
# the hdd's keys are dropped, not checked.
sed 's/^seek_track_ms = .*/seek_track_ms = 20/' "$SFS_ROOT/conf/hdd-7200.ini" >"$T/hdd-bad.ini"
sfs_mount "$T/b" "$M" "config=$T/hdd-bad.ini,disk.model=const"
grep -q "^# ignored: .*seek_track_ms = 20 (model const (option -o disk.model=const) does not read it)" "$M/.scatterfs/config" ||
	fail "no note of the dropped seek_track_ms: $(grep -n ignored "$M/.scatterfs/config")"
sfs_umount "$M"
note "const: an hdd preset under -o disk.model=const mounts; its keys are noted as ignored"

# The shipped daemon has no const model: the test's file is in no other build.
rc=0
"$SFS_BUILD/fs/scatterfs" "$T/b.plain" "$M" -f -o size=64M,disk.model=const >"$T/plain.out" 2>&1 || rc=$?
((rc != 0)) || fail "build/fs/scatterfs accepted disk.model=const"
grep -qF "[disk] model = const: unknown value; allowed: none, hdd" "$T/plain.out" ||
	fail "build/fs/scatterfs: unexpected message: $(cat "$T/plain.out")"
note "the shipped daemon does not know const"
