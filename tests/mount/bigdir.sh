#!/bin/bash
# A directory of 20,000 entries lists correctly (correctness, not timing;
# bench/dirs times 100,000 against ext4): ls -f gives every name exactly
# once, and "." and ".."; telldir(3) positions taken during a listing
# lead seekdir(3) back to the same entry, and from there to the same
# rest of the listing; names removed in the middle of a listing leave
# every other name listed exactly once (POSIX leaves the removed ones
# unspecified); the listing is the same after a remount, and rm -r
# empties the directory.
# TIMEOUT: 600
source "$(dirname "$0")/../lib.sh"
sfs_require python3

N=20000
B=$SFS_TMP/backing
M=$SFS_TMP/mnt
sfs_mount "$B" "$M" "size=256M"
python3 - "$M/d" "$N" <<'PY' || fail "creating $N files"
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.mkdir(d)
for i in range(n):
    # names of every length up to 255 bytes: each 97th a long one
    name = "f%05d" % i + ("x" * (200 + i % 50) if i % 97 == 0 else "")
    os.close(os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
PY
python3 - "$N" >"$SFS_TMP/expected" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    print("f%05d" % i + ("x" * (200 + i % 50) if i % 97 == 0 else ""))
PY
sort "$SFS_TMP/expected" >"$SFS_TMP/expected.sorted"

check_listing() {
	local what=$1
	ls -f "$M/d" >"$SFS_TMP/ls"
	assert_eq "$(wc -l <"$SFS_TMP/ls")" $((N + 2)) "$what: entries of ls -f (N + . and ..)"
	assert_eq "$(grep -cx '\.\|\.\.' "$SFS_TMP/ls")" 2 "$what: . and .. listed"
	grep -vx '\.\|\.\.' "$SFS_TMP/ls" | sort >"$SFS_TMP/ls.sorted"
	assert_eq "$(uniq -d "$SFS_TMP/ls.sorted" | wc -l)" 0 "$what: names listed more than once"
	cmp -s "$SFS_TMP/ls.sorted" "$SFS_TMP/expected.sorted" ||
		fail "$what: the names listed are not the names created: $(diff "$SFS_TMP/ls.sorted" "$SFS_TMP/expected.sorted" | head -5)"
}
check_listing "after the creates"

# telldir/seekdir through libc (ctypes): the position of each entry, then
# 500 positions chosen at random, each read back, and from one of them on
# to the end.
out=$(python3 - "$M/d" <<'PY'
import ctypes, random, sys

libc = ctypes.CDLL(None, use_errno=True)

class Dirent(ctypes.Structure):  # glibc's struct dirent on 64-bit Linux
    _fields_ = [("d_ino", ctypes.c_uint64), ("d_off", ctypes.c_int64),
                ("d_reclen", ctypes.c_ushort), ("d_type", ctypes.c_ubyte),
                ("d_name", ctypes.c_char * 256)]

libc.opendir.restype = ctypes.c_void_p
libc.opendir.argtypes = [ctypes.c_char_p]
libc.readdir.restype = ctypes.POINTER(Dirent)
libc.readdir.argtypes = [ctypes.c_void_p]
libc.telldir.restype = ctypes.c_long
libc.telldir.argtypes = [ctypes.c_void_p]
libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
libc.closedir.argtypes = [ctypes.c_void_p]

def read_one(dp):
    e = libc.readdir(dp)
    return e.contents.d_name.decode() if e else None

dp = libc.opendir(sys.argv[1].encode())
pos, names = [], []
while True:
    p = libc.telldir(dp)
    n = read_one(dp)
    if n is None:
        break
    pos.append(p)
    names.append(n)
rng = random.Random(7)
bad = 0
for k in rng.sample(range(len(names)), 500):
    libc.seekdir(dp, pos[k])
    if read_one(dp) != names[k]:
        bad += 1
k = len(names) // 3
libc.seekdir(dp, pos[k])
rest = []
while (n := read_one(dp)) is not None:
    rest.append(n)
libc.seekdir(dp, pos[0])
again = read_one(dp)
libc.closedir(dp)
print(len(names), len(set(names)), bad, int(rest == names[k:]), int(again == names[0]))
PY
) || fail "telldir/seekdir: $out"
assert_eq "$out" "$((N + 2)) $((N + 2)) 0 1 1" \
	"telldir/seekdir: entries, distinct, wrong entries after seekdir, rest from a seekdir, back to the start"

# Removing half of the names in the middle of a listing.
out=$(python3 - "$M/d" <<'PY'
import os, sys
d = sys.argv[1]
it = os.scandir(d)
seen = [next(it).name for _ in range(5000)]
removed = set()
for n in sorted(os.listdir(d))[1::2]:
    os.unlink(os.path.join(d, n))
    removed.add(n)
seen += [e.name for e in it]
kept = set(os.listdir(d))
dup = len(seen) - len(set(seen))
missing = len(kept - set(seen))
print(len(removed), len(kept), dup, missing)
PY
) || fail "removal during a listing: $out"
assert_eq "$out" "$((N / 2)) $((N / 2)) 0 0" \
	"removal during a listing: removed, kept, names listed twice, kept names not listed"
awk 'NR % 2 == 1' "$SFS_TMP/expected.sorted" >"$SFS_TMP/kept"
cp "$SFS_TMP/kept" "$SFS_TMP/expected.sorted"
N=$((N / 2))
check_listing "after removing half"

sfs_umount "$M"
sfs_mount "$B" "$M" ""
check_listing "after a remount"
rm -r "$M/d" || fail "rm -r of the directory"
assert_eq "$(ls -A "$M" | wc -l)" 0 "entries of the root after rm -r"
sfs_umount "$M"
note ok
