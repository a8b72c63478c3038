#!/bin/bash
# Bad input: a bad configuration (an unknown key; a bad -o value), a missing
# backing (no size= and the file absent), a size= smaller than the existing
# backing (shrinking would lose data: refused), and a second mount of a
# backing that is mounted, a catalog of another backing, a corrupted or
# truncated catalog, a new one copied without its -wal file (the message
# says how to copy it), an unknown FUSE option, a stale mount point and a live one
# (unless -o nonempty): each exits non-zero, with a message on stderr
# that names the problem, mounts nothing, and leaves the backing and its
# catalog byte-for-byte unchanged.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3

T=$SFS_TMP
M=$T/mnt
M2=$T/mnt2
B=$T/backing
mkdir -p "$M" "$M2"

# A backing with a catalog and one file in it.
sfs_mount "$B" "$M" "size=64M"
echo hello >"$M/hello.txt"
sfs_umount "$M"
[[ -f $B.scatterfs ]] || fail "no catalog $B.scatterfs beside the backing after a mount"

# The backing, the catalog and its journal (not -shm: shared memory, not data)
state() {
	local f
	for f in "$B" "$B".scatterfs "$B".scatterfs-wal "$B".scatterfs-journal; do
		[[ -e $f ]] && sha256sum "$f"
	done
	# and no file appears beside them (a catalog for a refused backing)
	find "$T" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | grep -v -e '\.std' -e '\.log$' -e '-shm$' || true
}

# refused NAME KEYWORD-REGEX MNT ARGS... - run the daemon as a user would
# (daemon mode); it must exit non-zero with a matching message on stderr,
# mount nothing and change nothing
refused() {
	local name=$1 re=$2 mnt=$3 rc=0 before
	shift 3
	before=$(state)
	timeout 30 "$SFS_BIN" "$@" >"$T/$name.stdout" 2>"$T/$name.stderr" </dev/null || rc=$?
	sfs_add_log "$T/$name.stderr"
	if ((rc == 0)); then
		fail "$name: scatterfs $* exited 0, expected a refusal"
	fi
	((rc != 124)) || fail "$name: scatterfs $* did not exit within 30 s"
	[[ -s $T/$name.stderr ]] || fail "$name: no message on stderr (exit $rc)"
	grep -Eqi -- "$re" "$T/$name.stderr" ||
		fail "$name: stderr does not name the problem (/$re/): $(cat "$T/$name.stderr")"
	! sfs_is_mounted "$mnt" || fail "$name: $mnt is mounted although scatterfs exited $rc"
	assert_eq "$(state)" "$before" "$name: backing and catalog (sha256) after the refusal"
	note "$name: refused (exit $rc): $(head -n 1 "$T/$name.stderr")"
}

# 1. Configuration: an unknown key in the file; a bad value in -o.
printf '[layout]\npattern = contiguous\nbogus_key = 1\n' >"$T/bad.ini"
refused bad-config-key 'bogus_key' "$M" "$B" "$M" -o "config=$T/bad.ini"
grep -q 'bad.ini' "$T/bad-config-key.stderr" || fail "bad-config-key: message does not name the file: $(cat "$T/bad-config-key.stderr")"
grep -Eq '(line |:)3\b' "$T/bad-config-key.stderr" || fail "bad-config-key: message does not name line 3: $(cat "$T/bad-config-key.stderr")"
refused bad-option-value 'zigzag|pattern' "$M" "$B" "$M" -o layout.pattern=zigzag
refused bad-config-missing 'nonexistent\.ini' "$M" "$B" "$M" -o "config=$T/nonexistent.ini"

# 2. A missing backing and no size= to create it.
refused missing-backing 'absent' "$M" "$T/absent" "$M"
grep -Eqi 'no such|not exist|missing|not found|size' "$T/missing-backing.stderr" ||
	fail "missing-backing: message does not say the backing is missing: $(cat "$T/missing-backing.stderr")"
[[ ! -e $T/absent && ! -e $T/absent.scatterfs ]] || fail "missing-backing: the refused mount created $T/absent or its catalog"
# 2b. A misspelt size= on a missing backing: the unknown option is named
# first (it was the missing backing, whose message suggests size=).
refused misspelt-size "unknown option.*sise=16M" "$M" "$T/absent" "$M" -o sise=16M

# 3. size= smaller than the existing backing (64 MiB).
refused size-too-small 'size' "$M" "$B" "$M" -o size=32M
assert_eq "$(stat -c %s "$B")" 67108864 "size of the backing after size=32M was refused"

