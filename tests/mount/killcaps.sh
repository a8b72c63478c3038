#!/bin/bash
# TIMEOUT: 360
# A change of a file's data or owner removes its file capability
# (security.capability) as ext4 does (issue 24, item 1; the kernel's
# file_remove_privs() and ATTR_KILL_PRIV), whoever makes it, root included,
# and set-user-ID and set-group-ID as tests/mount/killpriv.sh says, through
# the same code (fs/ops.c, kill_priv()).
#
# Each operation below starts from a fresh root-owned file of 5,100 bytes,
# mode 06777, with `setcap cap_dac_read_search+ep`, in a 1777 directory;
# after it, a fresh getcap process, stat and the bytes say what is left.
# Every expected row is what ext4 gave for the same commands on this
# machine (6.18 kernel, a loop-mounted ext4): writes of every kind
# (write(2), O_APPEND, pwritev, O_DIRECT, copy_file_range, sendfile,
# splice), truncate to any size (shrink, grow, the same size), an O_TRUNC
# open (of an empty file too), fallocate in every mode scatterfs does
# (allocate, inside the file, keep-size, punch hole, zero range), chown and
# chgrp (to the same owner, and chown(-1, -1)) all remove the capability,
# by nobody and by root; an empty write, a store into a shared mapping, a
# chmod, touch, setfacl, a read or an open for writing keep it.  The
# first copy_file_range of a mount reaches the daemon as
# FUSE_COPY_FILE_RANGE, which it does not implement (ENOSYS); the kernel
# then copies every later one itself, by splicing into writes: both kinds
# are here.  A
# fallocate mode scatterfs refuses (collapse range: EOPNOTSUPP) changes
# nothing, ext4 does it.  Set-id bits follow killpriv.sh's rule (root
# keeps them, CAP_FSETID), the O_TRUNC open included.
#
# In both cache modes (none: FOPEN_DIRECT_IO, where the kernel leaves it
# all to the daemon; kernel: the page cache), on the main device and on a
# second one ([device "second"], [file "dev2/*"] device = second).  Then
# the exploit of the issue, on each device: a copy of cat(1), 0777, with
# cap_dac_read_search+ep reads a root-only 0600 file on a -o suid mount;
# nobody overwrites it in place with its own bytes (dd conv=notrunc); the
# capability is gone, from a fresh getcap and from exec (EACCES), and it is
# still gone after a remount.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 setpriv setcap getcap setfacl fallocate dd xfs_io

T=$SFS_TMP
M=$T/mnt
id nobody >/dev/null 2>&1 || fail "no user nobody"
getent group nogroup >/dev/null || fail "no group nogroup"
cat >"$T/two.ini" <<EOF
[device "second"]
backing = second.img
size = 32M
[file "dev2/*"]
device = second
EOF
# as nobody: setpriv, not runuser (no PAM session: a third of the time)
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
SECRET=$T/secret
echo "only root reads this" >"$SECRET"
chmod 0600 "$SECRET"
as_nobody cat "$SECRET" >/dev/null 2>&1 && fail "nobody reads the 0600 $SECRET without a capability"

