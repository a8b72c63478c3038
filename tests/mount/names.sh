#!/bin/bash
# Names longer than NAME_MAX (255 bytes) get ENAMETOOLONG from every
# operation that takes a name, as on ext4, never ENOENT (issue 16): callers
# tell "too long" from "missing" by it.  lookup (stat, chmod), create,
# mknod, mkdir, symlink, link, unlink, rmdir, rename (either name), in a
# directory and in the control directory; a 255-byte name works in each;
# statfs reports 255.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
sfs_mount "$T/backing" "$M" "size=16M,device.block_size=4K,layout.extent_size=4K"

cat >"$T/names.py" <<'PYEOF'
import errno, os, sys

os.chdir(sys.argv[1])
os.umask(0o022)
fails = []
L = "l" * 256          # one byte too long
OK = "k" * 255         # the longest allowed
U = "é" * 128          # 256 bytes of UTF-8 in 128 characters
os.mkdir("d")
with open("f", "w") as f:
    f.write("x")

def res(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]

def readlink_is(p, target):
    got = os.readlink(p)
    if got != target:
        raise OSError(errno.EIO, f"readlink gave {got!r}")

def creat(p):
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))

for name in (L, U, "d/" + L, ".scatterfs/" + L, ".scatterfs/extents/" + L):
    for what, fn in [
        ("stat", lambda: os.stat(name)),
        ("lstat", lambda: os.lstat(name)),
        ("chmod", lambda: os.chmod(name, 0o600)),
        ("open", lambda: os.close(os.open(name, os.O_RDONLY))),
        ("create", lambda: creat(name)),
        ("mknod", lambda: os.mkfifo(name)),
        ("mkdir", lambda: os.mkdir(name)),
        ("symlink", lambda: os.symlink("f", name)),
        ("link to", lambda: os.link("f", name)),
        ("unlink", lambda: os.unlink(name)),
        ("rmdir", lambda: os.rmdir(name)),
        ("rename from", lambda: os.rename(name, "g")),
        ("rename to", lambda: os.rename("f", name)),
        ("rename dir to", lambda: os.rename("d", name)),
    ]:
        got = res(fn)
        if got != "ENAMETOOLONG":
            fails.append(f"{what} of a {len(name.split('/')[-1].encode())}-byte name ({name[:24]}...): got {got}, expected ENAMETOOLONG")

# The longest allowed name works in every one of them.
for what, fn in [
    ("create", lambda: creat(OK)),
    ("stat", lambda: os.stat(OK)),
    ("chmod", lambda: os.chmod(OK, 0o600)),
    ("rename to", lambda: os.rename(OK, "d/" + OK)),
    ("link to", lambda: os.link("d/" + OK, OK)),
    ("unlink", lambda: os.unlink(OK)),
    ("rename from", lambda: os.rename("d/" + OK, "h")),
    ("mkdir", lambda: os.mkdir(OK)),
    ("rmdir", lambda: os.rmdir(OK)),
    ("mknod", lambda: os.mkfifo(OK)),
    ("unlink fifo", lambda: os.unlink(OK)),
    ("symlink", lambda: os.symlink("f", OK)),
    ("readlink", lambda: readlink_is(OK, "f")),
    ("unlink symlink", lambda: os.unlink(OK)),
]:
    got = res(fn)
    if got != "ok":
        fails.append(f"{what} of a 255-byte name: got {got}, expected ok")
if sorted(os.listdir(".")) != ["d", "f", "h"]:
    fails.append(f"root after the checks: {sorted(os.listdir('.'))}")
if os.statvfs(".").f_namemax != 255:
    fails.append(f"statvfs f_namemax {os.statvfs('.').f_namemax}, expected 255")
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
PYEOF
out=$(python3 "$T/names.py" "$M" 2>&1) || fail "$(wc -l <<<"$out") failed checks:
$out"
sfs_umount "$M"
echo "PASS: names"
