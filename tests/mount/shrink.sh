#!/bin/bash
# TIMEOUT: 600
# A backing shrunk under a mounted file system (issue 24, item 3), for
# every kind of device I/O (the spliced read libfuse takes from the
# backing, the kernel's readahead in cache.mode = kernel, polled and
# queued O_DIRECT reads, an overwrite, a zero-fill), on main and on a
# [device "data"] that [file "d/*"] rules, each over a regular file and
# over a loop block device (its file truncated, then losetup -c):
#
#   - 16 MiB backing, a 12 MiB file 'big' at device [0, 12M), remounted
#     (an empty page cache), then the backing cut to 4 MiB;
#   - a regular-file backing is leased (.scatterfs/stats backing_leased
#     true; a loop device false) until another process opens it: in the
#     splice cases the cut is truncate(1), whose first O_NONBLOCK open
#     fails with EAGAIN on the lease and breaks it, and a later truncate
#     cuts (retried while the daemon releases the lease); in the others a
#     plain open for writing breaks it (and waits for its release), an
#     overwrite at 1 MiB still succeeds, and then truncate(1) cuts at
#     once; backing_leased is false after either;
#   - a 64 KiB read at 8 MiB fails with EIO, one at 0 reads the file's
#     bytes; a 64 KiB overwrite at 9 MiB fails with EIO; a new file 'late'
#     whose first extent (12 MiB on) must be zero-filled fails with EIO;
#   - the request log: every read row of big reaching past 4 MiB has
#     result -5 (there is one at least), the write row at 9 MiB -5, late's
#     extend and write rows -5; .scatterfs/stats: backing_shrinks 1, and
#     past_end_errors (and the device's ios_past_end) equal to those rows;
#   - the daemon's log says "shrank from 16777216 to 4194304 bytes" once
#     (on an idle mount the sync thread says it within 5 s: checked once);
#   - the backing is still 4 MiB (a write did not grow it back);
#   - a remount, with or without size= (a file) or size = 64M in the
#     device's section, is refused with one line naming the device, the
#     backing, and the files 'big' and 'late', and changes no byte of the
#     backings and the catalog, and creates no file.
# Then seven 1 MiB files on an 8 MiB backing cut to 1 MiB: the refusal
# names five and "and 1 more".  Last, grown back: a backing cut to 4 MiB,
# seen, then grown to 16 MiB again (as a write racing the cut grows it):
# spliced, plain, polled and queued reads at 5 or 8 MiB and an overwrite at
# 9 MiB still fail with EIO.  And a backing on a FUSE file system is not
# leased; a lease the kernel revokes from a stopped daemon is reported.
# Created anew: a backing removed and made again, empty, at its size
# (rm, truncate -s: ext4 may even give it the same inode number), on main
# and on [device "data"]: the mount is refused with one line naming the
# device, the backing and the file that had data there, and changes
# nothing; sparse copies of the old backings put back in their place are
# taken, and the files read their bytes.  A sparse copy of a file system
# whose one file holds written zeros is refused the same way, and a copy
# made with cp --sparse=never, as the refusal says, is taken.
#
# Every check of every case is made and the failures are listed together,
# so that a run against the daemon before the fix shows each case failing.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

# truncate_leased SIZE FILE - truncate(1) of a backing whose write lease
# the daemon is giving up: until the daemon has released it (a lease break
# waits for the writes in flight, slower under ASan), truncate's
# O_NONBLOCK open fails with EAGAIN again, so it is retried for up to 10 s
truncate_leased() {
	local i
	for ((i = 0; i < 100; i++)); do
		truncate -s "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	truncate -s "$1" "$2"
}
sfs_require python3 losetup blockdev

T=$SFS_TMP
M=$T/mnt
MiB=1048576
PROBLEMS=()
problem() {
	PROBLEMS+=("$*")
	note "PROBLEM: $*"
}
LOOPS=()
sfs_on_exit 'for l in "${LOOPS[@]}"; do losetup -d "$l"; done'

# state DIR - checksums and names of what DIR holds (a refused mount changes nothing)
state() {
	(cd "$1" && find . -maxdepth 1 -type f ! -name 'refused*' ! -name 'req.csv' -printf '%f\n' | sort |
		while read -r f; do sha256sum "$f"; done)
}

