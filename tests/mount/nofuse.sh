#!/bin/bash
# TIMEOUT: 600
# (it took 56 s on 2 vCPUs shared with other builds, 2026-12-01)
# layout/, its unit tests and scatterfs-plan build and link without libfuse:
# a build with -Dfuse=disabled has no daemon, links no libfuse, and its
# layout tests and plan tool work.  (--buildtype=plain: what is checked is
# what builds and links, and unoptimized it takes 20 s of CPU, not 44.)
source "$(dirname "$0")/../lib.sh"
sfs_require meson ninja

b=$SFS_TMP/build-nofuse
meson setup "$b" "$SFS_ROOT" -Dfuse=disabled --buildtype=plain >"$SFS_TMP/setup.log" 2>&1 || fail "meson setup -Dfuse=disabled: $(tail -5 "$SFS_TMP/setup.log")"
ninja -C "$b" >"$SFS_TMP/ninja.log" 2>&1 || fail "build without libfuse: $(tail -20 "$SFS_TMP/ninja.log")"
[[ ! -e $b/fs/scatterfs ]] || fail "the daemon was built although fuse is disabled"
for exe in "$b"/tests/test_alloc "$b"/tests/test_extmap "$b"/tests/test_patterns \
	"$b"/tests/test_autoextend "$b"/tests/test_config "$b"/bench/scatterfs-plan; do
	[[ -x $exe ]] || fail "$exe was not built"
	if ldd "$exe" | grep -q libfuse; then
		fail "$exe links libfuse: $(ldd "$exe" | grep libfuse)"
	fi
done
(cd "$SFS_ROOT" && "$b/tests/test_patterns" >"$SFS_TMP/patterns.log" 2>&1) || fail "test_patterns without libfuse: $(tail -5 "$SFS_TMP/patterns.log")"
rows=$("$b/bench/scatterfs-plan" "$SFS_ROOT/conf/equi-fragmented.ini" t 7000K | tail -n +2 | wc -l)
assert_eq "$rows" 100 "extents planned by scatterfs-plan built without libfuse"
note ok
