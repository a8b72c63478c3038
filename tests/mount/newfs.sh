#!/bin/bash
# TIMEOUT: 300
# A missing catalog over a backing that holds data (issue 24, item 5): the
# mount is refused with one line naming the backing, the offset of a
# non-zero byte and the catalog path it looked for, changes no byte and
# creates no file, unless -o newfs asks for a new file system.
#
#   - a 16 MiB file with 'x' from 5 MiB: refused, with and without size=32M
#     (the backing is not grown), and with a meta= typo beside a catalog
#     that exists (the message says the one beside it exists);
#   - -o newfs: mounted, one line on stderr saying what it overwrites, an
#     empty root; a remount without it mounts the new file system; a
#     remount with it is refused (nothing new to start);
#   - empty backings mount silently (stderr empty): sparse (truncate),
#     written with zeros (dd if=/dev/zero), fallocate'd, created by size=,
#     a 300 MiB loop device over a sparse file (sampled: 256 MiB read);
#   - data wherever it lies: 4 KiB of 'x' in the middle of a 300 MiB sparse
#     file (read whole: little data), the last 4 KiB of a 300 MiB loop
#     device (the end is read), 'x' from 3 MiB of a 16 MiB loop device:
#     refused, naming the offset; the loop device with -o newfs: mounted;
#   - [device "data"] the catalog does not know, over a backing with 'x'
#     from 2 MiB (a file, and a loop device): refused naming the device,
#     its backing and the catalog; with -o newfs mounted (and -o newfs is
#     then accepted with a catalog that exists, as it starts a device); an
#     empty one mounts silently; a new catalog with such a device is
#     refused and no catalog is left behind;
#   - -o moved: backings, catalog and configuration copied together to
#     another directory (cp --sparse=always: new paths, new inodes) are
#     refused with one line that names -o moved, and taken with it (f and
#     d/g read as written; the original still mounts); -o moved again is
#     refused (nothing moved), and so is the data device's backing copied
#     to a new name without it; -o moved without a catalog is refused and
#     leaves none; -o moved is refused for a backing with a catalog of its
#     own beside it (another file system's, with meta= naming a copied
#     catalog) and for a device backing that did not move while the file
#     system copied from still uses it (an absolute path in the copy's
#     INI).
#
# Every check is made and the failures are listed together, so that a run
# against the daemon before the fix shows each case failing.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require losetup fallocate

T=$SFS_TMP
M=$T/mnt
mkdir -p "$M"
MiB=1048576
PROBLEMS=()
problem() {
	PROBLEMS+=("$*")
	note "PROBLEM: $*"
}
LOOPS=()
sfs_on_exit 'for l in "${LOOPS[@]}"; do losetup -d "$l"; done'
# new_loop FILE - attaches FILE to a loop device, named in LOOP (and in
# LOOPS, detached at exit: not in a subshell, so that LOOPS keeps it)
new_loop() {
	LOOP=$(losetup -f --show "$1") || fail "losetup -f --show $1"
	LOOPS+=("$LOOP")
}

# xs OFFSET LENGTH FILE - writes LENGTH bytes of 'x' at OFFSET of FILE
xs() { head -c "$2" /dev/zero | tr '\0' x | dd of="$3" bs=4096 seek=$(($1 / 4096)) conv=notrunc status=none; }

# state - checksums and names of the files of $S (a refused mount changes
# nothing); $S is $T, or a directory of one large backing (read whole)
S=$T
state() {
	(cd "$S" && find . -maxdepth 1 -type f ! -name 'out.*' ! -name 'daemon.*' ! -name '*.ini' -printf '%f\n' |
		sort | while read -r f; do echo "$f $(stat -c %s "$f") $(sha256sum <"$f")"; done)
}