# refused TAG DIR BACKING REGEX [OPTS] - the mount is refused with one line
# matching REGEX, mounts nothing and changes nothing in DIR
refused() {
	local tag=$1 dir=$2 backing=$3 re=$4 opts=${5:-} before rc=0 err=$2/refused.${1//\//-}
	before=$(state "$dir")
	timeout 60 "$SFS_BIN" "$backing" "$M" ${opts:+-o "$opts"} >/dev/null 2>"$err" </dev/null || rc=$?
	if sfs_is_mounted "$M"; then
		problem "$tag: the mount was accepted (exit $rc): $(cat "$err")"
		fusermount3 -u "$M" || fusermount3 -u -z "$M"
		return
	fi
	((rc != 0 && rc != 124)) || problem "$tag: exit $rc, expected a refusal"
	[[ $(wc -l <"$err") == 1 ]] || problem "$tag: $(wc -l <"$err") lines, expected one: $(cat "$err")"
	grep -Eq -- "$re" "$err" || problem "$tag: message does not match /$re/: $(cat "$err")"
	[[ $(state "$dir") == "$before" ]] || problem "$tag: the refused mount changed $dir:
$before
--- after:
$(state "$dir")"
}

# stats_of DEVICE - backing_shrinks, past_end_errors, DEVICE's ios_past_end,
# polled_reads and async_reads from .scatterfs/stats, -1 for a missing one
# (one python3: it is slow to start on a loaded machine)
stats_of() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
d = s["devices"][sys.argv[2]]
print(*(o.get(k, -1) for o, k in ((s, "backing_shrinks"), (s, "past_end_errors"),
      (d, "ios_past_end"), (s, "polled_reads"), (s, "async_reads"))))' "$M/.scatterfs/stats" "$1"
}

# leased_of DEVICE - DEVICE's backing_leased in .scatterfs/stats (True/False)
leased_of() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["devices"][sys.argv[2]].get("backing_leased"))' "$M/.scatterfs/stats" "$1"
}

# expect_eio TAG CMD... - CMD fails, saying "Input/output error"
expect_eio() {
	local tag=$1 out
	shift
	if out=$("$@" 2>&1); then
		problem "$tag: succeeded, expected EIO"
	elif [[ $out != *"Input/output error"* ]]; then
		problem "$tag: failed otherwise than with EIO: $out"
	fi
}

