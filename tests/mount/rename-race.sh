#!/bin/bash
# open() of a name never fails with ENOENT while another process renames
# a file over that name, and every read returns a whole version of the
# file (libfuse issue 637, go-fuse issue 398; ext4: no ENOENT in 452,000
# opens).  A writer writes a 4 KiB file (one version number repeated),
# closes it and renames it over dst, in a loop, half of the time from the
# same directory and half from another one; a reader opens dst (O_RDONLY
# and O_RDWR in turn) and reads it, a fixed number of times.  Expected,
# exactly: 0 ENOENT, 0 short reads, 0 torn reads (bytes of two versions,
# or zeros), in both cache modes (and, where the daemon has it, with and
# without the kernel's write-back cache).
#
# The kernel resolves dst to the old inode, then sends OPEN for it; the
# rename may reach the daemon in between.  Before, the daemon freed the
# replaced inode at the rename when no one had it open, and that OPEN
# failed with ENOENT (142 of 3,000 opens with cache.mode = none on the
# 2-vCPU machine).  An inode with no name now lives, space and catalog
# row, until the kernel forgets it and the last open closes, as an
# orphan of ext4 does.
# TIMEOUT: 300
source "$(dirname "$0")/../lib.sh"
sfs_require python3 sqlite3

OPENS=${SFS_RENAME_RACE_OPENS:-3000}
[[ -n ${SCATTERFS_QUICK:-} ]] && OPENS=${SFS_RENAME_RACE_OPENS:-2000}
cat >"$SFS_TMP/race.py" <<'PY'
import errno, os, sys, time

root, opens = sys.argv[1], int(sys.argv[2])
dst = os.path.join(root, "dst")
SIZE = 4096

def version(n):
    return (b"%07d\n" % n) * (SIZE // 8)

os.mkdir(os.path.join(root, "other"))
fd = os.open(dst, os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, version(0))
os.close(fd)
r, w = os.pipe()
writer = os.fork()
if writer == 0:
    os.close(w)
    os.set_blocking(r, False)
    n = 0
    while True:
        try:
            if os.read(r, 1) == b"":
                break
        except BlockingIOError:
            pass
        n += 1
        tmp = os.path.join(root, "other" if n % 2 else "", "tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, version(n))
        os.close(fd)
        os.rename(tmp, dst)
    print(n, file=sys.stderr)
    os._exit(0)
os.close(r)
enoent = other = short = torn = 0
seen = set()
# At least @opens opens, and on until 50 versions were read (the writer
# may start late on a loaded machine), for at most 120 s.
i = 0
deadline = time.monotonic() + 120
while (i < opens or len(seen) < 50) and time.monotonic() < deadline:
    i += 1
    try:
        fd = os.open(dst, os.O_RDWR if i % 2 else os.O_RDONLY)
    except OSError as e:
        if e.errno == errno.ENOENT:
            enoent += 1
        else:
            other += 1
            print("open: %s" % e, file=sys.stderr)
        continue
    d = os.pread(fd, 2 * SIZE, 0)
    os.close(fd)
    if len(d) != SIZE:
        short += 1
    elif d != d[:8] * (SIZE // 8) or not d[:7].isdigit():
        torn += 1
    else:
        seen.add(d[:7])
os.close(w)
os.waitpid(writer, 0)
print(i, enoent, other, short, torn, len(seen))
PY

M=$SFS_TMP/mnt
modes=(none kernel)
# With the kernel's write-back cache (a daemon that has the key), both
# ways in kernel mode.
if "$SFS_BIN" --help 2>&1 | grep -q '^ *cache\.writeback '; then
	modes=(none kernel,cache.writeback=true kernel,cache.writeback=false)
fi
for mode in "${modes[@]}"; do
	B=$SFS_TMP/backing.${mode//[,=.]/_}
	sfs_mount "$B" "$M" "size=256M,cache.mode=$mode"
	out=$(python3 "$SFS_TMP/race.py" "$M" "$OPENS" 2>"$SFS_TMP/race.err") ||
		fail "cache.mode=$mode: the race did not run: $(cat "$SFS_TMP/race.err")"
	read -r opens enoent other short torn versions <<<"$out"
	note "cache.mode=$mode: $opens opens, $(tail -n 1 "$SFS_TMP/race.err") renames, $versions versions read"
	# The race was run: the reader saw the file change under it, often.
	((versions >= 50)) || fail "cache.mode=$mode: the reader saw $versions version(s) in 120 s: the race was not run"
	assert_eq "$enoent" 0 "cache.mode=$mode: opens that failed with ENOENT"
	assert_eq "$other" 0 "cache.mode=$mode: opens that failed otherwise ($(head -n 3 "$SFS_TMP/race.err"))"
	assert_eq "$short" 0 "cache.mode=$mode: short reads"
	assert_eq "$torn" 0 "cache.mode=$mode: torn reads (two versions, or zeros)"
	sfs_umount "$M"
	# Every replaced inode is gone from the catalog after the unmount.
	assert_eq "$(sqlite3 "$B.scatterfs" "SELECT count(*) FROM inode")" 3 \
		"cache.mode=$mode: inodes in the catalog after the unmount (root, other, dst: no replaced one left)"
	assert_eq "$(sqlite3 "$B.scatterfs" "SELECT count(*) FROM extent WHERE ino NOT IN (SELECT ino FROM inode)")" 0 \
		"cache.mode=$mode: extents of no inode after the unmount"
done
note ok
