#!/bin/bash
# lseek(2) SEEK_DATA and SEEK_HOLE (issue 16): a hole is a range with no
# extent or with an unwritten extent, and the end of the file; ENXIO at or
# past the end of the file, and for SEEK_DATA when no data follows.
#   - a 1 MiB written file with two holes punched (fallocate --punch-hole);
#   - a file whose last 256 KiB are a hole (truncate -s up);
#   - a written file with two ranges zeroed by fallocate --zero-range
#     (unwritten extents);
#   - a file preallocated with fallocate (unwritten, whatever
#     autoextend.zero_fill says) and written in the middle;
#   - cp --sparse=always, and cp's default (--sparse=auto), make copies
#     off the mount (ext4 under /tmp) whose blocks are exactly the data
#     (cp also finds runs of zeros by reading, so these pass without
#     SEEK_HOLE too: the lseek checks are what needs it);
#   - the control directory's files are all data.
# Both cache modes (direct I/O with zero_fill none, the page cache with the
# default zero_fill, write).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
KIB=1024

cat >"$T/seek.py" <<'PYEOF'
import errno, os, sys

M = sys.argv[1]
os.chdir(M)
K = 1024
fails = []

def seek(path, off, whence):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, off, whence)
    except OSError as e:
        return errno.errorcode[e.errno]
    finally:
        os.close(fd)

def expect(path, table):
    for whence, off, want in table:
        name = "SEEK_DATA" if whence == os.SEEK_DATA else "SEEK_HOLE"
        got = seek(path, off, whence)
        if got != want:
            fails.append(f"{path}: lseek({off}, {name}) = {got}, expected {want}")

D, H = os.SEEK_DATA, os.SEEK_HOLE
# holes: data [0,64K) hole [64K,128K) data [128K,512K) hole [512K,640K) data [640K,1M)
expect("two-holes", [
    (D, 0, 0), (H, 0, 64 * K), (H, 4 * K, 64 * K), (D, 64 * K, 128 * K), (D, 100 * K, 128 * K),
    (H, 64 * K, 64 * K), (H, 128 * K, 512 * K), (D, 512 * K, 640 * K), (H, 600 * K, 600 * K),
    (H, 640 * K, 1024 * K), (D, 1000 * K, 1000 * K), (H, 1024 * K - 1, 1024 * K),
    (D, 1024 * K, "ENXIO"), (H, 1024 * K, "ENXIO"), (D, 4096 * K, "ENXIO"), (H, 4096 * K, "ENXIO"),
])
# data [0,64K), then a hole to the end at 320K
expect("tail-hole", [
    (D, 0, 0), (H, 0, 64 * K), (H, 64 * K, 64 * K), (D, 64 * K, "ENXIO"), (D, 319 * K, "ENXIO"),
    (H, 319 * K, 319 * K), (D, 320 * K, "ENXIO"), (H, 320 * K, "ENXIO"),
])
# unwritten [0,128K), data [128K,132K), unwritten [132K,256K)
expect("zeroed", [
    (D, 0, 128 * K), (H, 0, 0), (H, 128 * K, 132 * K), (D, 132 * K, "ENXIO"), (H, 200 * K, 200 * K),
])
expect("prealloc", [
    (D, 0, 128 * K), (H, 0, 0), (H, 128 * K, 132 * K), (D, 132 * K, "ENXIO"), (H, 200 * K, 200 * K),
])
expect("empty", [(D, 0, "ENXIO"), (H, 0, "ENXIO")])
size = os.stat(".scatterfs/config").st_size
expect(".scatterfs/config", [(D, 0, 0), (D, 5, 5), (H, 0, size), (D, size, "ENXIO"), (H, size, "ENXIO")])
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
PYEOF

FAILS=()
for pass in none:none kernel:write; do
	mode=${pass%:*} zero_fill=${pass#*:}
	sfs_mount "$T/backing" "$M" "size=16M,device.block_size=4K,layout.extent_size=4K,cache.mode=$mode,autoextend.zero_fill=$zero_fill"
	head -c $((1024 * KIB)) /dev/urandom >"$M/two-holes"
	fallocate --punch-hole --offset $((64 * KIB)) --length $((64 * KIB)) "$M/two-holes"
	fallocate --punch-hole --offset $((512 * KIB)) --length $((128 * KIB)) "$M/two-holes"
	head -c $((64 * KIB)) /dev/urandom >"$M/tail-hole"
	truncate -s $((320 * KIB)) "$M/tail-hole"
	fallocate --length $((256 * KIB)) "$M/prealloc"
	head -c $((4 * KIB)) /dev/urandom | dd of="$M/prealloc" bs=4K seek=32 conv=notrunc status=none
	head -c $((256 * KIB)) /dev/urandom >"$M/zeroed"
	fallocate --zero-range --offset 0 --length $((128 * KIB)) "$M/zeroed"
	fallocate --zero-range --offset $((132 * KIB)) --length $((124 * KIB)) "$M/zeroed"
	: >"$M/empty"
	out=$(python3 "$T/seek.py" "$M" 2>&1) || FAILS+=("cache.mode=$mode: $out")

	# Off the mount: ext4 stores the copy's holes as holes.
	rm -f "$T/copy-always" "$T/copy-auto"
	cp --sparse=always "$M/two-holes" "$T/copy-always"
	cp "$M/two-holes" "$T/copy-auto"
	for c in copy-always copy-auto; do
		cmp -s "$M/two-holes" "$T/$c" || FAILS+=("cache.mode=$mode: $c differs from the file")
		# 1 MiB less the two holes (192 KiB), in 512-byte units
		blocks=$(stat -c %b "$T/$c")
		[[ $blocks == $(((1024 - 192) * 2)) ]] ||
			FAILS+=("cache.mode=$mode: $c has st_blocks $blocks, expected $(((1024 - 192) * 2)) (the data without the two holes)")
	done
	sfs_umount "$M"
done
((${#FAILS[@]} == 0)) || fail "$(printf '%s\n' "${FAILS[@]}")"
echo "PASS: seek"