# 4. A second mount of a mounted backing, on another mount point.
sfs_mount "$B" "$M" ""
assert_eq "$(cat "$M/hello.txt")" hello "content of hello.txt"
refused second-mount 'already|in use|busy|locked|mounted' "$M2" "$B" "$M2"
assert_eq "$(cat "$M/hello.txt")" hello "content of hello.txt on the first mount after the refused second"
# ... and another backing given the catalog in use: refused (catalog locked).
refused catalog-in-use 'in use' "$M2" "$T/third" "$M2" -o "size=64M,meta=$B.scatterfs"
[[ ! -e $T/third ]] || fail "catalog-in-use: the refused mount left $T/third"
sfs_umount "$M"

# 5. A catalog from another backing (same size and block size) is refused.
B2=$T/other
sfs_mount "$B2" "$M" "size=64M"
echo other >"$M/other.txt"
sfs_umount "$M"
refused foreign-catalog 'belongs to backing' "$M" "$B" "$M" -o "meta=$B2.scatterfs"
grep -q "$B2" "$T/foreign-catalog.stderr" || fail "foreign-catalog: message does not name the catalog's own backing: $(cat "$T/foreign-catalog.stderr")"
rm -f "$B2" "$B2".scatterfs*

# 6. A corrupted catalog: not an SQLite database.
head -c 8192 /dev/urandom >"$T/garbage.scatterfs"
refused corrupt-catalog 'not a scatterfs catalog|corrupt' "$M" "$B" "$M" -o "meta=$T/garbage.scatterfs"
rm -f "$T/garbage.scatterfs"

# 6b. A truncated catalog (the first half of a real one), and a directory
# as the backing.
head -c $(($(stat -c %s "$B.scatterfs") / 2)) "$B.scatterfs" >"$T/half.scatterfs"
refused truncated-catalog 'not a scatterfs catalog|corrupt|truncated|malformed' "$M" "$B" "$M" -o "meta=$T/half.scatterfs"
rm -f "$T/half.scatterfs"*
# 6b'. A new file system's catalog copied while mounted without its -wal
# file (where its tables still are): the refusal says so, and how to copy
# it; a copy made once its daemon has exited (sfs_umount waits) is taken.
F=$T/fresh
sfs_mount "$F" "$M" "size=16M"
echo again >"$M/again.txt"
cp "$F.scatterfs" "$T/nowal.scatterfs"
sfs_umount "$M"
assert_eq "$(sqlite3 "$T/nowal.scatterfs" "select count(*) from sqlite_master")" 0 "tables in a new catalog copied without its -wal"
refused nowal-catalog 'not a scatterfs catalog \(.*a copy without its -wal file: copy a catalog with its -wal, or once its daemon has exited\)' "$M" "$F" "$M" -o "meta=$T/nowal.scatterfs"
cp "$F.scatterfs" "$T/nowal.scatterfs"
sfs_mount "$F" "$M" "meta=$T/nowal.scatterfs"
assert_eq "$(cat "$M/again.txt")" again "a file read through the catalog copied once the daemon had exited"
sfs_umount "$M"
rm -f "$T/nowal.scatterfs"* "$F" "$F".scatterfs*
# 6c. A catalog that is consistent SQLite but not a consistent layout: two
# extents on the same device range, or an extent past the device's end.
cp "$B.scatterfs" "$T/twice.scatterfs"
sqlite3 "$T/twice.scatterfs" "INSERT INTO extent SELECT ino + 1000, logical, device, length, flags, dev FROM extent"
refused overlapping-extents 'inconsistent: device range [0-9]+\+[0-9]+ is used twice' "$M" "$B" "$M" -o "meta=$T/twice.scatterfs"
cp "$B.scatterfs" "$T/past.scatterfs"
sqlite3 "$T/past.scatterfs" "INSERT INTO extent VALUES (1000, 0, $((64 << 20)), 4096, 0, 0)"
refused extent-past-device "inconsistent: device range $((64 << 20))\+4096 is outside the device" "$M" "$B" "$M" -o "meta=$T/past.scatterfs"
rm -f "$T/twice.scatterfs"* "$T/past.scatterfs"*
mkdir -p "$T/dirbacking"
refused directory-backing 'is a directory' "$M" "$T/dirbacking" "$M" -o size=16M
rmdir "$T/dirbacking"