# refused TAG BACKING REGEX [OPTS] - refused with one line matching REGEX
# (an ERE), nothing mounted, nothing in $S changed or created
refused() {
	local tag=$1 backing=$2 re=$3 opts=${4:-} before rc=0 err=$T/out.$1
	before=$(state)
	timeout 60 "$SFS_BIN" "$backing" "$M" ${opts:+-o "$opts"} >/dev/null 2>"$err" </dev/null || rc=$?
	if sfs_is_mounted "$M"; then
		problem "$tag: mounted (exit $rc), expected a refusal; stderr: $(cat "$err")"
		fusermount3 -u "$M" || fusermount3 -u -z "$M"
		sleep 0.5
		return
	fi
	((rc != 0 && rc != 124)) || problem "$tag: exit $rc, expected a refusal"
	[[ $(wc -l <"$err") == 1 ]] || problem "$tag: $(wc -l <"$err") lines, expected one: $(cat "$err")"
	grep -Eq -- "$re" "$err" || problem "$tag: message does not match /$re/: $(cat "$err")"
	[[ $(state) == "$before" ]] || problem "$tag: the refused mount changed $S:
$before
--- after:
$(state)"
}

# accepted TAG BACKING OPTS STDERR - mounted (-f, in the background), with
# exactly STDERR (empty: silently) from the daemon; then unmounted, and the
# mount's root was empty ('empty') or holds NAME ('has NAME')
accepted() {
	local tag=$1 backing=$2 opts=$3 want=$4 root=${5:-empty} pid t out=$T/out.$1
	timeout 120 "$SFS_BIN" "$backing" "$M" -f ${opts:+-o "$opts"} >"$out" 2>&1 </dev/null &
	pid=$!
	for ((t = 0; t < 200; t++)); do
		sfs_is_mounted "$M" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if ! sfs_is_mounted "$M"; then
		wait "$pid" || true
		problem "$tag: not mounted; stderr: $(cat "$out")"
		return
	fi
	SFS_PID[$M]=$pid
	local listing
	listing=$(ls -A "$M")
	case $root in
	empty) [[ -z $listing ]] || problem "$tag: the new file system's root holds: $listing" ;;
	has\ *) [[ $listing == "${root#has }" ]] || problem "$tag: the root holds '$listing', expected '${root#has }'" ;;
	esac
	[[ $root != empty ]] || echo new >"$M/written"
	sfs_umount "$M"
	[[ $(cat "$out") == "$want" ]] || problem "$tag: the daemon said:
$(cat "$out")
expected:
${want:-(nothing)}"
}

note "main: a regular file that holds data"
B=$T/data.img
truncate -s 16M "$B"
xs $((5 * MiB)) $MiB "$B"
nocat="backing $B holds data \\(a non-zero byte at offset 5242880\\) but its catalog $B.scatterfs does not exist; refusing to start an empty file system over it: give its catalog with -o meta=FILE, or -o newfs to start a new file system on it \\(its data will be overwritten\\)$"
refused no-catalog "$B" "$nocat"
refused no-catalog-size "$B" "$nocat" size=32M
accepted newfs "$B" newfs "scatterfs: -o newfs: starting an empty file system on $B, whose data (non-zero from byte 5242880 on) it will overwrite; catalog $B.scatterfs is new"
accepted after-newfs "$B" "" "" "has written"
refused newfs-again "$B" "-o newfs: catalog $B.scatterfs exists and records every device of this mount; newfs starts a file system only where there is no catalog" newfs

note "main: a typo in meta="
refused meta-typo "$B" "backing $B holds data \\(a non-zero byte at offset 0\\) but its catalog $T/typo.scatterfs does not exist \\($B.scatterfs exists: is that its catalog\\?\\); refusing" "meta=$T/typo.scatterfs"

note "main: empty backings mount silently"
truncate -s 16M "$T/sparse.img"
accepted sparse "$T/sparse.img" "" ""
head -c 16M /dev/zero >"$T/zeros.img"
accepted zeros "$T/zeros.img" "" ""
fallocate -l 16M "$T/falloc.img"
accepted fallocated "$T/falloc.img" "" ""
accepted created "$T/created.img" size=16M ""

