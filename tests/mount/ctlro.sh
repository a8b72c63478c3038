#!/bin/bash
# The control directory is read-only, whatever operation reaches it (issue
# 12, item 4): every operation on .scatterfs/, its entries (stats, config,
# extents/ and a file's extents/PATH), and every operation that would put a
# name into it or take one out of it, each with the exact errno (or result)
# the daemon gave before the control directory had a dispatch of its own.
# control, root's command file, is the one writable entry (tests/mount/faults.sh).
# Run as root (root passes every permission check, so each answer is the
# daemon's or the VFS's, never EACCES).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
sfs_mount "$T/backing" "$M" "size=16M,device.block_size=4K,layout.extent_size=4K"
mkdir "$M/d"
echo data >"$M/d/f"
echo other >"$M/g"

cat >"$T/ctlro.py" <<'PYEOF'
import ctypes, ctypes.util, errno, os, sys

M = sys.argv[1]
os.chdir(M)
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
AT_FDCWD, RENAME_EXCHANGE, RENAME_NOREPLACE = -100, 2, 1
C = ".scatterfs"
fails = []

def res(fn):
    """'ok' or the errno name of fn()."""
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]

def on_fd(path, flags, fn):
    def run():
        fd = os.open(path, flags)
        try:
            fn(fd)
        finally:
            os.close(fd)
    return run

def falloc(fd):
    if libc.fallocate(fd, 0, 0, 4096):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))

def rename2(a, b, flags):
    def run():
        if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags):
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    return run

def listx(p):
    v = os.listxattr(p)
    if v:
        raise AssertionError(f"listxattr {p}: {v}")

# (what, operation, expected)
checks = []
for p in [C, C + "/stats", C + "/config", C + "/extents", C + "/extents/d", C + "/extents/d/f"]:
    isdir = p in (C, C + "/extents", C + "/extents/d")
    checks += [
        (f"open O_WRONLY {p}", on_fd(p, os.O_WRONLY, lambda fd: None), "EISDIR" if isdir else "EROFS"),
        (f"open O_RDWR {p}", on_fd(p, os.O_RDWR, lambda fd: None), "EISDIR" if isdir else "EROFS"),
        # O_TRUNC with O_RDONLY is accepted and truncates nothing (checked below).
        (f"open O_RDONLY|O_TRUNC {p}", on_fd(p, os.O_RDONLY | os.O_TRUNC, lambda fd: None), "EISDIR" if isdir else "ok"),
        (f"write on a read-only fd of {p}", on_fd(p, os.O_RDONLY, lambda fd: os.write(fd, b"x")), "EBADF"),
        (f"fallocate on a read-only fd of {p}", on_fd(p, os.O_RDONLY, falloc), "EBADF"),
        (f"fsync {p}", on_fd(p, os.O_RDONLY, os.fsync), "ok"),
        (f"fdatasync {p}", on_fd(p, os.O_RDONLY, os.fdatasync), "ok"),
        (f"chmod {p}", lambda p=p: os.chmod(p, 0o777), "EROFS"),
        (f"chown {p}", lambda p=p: os.chown(p, 1, 1), "EROFS"),
        (f"utime {p}", lambda p=p: os.utime(p, (1, 1)), "EROFS"),
        (f"truncate {p}", lambda p=p: os.truncate(p, 0), "EISDIR" if isdir else "EROFS"),
        (f"setxattr user.x {p}", lambda p=p: os.setxattr(p, "user.x", b"1"), "EROFS"),
        (f"setxattr system.posix_acl_access {p}", lambda p=p: os.setxattr(p, "system.posix_acl_access", b"\x02\0\0\0"), "EROFS"),
        (f"getxattr user.x {p}", lambda p=p: os.getxattr(p, "user.x"), "ENODATA"),
        (f"listxattr {p}", lambda p=p: listx(p), "ok"),
        (f"removexattr user.x {p}", lambda p=p: os.removexattr(p, "user.x"), "EROFS"),
        (f"readlink {p}", lambda p=p: os.readlink(p), "EINVAL"),
        (f"opendir {p}", lambda p=p: os.listdir(p), "ok" if isdir else "ENOTDIR"),
        (f"link {p} -> lnk", lambda p=p: os.link(p, "lnk"), "EPERM" if isdir else "EROFS"),
        (f"rename {p} -> moved", lambda p=p: os.rename(p, "moved"), "EROFS"),
        (f"rename exchange {p} <-> g", rename2(p, "g", RENAME_EXCHANGE), "EROFS"),
    ]
