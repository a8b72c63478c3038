#!/bin/bash
# A device layer added as one source file: build/tests/scatterfs-bytecount
# is the daemon's own objects plus tests/layer_bytecount.c, which registers
# the "bytecount" layer and its key device.bytecount_byte and is in no
# other build.  The layer must see the bytes (pread, no pread_fd, no
# submit_reads), so its device's reads are copied, not spliced, and not
# queued past it.  Stacked as accounting,bytecount,base:
# - a 1 MiB file of 0xff bytes written and read back is counted exactly:
#   1048576 bytes written, 1048576 read, all of them equal to 255;
# - fio writes 8 MiB with crc32c checksums and reads them back to verify,
#   with no read failing, on a plain backing (where replies would splice)
#   and on an O_DIRECT one with queued reads (where they would queue): the
#   layer saw exactly the 8388608 bytes written and the 8388608 read;
# - its key out of range is refused with the layer's own message, its key
#   without the layer in the stack is refused, and the shipped daemon does
#   not know the layer.
# TIMEOUT: 300
# shellcheck source=SCRIPTDIR/../lib.sh
SCATTERFS_BIN=${SCATTERFS_BUILD:-$(dirname "$0")/../../build}/tests/scatterfs-bytecount
. "$(dirname "$0")/../lib.sh"
sfs_require fio python3

T=$SFS_TMP
M=$T/mnt
MiB=1048576

# counts DLOG - the bytecount line of device main in the daemon's stderr
counts() { grep '^bytecount: device main: ' "$1" | tail -n 1; }

sfs_mount "$T/b1" "$M" "size=64M,device.layers=accounting:bytecount:base,device.bytecount_byte=255"
grep -qx 'layers = accounting,bytecount,base' "$M/.scatterfs/config" ||
	fail "effective config lacks the stack: $(grep -n layers "$M/.scatterfs/config")"
grep -qx 'bytecount_byte = 255' "$M/.scatterfs/config" ||
	fail "effective config lacks bytecount_byte = 255: $(grep -n bytecount "$M/.scatterfs/config")"
python3 -c "import sys; sys.stdout.buffer.write(b'\xff' * $MiB)" >"$T/ff"
dd if="$T/ff" of="$M/ff" bs=64K conv=fsync status=none || fail "writing 0xff bytes failed"
dd if="$M/ff" bs=64K status=none | cmp - "$T/ff" || fail "0xff bytes read back differ"
dlog=${SFS_DLOG[$M]}
sfs_umount "$M"
assert_eq "$(counts "$dlog")" \
	"bytecount: device main: 16 reads, 1048576 bytes read, 1048576 equal to 255; 16 writes, 1048576 bytes written" \
	"the layer's counts of a 1 MiB file of 0xff written and read back"

# fiocheck NAME OPTS - fio's write-then-verify of 8 MiB through the layer
fiocheck() {
	local name=$1 opts=$2
	sfs_mount "$T/b.$name" "$M" "size=64M,device.layers=accounting:bytecount:base$opts"
	fio --name="$name" --filename="$M/f" --size=8M --bs=64k --rw=write --ioengine=psync \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 --output="$T/fio.$name" >/dev/null 2>&1 ||
		fail "$name: fio's write/verify failed: $(tail -n 20 "$T/fio.$name")"
	grep -q 'err= 0' "$T/fio.$name" || fail "$name: fio reports an error: $(grep err= "$T/fio.$name")"
	dlog=${SFS_DLOG[$M]}
	sfs_umount "$M"
	counts "$dlog" | grep -q "8388608 bytes read, .* 8388608 bytes written$" ||
		fail "$name: the layer did not see every byte: $(counts "$dlog")"
	note "$name: fio verified 8 MiB; $(counts "$dlog")"
}
fiocheck plain ""
fiocheck direct ",device.direct=true,device.async_reads=always"

# Its key: checked by the layer, and only with the layer in the stack.
rc=0
"$SFS_BIN" "$T/b.bad" "$M" -f -o size=64M,device.layers=accounting:bytecount:base,device.bytecount_byte=300 >"$T/bad.out" 2>&1 || rc=$?
((rc != 0)) || fail "device.bytecount_byte=300 was accepted"
grep -qF "option -o device.bytecount_byte=300: [device] layer 'bytecount': bytecount_byte = 300 is not a byte: the bytecount layer counts the bytes equal to it in what it reads; allowed: 0 to 255" "$T/bad.out" ||
	fail "bytecount_byte=300: unexpected message: $(cat "$T/bad.out")"
rc=0
"$SFS_BIN" "$T/b.bad" "$M" -f -o size=64M,device.bytecount_byte=7 >"$T/nolayer.out" 2>&1 || rc=$?
((rc != 0)) || fail "device.bytecount_byte without the layer was accepted"
grep -qF "option -o device.bytecount_byte=7: [device] bytecount_byte is a key of layer 'bytecount', which this device's stack does not have (layers = accounting,timing,volatile,base)" "$T/nolayer.out" ||
	fail "bytecount_byte without the layer: unexpected message: $(cat "$T/nolayer.out")"
[[ ! -e $T/b.bad ]] || fail "a refused mount left a backing behind"

# The shipped daemon has no bytecount layer.
rc=0
"$SFS_BUILD/fs/scatterfs" "$T/b.plain" "$M" -f -o size=64M,device.layers=accounting:bytecount:base >"$T/plain.out" 2>&1 || rc=$?
((rc != 0)) || fail "build/fs/scatterfs accepted the bytecount layer"
grep -qF "unknown layer 'bytecount'; allowed: accounting, faults, timing, volatile, base, top first" "$T/plain.out" ||
	fail "build/fs/scatterfs: unexpected message: $(cat "$T/plain.out")"
note "bytecount_byte=300 refused by the layer; its key alone refused; the shipped daemon does not know it"
