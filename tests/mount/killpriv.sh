#!/bin/bash
# A write by a caller without CAP_FSETID clears set-user-ID, and
# set-group-ID when the group can execute or the caller is not in the
# file's group, as ext4 does (issue 16; the kernel's file_remove_privs()),
# so that a modified program cannot keep its privilege.  Every expected
# mode below is what ext4 gave for the same commands on this machine:
#   - nobody appends to a root-owned 04777 file and to a 02777 file: both
#     lose the bit (0777);
#   - the same by fallocate and by copy_file_range;
#   - a 02767 file (group cannot execute) keeps set-group-ID when nobody is
#     in its group (nogroup), and loses it when not (root);
#   - nobody's write to its own 06777 file clears both (the owner has no
#     CAP_FSETID either);
#   - root's write (CAP_FSETID) keeps 06777;
#   - a failed or empty write changes nothing;
# and the cleared mode is in the catalog (after a remount).  Both cache
# modes (direct I/O, and the page cache's write-through).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 runuser

T=$SFS_TMP
M=$T/mnt
id nobody >/dev/null 2>&1 || fail "no user nobody"
FAILS=()
check_mode() { # FILE EXPECTED WHAT
	local got
	got=$(stat -c %a "$M/$1")
	[[ $got == "$2" ]] || FAILS+=("$mode: $3: mode of $1 is $got, expected $2")
}
as_nobody() { runuser -u nobody -- "$@"; }

for mode in "${SFS_CACHE_MODES[@]}"; do
	opts="size=16M,device.block_size=4K,layout.extent_size=4K,allow_other,$(sfs_cache_opts "$mode")"
	sfs_mount "$T/backing" "$M" "$opts"
	sfs_check_cache_mode "$M" "$mode"
	chmod 1777 "$M"
	for f in suid sgid sgid-noexec sgid-noexec-ingroup falloc cfr root-write empty; do
		echo data >"$M/$f"
	done
	chmod 4777 "$M/suid" "$M/falloc" "$M/cfr"
	chmod 2777 "$M/sgid"
	chmod 2767 "$M/sgid-noexec"
	chgrp nogroup "$M/sgid-noexec-ingroup"
	chmod 2767 "$M/sgid-noexec-ingroup"
	chmod 6777 "$M/root-write" "$M/empty"
	as_nobody sh -c "echo more >>'$M/own' && chmod 6777 '$M/own'"
	echo src >"$M/src"

	as_nobody sh -c "echo x >>'$M/suid'" || FAILS+=("$mode: nobody's append to suid failed")
	as_nobody sh -c "echo x >>'$M/sgid'" || FAILS+=("$mode: nobody's append to sgid failed")
	as_nobody sh -c "echo x >>'$M/sgid-noexec'" || FAILS+=("$mode: nobody's append to sgid-noexec failed")
	as_nobody sh -c "echo x >>'$M/sgid-noexec-ingroup'" || FAILS+=("$mode: nobody's append to sgid-noexec-ingroup failed")
	as_nobody fallocate -o 0 -l 8192 "$M/falloc" || FAILS+=("$mode: nobody's fallocate failed")
	as_nobody python3 -c "import os, sys
s = os.open(sys.argv[1], os.O_RDONLY)
d = os.open(sys.argv[2], os.O_WRONLY)  # O_APPEND: EBADF from copy_file_range
n = os.copy_file_range(s, d, 4, 0, 5)
assert n == 4, n" "$M/src" "$M/cfr" || FAILS+=("$mode: nobody's copy_file_range failed")
	as_nobody sh -c "echo x >>'$M/own'" || FAILS+=("$mode: nobody's append to its own file failed")
	echo x >>"$M/root-write"
	as_nobody python3 -c "import os, sys
d = os.open(sys.argv[1], os.O_WRONLY)
assert os.write(d, b'') == 0" "$M/empty" || FAILS+=("$mode: nobody's empty write failed")

	check_mode suid 777 "nobody appended"
	check_mode sgid 777 "nobody appended"
	check_mode sgid-noexec 767 "nobody appended (group cannot execute, nobody not in group root)"
	check_mode sgid-noexec-ingroup 2767 "nobody appended (group cannot execute, nobody in group nogroup)"
	check_mode falloc 777 "nobody's fallocate"
	check_mode cfr 777 "nobody's copy_file_range"
	check_mode own 777 "nobody appended to its own file"
	check_mode root-write 6777 "root appended"
	check_mode empty 6777 "nobody's empty write"
	[[ $(cat "$M/suid") == $'data\nx' ]] || FAILS+=("$mode: contents of suid: $(cat "$M/suid")")
	[[ $(cat "$M/cfr") == $'data\nsrc' ]] || FAILS+=("$mode: contents of cfr: $(cat "$M/cfr")")
	sfs_umount "$M"
	sfs_mount "$T/backing" "$M" "$opts"
	check_mode suid 777 "after a remount"
	check_mode sgid 777 "after a remount"
	check_mode own 777 "after a remount"
	check_mode root-write 6777 "after a remount"
	rm -f "$M"/*
	sfs_umount "$M"
done
((${#FAILS[@]} == 0)) || fail "$(printf '%s\n' "${FAILS[@]}")"
echo "PASS: killpriv"