note "main: data wherever it lies"
S=$T/big1
mkdir "$S"
truncate -s 300M "$S/huge.img"
xs $((150 * MiB)) 4096 "$S/huge.img"
refused huge-middle "$S/huge.img" "backing $S/huge.img holds data \\(a non-zero byte at offset 157286400\\) but its catalog"
S=$T/big2
mkdir "$S"
truncate -s 300M "$S/tail.img"
xs $((300 * MiB - 4096)) 4096 "$S/tail.img"
new_loop "$S/tail.img"
L1=$LOOP
refused loop-tail "$L1" "backing $L1 holds data \\(a non-zero byte at offset $((300 * MiB - 4096))\\) but its catalog $S/l1.cat does not exist" "meta=$S/l1.cat"
S=$T
truncate -s 300M "$T/big2/big-sparse.img"
new_loop "$T/big2/big-sparse.img"
L2=$LOOP
accepted loop-empty "$L2" "meta=$T/big2/l2.cat" ""
truncate -s 16M "$T/loop-data.img"
xs $((3 * MiB)) $MiB "$T/loop-data.img"
new_loop "$T/loop-data.img"
L3=$LOOP
refused loop-data "$L3" "backing $L3 holds data \\(a non-zero byte at offset 3145728\\) but its catalog $T/l3.cat does not exist" "meta=$T/l3.cat"
accepted loop-newfs "$L3" "meta=$T/l3.cat,newfs" "scatterfs: -o newfs: starting an empty file system on $L3, whose data (non-zero from byte 3145728 on) it will overwrite; catalog $T/l3.cat is new"

note "a [device \"data\"] the catalog does not know"
truncate -s 16M "$T/dev-data.img"
xs $((2 * MiB)) $MiB "$T/dev-data.img"
truncate -s 16M "$T/dev-empty.img"
truncate -s 16M "$T/loop-dev.img"
xs $((2 * MiB)) $MiB "$T/loop-dev.img"
new_loop "$T/loop-dev.img"
L4=$LOOP
dev_ini() { # INI NAME BACKING
	printf '[device "%s"]\nbacking = %s\n[file "%s/*"]\ndevice = %s\n' "$2" "$3" "$2" "$2" >"$T/$1.ini"
}
dev_ini data data "$T/dev-data.img"
dev_ini loop data "$L4"
dev_ini spare spare "$T/dev-empty.img"
accepted main-only "$T/main.img" size=16M ""
dev_refused() { # TAG BACKING INI
	refused "$1" "$T/main.img" "device 'data': backing $2 holds data \(a non-zero byte at offset 2097152\) and catalog $T/main.img.scatterfs does not know the device; refusing to start a new device over it: name the backing this device had in \[device \"data\"\], or give -o newfs to start it empty \(its data will be overwritten\)$" "config=$T/$3.ini"
}
dev_refused dev-data "$T/dev-data.img" data
dev_refused dev-loop "$L4" loop
accepted dev-newfs "$T/main.img" "config=$T/data.ini,newfs" "scatterfs: -o newfs: device 'data' starts empty on backing $T/dev-data.img, whose data (non-zero from byte 2097152 on) it will overwrite" "has written"
refused dev-newfs-again "$T/main.img" "-o newfs: catalog $T/main.img.scatterfs exists and records every device of this mount" "config=$T/data.ini,newfs"
accepted dev-empty "$T/main.img" "config=$T/data.ini,config=$T/spare.ini" "" "has written"

note "a new catalog with a device that holds data: refused, no catalog left"
truncate -s 16M "$T/fresh.img" "$T/dev-data2.img"
xs $MiB 4096 "$T/dev-data2.img"
dev_ini data2 data2 "$T/dev-data2.img"
refused new-catalog-dev-data "$T/fresh.img" "device 'data2': backing $T/dev-data2.img holds data \(a non-zero byte at offset 1048576\) and catalog $T/fresh.img.scatterfs does not know the device" "config=$T/data2.ini"