# run_case KIND WHERE MODE IO - KIND file|loop, WHERE main|data, MODE
# none|kernel (cache.mode), IO splice|polled|queued
run_case() {
	local kind=$1 where=$2 mode=$3 io=$4 tag="$1/$2/$3/$4" C target dev back cat P=''
	local opts ini direct=false loop='' sizeopt='' idle=${5:-}
	C=$T/${tag//\//-}
	mkdir -p "$C"
	target=$C/target.img
	dev=$target
	if [[ $kind == loop ]]; then
		truncate -s 16M "$target"
		loop=$(losetup -f --show "$target") || fail "$tag: losetup"
		LOOPS+=("$loop")
		dev=$loop
	fi
	[[ $io == splice ]] || direct=true
	{
		printf '[layout]\npattern = contiguous\nextent_size = 1M\n[cache]\nmode = %s\n' "$mode"
		printf '[log]\nops = read,write,extend\n'
	} >"$C/c.ini"
	opts="config=$C/c.ini,log=$C/req.csv"
	# Queued reads belong to /dev/fuse's workers (a ring thread reads its
	# device itself): transport=dev, whatever enable_uring says.
	[[ $io == queued ]] && opts+=",device.async_reads=always,transport=dev"
	[[ $io == polled ]] && opts+=",device.poll_us=200" # polling is off by default
	if [[ $where == main ]]; then
		back=$dev
		opts+=",device.direct=$direct"
		if [[ $kind == loop ]]; then
			cat=$C/main.cat
			opts+=",meta=$cat"
		else
			cat=$target.scatterfs
			sizeopt=size=16M
		fi
	else
		back=$C/main.img
		cat=$back.scatterfs
		P=d/
		sizeopt=size=16M
		ini_dev() { # SIZE-LINE
			printf '[device "data"]\nbacking = %s\ndirect = %s\n%b[file "d/*"]\ndevice = data\n' \
				"$dev" "$direct" "$1"
		}
		[[ $kind == file ]] && ini_dev 'size = 16M\n' >>"$C/c.ini" || ini_dev '' >>"$C/c.ini"
	fi
	local devname=$where
	note "case $tag"
	sfs_mount "$back" "$M" "$opts${sizeopt:+,$sizeopt}"
	[[ -z $P ]] || mkdir "$M/d"
	head -c $((12 * MiB)) /dev/urandom >"$C/src"
	dd if="$C/src" of="$M/${P}big" bs=1M status=none || fail "$tag: writing big"
	local ends
	ends=$(awk -F, 'NR > 1 { e = $2 + $3 } END { print e }' "$M/.scatterfs/extents/${P}big")
	[[ $ends == $((12 * MiB)) ]] || fail "$tag: big's extents end at device byte $ends, expected $((12 * MiB))"
	sfs_umount "$M"
	# A fresh mount: nothing of big in the kernel's page cache.
	sfs_mount "$back" "$M" "$opts"
	local dlog=$SFS_LAST_DLOG want=False out hold
	[[ $kind == file ]] && want=True
	[[ $(leased_of "$devname") == "$want" ]] || problem "$tag: backing_leased $(leased_of "$devname") after the mount, expected $want"
	if [[ $kind == loop ]]; then
		truncate -s 4M "$target"
	elif [[ $io == splice ]]; then
		# The lease refuses truncate(1)'s O_NONBLOCK open once, and is gone.
		if out=$(truncate -s 4M "$target" 2>&1); then
			problem "$tag: the first truncate(1) of the leased backing succeeded, expected EAGAIN"
		elif [[ $out != *"Resource temporarily unavailable"* ]]; then
			problem "$tag: the first truncate(1) of the leased backing: '$out', expected EAGAIN"
		fi
		[[ $(stat -c %s "$target") == $((16 * MiB)) ]] || problem "$tag: the refused truncate(1) cut the backing"
		truncate_leased 4M "$target"
	else
		# A plain open breaks the lease; writes within the backing go on.
		exec {hold}<>"$target"
		dd if=/dev/zero of="$M/${P}big" bs=64K seek=16 count=1 conv=notrunc status=none ||
			problem "$tag: an overwrite at 1 MiB after the lease was broken failed"
		truncate -s 4M "$target"
		exec {hold}>&-
	fi
	[[ $(leased_of "$devname") == False ]] || problem "$tag: backing_leased $(leased_of "$devname") after another process opened the backing, expected False"
	[[ -z $loop ]] || losetup -c "$loop"
	[[ -z $loop ]] || [[ $(blockdev --getsize64 "$loop") == $((4 * MiB)) ]] ||
		fail "$tag: $loop is $(blockdev --getsize64 "$loop") bytes after losetup -c"
	if [[ -n $idle ]]; then
		local t
		for ((t = 0; t < 80; t++)); do
			grep -q 'shrank' "$dlog" && break
			sleep 0.1
		done
		grep -q 'shrank' "$dlog" || problem "$tag: no shrink report within 8 s on an idle mount"
	fi

	expect_eio "$tag: 64 KiB read at 8 MiB" dd if="$M/${P}big" of=/dev/null bs=64K skip=128 count=1 status=none
	cmp <(dd if="$M/${P}big" bs=64K count=1 status=none) <(head -c 65536 "$C/src") ||
		problem "$tag: the first 64 KiB of big (within the backing) differ"
	expect_eio "$tag: 64 KiB overwrite at 9 MiB" dd if=/dev/zero of="$M/${P}big" bs=64K seek=144 count=1 conv=notrunc status=none
	expect_eio "$tag: a new file's first write (a zero-fill past the end)" \
		dd if=<(printf x) of="$M/${P}late" status=none
	[[ $(stat -c %s "$target") == $((4 * MiB)) ]] ||
		problem "$tag: $target is $(stat -c %s "$target") bytes after the writes, expected $((4 * MiB)) (grown back)"

	local L=$C/req.csv shrinks past dpast polled queued rows_read bad_read w_row l_ext l_w
	read -r shrinks past dpast polled queued < <(stats_of "$devname")
	# The reads took the path the case is about (the two reads at least).
	case $io in
	polled) ((polled >= 2)) || problem "$tag: polled_reads $polled, expected 2 or more" ;;
	queued) ((queued >= 2)) || problem "$tag: async_reads $queued, expected 2 or more" ;;
	esac
	sfs_umount "$M"
	# Read rows of big that reach past 4 MiB: all -5, at least one.
	rows_read=$(sfs_log_awk "$L" -v p="${P}big" -v e=$((4 * MiB)) \
		'NR > 1 && $f_op == "read" && $f_path == p && $f_offset + $f_size > e && $f_result == -5' "$L" | wc -l)
	bad_read=$(sfs_log_awk "$L" -v p="${P}big" -v e=$((4 * MiB)) \
		'NR > 1 && $f_op == "read" && $f_path == p && $f_offset + $f_size > e && $f_result != -5' "$L" | wc -l)
	((rows_read >= 1)) || problem "$tag: no read row of big past 4 MiB with result -5"
	[[ $bad_read == 0 ]] || problem "$tag: $bad_read read rows of big past 4 MiB without result -5:
