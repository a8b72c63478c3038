#!/bin/bash
# Bad input: a bad configuration (an unknown key; a bad -o value), a missing
# backing (no size= and the file absent), a size= smaller than the existing
# backing (shrinking would lose data: refused), and a second mount of a
# backing that is mounted: each exits non-zero, with a message on stderr
# that names the problem, mounts nothing, and leaves the backing and its
# catalog byte-for-byte unchanged.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

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

# 3. size= smaller than the existing backing (64 MiB).
refused size-too-small 'size' "$M" "$B" "$M" -o size=32M
assert_eq "$(stat -c %s "$B")" 67108864 "size of the backing after size=32M was refused"

# 4. A second mount of a mounted backing, on another mount point.
sfs_mount "$B" "$M" ""
assert_eq "$(cat "$M/hello.txt")" hello "content of hello.txt"
refused second-mount 'already|in use|busy|locked|mounted' "$M2" "$B" "$M2"
assert_eq "$(cat "$M/hello.txt")" hello "content of hello.txt on the first mount after the refused second"
sfs_umount "$M"
note "pass"
