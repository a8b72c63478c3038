#!/bin/bash
# The mount works from /etc/fstab as type fuse.scatterfs: install with
# meson (scatterfs on PATH, as mount.fuse3 looks it up there), mount an
# fstab line with mount -T (a private fstab), write, unmount with umount,
# remount, read back.  The installation is removed at exit.
source "$(dirname "$0")/../lib.sh"
sfs_require meson ninja python3

[[ -f $SFS_BUILD/build.ninja ]] || fail "no build directory $SFS_BUILD"
meson install -C "$SFS_BUILD" --quiet >"$SFS_TMP/install.log" 2>&1 || fail "meson install failed: $(tail -5 "$SFS_TMP/install.log")"
sfs_on_exit "ninja -C '$SFS_BUILD' uninstall"
prefix=$(meson introspect "$SFS_BUILD" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
[[ -x $prefix/bin/scatterfs ]] || fail "scatterfs not installed in $prefix/bin"
[[ -f $prefix/share/scatterfs/contiguous.ini ]] || fail "conf files not installed in $prefix/share/scatterfs"

mnt=$SFS_TMP/mnt
mkdir -p "$mnt"
echo "$SFS_TMP/backing $mnt fuse.scatterfs size=64M,config=$prefix/share/scatterfs/contiguous.ini,noauto 0 0" >"$SFS_TMP/fstab"
sfs_on_exit "umount -l '$mnt'"

mount -T "$SFS_TMP/fstab" "$mnt" || fail "mount -T fstab failed"
assert_eq "$(sfs_fstype "$mnt")" fuse.scatterfs "fstype after mount from fstab"
echo "from fstab" >"$mnt/file"
umount "$mnt" || fail "umount failed"
# The daemon exits after the unmount; wait for it to release the backing.
for ((t = 0; t < 300; t++)); do
	fuser -s "$SFS_TMP/backing" 2>/dev/null || break
	sleep 0.1
done
fuser -s "$SFS_TMP/backing" 2>/dev/null && fail "the daemon still holds the backing 30 s after umount"
mount -T "$SFS_TMP/fstab" "$mnt" || fail "second mount -T fstab failed"
assert_eq "$(cat "$mnt/file")" "from fstab" "file contents after remount"
umount "$mnt" || fail "second umount failed"
note "ok"
