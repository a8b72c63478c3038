#!/bin/bash
# POSIX ACLs (issue 16): stored as the system.posix_acl_access and
# system.posix_acl_default xattrs in the catalog, enforced by the kernel
# (FUSE_CAP_POSIX_ACL), kept after a remount:
#   - setfacl/getfacl round trip, exactly;
#   - an entry that denies nobody what the mode's "other" bits allow: nobody
#     gets EACCES, another user reads;
#   - an entry that grants nobody what the mode does not; the mode's group
#     bits follow the mask; a chmod rewrites the mask and takes it away;
#   - a directory's default ACL is inherited by a new file (masked by the
#     creating mode, the umask ignored) and by a new directory (access and
#     default); without a default ACL the umask applies;
#   - setfacl -b removes the ACL; system.* attributes other than the two
#     ACLs are still refused.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 setfacl getfacl runuser

T=$SFS_TMP
M=$T/mnt
B=$T/backing
OPTS="size=16M,device.block_size=4K,layout.extent_size=4K,allow_other"
id nobody >/dev/null 2>&1 || fail "no user nobody"
id daemon >/dev/null 2>&1 || fail "no user daemon"
FAILS=()
check_eq() { [[ $1 == "$2" ]] || FAILS+=("$3: got '$1', expected '$2'"); }
# as USER CMD... - the error of CMD run as USER ("ok" when it succeeds)
as() {
	local u=$1 out
	shift
	if out=$(runuser -u "$u" -- "$@" 2>&1 >/dev/null); then echo ok; else
		case $out in
		*"Permission denied"*) echo EACCES ;;
		*) echo "failed: $out" ;;
		esac
	fi
}
acl() { getfacl -cp "$1" 2>&1 | grep -v '^$'; }

sfs_mount "$B" "$M" "$OPTS"
cd "$M"
umask 022
mkdir d inherit
chmod 755 d
echo secret >d/f
chmod 644 d/f
echo shared >d/g
chmod 600 d/g

# 1. Deny nobody what "other" allows.
setfacl -m u:nobody:--- d/f || FAILS+=("setfacl -m u:nobody:--- d/f failed")
check_eq "$(acl d/f)" "$(printf '%s\n' user::rw- user:nobody:--- group::r-- mask::r-- other::r--)" "getfacl d/f"
check_eq "$(stat -c %a d/f)" 644 "mode of d/f with its ACL (group bits = mask)"
check_eq "$(as nobody cat d/f)" EACCES "nobody reads d/f"
check_eq "$(as daemon cat d/f)" ok "daemon reads d/f"

# 2. Grant nobody what the mode does not; chmod takes it away again.
check_eq "$(as nobody cat d/g)" EACCES "nobody reads d/g before its ACL"
setfacl -m u:nobody:rw d/g || FAILS+=("setfacl -m u:nobody:rw d/g failed")
check_eq "$(stat -c %a d/g)" 660 "mode of d/g after setfacl (group bits = mask rw-)"
check_eq "$(as nobody cat d/g)" ok "nobody reads d/g with its ACL"
check_eq "$(as nobody sh -c 'echo more >>d/g')" ok "nobody appends to d/g with its ACL"
check_eq "$(as daemon cat d/g)" EACCES "daemon reads d/g"
chmod 600 d/g
check_eq "$(acl d/g)" "$(printf '%s\n' user::rw- 'user:nobody:rw-	#effective:---' group::--- mask::--- other::---)" "getfacl d/g after chmod 600"
check_eq "$(as nobody cat d/g)" EACCES "nobody reads d/g after chmod 600"
chmod 660 d/g

# 3. Default ACLs are inherited; the umask gives way to them.
setfacl -d -m u:nobody:rwx,g::r-x,o::- inherit || FAILS+=("setfacl -d inherit failed")
check_eq "$(getfacl -cpd inherit | grep -v '^$')" "$(printf '%s\n' user::rwx user:nobody:rwx group::r-x mask::rwx other::---)" "default ACL of inherit"
(umask 077 && echo x >inherit/file && mkdir inherit/sub)
# (the expected values are what ext4 gives for the same commands)
check_eq "$(stat -c %a inherit/file)" 660 "mode of a file created (0666) under a default ACL, umask 077 ignored"
check_eq "$(acl inherit/file)" "$(printf '%s\n' user::rw- 'user:nobody:rwx	#effective:rw-' 'group::r-x	#effective:r--' 'mask::rw-' other::---)" "inherited ACL of inherit/file"
check_eq "$(stat -c %a inherit/sub)" 770 "mode of a directory created (0777) under a default ACL"
check_eq "$(getfacl -cpd inherit/sub | grep -v '^$')" "$(printf '%s\n' user::rwx user:nobody:rwx group::r-x mask::rwx other::---)" "default ACL inherited by inherit/sub"
check_eq "$(as nobody cat inherit/file)" ok "nobody reads inherit/file (inherited entry)"
check_eq "$(as daemon cat inherit/file)" EACCES "daemon reads inherit/file"
(umask 027 && echo y >d/masked && mkdir d/maskeddir)
check_eq "$(stat -c %a d/masked) $(stat -c %a d/maskeddir)" "640 750" "modes under umask 027 without a default ACL"
xattrs() { python3 -c 'import os, sys; print(" ".join(sorted(os.listxattr(sys.argv[1]))))' "$1"; }
check_eq "$(xattrs d/masked)" "" "xattrs of d/masked (no ACL: none inherited, none stored)"
check_eq "$(xattrs d/f)" "system.posix_acl_access" "xattrs of d/f"
check_eq "$(xattrs inherit/sub)" "system.posix_acl_access system.posix_acl_default" "xattrs of inherit/sub"

# 4. Other system.* attributes are still refused.
check_eq "$(python3 -c "import os
try:
    os.setxattr('d/f', 'system.other', b'1')
    print('ok')
except OSError as e:
    print(e.errno == 95 and 'EOPNOTSUPP' or e)")" EOPNOTSUPP "setxattr system.other"

# 5. After a remount.
cd /
sfs_umount "$M"
sfs_mount "$B" "$M" "$OPTS"
cd "$M"
check_eq "$(acl d/f)" "$(printf '%s\n' user::rw- user:nobody:--- group::r-- mask::r-- other::r--)" "getfacl d/f after a remount"
check_eq "$(as nobody cat d/f)" EACCES "nobody reads d/f after a remount"
check_eq "$(as daemon cat d/f)" ok "daemon reads d/f after a remount"
check_eq "$(as nobody cat inherit/file)" ok "nobody reads inherit/file after a remount"
check_eq "$(getfacl -cpd inherit | grep -v '^$')" "$(printf '%s\n' user::rwx user:nobody:rwx group::r-x mask::rwx other::---)" "default ACL of inherit after a remount"

# 6. setfacl -b removes it.
setfacl -b d/f
check_eq "$(acl d/f)" "$(printf '%s\n' user::rw- group::r-- other::r--)" "getfacl d/f after setfacl -b"
check_eq "$(as nobody cat d/f)" ok "nobody reads d/f after setfacl -b"
check_eq "$(xattrs d/f)" "" "xattrs of d/f after setfacl -b"
cd /
sfs_umount "$M"
((${#FAILS[@]} == 0)) || fail "$(printf '%s\n' "${FAILS[@]}")"
echo "PASS: acl"
