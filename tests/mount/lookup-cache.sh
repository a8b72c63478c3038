#!/bin/bash
# A name's absence is cached as its presence is, and a close costs no
# FLUSH, in every cache mode (tests/lib.sh SFS_CACHE_MODES):
#
# - 50 stat(2)s of a missing name make one LOOKUP (the daemon answers
#   ENOENT as a negative entry, valid as long as a positive one: 60 s);
#   before, each made one (SQLite looks for its journal at every
#   transaction);
# - 50 open(2)s and close(2)s of a file make no FLUSH: the daemon has
#   nothing to do at close, so each open says FOPEN_NOFLUSH, which the
#   kernel ignores under its write-back cache, and the daemon answers the
#   first FLUSH it gets with ENOSYS, after which the kernel sends none (it
#   still writes dirty pages back at close: the bytes are checked after a
#   remount);
# - every operation that makes a name (open with O_CREAT, with and without
#   O_EXCL, mkdir, mknod, symlink, link, rename onto it) works on a name
#   whose absence the kernel cached, and every operation that removes one
#   (unlink, rmdir, rename away) leaves the name missing, and creatable
#   again.
# The requests are counted in the daemon's own debug output (-d: one
# "opcode:" line a request, with the directory's node ID).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing

cat >"$T/names.py" <<'PYEOF'
import errno, os, stat, sys

d = os.path.join(sys.argv[1], "d")
fails = []


def p(n):
    return os.path.join(d, n)


def missing(n, when):
    try:
        os.lstat(p(n))
        fails.append(f"{n}: exists {when}")
    except FileNotFoundError:
        pass


def is_(n, test, what):
    try:
        if not test(os.lstat(p(n)).st_mode):
            fails.append(f"{n}: not a {what}")
    except OSError as e:
        fails.append(f"{n}: lstat after creating a {what}: {errno.errorcode[e.errno]}")


with open(p("src"), "w") as f:
    f.write("src")
makers = [
    ("creat", lambda n: os.close(os.open(p(n), os.O_WRONLY | os.O_CREAT, 0o644)), stat.S_ISREG, "file"),
    ("excl", lambda n: os.close(os.open(p(n), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)), stat.S_ISREG, "file"),
    ("mkdir", lambda n: os.mkdir(p(n)), stat.S_ISDIR, "directory"),
    ("mknod", lambda n: os.mkfifo(p(n)), stat.S_ISFIFO, "FIFO"),
    ("symlink", lambda n: os.symlink("src", p(n)), stat.S_ISLNK, "symbolic link"),
    ("link", lambda n: os.link(p("src"), p(n)), stat.S_ISREG, "file"),
]
for name, make, test, what in makers:
    missing(name, "before creating it")  # the kernel now caches its absence
    missing(name, "before creating it (cached)")
    try:
        make(name)
    except OSError as e:
        fails.append(f"{name}: creating a {what} over a cached absence: {errno.errorcode[e.errno]}")
        continue
    is_(name, test, what)
    if test is stat.S_ISDIR:
        os.rmdir(p(name))
    else:
        os.unlink(p(name))
    missing(name, "after removing it")
    missing(name, "after removing it (cached)")
    try:
        make(name)
        is_(name, test, what)
    except OSError as e:
        fails.append(f"{name}: creating it again: {errno.errorcode[e.errno]}")

# rename onto a cached absence, then away from the name
missing("moved", "before the rename")
with open(p("mv"), "w") as f:
    f.write("mv")
os.rename(p("mv"), p("moved"))
missing("mv", "after renaming it away")
with open(p("moved")) as f:
    if f.read() != "mv":
        fails.append("moved: not the renamed file's bytes")
with open(p("mv"), "w") as f:
    f.write("again")
with open(p("mv")) as f:
    if f.read() != "again":
        fails.append("mv: not the bytes written after the rename")

print("\n".join(fails) if fails else "ok")
PYEOF

# COUNT: 50 stats of a missing name, then 50 opens and closes of a file
# written first (its pages still dirty at the first close)
cat >"$T/count.py" <<'PYEOF'
import os, sys
d = os.path.join(sys.argv[1], "c")
for _ in range(50):
    try:
        os.stat(os.path.join(d, "absent"))
        sys.exit("absent exists")
    except FileNotFoundError:
        pass
f = os.path.join(d, "f")
with open(f, "w") as o:
    o.write("written before the closes")
for _ in range(50):
    os.close(os.open(f, os.O_RDONLY))
PYEOF

for mode in "${SFS_CACHE_MODES[@]}"; do
	rm -f "$B" "$B.scatterfs"
	sfs_mount "$B" "$M" "size=64M,$(sfs_cache_opts "$mode")" -d
	sfs_check_cache_mode "$M" "$mode"
	mkdir "$M/c" "$M/d"
	cino=$(stat -c %i "$M/c")
	python3 "$T/count.py" "$M" || fail "$mode: count.py failed"
	out=$(python3 "$T/names.py" "$M") || fail "$mode: names.py failed: $out"
	assert_eq "$out" ok "$mode: operations on names whose absence the kernel cached"
	dlog=${SFS_DLOG[$M]}
	sfs_umount "$M"
	lookups=$(grep -c "opcode: LOOKUP (1), nodeid: $cino," "$dlog" || true)
	flushes=$(grep -c "opcode: FLUSH (25)" "$dlog" || true)
	# c's lookups: "absent" once (50 before), "f" once before open creates it
	assert_eq "$lookups" 2 "$mode: LOOKUPs in c for 50 stats of a missing name"
	# one FLUSH in all: the first close on the mount (the stats file's,
	# read by sfs_check_cache_mode), answered ENOSYS; then none (before,
	# under the write-back cache, one a close)
	assert_eq "$flushes" 1 "$mode: FLUSH requests for 50 closes, and those of names.py"
	sfs_mount "$B" "$M" "size=64M,$(sfs_cache_opts "$mode")"
	assert_eq "$(cat "$M/c/f")" "written before the closes" "$mode: c/f after a remount"
	assert_eq "$(cat "$M/d/moved")" mv "$mode: d/moved after a remount"
	sfs_umount "$M"
done
echo "PASS: lookup-cache"
