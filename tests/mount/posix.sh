#!/bin/bash
# POSIX operations as databases and ordinary tools use them (issue 3, item
# 2), each with exact expectations, and again after an unmount and a
# remount where the state must persist:
#
#   lookup/getattr; setattr (chmod, chown uid/gid, truncate up and down with
#   the content checked, utimes and touch -d with exact atime/mtime);
#   create/open/release (O_EXCL, O_TRUNC, O_APPEND); read/write (unaligned
#   writes at odd offsets, sparse writes whose holes read as zeros,
#   O_DIRECT); fallocate modes 0, KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE,
#   ZERO_RANGE with and without KEEP_SIZE (sizes, st_blocks, contents);
#   fsync/fdatasync on files and fsync on directories; mkdir/rmdir
#   (ENOTEMPTY); unlink of an open file (readable through its fd, space
#   freed at close in .scatterfs/stats); rename (plain, overwrite,
#   RENAME_NOREPLACE, RENAME_EXCHANGE, directories with contents, into its
#   own subdirectory); link; symlink/readlink; readdir ('.', '..', every
#   name, d_ino, .scatterfs hidden but reachable); statfs; xattrs
#   (XATTR_CREATE/XATTR_REPLACE); stable inode numbers; ownership of files
#   created by another user (allow_other); the read-only control directory;
#   names with commas, quotes, newlines, UTF-8 and 255 bytes; deep
#   directories.
#
# Every check runs and records its failure (check_* below, and the python
# checks print "FAIL: ..." lines); the test fails at the end with the whole
# list, so one daemon bug does not hide the others.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
# 4 KiB blocks and 4 KiB extents: allocation is per block, so st_blocks and
# used_bytes have exact expected values.
OPTS="size=64M,device.block_size=4K,layout.extent_size=4K,allow_other"
BACKING_SIZE=67108864

FAILS=()
# check_eq ACTUAL EXPECTED WHAT - exact comparison, recorded (not fatal)
check_eq() {
	[[ $1 == "$2" ]] || FAILS+=("$3: got '$1', expected '$2'")
}
# check_ok WHAT CMD... - CMD must succeed
check_ok() {
	local what=$1 out
	shift
	out=$("$@" 2>&1) || FAILS+=("$what: '$*' failed: $out")
}
# check_fails WHAT CMD... - CMD must fail
check_fails() {
	local what=$1
	shift
	if "$@" >/dev/null 2>&1; then FAILS+=("$what: '$*' succeeded, expected a failure"); fi
}
# run_py PHASE - run the python checks of PHASE, recording their FAIL lines
run_py() {
	local out rc=0 line
	out=$(cd "$M" && python3 "$T/posix.py" "$1" "$M" "$T/state.json" 2>&1) || rc=$?
	while IFS= read -r line; do
		[[ $line == FAIL:* ]] && FAILS+=("python $1: ${line#FAIL: }")
	done <<<"$out"
	if ((rc != 0)); then
		FAILS+=("python $1 exited with status $rc: $(grep -v '^FAIL:' <<<"$out" | tail -n 15)")
	fi
	note "python $1: $(grep -c '^FAIL:' <<<"$out" || true) failed checks"
}
stat_field() { sfs_stats "$M" "$1"; }

cat >"$T/posix.py" <<'PYEOF'
import ctypes, ctypes.util, errno, functools, json, mmap, os, stat, subprocess, sys, time

phase, M, STATE = sys.argv[1], sys.argv[2], sys.argv[3]
os.chdir(M)
os.umask(0o022)
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
AT_FDCWD = -100
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
KEEP_SIZE, PUNCH_HOLE, ZERO_RANGE = 0x01, 0x02, 0x10
BS = 4096
nfail = 0

def FAIL(msg):
    global nfail
    nfail += 1
    print("FAIL: " + msg, flush=True)

def eq(actual, expected, what):
    if actual != expected:
        a, e = repr(actual), repr(expected)
        FAIL(f"{what}: got {a[:300]}, expected {e[:300]}")
        return False
    return True

def err_is(fn, code, what):
    """fn() must raise OSError with errno code."""
    try:
        fn()
    except OSError as x:
        if x.errno != code:
            FAIL(f"{what}: errno {errno.errorcode.get(x.errno, x.errno)}, expected {errno.errorcode[code]}")
        return
    FAIL(f"{what}: succeeded, expected {errno.errorcode[code]}")

def ok(fn, what):
    try:
        return fn()
    except OSError as x:
        FAIL(f"{what}: {x}")

def fallocate(fd, mode, off, length):
    if libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))

def renameat2(a, b, flags):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))

def content(path):
    with open(path, "rb") as f:
        return f.read()

def same(path, expected, what):
    """Exact content; on a mismatch, report the first differing offset."""
    try:
        got = content(path)
    except OSError as x:
        FAIL(f"{what}: {x}")
        return
    if got == expected:
        return
    if len(got) != len(expected):
        FAIL(f"{what}: {len(got)} bytes read, expected {len(expected)}")
    i = next((i for i in range(min(len(got), len(expected))) if got[i] != expected[i]), None)
    if i is not None:
        FAIL(f"{what}: first difference at offset {i}: {got[i:i+16]!r}, expected {expected[i:i+16]!r}")

def write_file(path, data, mode=0o644):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    os.write(fd, data)
    os.close(fd)

def stats():
    with open(".scatterfs/stats") as f:
        return json.load(f)

@functools.lru_cache(maxsize=None)
def pattern(n, seed=0):
    return bytes((i * 7 + seed * 13 + (i >> 8)) % 251 + 1 for i in range(n))

def blocks(path):
    return os.lstat(path).st_blocks

def wait_for(get, expected, what):
    """eq(get(), expected, what), allowing 10 s for the value to arrive: the
    kernel sends RELEASE after close() asynchronously, so an unlink or a
    rename right after a close can reach the daemon first, and the space of
    the last name's inode is freed only when RELEASE arrives."""
    for _ in range(500):
        if get() == expected:
            return
        time.sleep(0.02)
    eq(get(), expected, what)

def wait_used(expected, what):
    wait_for(lambda: stats()["used_bytes"], expected, what)