$(sfs_log_rows "$L" read "${P}big")"
	w_row=$(sfs_log_awk "$L" -v p="${P}big" 'NR > 1 && $f_op == "write" && $f_path == p && $f_offset == 9437184 { print $f_result }' "$L")
	[[ $w_row == -5 ]] || problem "$tag: the write row of big at 9437184: result '$w_row', expected -5"
	l_ext=$(sfs_log_rows "$L" extend "${P}late" | sfs_log_awk "$L" '{ print $f_result }')
	l_w=$(sfs_log_rows "$L" write "${P}late" | sfs_log_awk "$L" '{ print $f_result }')
	[[ $l_ext == -5 && $l_w == -5 ]] || problem "$tag: late's extend and write rows: results '$l_ext' and '$l_w', expected -5 and -5"
	[[ $shrinks == 1 ]] || problem "$tag: stats backing_shrinks $shrinks, expected 1"
	[[ $past == $((rows_read + 2)) && $dpast == "$past" ]] ||
		problem "$tag: stats past_end_errors $past and device $devname's ios_past_end $dpast, expected $((rows_read + 2)) (read rows $rows_read, the overwrite, the zero-fill)"
	local said
	said=$(grep -c "scatterfs: device '$devname': backing $dev shrank from 16777216 to 4194304 bytes under the mounted file system" "$dlog" || true)
	[[ $said == 1 && $(grep -c shrank "$dlog") == 1 ]] ||
		problem "$tag: the daemon said $said times (and $(grep -c shrank "$dlog") lines of 'shrank') that the backing shrank, expected once:
$(cat "$dlog")"

	local re="device '$devname': backing $dev has 4194304 bytes, but catalog $cat has extents up to byte 13631488 of it, in 2 files: '${P}big', '${P}late'; their data past the backing's end is gone"
	refused "$tag-remount" "$C" "$back" "$re" "${opts}"
	if [[ $kind == file ]]; then
		if [[ $where == main ]]; then
			refused "$tag-remount-size" "$C" "$back" "$re" "$opts,size=64M"
		else
			sed -i 's/^size = 16M$/size = 64M/' "$C/c.ini"
			refused "$tag-remount-size" "$C" "$back" "$re" "$opts,size=16M"
		fi
	fi
	# One loop device at a time: the case's own, attached above.
	[[ -z $loop ]] || { losetup -d "$loop" && LOOPS=(); }
}

first=idle
for kind in file loop; do
	for where in main data; do
		for mi in none/splice kernel/splice none/polled none/queued; do
			run_case "$kind" "$where" "${mi%/*}" "${mi#*/}" $first
			first=
		done
	done
done

note "seven files, six past the end"
C=$T/many
mkdir "$C"
sfs_mount "$C/b" "$M" "size=8M,layout.pattern=contiguous,layout.extent_size=1M"
for i in 1 2 3 4 5 6 7; do
	head -c $MiB /dev/urandom >"$M/f$i"