# 7. A mount that fails after the backing was created (an unknown FUSE
# option) leaves no backing and no catalog behind.
refused unknown-fuse-option 'not understood|unknown option' "$M" "$T/fresh" "$M" -o size=16M,bogusopt
[[ ! -e $T/fresh && ! -e $T/fresh.scatterfs ]] || fail "unknown-fuse-option: the refused mount left $T/fresh or its catalog"
# The message names every option of scatterfs's own that --help lists
# (it left transport= out).
for o in $("$SFS_BIN" --help | sed -n '/^scatterfs options:/,/SECTION.KEY=VALUE/s/^    -o \([a-z_]*=\{0,1\}\).*/\1/p'); do
	grep -q "[ ,]$o[ ,]" "$T/unknown-fuse-option.stderr" || fail "the options not understood: no '$o' in $(cat "$T/unknown-fuse-option.stderr")"
done
# --help names the INI files' named sections and a fault rule's keys
# (README: it lists every key; it had none of them).
help=$("$SFS_BIN" --help | tr -s ' \n' '  ')
for w in '[file "GLOB"]' '[device "NAME"]' '[fault "NAME"]' op, file, range, device, after, count, \
	probability, seed, error, delay_ms, corrupt, torn, sector_size, flush; do
	[[ $help == *" $w "* ]] || fail "--help does not name $w"
done

# 8. A stale mount point (its daemon killed) is named as such.
sfs_mount "$B" "$M" ""
assert_eq "$(cat "$M/hello.txt")" hello "content of hello.txt before the daemon is killed"
kill -KILL "$SFS_LAST_PID"
wait "$SFS_LAST_PID" 2>/dev/null || true
unset "SFS_PID[$M]"
rc=0
timeout 30 "$SFS_BIN" "$B" "$M" >"$T/stale.stdout" 2>"$T/stale.stderr" </dev/null || rc=$?
((rc != 0 && rc != 124)) || fail "stale-mount: scatterfs exited $rc, expected a refusal"
grep -q 'stale mount.*fusermount3 -u' "$T/stale.stderr" || fail "stale-mount: message: $(cat "$T/stale.stderr")"
assert_eq "$(awk -v m="$M" '$5 == m' /proc/self/mountinfo | wc -l)" 1 "mounts on $M after the refused mount over a stale one"
note "stale-mount: refused (exit $rc): $(head -n 1 "$T/stale.stderr")"
sfs_fusermount_u "$M" "the stale mount"
# 8b. The daemon dies while the new mount's check waits on it: the kernel
# answers that request ECONNABORTED on /dev/fuse and ECANCELED on FUSE over
# io_uring (as it may a moment after the daemon exits, while it tears the
# ring down), and that is a stale mount too.  The old daemon is stopped, the new scatterfs waits in
# statfs(2) (system call 137 on x86-64, in /proc/PID/syscall), then the old
# daemon is killed.
sfs_mount "$B" "$M" ""
old=$SFS_LAST_PID
kill -STOP "$old"
timeout 30 "$SFS_BIN" "$B" "$M" >"$T/stale2.stdout" 2>"$T/stale2.stderr" </dev/null &
new=$! # timeout's; scatterfs is its child
in_statfs() { local c; c=$(pgrep -P "$new") && [[ $(cut -d ' ' -f 1 "/proc/$c/syscall" 2>/dev/null) == 137 ]]; }
for ((t = 0; t < 200; t++)); do
	in_statfs && break
	sleep 0.05
done
in_statfs ||
	{ kill -KILL "$old"; fail "stale-mount-inflight: the new scatterfs never waited in statfs(2)"; }
kill -KILL "$old"
wait "$old" 2>/dev/null || true
unset "SFS_PID[$M]"
rc=0
wait "$new" || rc=$?
((rc != 0 && rc != 124)) || fail "stale-mount-inflight: scatterfs exited $rc, expected a refusal"
grep -q 'stale mount.*fusermount3 -u' "$T/stale2.stderr" || fail "stale-mount-inflight: message: $(cat "$T/stale2.stderr")"
note "stale-mount-inflight: refused (exit $rc): $(head -n 1 "$T/stale2.stderr")"
sfs_fusermount_u "$M" "the stale mount"

