#!/bin/bash
# A placement pattern added as one source file: build/tests/scatterfs-stripe
# is the daemon's own objects plus tests/pattern_stripe.c, which registers
# the "stripe" pattern and its key layout.stripes and is in no other
# build.  Mounted with pattern stripe, an 8 MiB file of 1 MiB extents on a
# 64 MiB device is dealt round-robin over stripes zones of 64M / stripes,
# exactly; the map survives a remount and the bytes read back are the
# bytes written, and scatterfs-plan built with the same file predicts the
# map.  The ordinary daemon does not know the pattern.
# shellcheck source=SCRIPTDIR/../lib.sh
SCATTERFS_BIN=${SCATTERFS_BUILD:-$(dirname "$0")/../../build}/tests/scatterfs-stripe
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
MiB=1048576
head -c $((8 * MiB)) /dev/urandom >"$T/src"

# expected STRIPES - the extent map CSV the pattern must produce
expected() {
	local zone=$((64 * MiB / $1)) i
	echo logical_offset,device_offset,length
	for ((i = 0; i < 8; i++)); do
		echo "$((i * MiB)),$(((i % $1) * zone + (i / $1) * MiB)),$MiB"
	done
}

# check STRIPES OPTS - write the file on a fresh backing with OPTS and
# compare its map with expected STRIPES, before and after a remount
check() {
	local n=$1 opts=$2 b=$T/b.$1
	sfs_mount "$b" "$M" "size=64M,layout.pattern=stripe,layout.extent_size=1M$opts"
	cp "$T/src" "$M/f"
	sync "$M/f"
	sfs_extents "$M" f >"$T/map.$n"
	sfs_umount "$M"
	expected "$n" >"$T/want.$n"
	cmp -s "$T/want.$n" "$T/map.$n" ||
		fail "stripes=$n: extent map differs from the pattern's:
$(diff "$T/want.$n" "$T/map.$n" | head -n 20)"
	sfs_mount "$b" "$M" "layout.pattern=stripe,layout.extent_size=1M$opts"
	sfs_extents "$M" f >"$T/map2.$n"
	cmp "$M/f" "$T/src" || fail "stripes=$n: content differs from what was written"
	grep -qx "stripes = $n" "$M/.scatterfs/config" ||
		fail "stripes=$n: .scatterfs/config lacks 'stripes = $n': $(grep -n stripe "$M/.scatterfs/config")"
	sfs_umount "$M"
	cmp -s "$T/map.$n" "$T/map2.$n" || fail "stripes=$n: extent map changed across a remount"
	printf '[layout]\npattern = stripe\nextent_size = 1M\nstripes = %s\n' "$n" >"$T/stripe.$n.ini"
	"$SFS_BUILD/tests/scatterfs-plan-stripe" --device-size 64M "$T/stripe.$n.ini" f 8M >"$T/plan.$n" 2>&1 ||
		fail "scatterfs-plan-stripe: $(cat "$T/plan.$n")"
	cmp -s "$T/map.$n" "$T/plan.$n" ||
		fail "stripes=$n: scatterfs-plan-stripe predicts another map:
$(diff "$T/plan.$n" "$T/map.$n" | head -n 20)"
	note "stripes=$n: 8 extents where the pattern puts them"
}

check 4 ""
check 2 ",layout.stripes=2"

# The key's range is checked like any other key's.
rc=0
"$SFS_BIN" "$T/b.bad" "$M" -f -o size=64M,layout.pattern=stripe,layout.stripes=0 >"$T/bad.out" 2>&1 || rc=$?
((rc != 0)) || fail "layout.stripes=0 was accepted"
grep -qF "option -o layout.stripes=0: [layout] stripes = 0: must be a whole number from 1 to 64" "$T/bad.out" ||
	fail "layout.stripes=0: unexpected message: $(cat "$T/bad.out")"

# The shipped daemon has no stripe pattern: the test's file is in no other build.
rc=0
"$SFS_BUILD/fs/scatterfs" "$T/b.plain" "$M" -f -o size=64M,layout.pattern=stripe >"$T/plain.out" 2>&1 || rc=$?
((rc != 0)) || fail "build/fs/scatterfs accepted layout.pattern=stripe"
grep -qF "unknown value; allowed: contiguous, single, interleaved, random, reverse" "$T/plain.out" ||
	fail "build/fs/scatterfs: unexpected message: $(cat "$T/plain.out")"
note "stripes=0 refused; the shipped daemon does not know stripe"