note "-o moved: backings and catalog copied together to another directory"
A=$T/moved-a C=$T/moved-c
mkdir -p "$A" "$C"
printf '[device "data"]\nbacking = d.img\nsize = 16M\n[file "d/*"]\ndevice = data\n' >"$A/c.ini"
sfs_mount "$A/b" "$M" "size=16M,config=$A/c.ini"
mkdir "$M/d"
echo hi >"$M/f"
echo yo >"$M/d/g"
sfs_umount "$M"
cp --sparse=always "$A/b" "$A/b.scatterfs" "$A/c.ini" "$A/d.img" "$C/"
S=$C
refused moved-without "$C/b" "^scatterfs: $C/b\.scatterfs belongs to backing $A/b, not to $C/b; give that backing, or the right meta=FILE for this one \(backing and catalog moved or copied together: -o moved\)$" "config=$C/c.ini"
accepted moved "$C/b" "config=$C/c.ini,moved" "" $'has d\nf'
refused moved-again "$C/b" "^scatterfs: -o moved: catalog $C/b\.scatterfs records each backing of this mount at its path already: drop -o moved$" "config=$C/c.ini,moved"
sfs_mount "$C/b" "$M" "config=$C/c.ini"
[[ $(cat "$M/f") == hi && $(cat "$M/d/g") == yo ]] || problem "moved: the copy does not read f and d/g as written"
sfs_umount "$M"
sfs_mount "$A/b" "$M" "config=$A/c.ini"
[[ $(cat "$M/f") == hi && $(cat "$M/d/g") == yo ]] || problem "moved: the original does not read f and d/g as written"
sfs_umount "$M"
cp --sparse=always "$C/d.img" "$C/d2.img"
rm "$C/d.img"
sed -i 's/^backing = d\.img$/backing = d2.img/' "$C/c.ini"
refused moved-device "$C/b" "^scatterfs: device 'data': backing $C/d2\.img is not the one this catalog records for it \($C/d\.img\); give that backing, or another catalog \(meta=FILE\) for this one \(backings and catalog moved or copied together: -o moved\)$" "config=$C/c.ini"
accepted moved-device "$C/b" "config=$C/c.ini,moved" "" $'has d\nf'
truncate -s 16M "$C/new.img"
refused moved-nocatalog "$C/new.img" "^scatterfs: -o moved: there is no catalog $C/new\.img\.scatterfs to take: drop -o moved$" moved
# What -o moved takes must be a copy of this file system alone: not a
# backing with a catalog of its own beside it (another file system's) ...
X=$T/moved-x
mkdir "$X"
sfs_mount "$X/b" "$M" "size=16M"
echo x >"$M/x"
sfs_umount "$M"
cp "$A/b.scatterfs" "$X/a.db"
S=$X
refused moved-own-catalog "$X/b" "^scatterfs: -o moved: device 'main': backing $X/b has a catalog of its own beside it \($X/b\.scatterfs\), so it is another file system's, not a copy of the one catalog $X/a\.db records; give each file system its own backings$" "meta=$X/a.db,config=$A/c.ini,moved"
# ... nor a device backing that did not move while the file system it was
# copied from still uses it (an absolute backing path in the copy's INI)
P=$T/moved-p
mkdir "$P"
cp --sparse=always "$A/b" "$A/b.scatterfs" "$P/"
printf '[device "data"]\nbacking = %s\n[file "d/*"]\ndevice = data\n' "$A/d.img" >"$P/c.ini"
S=$P
refused moved-shared-device "$P/b" "^scatterfs: -o moved: device 'data': backing $A/d\.img did not move, and the file system this one was copied from \($A/b, catalog $A/b\.scatterfs\) still uses it: copy it too and name the copy in \[device \"data\"\]$" "config=$P/c.ini,moved"

((${#PROBLEMS[@]} == 0)) || fail "${#PROBLEMS[@]} problems:
$(printf '  %s\n' "${PROBLEMS[@]}")"
note "refused over data without a catalog, accepted with -o newfs, silent when empty"