# NAME|USER|EXPECTED (capability mode size)|COMMAND ($F is the file; USER
# nobody or root)
OPS=(
	"write|nobody|none 777 5100|printf XX | dd of=\"\$F\" conv=notrunc status=none"
	"write-root|root|none 6777 5100|printf XX | dd of=\"\$F\" conv=notrunc status=none"
	"append|nobody|none 777 5102|printf XX >>\"\$F\""
	"pwritev|nobody|none 777 5100|xfs_io -c 'pwrite -V 2 -b 2 -S 0x61 10 4' \"\$F\""
	"odirect|nobody|none 777 5100|dd if=/dev/zero of=\"\$F\" bs=4096 count=1 oflag=direct conv=notrunc status=none"
	"empty-write|nobody|kept 6777 5100|python3 -c 'import os; d = os.open(os.environ[\"F\"], os.O_WRONLY); assert os.write(d, b\"\") == 0'"
	"copy_file_range|nobody|none 777 5100|xfs_io -c \"copy_range -s 0 -d 5 -l 4 \$F.src\" \"\$F\""
	"copy_file_range-again|nobody|none 777 5100|xfs_io -c \"copy_range -s 0 -d 5 -l 4 \$F.src\" \"\$F\""
	"sendfile|nobody|none 777 5100|xfs_io -c \"sendfile -i \$F.src 0 4\" \"\$F\""
	"splice|nobody|none 777 5100|python3 -c 'import os; r, w = os.pipe(); os.write(w, b\"abcd\"); d = os.open(os.environ[\"F\"], os.O_WRONLY); assert os.splice(r, d, 4) == 4'"
	"truncate-same|nobody|none 777 5100|truncate -s 5100 \"\$F\""
	"truncate-shrink|nobody|none 777 100|truncate -s 100 \"\$F\""
	"ftruncate-grow|nobody|none 777 100000|xfs_io -c 'truncate 100000' \"\$F\""
	"truncate-root|root|none 6777 100|truncate -s 100 \"\$F\""
	"o_trunc|nobody|none 777 0|: >\"\$F\""
	"o_trunc-empty|nobody|none 777 0|: >\"\$F\""
	"o_trunc-root|root|none 6777 0|: >\"\$F\""
	"fallocate|nobody|none 777 8192|fallocate -o 0 -l 8192 \"\$F\""
	"fallocate-inside|nobody|none 777 5100|fallocate -o 0 -l 4096 \"\$F\""
	"fallocate-keep-size|nobody|none 777 5100|fallocate -n -o 0 -l 65536 \"\$F\""
	"punch-hole|nobody|none 777 5100|fallocate -p -o 0 -l 4096 \"\$F\""
	"zero-range|nobody|none 777 5100|fallocate -z -o 0 -l 4096 \"\$F\""
	"fallocate-root|root|none 6777 8192|fallocate -o 0 -l 8192 \"\$F\""
	"collapse-range|nobody|kept 6777 5100|fallocate -c -o 0 -l 4096 \"\$F\" 2>&1 | grep -q 'Operation not supported'"
	"mmap-store|nobody|kept 6777 5100|xfs_io -c 'mmap -w 0 4096' -c 'mwrite -S 0x5a 0 2' -c 'msync 0 4096' \"\$F\""
	"chown|root|none 777 5100|chown nobody \"\$F\""
	"chown-same|root|none 777 5100|chown root \"\$F\""
	"chgrp|root|none 777 5100|chgrp nogroup \"\$F\""
	"chown-none|root|none 777 5100|python3 -c 'import os; os.chown(os.environ[\"F\"], -1, -1)'"
	"chmod|root|kept 755 5100|chmod 0755 \"\$F\""
	"touch|nobody|kept 6777 5100|touch \"\$F\""
	"setfacl|root|kept 6777 5100|setfacl -m u:nobody:rw \"\$F\""
	"read|nobody|kept 6777 5100|cat \"\$F\" >/dev/null"
	"open-for-write|nobody|kept 6777 5100|exec 3<>\"\$F\""
)
# The first bytes the writing operations leave (the rest keep BODY's).
declare -A HEAD=([write]=XXllo [write-root]=XXllo [pwritev]="hello worlaaaa2"
	[copy_file_range]=hellosrcdl [copy_file_range-again]=hellosrcdl [sendfile]=srcdo [splice]=abcdo)
FAILS=()
BODY=$(printf 'hello world 0123\n%.0s' {1..300}) # 5,100 bytes with its newline

# run_ops DIR - every operation of OPS on a fresh file in DIR.  The files
# are made ready together and inspected together (one setcap, one getcap,
# one stat), so that the operations themselves are most of the processes.
run_ops() {
	local d=$1 line name user want cmd f got rc caps=() names=()
	local -A rcs=() kept=() st=()
	for line in "${OPS[@]}"; do
		IFS='|' read -r name user want cmd <<<"$line"
		f=$d/$name
		if [[ $name == o_trunc-empty ]]; then : >"$f"; else echo "$BODY" >"$f"; fi
		echo srcdata >"$f.src"
		names+=("$f")
		caps+=(cap_dac_read_search+ep "$f")
	done
	chmod 6777 "${names[@]}"
	setcap "${caps[@]}"
	for line in "${OPS[@]}"; do
		IFS='|' read -r name user want cmd <<<"$line"
		rc=0
		if [[ $user == root ]]; then
			F=$d/$name sh -c "$cmd" >/dev/null 2>&1 || rc=$?
		else
			as_nobody env F="$d/$name" sh -c "$cmd" >/dev/null 2>&1 || rc=$?
		fi
		rcs[$name]=$rc
	done
	# A fresh getcap process: the kernel keeps no xattr of a FUSE file.
	while read -r f _; do kept[$f]=1; done < <(getcap "${names[@]}")
	while read -r f got; do st[$f]=$got; done < <(stat -c '%n %a %s' "${names[@]}")
	for line in "${OPS[@]}"; do
		IFS='|' read -r name user want cmd <<<"$line"
		f=$d/$name
		got="$([[ -n ${kept[$f]:-} ]] && echo kept || echo none) ${st[$f]}"
		[[ $got == "$want" ]] ||
			FAILS+=("$mode $d: $name by $user: capability, mode, size: got '$got', expected '$want' (ext4)")
		# libfuse 3.14 cannot offer a shared mapping of a direct-I/O file
		# (mmap fails with ENODEV: nothing stored), a daemon that says
		# FUSE_DIRECT_IO_ALLOW_MMAP can; the capability stays either way.
		if [[ $name == mmap-store && $mode == none && $(<"$f") == "$BODY" ]]; then
			note "$mode: $name: no shared mapping of a direct-I/O file (nothing stored)"
		elif [[ $name == mmap-store ]]; then
			[[ $(head -c 2 "$f") == ZZ ]] || FAILS+=("$mode $d: $name: the store did not reach the file")
		else
			((rcs[$name] == 0)) || FAILS+=("$mode $d: $name by $user failed (status ${rcs[$name]})")
		fi
		[[ $name != odirect ]] || cmp -s -n 4096 "$f" /dev/zero ||
			FAILS+=("$mode $d: $name: the first 4096 bytes are not the zeros written")
		if [[ -n ${HEAD[$name]:-} ]]; then
			got=$(head -c "${#HEAD[$name]}" "$f")
			[[ $got == "${HEAD[$name]}" ]] || FAILS+=("$mode $d: $name: the file starts '$got', expected '${HEAD[$name]}'")
		fi
	done
}