done
sfs_umount "$M"
truncate -s 1M "$C/b"
refused many "$C" "$C/b" "device 'main': backing $C/b has 1048576 bytes, but catalog $C/b.scatterfs has extents up to byte 7340032 of it, in 6 files: 'f2', 'f3', 'f4', 'f5', 'f6' and 1 more; "

# Created anew (the backing's birth time differs from the one the catalog
# recorded) and empty: every file with extents there would read zeros.
note "case recreated"
C=$T/recreated
mkdir "$C"
printf '[device "data"]\nbacking = d.img\nsize = 16M\n[file "d/*"]\ndevice = data\n' >"$C/c.ini"
sfs_mount "$C/b" "$M" "size=16M,config=$C/c.ini"
mkdir "$M/d"
echo hello >"$M/f"
echo world >"$M/d/g"
: >"$M/empty"
sfs_umount "$M"
mkdir "$T/recreated-copies"
for dev in main data; do
	back=$C/b file=f
	[[ $dev == main ]] || back=$C/d.img file=d/g
	cp --sparse=always "$back" "$T/recreated-copies/$dev"
	rm "$back"
	truncate -s 16M "$back"
	refused "recreated/$dev" "$C" "$C/b" "^scatterfs: device '$dev': backing $back is a new file \(created since catalog $C/b\.scatterfs last saw it\) and holds no data, but the catalog has extents on it in 1 file: '$file'; they would read as zeros: restore the backing the catalog belongs to \(a copy whose files held only zeros: copy it again without holes, cp --sparse=never, not tar -S or rsync -S\), or move the catalog away to start an empty file system\$" "config=$C/c.ini"
	cp --sparse=always "$T/recreated-copies/$dev" "$back"
done
sfs_mount "$C/b" "$M" "config=$C/c.ini"
[[ $(cat "$M/f") == hello && $(cat "$M/d/g") == world && ! -s $M/empty ]] ||
	problem "recreated: the restored copies do not read f, d/g and empty as written"
sfs_umount "$M"
# A file system whose only file holds written zeros: a sparse copy put in
# place holds no data and is refused; a copy made as the message says
# (cp --sparse=never) is taken.
C=$T/recreated-zeros
mkdir "$C"
sfs_mount "$C/b" "$M" "size=16M"
head -c $MiB /dev/zero >"$M/zeros"
sfs_umount "$M"
cp --sparse=always "$C/b" "$T/recreated-copies/zeros"
rm "$C/b"
cp --sparse=always "$T/recreated-copies/zeros" "$C/b"
refused "recreated/zeros" "$C" "$C/b" "^scatterfs: device 'main': backing $C/b is a new file .* in 1 file: 'zeros'; they would read as zeros: .*cp --sparse=never, not tar -S or rsync -S\), or move the catalog away to start an empty file system\$"
rm "$C/b"
cp --sparse=never "$T/recreated-copies/zeros" "$C/b"
sfs_mount "$C/b" "$M"
cmp -s "$M/zeros" <(head -c $MiB /dev/zero) || problem "recreated/zeros: the copy made with cp --sparse=never does not read 1 MiB of zeros"
sfs_umount "$M"
# The other way out the message names: the user meant to start again, so
# the catalog is moved away (with its -wal and -shm, if any) and the new
# backing mounts as an empty file system.
rm "$C/b"
truncate -s 16M "$C/b"
mkdir "$C/old"
mv "$C/b.scatterfs"* "$C/old/"
sfs_mount "$C/b" "$M"
[[ -z $(ls -A "$M") ]] || problem "recreated/fresh: the catalog moved away, the mount is not empty: $(ls -A "$M")"
sfs_umount "$M"

