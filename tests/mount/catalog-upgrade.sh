#!/bin/bash
# A catalog made by the previous release (version 1: no device index on
# extents and gaps; tests/data/catalog-v1.sql is its .dump, made by
# scatterfs 0.1.0 with an interleaved layout, and backing-v1.gz its
# backing) opens unchanged: the files read back byte for byte, their
# extent maps, the hole, the symlink and the xattr are as they were, and
# the catalog is upgraded in place to version 3 (a dev column, 0 on every
# row, and the dirent_parent index).  A mount refused after the catalog
# was opened (here: a disk model whose capacity is below the backing's
# size) leaves the old catalog byte for byte as it was, still version 1.
# A version 2 catalog (no dirent_parent index: a directory's listing
# sorted all of its entries at each READDIR) is upgraded to 3 the same
# way, refused mount included, and its listing query then walks the index.
source "$(dirname "$0")/../lib.sh"
sfs_require sqlite3 python3

B=$SFS_TMP/backing
C=$B.scatterfs
M=$SFS_TMP/mnt
D=$SFS_ROOT/tests/data
gzip -dc "$D/backing-v1.gz" >"$B"
sqlite3 "$C" <"$D/catalog-v1.sql"
# As the daemon left it: in WAL mode.
sqlite3 "$C" "PRAGMA journal_mode = WAL" >/dev/null
# The catalog belongs to the backing it was made on: point it at this one.
sqlite3 "$C" "UPDATE meta SET value = '$(readlink -f "$B")' WHERE key = 'backing_path'"
assert_eq "$(sqlite3 "$C" "SELECT value FROM meta WHERE key = 'version'")" 1 "version of the fixture"
before=$(md5sum <"$C")

mkdir -p "$M"
if "$SFS_BIN" "$B" "$M" -f -o disk.model=hdd,disk.capacity=1M >"$SFS_TMP/refused.log" 2>&1; then
	fail "a disk capacity below the backing's size was accepted"
fi
grep -q "capacity = 1048576 bytes is smaller than the backing device" "$SFS_TMP/refused.log" ||
	fail "refused mount: unexpected message: $(cat "$SFS_TMP/refused.log")"
assert_eq "$(md5sum <"$C")" "$before" "catalog after a refused mount"
assert_eq "$(sqlite3 "$C" "SELECT value FROM meta WHERE key = 'version'")" 1 "version after a refused mount"

sfs_mount "$B" "$M" ""
assert_eq "$(md5sum "$M"/d/f1 "$M"/d/f2 "$M"/d/f3 | awk '{ print $1 }' | tr '\n' ' ')" \
	"2dc675b4769597dad4cacb53973e15e7 48eacd6d8002066fbfcf81ccfd6e891a 3b8571b6f4a7401d382a7a3af68808e3 " \
	"contents of the version 1 files"
assert_eq "$(sfs_extents "$M" d/f1 | tr '\n' ' ')" \
	"logical_offset,device_offset,length 0,0,16384 16384,32768,16384 32768,65536,16384 " \
	"extent map of d/f1"
assert_eq "$(readlink "$M/link")" "d/f1" "symlink"
assert_eq "$(python3 -c "import os; print(os.getxattr('$M/d/f3', 'user.k').decode())")" v "xattr"
# The punched hole of f2 (8 KiB at 8 KiB) is still a hole: 4 KiB blocks mapped = size - hole.
assert_eq "$(stat -c %b "$M/d/f2")" $(((3 * 16384 - 8192) / 512)) "blocks of d/f2 (with its hole)"
echo new >"$M/new"
sfs_umount "$M"

assert_eq "$(sqlite3 "$C" "SELECT value FROM meta WHERE key = 'version'")" 3 "version after the first mount"
assert_eq "$(sqlite3 "$C" "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'dirent_parent'")" 1 \
	"dirent_parent index after the upgrade from version 1"
assert_eq "$(sqlite3 "$C" "SELECT count(*) FROM pragma_table_info('extent') WHERE name = 'dev'") \
$(sqlite3 "$C" "SELECT count(*) FROM pragma_table_info('gap') WHERE name = 'dev'")" "1 1" "dev columns"
assert_eq "$(sqlite3 "$C" "SELECT count(*) FROM extent WHERE dev != 0") $(sqlite3 "$C" "SELECT count(*) FROM gap WHERE dev != 0")" \
	"0 0" "rows on a device other than main"
sfs_mount "$B" "$M" ""
assert_eq "$(cat "$M/new")" new "a file written after the upgrade"
assert_eq "$(md5sum <"$M/d/f3" | awk '{ print $1 }')" 3b8571b6f4a7401d382a7a3af68808e3 "d/f3 after a second mount"
sfs_umount "$M"

# --- version 2 -> 3 -----------------------------------------------------------
# A version 2 catalog as the previous release made it: this one's, with
# the index it did not have dropped.
B2=$SFS_TMP/backing2
C2=$B2.scatterfs
sfs_mount "$B2" "$M" "size=16M"
mkdir "$M/d"
for i in 1 2 3; do echo "$i" >"$M/d/f$i"; done
sfs_umount "$M"
sqlite3 "$C2" "DROP INDEX dirent_parent; UPDATE meta SET value = 2 WHERE key = 'version'"
sqlite3 "$C2" "PRAGMA journal_mode = WAL" >/dev/null
PLAN="EXPLAIN QUERY PLAN SELECT d.id, d.name, d.ino, i.mode FROM dirent d JOIN inode i ON i.ino = d.ino WHERE d.parent = 2 AND d.id > 0 ORDER BY d.id"
# The listing query of fs/catalog.c (S_READDIR), as version 2 plans it: a sort.
sqlite3 "$C2" "$PLAN" | grep -q "TEMP B-TREE FOR ORDER BY" || fail "version 2's listing plan has no sort: $(sqlite3 "$C2" "$PLAN")"
before=$(md5sum <"$C2")
if "$SFS_BIN" "$B2" "$M" -f -o disk.model=hdd,disk.capacity=1M >"$SFS_TMP/refused2.log" 2>&1; then
	fail "version 2: a disk capacity below the backing's size was accepted"
fi
assert_eq "$(md5sum <"$C2")" "$before" "version 2 catalog after a refused mount"
sfs_mount "$B2" "$M" ""
assert_eq "$(ls "$M/d" | tr '\n' ' ')" "f1 f2 f3 " "version 2: listing of d"
assert_eq "$(cat "$M/d/f2")" 2 "version 2: d/f2"
sfs_umount "$M"
assert_eq "$(sqlite3 "$C2" "SELECT value FROM meta WHERE key = 'version'")" 3 "version 2 catalog after a mount"
assert_eq "$(sqlite3 "$C2" "$PLAN" | grep -c "USING INDEX dirent_parent (parent=? AND id>?)") \
$(sqlite3 "$C2" "$PLAN" | grep -c "TEMP B-TREE")" "1 0" "upgraded listing plan: dirent_parent, no sort"
note ok