# exploit DIR - the issue's exploit; the capability must not survive
exploit() {
	local d=$1 p=$1/cat out
	cp /usr/bin/cat "$p"
	chmod 0777 "$p"
	setcap cap_dac_read_search+ep "$p"
	out=$(as_nobody "$p" "$SECRET" 2>&1) ||
		fail "$mode $d: cat with cap_dac_read_search cannot read $SECRET before the write ($out): is the mount nosuid?"
	assert_eq "$out" "only root reads this" "$mode $d: what the capable cat reads"
	as_nobody dd if=/usr/bin/cat of="$p" conv=notrunc status=none
	cmp -s /usr/bin/cat "$p" || FAILS+=("$mode $d: the overwritten cat differs from /usr/bin/cat")
	[[ -z $(getcap "$p") ]] || FAILS+=("$mode $d: after nobody's overwrite getcap says: $(getcap "$p")")
	out=$(as_nobody "$p" "$SECRET" 2>&1) && FAILS+=("$mode $d: nobody's overwritten cat still reads $SECRET")
	[[ $out == "$p: $SECRET: Permission denied" ]] ||
		FAILS+=("$mode $d: the overwritten cat: '$out', expected '$p: $SECRET: Permission denied'")
}

for mode in "${SFS_CACHE_MODES[@]}"; do
	opts="config=$T/two.ini,size=64M,device.block_size=4K,layout.extent_size=4K,allow_other,suid,$(sfs_cache_opts "$mode")"
	sfs_mount "$T/backing" "$M" "$opts"
	sfs_check_cache_mode "$M" "$mode"
	chmod 1777 "$M"
	mkdir -m 1777 "$M/main" "$M/dev2"
	run_ops "$M/main"
	run_ops "$M/dev2"
	assert_eq "$(cut -d, -f4 "$M/.scatterfs/extents/dev2/write" | sort -u | tr '\n' ' ')" "device second " \
		"$mode: the device column of dev2/write's extents"
	assert_eq "$(cut -d, -f4 "$M/.scatterfs/extents/main/write" | sort -u | tr '\n' ' ')" "device main " \
		"$mode: the device column of main/write's extents"
	note "$mode: ${#OPS[@]} operations on each device, ${#FAILS[@]} failures so far"
	exploit "$M/main"
	exploit "$M/dev2"
	sfs_umount "$M"
	sfs_mount "$T/backing" "$M" "$opts"
	for f in main/cat dev2/cat main/write dev2/write main/o_trunc dev2/fallocate; do
		[[ -z $(getcap "$M/$f") ]] || FAILS+=("$mode: $f has a capability again after a remount")
	done
	for f in main/chmod dev2/empty-write; do
		[[ -n $(getcap "$M/$f") ]] || FAILS+=("$mode: $f lost its capability at the remount")
	done
	rm -rf "${M:?}/main" "$M/dev2"
	sfs_umount "$M"
done
((${#FAILS[@]} == 0)) || fail "$(printf '%s\n' "${FAILS[@]}")"
echo "PASS: killcaps"
