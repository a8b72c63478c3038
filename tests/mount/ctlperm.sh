#!/bin/bash
# The control directory honours the permissions of what it describes
# (issue 16): on a mount with allow_other, as nobody, listing
# .scatterfs/extents/private (root's 0700 directory) and reading the extent
# map of a 0600 file in it both fail with EACCES, as on the directory and
# the file themselves, while root, and then nobody once it owns them, read
# them; extents/ nodes carry owner, group and mode at once after a chmod
# or chown (before the catalog has them).  stats and config stay readable
# by everyone.  A new catalog and its -wal and -shm are 0600 under umask
# 022, and an existing catalog readable by others gets a one-line warning
# at mount.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
B=$T/backing
X=$M/.scatterfs/extents
id nobody >/dev/null 2>&1 || fail "no user nobody"

# errno_of USER OP PATH - what USER gets from OP (list or read) on PATH:
# OK and the result, or the errno's name.
errno_of() {
	runuser -u "$1" -- python3 -c '
import errno, os, sys
op, p = sys.argv[1], sys.argv[2]
try:
    if op == "list":
        print("OK", " ".join(sorted(os.listdir(p))))
    else:
        with open(p) as f:
            print("OK", f.read().replace("\n", "|"))
except OSError as e:
    print(errno.errorcode[e.errno])
' "$2" "$3"
}

umask 022
sfs_mount "$B" "$M" "size=64M,allow_other,device.block_size=4K,layout.extent_size=4K"
mkdir -m 0700 "$M/private"
printf 'secret' >"$M/private/f"
chmod 0600 "$M/private/f"
mkdir -m 0755 "$M/pub"
printf 'public' >"$M/pub/g"
chmod 0644 "$M/pub/g"
sync "$M/private/f"
for f in "$B.scatterfs" "$B.scatterfs-wal" "$B.scatterfs-shm"; do
	[[ -e $f ]] || fail "no $f after a write and an fsync"
	assert_eq "$(stat -c %a "$f")" 600 "mode of $f created under umask 022"
done

map_f=$(cat "$M/.scatterfs/extents/private/f")
map_g=$(cat "$M/.scatterfs/extents/pub/g")
[[ $map_f == 'logical_offset,device_offset,length'* ]] || fail "extent map of private/f: $map_f"

assert_eq "$(errno_of nobody list "$M/private")" EACCES "nobody lists private/"
assert_eq "$(errno_of nobody list "$X/private")" EACCES "nobody lists extents/private/"
assert_eq "$(errno_of nobody read "$X/private/f")" EACCES "nobody reads extents/private/f"
assert_eq "$(errno_of root list "$X/private")" "OK f" "root lists extents/private/"
assert_eq "$(errno_of root read "$X/private/f")" "OK ${map_f//$'\n'/|}|" "root reads extents/private/f"
assert_eq "$(errno_of nobody list "$X/pub")" "OK g" "nobody lists extents/pub/"
assert_eq "$(errno_of nobody read "$X/pub/g")" "OK ${map_g//$'\n'/|}|" "nobody reads extents/pub/g"
assert_eq "$(stat -c '%a %u %g %F' "$X/private" "$X/private/f" "$X/pub/g" | tr '\n' ';')" \
	"700 0 0 directory;600 0 0 regular file;644 0 0 regular file;" "mode, owner, group of extents/ nodes"
assert_eq "$(stat -c '%a %u %F' "$M/.scatterfs" "$M/.scatterfs/stats" "$M/.scatterfs/config" | tr '\n' ';')" \
	"555 0 directory;444 0 regular file;444 0 regular file;" "mode and owner of .scatterfs, stats and config"
[[ $(errno_of nobody read "$M/.scatterfs/stats") == OK* ]] || fail "nobody cannot read stats"
[[ $(errno_of nobody read "$M/.scatterfs/config") == OK* ]] || fail "nobody cannot read config"
note "nobody: EACCES on extents/private and extents/private/f; root reads both"

# A chmod and a chown show at once (the in-memory inode, not the catalog).
chmod 0755 "$M/private"
assert_eq "$(errno_of nobody list "$X/private")" "OK f" "nobody lists extents/private/ after chmod 0755"
assert_eq "$(errno_of nobody read "$X/private/f")" EACCES "nobody reads extents/private/f (still 0600)"
chmod 0700 "$M/private"
assert_eq "$(errno_of nobody list "$X/private")" EACCES "nobody lists extents/private/ after chmod 0700 again"
chown nobody "$M/private" "$M/private/f"
assert_eq "$(errno_of nobody list "$X/private")" "OK f" "nobody lists extents/private/ it owns"
assert_eq "$(errno_of nobody read "$X/private/f")" "OK ${map_f//$'\n'/|}|" "nobody reads extents/private/f it owns"
assert_eq "$(stat -c '%a %U' "$X/private/f")" "600 nobody" "extents/private/f after chown nobody"
# A directory's mirrors show its whole mode, the sticky and set-group-ID
# bits too (ext4's ls of a 1777 /tmp-like directory), as ls -ld of it.
pubmode=$(stat -c %a "$M/pub")
chmod 1777 "$M/pub"
assert_eq "$(stat -c %a "$X/pub" "$M/.scatterfs/layout/pub" | tr '\n' ' ')" "1777 1777 " "extents/pub and layout/pub of a 1777 directory"
chmod 2750 "$M/pub"
assert_eq "$(stat -c %a "$X/pub" "$M/.scatterfs/layout/pub" | tr '\n' ' ')" "2750 2750 " "extents/pub and layout/pub of a 2750 directory"
chmod "$pubmode" "$M/pub"
# Writes are still refused, whoever may write the file itself.
assert_eq "$(runuser -u nobody -- python3 -c '
import errno, os, sys
try:
    os.open(sys.argv[1], os.O_WRONLY)
    print("OK")
except OSError as e:
    print(errno.errorcode[e.errno])' "$X/private/f")" EROFS "nobody opens extents/private/f for writing"
note "chmod and chown follow at once; writes get EROFS"
sfs_umount "$M"

# No warning for our own 0600 catalog; one line for one readable by others.
sfs_mount "$B" "$M" "allow_other"
grep -q warning "$SFS_LAST_DLOG" && fail "a warning for a 0600 catalog: $(cat "$SFS_LAST_DLOG")"
sfs_umount "$M"
chmod 0644 "$B.scatterfs"
sfs_mount "$B" "$M" "allow_other"
assert_eq "$(grep -c warning "$SFS_LAST_DLOG")" 1 "warning lines at mount of a 0644 catalog"
assert_eq "$(grep warning "$SFS_LAST_DLOG")" \
	"scatterfs: warning: catalog $B.scatterfs is readable by other users (mode 0644) and holds every file's name, owner, size and extents: chmod 600 it" \
	"warning at mount of a 0644 catalog"
sfs_umount "$M"
note "a 0644 catalog: warned at mount"