# 9. A live mount point: refused with a message naming what is mounted
# there (fstype and source, escapes of mountinfo undone), nothing created;
# -o nonempty mounts over it as asked.
# over_live NAME MNT EXPECTED-MESSAGE - scatterfs NEW MNT is refused
over_live() {
	local name=$1 mnt=$2 want=$3 rc=0 before
	# Mounts on $mnt only: other tests on the machine mount and unmount too.
	before=$(grep -cF " ${mnt// /\\040} " /proc/self/mountinfo)
	timeout 30 "$SFS_BIN" "$T/new" "$mnt" -o size=16M >"$T/$name.stdout" 2>"$T/$name.stderr" </dev/null || rc=$?
	sfs_add_log "$T/$name.stderr"
	((rc != 0 && rc != 124)) || fail "$name: scatterfs exited $rc, expected a refusal"
	assert_eq "$(cat "$T/$name.stderr")" "$want" "$name: message"
	[[ ! -e $T/new && ! -e $T/new.scatterfs ]] || fail "$name: the refused mount created $T/new or its catalog"
	assert_eq "$(grep -cF " ${mnt// /\\040} " /proc/self/mountinfo)" "$before" "$name: mounts on $mnt after the refusal"
	note "$name: refused (exit $rc): $want"
}
sfs_mount "$B" "$M" ""
over_live over-scatterfs "$M" "scatterfs: $M is already a mount point (fuse.scatterfs from $B); unmount it first, or give -o nonempty to mount over it"
assert_eq "$(cat "$M/hello.txt")" hello "content of hello.txt after the refused mount over it"
sfs_umount "$M"
M3="$T/a mount"
mkdir -p "$M3"
mount -t tmpfs -o size=1M "tmp src" "$M3" || fail "mount -t tmpfs on $M3"
sfs_on_exit "umount -l '$M3' 2>/dev/null || true"
over_live over-tmpfs "$M3" "scatterfs: $M3 is already a mount point (tmpfs from tmp src); unmount it first, or give -o nonempty to mount over it"
timeout 30 "$SFS_BIN" "$T/new" "$M3" -o size=16M,nonempty >"$T/nonempty.stdout" 2>"$T/nonempty.stderr" </dev/null ||
	fail "nonempty: scatterfs over tmpfs with -o nonempty exited $?: $(cat "$T/nonempty.stderr")"
# The mount on top is the last mountinfo line of $M3 (a space there is \040).
top=$(grep -F " ${M3// /\\040} " /proc/self/mountinfo | tail -n 1 | sed 's/.* - \([^ ]*\) .*/\1/')
assert_eq "$top" fuse.scatterfs "nonempty: fstype on top of $M3"
echo over >"$M3/f" || fail "nonempty: write on the mount over tmpfs"
sfs_fusermount_u "$M3" nonempty
[[ ! -e $M3/f ]] || fail "nonempty: the file written on scatterfs is on the tmpfs below"
umount "$M3" || fail "umount tmpfs $M3"
note "nonempty: mounted over tmpfs, and unmounted"

# 10. The daemon's own files: a backing, catalog or log in the mount point
# (the log, created once mounted, made the daemon wait on itself for ever
# and hang every access to the mount; a backing there is reopened by name
# at a simulated crash), a log that is the backing or the catalog (its
# header overwrote them), another mount's log (two daemons' rows
# interleaved), or a log that cannot be created after size= grew an
# existing backing (the growth stayed): each refused before anything
# changes, the backing grown back, a log the refused mount created removed.
L=$T/req.csv
refused log-in-mount 'log .*/mnt/req.csv is inside the mount point' "$M" "$B" "$M" -o "log=$M/req.csv"
refused log-in-mount-new 'log .* is inside the mount point' "$M" "$T/fresh" "$M" -o "size=16M,log=$M/sub/../req.csv"
refused backing-in-mount 'backing .*/mnt/b is inside the mount point' "$M" "$M/b" "$M" -o size=16M
refused catalog-in-mount 'catalog .*/mnt/c is inside the mount point' "$M" "$B" "$M" -o "meta=$M/c"
printf '[device "two"]\nbacking = %s\nsize = 16M\n' "$M/two" >"$T/two-in-mount.ini"
refused device-in-mount 'backing .*/mnt/two is inside the mount point' "$M" "$B" "$M" -o "config=$T/two-in-mount.ini"
refused log-is-backing "log $B is the backing of device 'main'" "$M" "$B" "$M" -o "log=$B"
refused log-is-catalog "log $B.scatterfs is the catalog" "$M" "$B" "$M" -o "log=$B.scatterfs"
refused log-unwritable-grow 'cannot create log' "$M" "$B" "$M" -o "size=128M,log=$T/nodir/req.csv"
refused log-unwritable-new 'cannot create log' "$M" "$T/fresh" "$M" -o "size=16M,log=$T/nodir/req.csv"
# Another mount's log: refused, and that mount's log goes on whole.
sfs_mount "$T/other" "$M2" "size=16M,log=$L"
echo data >"$M2/f"
sync "$M2/f"
refused log-shared "log $L is in use by another scatterfs mount" "$M" "$B" "$M" -o "log=$L"
echo more >"$M2/g"
sync "$M2/g"
sfs_umount "$M2"
assert_eq "$(head -c 6 "$L")" "ts_us," "log-shared: the first line of the other mount's log"
assert_eq "$(grep -c '^ts_us,' "$L")" 1 "log-shared: header lines in the other mount's log"
assert_eq "$(awk -F, 'NR > 1 { print $2, $4 }' "$L" | tr '\n' ' ')" "extend f extend g " "log-shared: the other mount's rows (op and path) in its log"
# A refused mount keeps the last mount's log as it was (the log of a crash).
sum=$(sha256sum <"$L")
refused log-kept 'not understood|unknown option' "$M2" "$T/other" "$M2" -o "log=$L,bogusopt"
assert_eq "$(sha256sum <"$L")" "$sum" "log-kept: the last mount's log after a refused mount"
# Through a symlink: a dangling one into the mount point (the daemon
# created its target through its own mount and hung), a backing's and a
# catalog's; the symlinks stay.
ln -s "$M/req.csv" "$T/lnlog"
refused log-symlink-in-mount "log $T/lnlog is inside the mount point" "$M" "$B" "$M" -o "log=$T/lnlog"
ln -s "$M/b2" "$T/lnback"
refused backing-symlink-in-mount "backing $T/lnback is inside the mount point" "$M" "$T/lnback" "$M" -o size=16M
ln -s "$M/cat" "$T/lncat"
refused catalog-symlink-in-mount "catalog $T/lncat is inside the mount point" "$M" "$B" "$M" -o "meta=$T/lncat"
[[ -L $T/lnlog && -L $T/lnback && -L $T/lncat ]] || fail "a refused mount removed a symlink it was given"
rm -f "$T/lnlog" "$T/lnback" "$T/lncat"
# The catalog's -wal (a log there truncated it: every file lost), and a file
# that is not a request log (another mount's -wal, a database's file):
# replaced only if it is one.
sfs_mount "$B" "$M" ""
refused log-is-other-wal "log $B.scatterfs-wal exists and is not a request log" "$M2" "$T/other" "$M2" -o "size=16M,log=$B.scatterfs-wal"
sfs_umount "$M"
refused log-is-own-wal "log $B.scatterfs-wal is the catalog's -wal" "$M" "$B" "$M" -o "log=$B.scatterfs-wal"
printf 'important\n' >"$T/data.txt"
refused log-not-a-log "log $T/data.txt exists and is not a request log" "$M" "$B" "$M" -o "log=$T/data.txt"
assert_eq "$(cat "$T/data.txt")" important "log-not-a-log: the file after the refusal"
rm -f "$T/data.txt"
# A FIFO no process reads: refused at once (it waited for a reader for ever).
mkfifo "$T/fifo"
refused log-fifo-no-reader "log $T/fifo is a FIFO that no process reads" "$M" "$B" "$M" -o "log=$T/fifo"
rm -f "$T/fifo"
# log=/dev/stderr names another's file: two mounts whose stderr is one file
# both mount, and the file is not truncated.
echo before >"$T/both.txt"
"$SFS_BIN" "$B" "$M" -o log=/dev/stderr 2>>"$T/both.txt" </dev/null || fail "log=/dev/stderr, first mount: $(cat "$T/both.txt")"
"$SFS_BIN" "$T/other" "$M2" -o size=16M,log=/dev/stderr 2>>"$T/both.txt" </dev/null || fail "log=/dev/stderr, second mount: $(cat "$T/both.txt")"
sfs_fusermount_u "$M" "log=/dev/stderr, first mount"
sfs_fusermount_u "$M2" "log=/dev/stderr, second mount"
assert_eq "$(head -n 1 "$T/both.txt")" before "log=/dev/stderr: the first line of the file stderr was appended to"
assert_eq "$(grep -c '^ts_us,' "$T/both.txt")" 2 "log=/dev/stderr: the two mounts' headers"
rm -f "$T/other" "$T/other".scatterfs* "$L" "$T/two-in-mount.ini" "$T/both.txt"
note "pass"