for d in [C, C + "/extents", C + "/extents/d"]:
    checks += [
        (f"create in {d}", on_fd(d + "/new", os.O_CREAT | os.O_WRONLY, lambda fd: None), "EROFS"),
        (f"O_EXCL create in {d}", on_fd(d + "/new", os.O_CREAT | os.O_EXCL | os.O_RDONLY, lambda fd: None), "EROFS"),
        (f"mknod fifo in {d}", lambda d=d: os.mkfifo(d + "/fifo"), "EROFS"),
        (f"mknod regular in {d}", lambda d=d: os.mknod(d + "/node", 0o600), "EROFS"),
        (f"mkdir in {d}", lambda d=d: os.mkdir(d + "/sub"), "EROFS"),
        (f"symlink in {d}", lambda d=d: os.symlink("target", d + "/sl"), "EROFS"),
        (f"link g into {d}", lambda d=d: os.link("g", d + "/g2"), "EROFS"),
        (f"rename g into {d}", lambda d=d: os.rename("g", d + "/g2"), "EROFS"),
        (f"rename noreplace g into {d}", rename2("g", d + "/g2", RENAME_NOREPLACE), "EROFS"),
        (f"unlink of a missing name in {d}", lambda d=d: os.unlink(d + "/missing"), "ENOENT"),
        (f"rmdir of a missing name in {d}", lambda d=d: os.rmdir(d + "/missing"), "ENOENT"),
        (f"statvfs {d}", lambda d=d: os.statvfs(d), "ok"),
    ]
checks += [
    ("unlink .scatterfs/stats", lambda: os.unlink(C + "/stats"), "EROFS"),
    ("unlink .scatterfs/config", lambda: os.unlink(C + "/config"), "EROFS"),
    ("unlink .scatterfs/extents/d/f", lambda: os.unlink(C + "/extents/d/f"), "EROFS"),
    ("rmdir .scatterfs/extents", lambda: os.rmdir(C + "/extents"), "EROFS"),
    ("rmdir .scatterfs/extents/d", lambda: os.rmdir(C + "/extents/d"), "EROFS"),
    ("rmdir .scatterfs", lambda: os.rmdir(C), "EROFS"),
    ("unlink .scatterfs", lambda: os.unlink(C), "EISDIR"),
    ("mkdir .scatterfs", lambda: os.mkdir(C), "EEXIST"),
    ("O_EXCL create .scatterfs", on_fd(C, os.O_CREAT | os.O_EXCL | os.O_RDONLY, lambda fd: None), "EEXIST"),
    ("mknod .scatterfs", lambda: os.mkfifo(C), "EEXIST"),
    ("symlink .scatterfs", lambda: os.symlink("t", C), "EEXIST"),
    ("link g to .scatterfs", lambda: os.link("g", C), "EEXIST"),
    ("rename g over .scatterfs", lambda: os.rename("g", C), "EISDIR"),
    ("rename d over .scatterfs", lambda: os.rename("d", C), "EROFS"),
    ("rename .scatterfs/stats over .scatterfs/config", lambda: os.rename(C + "/stats", C + "/config"), "EROFS"),
    ("rename .scatterfs/extents/d/f -> d/f2", lambda: os.rename(C + "/extents/d/f", "d/f2"), "EROFS"),
    ("lookup of a missing name in .scatterfs", lambda: os.stat(C + "/missing"), "ENOENT"),
    ("lookup below a control file", lambda: os.stat(C + "/stats/x"), "ENOTDIR"),
]
for what, fn, want in checks:
    got = res(fn)
    if got != want:
        fails.append(f"{what}: got {got}, expected {want}")
# Nothing above may have changed the tree or the control files.
if sorted(os.listdir(".")) != ["d", "g"]:
    fails.append(f"root after the checks: {sorted(os.listdir('.'))}, expected ['d', 'g']")
if sorted(os.listdir(C)) != ["config", "control", "extents", "layout", "stats"]:
    fails.append(f".scatterfs after the checks: {sorted(os.listdir(C))}")
if open("d/f").read() != "data\n" or open("g").read() != "other\n":
    fails.append("d/f or g changed")
ext = open(C + "/extents/d/f").read()
if ext != "logical_offset,device_offset,length\n0,0,4096\n":
    fails.append(f"extents/d/f after the checks: {ext!r}")
if os.stat(C + "/stats").st_size == 0 or os.stat(C + "/config").st_size == 0:
    fails.append("stats or config empty after the checks")
if os.listxattr("g"):
    fails.append(f"g gained xattrs: {os.listxattr('g')}")
print(f"{len(checks)} checks")
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
PYEOF
out=$(python3 "$T/ctlro.py" "$M" 2>&1) || fail "python checks: $out"
note "$out"
sfs_umount "$M"
echo "PASS: ctlro"