# ---------------------------------------------------------------------------
# The expected end state of phase one: checked in phase one and, after the
# remount, again in phase two.  path -> (content or None, mode, uid, gid, nlink, st_blocks or None)
def model():
    m = {}
    m["attr"] = (b"0123456789" * 100, 0o100751, 1234, 5678, 1, 8)
    m["chownuid"] = (b"u", 0o100644, 4321, 0, 1, 8)
    m["chowngid"] = (b"g", 0o100644, 0, 4321, 1, 8)
    m["times"] = (b"t", 0o100644, 0, 0, 1, 8)
    m["touchd"] = (b"", 0o100644, 0, 0, 1, 0)
    m["unaligned"] = (unaligned_model(), 0o100600, 0, 0, 1, None)
    m["sparse"] = (bytes(10_000_007) + b"end", 0o100644, 0, 0, 1, None)
    m["trunc_down"] = (pattern(10000)[:5000], 0o100644, 0, 0, 1, 16)
    m["trunc_up"] = (pattern(10000)[:5000] + bytes(15000), 0o100644, 0, 0, 1, None)
    m["odirect"] = (odirect_model(), 0o100644, 0, 0, 1, 32)
    m["fa_mode0"] = (bytes(1048576), 0o100644, 0, 0, 1, 2048)
    m["fa_keep"] = (b"k" * 4096, 0o100644, 0, 0, 1, (4096 + 65536) // 512)
    m["fa_punch"] = (punch_model(), 0o100644, 0, 0, 1, 96)
    m["fa_zero"] = (zero_model(), 0o100644, 0, 0, 1, (24576 + 4096) // 512)
    m["d1"] = (None, 0o40750, 0, 0, 4, None)
    m["d1/sub"] = (None, 0o40755, 0, 0, 2, None)
    m["d1/sub2"] = (None, 0o40755, 0, 0, 3, None)
    m["d1/sub/file"] = (b"in sub", 0o100644, 0, 0, 1, 8)
    m["renamed"] = (b"plain rename", 0o100644, 0, 0, 1, 8)
    m["ow_dst"] = (b"overwriting source", 0o100644, 0, 0, 1, 8)
    m["nr_a"] = (b"noreplace a", 0o100644, 0, 0, 1, 8)
    m["nr_b"] = (b"noreplace b", 0o100644, 0, 0, 1, 8)
    m["nr_new"] = (b"noreplace c", 0o100644, 0, 0, 1, 8)
    m["ex_a"] = (b"exchange b, longer", 0o100644, 0, 0, 1, 8)
    m["ex_b"] = (b"exchange a", 0o100644, 0, 0, 1, 8)
    m["ex_da"] = (None, 0o40755, 0, 0, 2, None)
    m["ex_da/in_b"] = (b"B", 0o100644, 0, 0, 1, 8)
    m["ex_db"] = (None, 0o40755, 0, 0, 2, None)
    m["ex_db/in_a"] = (b"A", 0o100644, 0, 0, 1, 8)
    m["dmoved"] = (None, 0o40755, 0, 0, 3, None)
    m["dmoved/x"] = (None, 0o40755, 0, 0, 2, None)
    m["dmoved/x/y"] = (b"deep content", 0o100644, 0, 0, 1, 8)
    m["d1/sub2/moved_here"] = (None, 0o40755, 0, 0, 2, None)
    m["h2"] = (b"hard link data, changed", 0o100644, 0, 0, 1, 8)
    m["h3"] = (b"two names", 0o100644, 0, 0, 2, 8)
    m["h4"] = (b"two names", 0o100644, 0, 0, 2, 8)
    m["pub"] = (None, 0o41777, 0, 0, 3, None)
    m["pub/by_nobody"] = (b"nobody\n", 0o100644, 65534, 65534, 1, 8)
    m["pub/dir_nobody"] = (None, 0o40755, 65534, 65534, 2, None)
    m["sgid"] = (None, 0o42777, 0, 4321, 3, None)
    m["sgid/by_nobody"] = (b"", 0o100644, 65534, 4321, 1, 0)
    m["sgid/dir_nobody"] = (None, 0o42755, 65534, 4321, 2, None)
    m["many"] = (None, 0o40755, 0, 0, 2, None)
    m["names"] = (None, 0o40755, 0, 0, 2, None)
    for n in odd_names():
        m["names/" + n] = (n.encode(), 0o100644, 0, 0, 1, 8)
    d = "deep"
    for i in range(40):
        d += "/d%02d" % i
    m[d + "/leaf"] = (b"leaf", 0o100644, 0, 0, 1, 8)
    return m

def odd_names():
    return ["comma,name", 'double"quote', "single'quote", "new\nline", "tab\tname",
            "ünïcødé-日本語-🚀", "x" * 255, "é" * 127 + "x", " leading space", "trailing space ",
            "-dash", "a;b|c&d$e", "back\\slash", "star*?[x]"]

def unaligned_model():
    m = bytearray()
    for off, data in UNALIGNED:
        if len(m) < off + len(data):
            m.extend(bytes(off + len(data) - len(m)))
        m[off:off + len(data)] = data
    return bytes(m)

UNALIGNED = [(0, pattern(5000, 1)), (4093, pattern(7, 2)), (8191, b"Q"), (1, b"odd"),
             (12287, pattern(4098, 3)), (3, pattern(1, 4)), (20001, b"end"), (16383, b"\0\0\0")]

def odirect_model():
    return b"\x11" * 4096 + b"\x22" * 8192 + b"\x33" * 4096

def punch_model():
    m = bytearray(b"\xab" * 65536)
    m[4096:12288] = bytes(8192)
    m[20000:30000] = bytes(10000)
    return bytes(m)

def zero_model():
    m = bytearray(b"\xcd" * 16384)
    m[1000:6000] = bytes(5000)
    m[8192:12288] = bytes(4096)
    return bytes(m) + bytes(8192)

def check_model(where):
    for path, (data, mode, uid, gid, nlink, nblocks) in model().items():
        try:
            st = os.lstat(path)
        except OSError as x:
            FAIL(f"{where}: lstat {path!r}: {x}")
            continue
        eq(st.st_mode, mode, f"{where}: st_mode of {path!r} (octal {oct(st.st_mode)} vs {oct(mode)})")
        eq((st.st_uid, st.st_gid), (uid, gid), f"{where}: uid,gid of {path!r}")
        eq(st.st_nlink, nlink, f"{where}: st_nlink of {path!r}")
        if data is not None:
            eq(st.st_size, len(data), f"{where}: st_size of {path!r}")
            same(path, data, f"{where}: content of {path!r}")
        if nblocks is not None:
            eq(st.st_blocks, nblocks, f"{where}: st_blocks of {path!r}")
    for path in ["renamed_src", "ow_src", "dA", "h1", "unl", "ex_missing", "pub/dir_nobody/x"]:
        eq(os.path.lexists(path), False, f"{where}: {path!r} exists")

def check_times(where):
    st = os.stat("times")
    eq((st.st_atime_ns, st.st_mtime_ns), (1000000000123456789, 1234567890987654321),
       f"{where}: atime_ns,mtime_ns of 'times' (os.utime)")
    st = os.stat("touchd")
    eq((st.st_atime_ns, st.st_mtime_ns), (981173106123456789, 981173106123456789),
       f"{where}: atime_ns,mtime_ns of 'touchd' (touch -d '2001-02-03 04:05:06.123456789 UTC')")

def check_xattrs(where):
    eq(sorted(os.listxattr("xa")), ["user.big", "user.empty", "user.one"], f"{where}: listxattr xa")
    eq(os.getxattr("xa", "user.one"), b"replaced", f"{where}: getxattr user.one")
    eq(os.getxattr("xa", "user.empty"), b"", f"{where}: getxattr user.empty")
    eq(os.getxattr("xa", "user.big"), pattern(4000, 9), f"{where}: getxattr user.big (4000 bytes)")
    eq(sorted(os.listxattr("xdir")), ["user.d"], f"{where}: listxattr xdir")
    eq(os.getxattr("h4", "user.shared"), b"via h3", f"{where}: xattr set via h3 read via h4")

def readdir_names(path):
    return sorted(os.listdir(path))

# ---------------------------------------------------------------------------
def phase_one():
    st0 = stats()
    used0 = st0["used_bytes"]
    eq(used0, 0, "used_bytes of a fresh mount")

    # --- lookup/getattr, create/open/release -------------------------------
    err_is(lambda: os.stat("missing"), errno.ENOENT, "stat of a missing name")
    err_is(lambda: os.stat("missing/deeper"), errno.ENOENT, "stat of a name under a missing dir")
    fd = os.open("attr", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640)
    st = os.fstat(fd)
    eq((st.st_mode, st.st_nlink, st.st_uid, st.st_gid, st.st_size, st.st_blocks),
       (0o100640, 1, 0, 0, 0, 0), "fstat of a new file: mode,nlink,uid,gid,size,blocks")
    os.write(fd, b"0123456789" * 100)
    os.close(fd)
    err_is(lambda: os.open("attr", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644), errno.EEXIST,
           "O_CREAT|O_EXCL of an existing file")
    err_is(lambda: os.open("missing", os.O_RDONLY), errno.ENOENT, "open of a missing file")
    err_is(lambda: os.open(".", os.O_WRONLY), errno.EISDIR, "open of a directory for writing")
    err_is(lambda: os.open("attr/x", os.O_RDONLY), errno.ENOTDIR, "open of file/x")
    st = os.stat("attr")
    eq((st.st_size, st.st_blocks), (1000, 8), "size,blocks after writing 1000 bytes")
    # O_TRUNC and O_APPEND
    write_file("otrunc", b"long old content")
    fd = os.open("otrunc", os.O_WRONLY | os.O_TRUNC)
    eq(os.fstat(fd).st_size, 0, "size right after O_TRUNC")
    os.write(fd, b"new")
    os.close(fd)
    fd = os.open("otrunc", os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"+app")
    os.write(fd, b"+end")
    os.close(fd)
    same("otrunc", b"new+app+end", "O_TRUNC then two O_APPEND writes")
    os.unlink("otrunc")

    # --- setattr ----------------------------------------------------------
    os.chmod("attr", 0o751)
    eq(os.stat("attr").st_mode, 0o100751, "mode after chmod 751")
    os.chown("attr", 1234, 5678)
    eq((os.stat("attr").st_uid, os.stat("attr").st_gid), (1234, 5678), "uid,gid after chown 1234:5678")
    write_file("chownuid", b"u")
    os.chown("chownuid", 4321, -1)
    write_file("chowngid", b"g")
    os.chown("chowngid", -1, 4321)
    eq((os.stat("chownuid").st_uid, os.stat("chownuid").st_gid), (4321, 0), "chown uid only")
    eq((os.stat("chowngid").st_uid, os.stat("chowngid").st_gid), (0, 4321), "chown gid only")
    # chown clears setuid/setgid of a regular file
    write_file("suid", b"s", 0o6755)
    eq(os.stat("suid").st_mode, 0o106755, "mode 6755 at creation")
    os.chown("suid", 1, 1)
    eq(os.stat("suid").st_mode & 0o7777, 0o755, "chown of a setuid/setgid file clears both bits")
    os.unlink("suid")
    # ctime moves on chmod
    c0 = os.stat("chownuid").st_ctime_ns
    time.sleep(0.01)
    os.chmod("chownuid", 0o644)
    if not os.stat("chownuid").st_ctime_ns > c0:
        FAIL("ctime did not advance on chmod")
    # times
    write_file("times", b"t")
    os.utime("times", ns=(1000000000123456789, 1234567890987654321))
    write_file("touchd", b"")
    r = subprocess.run(["touch", "-d", "2001-02-03 04:05:06.123456789 UTC", "touchd"], capture_output=True)
    eq(r.returncode, 0, "touch -d exit status " + r.stderr.decode())
    check_times("before remount")
    # reading does not change atime (README: reads do not update access times)
    content("times")
    eq(os.stat("times").st_atime_ns, 1000000000123456789, "atime after a read")
    # mtime moves on write
    write_file("mt", b"1")
    os.utime("mt", ns=(0, 0))
    fd = os.open("mt", os.O_WRONLY)
    os.pwrite(fd, b"2", 0)
    os.close(fd)
    if os.stat("mt").st_mtime_ns == 0:
        FAIL("mtime did not change on write")
    os.unlink("mt")

    # truncate down and up: the cut bytes must never come back
    write_file("trunc_down", pattern(10000))
    os.truncate("trunc_down", 5000)
    eq(os.stat("trunc_down").st_size, 5000, "size after truncate 10000 -> 5000")
    eq(blocks("trunc_down"), 16, "st_blocks after truncate 10000 -> 5000")
    same("trunc_down", pattern(10000)[:5000], "content after truncate down")
    write_file("trunc_up", pattern(10000))
    fd = os.open("trunc_up", os.O_RDWR)
    os.ftruncate(fd, 5000)
    os.ftruncate(fd, 20000)
    eq(os.fstat(fd).st_size, 20000, "size after ftruncate 5000 -> 20000")
    os.close(fd)
    same("trunc_up", pattern(10000)[:5000] + bytes(15000), "truncate down then up: the tail reads as zeros")
    write_file("attr", b"0123456789" * 100)
    os.chmod("attr", 0o751)

    # --- read/write ---------------------------------------------------------
    fd = os.open("unaligned", os.O_CREAT | os.O_RDWR, 0o600)
    for off, data in UNALIGNED:
        eq(os.pwrite(fd, data, off), len(data), f"pwrite of {len(data)} bytes at {off}")
    eq(os.pread(fd, 3, 8190), unaligned_model()[8190:8193], "pread of 3 bytes at 8190")
    eq(os.pread(fd, 100, 20004), b"", "pread at EOF")
    eq(os.pread(fd, 100, 20000), unaligned_model()[20000:], "short pread at the end")
    os.close(fd)
    same("unaligned", unaligned_model(), "unaligned writes at odd offsets")
    fd = os.open("sparse", os.O_CREAT | os.O_WRONLY, 0o644)
    os.pwrite(fd, b"end", 10_000_007)
    os.close(fd)
    eq(os.stat("sparse").st_size, 10_000_010, "size of the sparse file")
    fd = os.open("sparse", os.O_RDONLY)
    eq(os.pread(fd, 5000, 5_000_001), bytes(5000), "a hole in the middle of the sparse file")
    os.close(fd)
    same("sparse", bytes(10_000_007) + b"end", "the sparse file: zeros then 'end'")
    # O_DIRECT with aligned buffers
    fd = os.open("odirect", os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
    buf = mmap.mmap(-1, 16384)
    buf[:] = odirect_model()
    eq(os.pwritev(fd, [buf], 0), 16384, "O_DIRECT pwritev of 16 KiB")
    buf2 = mmap.mmap(-1, 8192)
    buf2[:] = b"\x22" * 8192
    eq(os.pwritev(fd, [buf2], 4096), 8192, "O_DIRECT pwritev of 8 KiB at 4096")
    rb = mmap.mmap(-1, 16384)
    eq(os.preadv(fd, [rb], 0), 16384, "O_DIRECT preadv of 16 KiB")
    eq(bytes(rb), odirect_model(), "O_DIRECT read back")
    os.close(fd)

    # --- fallocate ------------------------------------------------------------
    fd = os.open("fa_mode0", os.O_CREAT | os.O_RDWR, 0o644)
    ok(lambda: fallocate(fd, 0, 0, 1048576), "fallocate mode 0")
    st = os.fstat(fd)
    eq((st.st_size, st.st_blocks), (1048576, 2048), "fallocate mode 0 of 1 MiB: size,blocks")
    os.close(fd)
    write_file("fa_keep", b"k" * 4096)
    fd = os.open("fa_keep", os.O_RDWR)
    ok(lambda: fallocate(fd, KEEP_SIZE, 4096, 65536), "fallocate KEEP_SIZE")
    st = os.fstat(fd)
    eq((st.st_size, st.st_blocks), (4096, (4096 + 65536) // 512), "fallocate KEEP_SIZE 64 KiB past EOF: size,blocks")
    os.close(fd)
    write_file("fa_punch", b"\xab" * 65536)
    eq(blocks("fa_punch"), 128, "blocks of a 64 KiB file")
    used_before = stats()["used_bytes"]
    fd = os.open("fa_punch", os.O_RDWR)
    ok(lambda: fallocate(fd, PUNCH_HOLE | KEEP_SIZE, 4096, 8192), "fallocate PUNCH_HOLE|KEEP_SIZE aligned")
    st = os.fstat(fd)
    eq((st.st_size, st.st_blocks), (65536, 112), "aligned punch of 8 KiB: size,blocks")
    ok(lambda: fallocate(fd, PUNCH_HOLE | KEEP_SIZE, 20000, 10000), "fallocate PUNCH_HOLE|KEEP_SIZE unaligned")
    st = os.fstat(fd)
    eq((st.st_size, st.st_blocks), (65536, 96), "unaligned punch 20000+10000 (2 whole blocks): size,blocks")
    err_is(lambda: fallocate(fd, PUNCH_HOLE, 0, 4096), errno.EOPNOTSUPP, "PUNCH_HOLE without KEEP_SIZE")
    os.close(fd)
    same("fa_punch", punch_model(), "content after the punches")
    eq(stats()["used_bytes"], used_before - 4 * BS, "used_bytes after punching 4 blocks")
    write_file("fa_zero", b"\xcd" * 16384)
    fd = os.open("fa_zero", os.O_RDWR)
    ok(lambda: fallocate(fd, ZERO_RANGE, 1000, 5000), "ZERO_RANGE 1000+5000")
    ok(lambda: fallocate(fd, ZERO_RANGE | KEEP_SIZE, 8192, 4096), "ZERO_RANGE|KEEP_SIZE inside")
    eq(os.fstat(fd).st_size, 16384, "size after ZERO_RANGE inside the file")
    ok(lambda: fallocate(fd, ZERO_RANGE, 16384, 8192), "ZERO_RANGE past EOF")
    eq(os.fstat(fd).st_size, 24576, "size after ZERO_RANGE past EOF without KEEP_SIZE")
    ok(lambda: fallocate(fd, ZERO_RANGE | KEEP_SIZE, 24576, 4096), "ZERO_RANGE|KEEP_SIZE past EOF")
    st = os.fstat(fd)
    eq((st.st_size, st.st_blocks), (24576, (24576 + 4096) // 512), "ZERO_RANGE|KEEP_SIZE past EOF: size,blocks")
    os.close(fd)
    same("fa_zero", zero_model(), "content after ZERO_RANGE")

    # --- fsync -------------------------------------------------------------
    fd = os.open("attr", os.O_RDWR)
    ok(lambda: os.fsync(fd), "fsync of a file")
    ok(lambda: os.fdatasync(fd), "fdatasync of a file")
    os.close(fd)
    fd = os.open("attr", os.O_RDONLY)
    ok(lambda: os.fsync(fd), "fsync of a read-only fd")
    os.close(fd)

    # --- mkdir/rmdir ---------------------------------------------------------
    nl_root = os.stat(".").st_nlink
    os.mkdir("d1", 0o750)
    eq(os.stat("d1").st_mode, 0o40750, "mode of a new directory")
    eq(os.stat("d1").st_nlink, 2, "nlink of a new directory")
    eq(os.stat(".").st_nlink, nl_root + 1, "root nlink after mkdir")
    os.mkdir("d1/sub")
    os.mkdir("d1/sub2")
    eq(os.stat("d1").st_nlink, 4, "nlink of a directory with 2 subdirectories")
    err_is(lambda: os.mkdir("d1"), errno.EEXIST, "mkdir of an existing name")
    err_is(lambda: os.rmdir("d1"), errno.ENOTEMPTY, "rmdir of a directory with subdirectories")
    write_file("d1/sub/file", b"in sub")
    err_is(lambda: os.rmdir("d1/sub"), errno.ENOTEMPTY, "rmdir of a directory with a file")
    os.mkdir("d1/gone")
    os.rmdir("d1/gone")
    err_is(lambda: os.stat("d1/gone"), errno.ENOENT, "stat after rmdir")
    eq(os.stat("d1").st_nlink, 4, "nlink after mkdir+rmdir")
    err_is(lambda: os.rmdir("d1/missing"), errno.ENOENT, "rmdir of a missing name")
    err_is(lambda: os.rmdir("attr"), errno.ENOTDIR, "rmdir of a file")
    err_is(lambda: os.unlink("d1"), errno.EISDIR, "unlink of a directory")
    for fn in ["dirfsync", "."]:
        if fn != ".":
            os.mkdir(fn)
        dfd = os.open(fn, os.O_RDONLY | os.O_DIRECTORY)
        ok(lambda: os.fsync(dfd), f"fsync of directory {fn!r}")
        ok(lambda: os.fdatasync(dfd), f"fdatasync of directory {fn!r}")
        os.close(dfd)
    os.rmdir("dirfsync")

    # --- unlink of an open file ----------------------------------------------
    used_a = stats()["used_bytes"]
    fd = os.open("unl", os.O_CREAT | os.O_RDWR, 0o644)
    os.write(fd, pattern(1048576, 5))
    os.fsync(fd)
    eq(stats()["used_bytes"], used_a + 1048576, "used_bytes after writing 1 MiB")
    os.unlink("unl")
    err_is(lambda: os.stat("unl"), errno.ENOENT, "stat after unlink")
    eq(os.fstat(fd).st_nlink, 0, "fstat nlink of an open unlinked file")
    eq(os.pread(fd, 1048576, 0), pattern(1048576, 5), "read of an open unlinked file")
    os.pwrite(fd, b"still writable", 100)
    eq(os.pread(fd, 14, 100), b"still writable", "write+read of an open unlinked file")
    eq(stats()["used_bytes"], used_a + 1048576, "used_bytes while the unlinked file is open")
    # (reading .scatterfs/stats above must not have touched the open file)
    eq(os.fstat(fd).st_blocks, 2048, "st_blocks of the open unlinked file after a stats read")
    got = os.pread(fd, 1048576, 0)
    exp = pattern(1048576, 5)[:100] + b"still writable" + pattern(1048576, 5)[114:]
    if got != exp:
        i = next((i for i in range(min(len(got), len(exp))) if got[i] != exp[i]), min(len(got), len(exp)))
        FAIL(f"read of the open unlinked file after reading .scatterfs/stats (data must survive until close): "
             f"{len(got)} bytes, first difference at {i}: {got[i:i+8]!r}, expected {exp[i:i+8]!r}")
    os.close(fd)
    wait_used(used_a, "used_bytes after closing the unlinked file (space freed)")
    eq("unl" in os.listdir("."), False, "unlinked name listed")

    # --- rename ---------------------------------------------------------------
    write_file("renamed_src", b"plain rename")
    ino = os.stat("renamed_src").st_ino
    os.rename("renamed_src", "renamed")
    eq(os.stat("renamed").st_ino, ino, "st_ino kept across rename")
    write_file("ow_src", b"overwriting source")
    write_file("ow_dst", b"overwritten destination: its space must be freed" * 100)
    used_b = stats()["used_bytes"]
    ino = os.stat("ow_src").st_ino
    os.rename("ow_src", "ow_dst")
    eq(os.stat("ow_dst").st_ino, ino, "st_ino of the overwriting file")
    wait_used(used_b - 2 * BS, "used_bytes after rename over a 2-block file")
    write_file("nr_a", b"noreplace a")
    write_file("nr_b", b"noreplace b")
    write_file("nr_c", b"noreplace c")
    err_is(lambda: renameat2("nr_a", "nr_b", RENAME_NOREPLACE), errno.EEXIST, "RENAME_NOREPLACE onto an existing file")
    ok(lambda: renameat2("nr_c", "nr_new", RENAME_NOREPLACE), "RENAME_NOREPLACE onto a new name")
    write_file("ex_a", b"exchange a")
    write_file("ex_b", b"exchange b, longer")
    ia, ib = os.stat("ex_a").st_ino, os.stat("ex_b").st_ino
    ok(lambda: renameat2("ex_a", "ex_b", RENAME_EXCHANGE), "RENAME_EXCHANGE of two files")
    eq((os.stat("ex_a").st_ino, os.stat("ex_b").st_ino), (ib, ia), "st_ino after RENAME_EXCHANGE")
    err_is(lambda: renameat2("ex_a", "ex_missing", RENAME_EXCHANGE), errno.ENOENT, "RENAME_EXCHANGE with a missing name")
    os.mkdir("ex_da")
    os.mkdir("ex_db")
    write_file("ex_da/in_a", b"A")
    write_file("ex_db/in_b", b"B")
    ok(lambda: renameat2("ex_da", "ex_db", RENAME_EXCHANGE), "RENAME_EXCHANGE of two directories")
    # directory rename with contents
    os.makedirs("dA/x")
    write_file("dA/x/y", b"deep content")
    os.rename("dA", "dmoved")
    err_is(lambda: os.stat("dA/x/y"), errno.ENOENT, "old path after a directory rename")
    same("dmoved/x/y", b"deep content", "file under a renamed directory")
    err_is(lambda: os.rename("dmoved", "dmoved/x/inside"), errno.EINVAL, "rename of a directory into its own subdirectory")
    os.mkdir("dmv2")
    nl_sub2 = os.stat("d1/sub2").st_nlink
    os.rename("dmv2", "d1/sub2/moved_here")
    eq(os.stat("d1/sub2").st_nlink, nl_sub2 + 1, "nlink of the new parent after moving a directory in")
    os.mkdir("full")
    write_file("full/f", b"x")
    os.mkdir("empty")
    err_is(lambda: os.rename("d1/sub2/moved_here", "full"), errno.ENOTEMPTY, "rename of a directory over a non-empty directory")
    err_is(lambda: os.rename("attr", "full"), errno.EISDIR, "rename of a file over a directory")
    err_is(lambda: os.rename("full", "attr"), errno.ENOTDIR, "rename of a directory over a file")
    os.rename("full", "empty")  # over an empty directory
    same("empty/f", b"x", "directory renamed over an empty directory")
    os.unlink("empty/f")
    os.rmdir("empty")
    err_is(lambda: os.rename("nothing", "x"), errno.ENOENT, "rename of a missing name")

    # --- link ----------------------------------------------------------------
    write_file("h1", b"hard link data")
    os.link("h1", "h2")
    s1, s2 = os.stat("h1"), os.stat("h2")
    eq((s1.st_nlink, s2.st_nlink), (2, 2), "nlink of both names after link")
    eq(s1.st_ino, s2.st_ino, "st_ino of two hard links")
    with open("h2", "r+b") as f:
        f.seek(14)
        f.write(b", changed")
    same("h1", b"hard link data, changed", "write through one link read through the other")
    os.unlink("h1")
    eq(os.stat("h2").st_nlink, 1, "nlink after unlinking one link")
    err_is(lambda: os.link("h2", "attr"), errno.EEXIST, "link onto an existing name")
    err_is(lambda: os.link("d1", "d1link"), errno.EPERM, "link of a directory")
    write_file("h3", b"two names")
    os.link("h3", "h4")

    # --- symlink/readlink ----------------------------------------------------
    os.symlink("attr", "sl")
    eq(os.readlink("sl"), "attr", "readlink")
    st = os.lstat("sl")
    eq((stat.S_ISLNK(st.st_mode), st.st_size), (True, 4), "lstat of a symlink: is link, size")
    eq(os.stat("sl").st_ino, os.stat("attr").st_ino, "stat through a symlink")
    long_target = "/".join(["component%04d" % i for i in range(400)])[:4000]
    os.symlink(long_target, "sl_long")
    eq(os.readlink("sl_long"), long_target, "readlink of a 4000-byte target")
    os.symlink("dangling/target", "sl_dangling")
    eq(os.readlink("sl_dangling"), "dangling/target", "readlink of a dangling symlink")
    err_is(lambda: os.readlink("attr"), errno.EINVAL, "readlink of a regular file")
    err_is(lambda: os.symlink("x", "sl"), errno.EEXIST, "symlink onto an existing name")

    # --- xattrs -------------------------------------------------------------
    write_file("xa", b"x")
    os.setxattr("xa", "user.one", b"v1")
    eq(os.getxattr("xa", "user.one"), b"v1", "getxattr after setxattr")
    err_is(lambda: os.setxattr("xa", "user.one", b"v2", os.XATTR_CREATE), errno.EEXIST, "XATTR_CREATE on an existing name")
    eq(os.getxattr("xa", "user.one"), b"v1", "value after a refused XATTR_CREATE")
    err_is(lambda: os.setxattr("xa", "user.missing", b"v", os.XATTR_REPLACE), errno.ENODATA, "XATTR_REPLACE on a missing name")
    ok(lambda: os.setxattr("xa", "user.one", b"v3"), "setxattr (no flags) over an existing name")
    eq(os.getxattr("xa", "user.one"), b"v3", "value after a plain setxattr over an existing name")
    ok(lambda: os.setxattr("xa", "user.one", b"replaced", os.XATTR_REPLACE), "XATTR_REPLACE on an existing name")
    ok(lambda: os.setxattr("xa", "user.two", b"2", os.XATTR_CREATE), "XATTR_CREATE on a new name")
    os.setxattr("xa", "user.empty", b"")
    os.setxattr("xa", "user.big", pattern(4000, 9))
    eq(sorted(os.listxattr("xa")), ["user.big", "user.empty", "user.one", "user.two"], "listxattr")
    os.removexattr("xa", "user.two")
    err_is(lambda: os.getxattr("xa", "user.two"), errno.ENODATA, "getxattr after removexattr")
    err_is(lambda: os.removexattr("xa", "user.two"), errno.ENODATA, "removexattr of a missing name")
    err_is(lambda: os.getxattr("xa", "user.never"), errno.ENODATA, "getxattr of a missing name")
    os.mkdir("xdir")
    os.setxattr("xdir", "user.d", b"dir value")
    os.setxattr("h3", "user.shared", b"via h3")
    write_file("xgone", b"")
    os.setxattr("xgone", "user.leak", b"must not leak")
    os.unlink("xgone")
    write_file("xnew", b"")
    eq(os.listxattr("xnew"), [], "listxattr of a new file after a file with xattrs was deleted")
    os.unlink("xnew")
    check_xattrs("before remount")

    # --- parent directory times -------------------------------------------------
    os.mkdir("pm")
    for what, act in [("create", lambda: write_file("pm/f", b"")),
                      ("symlink", lambda: os.symlink("x", "pm/sl")),
                      ("mkdir", lambda: os.mkdir("pm/sub")),
                      ("link", lambda: os.link("pm/f", "pm/f2")),
                      ("unlink", lambda: os.unlink("pm/f2")),
                      ("rename within", lambda: os.rename("pm/sl", "pm/sl2"))]:
        os.utime("pm", ns=(5000000000, 5000000000))
        c0 = os.stat("pm").st_ctime_ns
        time.sleep(0.005)
        act()
        st = os.stat("pm")
        if st.st_mtime_ns == 5000000000:
            FAIL(f"parent directory mtime not updated by {what} in it")
        if st.st_ctime_ns == c0:
            FAIL(f"parent directory ctime not updated by {what} in it")
    os.utime("pm", ns=(5000000000, 5000000000))
    os.mkdir("pm/sub2")   # its mtime must persist (phase two)

    # --- readdir ----------------------------------------------------------------
    os.mkdir("many")
    names = ["file-%04d-with-a-longish-name" % i for i in range(600)]
    for n in names:
        os.close(os.open("many/" + n, os.O_CREAT | os.O_WRONLY, 0o644))
    eq(readdir_names("many"), sorted(names), "readdir of 600 names")
    for e in os.scandir("many"):
        if e.inode() != os.lstat(e.path).st_ino:
            FAIL(f"d_ino of {e.name}: {e.inode()}, st_ino {os.lstat(e.path).st_ino}")
            break
    # delete half while listing (database vacuum-like pattern): every survivor still listed once
    for n in names[::2]:
        os.unlink("many/" + n)
    eq(readdir_names("many"), sorted(names[1::2]), "readdir after deleting every second name")
    for n in names[1::2]:
        os.unlink("many/" + n)
    eq(os.listdir("many"), [], "readdir of an emptied directory")
    # names with commas, quotes, newlines, UTF-8, 255 bytes
    os.mkdir("names")
    for n in odd_names():
        write_file("names/" + n, n.encode())
    eq(readdir_names("names"), sorted(odd_names()), "readdir of odd names")
    err_is(lambda: write_file("names/" + "y" * 256, b""), errno.ENAMETOOLONG, "create of a 256-byte name (f_namemax is 255)")
    if os.path.lexists("names/" + "y" * 256):
        os.unlink("names/" + "y" * 256)
    d = "deep"
    for i in range(40):
        d += "/d%02d" % i
    os.makedirs(d)
    write_file(d + "/leaf", b"leaf")
    # the control directory: hidden from the root listing, reachable
    eq(".scatterfs" in os.listdir("."), False, ".scatterfs listed in the root")
    eq(stat.S_ISREG(os.stat(".scatterfs/stats").st_mode), True, "stat .scatterfs/stats is a regular file")

    # --- statfs -----------------------------------------------------------------
    sv = os.statvfs(".")
    eq(sv.f_frsize, 4096, "f_frsize")
    eq(sv.f_blocks * sv.f_frsize, 67108864, "f_blocks * f_frsize (the backing size)")
    s = stats()
    eq(sv.f_bfree * sv.f_frsize, s["free_bytes"], "f_bfree * f_frsize == stats free_bytes")
    eq(sv.f_bavail, sv.f_bfree, "f_bavail")
    eq(sv.f_namemax, 255, "f_namemax")
    write_file("statfs_probe", pattern(1048576))
    sv2 = os.statvfs(".")
    eq(sv.f_bfree - sv2.f_bfree, 256, "free blocks drop by 256 after writing 1 MiB")
    os.unlink("statfs_probe")
    wait_for(lambda: os.statvfs(".").f_bfree, sv.f_bfree, "free blocks come back after unlinking it")

def phase_check():
    # --- inode numbers: unique, recorded for the remount -------------------------
    inos = {}
    for root, dirs, files in os.walk("."):
        for n in dirs + files:
            p = os.path.normpath(os.path.join(root, n))
            inos[p] = os.lstat(p).st_ino
    inos["."] = os.stat(".").st_ino
    eq(inos["."], 1, "st_ino of the root")
    by_ino = {}
    for p, i in inos.items():
        by_ino.setdefault(i, []).append(p)
    dup = [v for v in by_ino.values() if len(v) > 1 and sorted(v) != ["h3", "h4"]]
    eq(dup, [], "paths sharing an st_ino (only h3/h4 should)")
    check_model("before remount")
    check_times("before remount (end)")
    check_xattrs("before remount (end)")
    json.dump({"inos": inos, "used": stats()["used_bytes"], "pm_mtime": os.stat("pm").st_mtime_ns,
               "pm_nlink": os.stat("pm").st_nlink}, open(STATE, "w"))

def phase_two():
    state = json.load(open(STATE))
    check_model("after remount")
    check_times("after remount")
    check_xattrs("after remount")
    eq(os.readlink("sl"), "attr", "readlink after remount")
    eq(os.readlink("sl_long")[:40], "component0000/component0001/component000", "long readlink after remount")
    eq(readdir_names("names"), sorted(odd_names()), "readdir of odd names after remount")
    eq(os.listdir("many"), [], "readdir of the emptied directory after remount")
    eq(".scatterfs" in os.listdir("."), False, ".scatterfs listed after remount")
    changed = {}
    for p, i in state["inos"].items():
        try:
            now = os.lstat(p).st_ino
        except OSError as x:
            changed[p] = str(x)
            continue
        if now != i:
            changed[p] = (i, now)
    eq(changed, {}, "st_ino changed across the remount (path: before, after)")
    eq(stats()["used_bytes"], state["used"], "used_bytes after remount")
    eq((os.stat("pm").st_mtime_ns, os.stat("pm").st_nlink), (state["pm_mtime"], state["pm_nlink"]),
       "mtime,nlink of a directory after mkdir in it, across the remount")
    sv = os.statvfs(".")
    eq(sv.f_bfree * sv.f_frsize, stats()["free_bytes"], "f_bfree after remount")
    # a new file after the remount gets a fresh inode number
    write_file("after_remount", b"new")
    new_ino = os.stat("after_remount").st_ino
    eq(new_ino in state["inos"].values(), False, "a new file reuses an inode number of a live file")
    os.unlink("after_remount")
    # h3 and h4 are still one inode with two names
    eq(os.stat("h3").st_ino, os.stat("h4").st_ino, "hard links after remount")
    os.unlink("h3")
    eq(os.stat("h4").st_nlink, 1, "nlink after unlinking one hard link after remount")
    os.link("h4", "h3")

def churn(i):
    d = f"churn/{i}"
    os.mkdir(d)
    for k in range(400):
        with open(f"{d}/f{k}", "wb") as f:
            f.write(b"x" * 100)
        os.unlink(f"{d}/f{k}")
    os.rmdir(d)

def phase_churn():
    """Parallel create/write/close/unlink: every inode and block comes back."""
    import multiprocessing
    os.mkdir("churn")
    s0 = stats()
    with multiprocessing.Pool(6) as p:
        p.map(churn, range(6))
    wait_for(lambda: (lambda s1: (s1["files"], s1["used_bytes"]))(stats()), (s0["files"], s0["used_bytes"]),
             "files,used_bytes after 6 processes each created, wrote, closed and unlinked 400 files (leaked inodes)")
    os.rmdir("churn")

{"one": phase_one, "check": phase_check, "two": phase_two, "churn": phase_churn}[phase]()
print(f"{nfail} failed checks")
PYEOF

umask 022

# --- first mount ------------------------------------------------------------
sfs_mount "$B" "$M" "$OPTS,log=$T/req.log,log.ops=read"
assert_eq "$(stat -c %s "$B")" "$BACKING_SIZE" "backing size"
run_py one

# shell redirection over an existing, longer file truncates it (O_TRUNC)
printf 'a much longer old content\n' >"$M/redir"
echo new >"$M/redir"
check_eq "$(cat "$M/redir")" new "content after 'echo new > file' over a longer file"
check_eq "$(stat -c %s "$M/redir")" 4 "size after 'echo new > file' over a longer file"
rm -f "$M/redir"

# the request log names a file by its current path, also after its directory was renamed
mkdir -p "$M/logdir/x"
echo logged >"$M/logdir/x/f"
mv "$M/logdir" "$M/logdir2"
cat "$M/logdir2/x/f" >/dev/null

run_py churn

# df and stat(1) on the mount
check_eq "$(df -B1 --output=size "$M" | tail -n 1 | tr -d ' ')" "$BACKING_SIZE" "df size"
check_eq "$(stat -f -c '%S %b' "$M")" "4096 $((BACKING_SIZE / 4096))" "stat -f block size and blocks"

# readdir of '.' and '..' with their inode numbers (ls -f keeps both)
check_eq "$(ls -a1f "$M/d1" | sort | tr '\n' ' ')" ". .. sub sub2 " "ls -a of d1"
check_eq "$(ls -a1 "$M" | grep -c '^\.scatterfs$' || true)" 0 ".scatterfs in ls -a of the root"
check_eq "$(ls -aif1 "$M/d1" | awk '$2 == ".." { print $1 }')" "$(stat -c %i "$M")" "d_ino of '..' in d1 (readdir)"
check_eq "$(ls -aif1 "$M/d1" | awk '$2 == "." { print $1 }')" "$(stat -c %i "$M/d1")" "d_ino of '.' in d1 (readdir)"
check_eq "$(find "$M" -mindepth 1 -maxdepth 1 -name .scatterfs | wc -l)" 0 "find lists .scatterfs"
check_ok "stat of the control dir" stat "$M/.scatterfs/stats"
check_ok "cat of the control dir stats" cat "$M/.scatterfs/config"

# The control directory is read-only, even for root.
stats_before=$(cat "$M/.scatterfs/stats" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["device_size"])')
check_fails "writing .scatterfs/stats" sh -c "echo x > '$M/.scatterfs/stats'"
check_fails "appending to .scatterfs/stats" sh -c "echo x >> '$M/.scatterfs/stats'"
check_fails "truncating .scatterfs/stats" truncate -s 0 "$M/.scatterfs/stats"
check_fails "creating a file in .scatterfs" touch "$M/.scatterfs/new"
check_fails "mkdir in .scatterfs" mkdir "$M/.scatterfs/newdir"
check_fails "rm of .scatterfs/stats" rm -f "$M/.scatterfs/stats"
check_fails "mv of .scatterfs/stats" mv "$M/.scatterfs/stats" "$M/stolen"
check_fails "chmod of .scatterfs/stats" chmod 666 "$M/.scatterfs/stats"
check_fails "touch -d of .scatterfs/stats" touch -d 2001-01-01 "$M/.scatterfs/stats"
check_fails "setxattr on .scatterfs/stats" python3 -c "import os; os.setxattr('$M/.scatterfs/stats', 'user.x', b'1')"
check_fails "mkdir .scatterfs in the root" mkdir "$M/.scatterfs"
check_fails "rmdir .scatterfs" rmdir "$M/.scatterfs"
check_fails "mv .scatterfs" mv "$M/.scatterfs" "$M/ctl"
check_eq "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device_size"])' "$M/.scatterfs/stats")" "$stats_before" "stats after the write attempts"
check_eq "$(python3 -c 'import os,sys; print(os.path.exists(sys.argv[1]))' "$M/stolen")" False "mv of .scatterfs/stats created a file"

# Ownership: files created by another user belong to that user (allow_other).
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
mkdir -m 1777 "$M/pub"
chmod 1777 "$M/pub"
check_ok "nobody creates a file" as_nobody sh -c "echo nobody > '$M/pub/by_nobody'"
check_ok "nobody makes a directory" as_nobody mkdir "$M/pub/dir_nobody"
check_ok "nobody makes a symlink" as_nobody ln -s by_nobody "$M/pub/sl_nobody"
check_eq "$(stat -c %u:%g "$M/pub/by_nobody" 2>&1)" 65534:65534 "owner of a file created by nobody"
check_eq "$(stat -c %u:%g "$M/pub/dir_nobody" 2>&1)" 65534:65534 "owner of a directory created by nobody"
check_eq "$(stat -c %u:%g "$M/pub/sl_nobody" 2>&1)" 65534:65534 "owner of a symlink created by nobody"
rm -f "$M/pub/sl_nobody"
check_fails "nobody writes root's 0644 file" as_nobody sh -c "echo x >> '$M/attr'"
check_fails "nobody chmods root's file" as_nobody chmod 777 "$M/h2"
check_fails "nobody creates in a 0750 root directory" as_nobody touch "$M/d1/x"
check_fails "nobody removes a root file from the sticky directory" sh -c "echo r > '$M/pub/rootfile' && setpriv --reuid=nobody --regid=nogroup --clear-groups rm -f '$M/pub/rootfile'"
rm -f "$M/pub/rootfile"
mkdir -m 2777 "$M/sgid"
chown 0:4321 "$M/sgid"
chmod 2777 "$M/sgid"
check_ok "nobody creates in a setgid directory" as_nobody touch "$M/sgid/by_nobody"
check_ok "nobody makes a directory in a setgid directory" as_nobody mkdir "$M/sgid/dir_nobody"
check_eq "$(stat -c '%u:%g %a' "$M/sgid/by_nobody" 2>&1)" "65534:4321 644" "file created by nobody in a setgid dir"
check_eq "$(stat -c '%u:%g %a' "$M/sgid/dir_nobody" 2>&1)" "65534:4321 2755" "dir created by nobody in a setgid dir"

# .scatterfs/extents for an odd name
check_ok "extents of a name with a comma" cat "$M/.scatterfs/extents/names/comma,name"

run_py check
before_umount_used=$(stat_field used_bytes)
sfs_umount "$M"

check_eq "$(sfs_log_rows "$T/req.log" read | sfs_log_awk "$T/req.log" '$f_path ~ /^logdir/ { print $f_path }' | sort -u | tr '\n' ' ')" "logdir2/x/f " \
	"request log paths of reads of logdir2/x/f (its directory was renamed from logdir)"

# --- remount: everything persists -------------------------------------------
sfs_mount "$B" "$M" "$OPTS"
run_py two
check_eq "$(stat_field used_bytes)" "$before_umount_used" "used_bytes after remount (shell)"
check_eq "$(TZ=UTC stat -c '%x|%y' "$M/touchd")" "2001-02-03 04:05:06.123456789 +0000|2001-02-03 04:05:06.123456789 +0000" "stat(1) times of touchd after remount"
check_eq "$(stat -c %u:%g "$M/pub/by_nobody" 2>&1)" 65534:65534 "owner of nobody's file after remount"
# one more cycle after the phase-two changes
sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS"
check_eq "$(stat -c '%h %i' "$M/h3")" "2 $(stat -c %i "$M/h4")" "h3 relinked after a second remount"
sfs_umount "$M"

if ((${#FAILS[@]})); then
	fail "${#FAILS[@]} failed checks:
$(printf '  - %s\n' "${FAILS[@]}")"
fi
note "ok"