# Grown back: a write that passed its size check just before the cut
# (or truncate -s by hand) grows the backing again, with zeros where the
# data was.  Once the shrink is seen, every I/O past the size it was seen
# at still fails with EIO (spliced, plain, polled and queued reads, an
# overwrite), as the shrink's report says.
for io in splice polled queued; do
	tag=grown/$io C=$T/grown-$io
	mkdir "$C"
	opts="layout.pattern=contiguous,layout.extent_size=1M,device.direct=$([[ $io == splice ]] && echo false || echo true)"
	[[ $io == queued ]] && opts+=",device.async_reads=always,transport=dev"
	[[ $io == polled ]] && opts+=",device.poll_us=200"
	note "case $tag"
	sfs_mount "$C/b" "$M" "size=16M,$opts"
	head -c $((12 * MiB)) /dev/urandom >"$M/big"
	sfs_umount "$M"
	sfs_mount "$C/b" "$M" "$opts"
	truncate_leased 4M "$C/b"
	expect_eio "$tag: 64 KiB read at 8 MiB" dd if="$M/big" of=/dev/null bs=64K skip=128 count=1 status=none
	truncate -s 16M "$C/b"
	expect_eio "$tag: 64 KiB read at 8 MiB, grown back" dd if="$M/big" of=/dev/null bs=64K skip=128 count=1 status=none
	[[ $io == queued ]] && expect_eio "$tag: 4 parallel reads at 5 MiB, grown back" \
		python3 -c 'import os, sys, threading
fd = os.open(sys.argv[1], os.O_RDONLY)
errs = []
def rd(i):
    try: os.pread(fd, 65536, (80 + i) * 65536)
    except OSError as e: errs.append(e)
ts = [threading.Thread(target=rd, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
if errs: sys.exit(str(errs[0]))' "$M/big"
	expect_eio "$tag: 64 KiB overwrite at 9 MiB, grown back" dd if=/dev/zero of="$M/big" bs=64K seek=144 count=1 conv=notrunc status=none
	cmp <(dd if="$M/big" bs=64K count=1 status=none) <(dd if="$C/b" bs=64K count=1 status=none) ||
		problem "$tag: the first 64 KiB of big (within the backing) differ from the backing's"
	sfs_umount "$M"
done

# A backing on a FUSE file system (here another scatterfs mount): the
# kernel grants the lease, but the FUSE server (virtiofs' host, sshfs'
# remote) can cut the file without breaking it, so no lease: the size is
# checked (with a lease, a write at 9 MiB after the lower file was cut to
# 4 MiB succeeded and grew it back; seen with a passthrough server).
note "case fuse-lower"
C=$T/fuse-lower
mkdir -p "$C/lower"
sfs_mount "$C/a" "$C/lower" "size=64M"
sfs_mount "$C/lower/b" "$M" "size=16M"
[[ $(leased_of main) == False ]] || problem "fuse-lower: backing_leased $(leased_of main) on a FUSE lower file system, expected False"
sfs_umount "$M"
sfs_umount "$C/lower"

# The kernel revokes the lease of a stopped daemon after lease-break-time
# (1 s here, restored at once): the truncate goes on while writes that
# skipped the size check may be in progress, so the daemon says so, once;
# a lease released in time (the truncate(1)s above) says nothing.
note "case revoked"
C=$T/revoked
mkdir -p "$C"
sfs_mount "$C/b" "$M" "size=16M"
[[ $(leased_of main) == True ]] || problem "revoked: backing_leased $(leased_of main), expected True"
lbt=$(cat /proc/sys/fs/lease-break-time)
sfs_on_exit "echo $lbt >/proc/sys/fs/lease-break-time"
echo 1 >/proc/sys/fs/lease-break-time
kill -STOP "$SFS_LAST_PID"
python3 -c 'import os, sys; os.truncate(sys.argv[1], 8 << 20)' "$C/b"
echo "$lbt" >/proc/sys/fs/lease-break-time
kill -CONT "$SFS_LAST_PID"
dlog=$SFS_LAST_DLOG
for ((t = 0; t < 50; t++)); do
	grep -q 'revoked' "$dlog" && break
	sleep 0.1
done
[[ $(grep -c "scatterfs: device 'main': the kernel revoked the lease on backing $C/b after" "$dlog") == 1 ]] ||
	problem "revoked: the daemon did not say once that the kernel revoked its lease:
$(cat "$dlog")"
sfs_umount "$M"
for f in "$T"/daemon.*.log; do
	[[ $f == "$dlog" ]] || ! grep -q revoked "$f" || problem "revoked: $f says revoked on a lease released in time"
done

((${#PROBLEMS[@]} == 0)) || fail "${#PROBLEMS[@]} problems:
$(printf '  %s\n' "${PROBLEMS[@]}")"
note "every case: EIO past the end, logged, reported once, remount refused"
