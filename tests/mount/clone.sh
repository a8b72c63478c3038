#!/bin/bash
# scatterfs-plan clone and the map pattern (issue 14).  Two files appended
# alternately with fsync between on a loop-mounted ext4 image get
# interleaved extents; scatterfs-plan clone reads them with FIEMAP; a mount
# with the cloned configuration gives each file, copied in, exactly the
# extent lengths and relative physical offsets filefrag -v reported (its
# 4 KiB blocks converted to bytes), and the same static layout score.  The
# same again with filefrag -v text as the map, and with xfs_bmap -v text
# taken on an XFS loop image (512-byte units).
# The clone reproduces the source's page cache: with read_ahead_kb = 256 on
# the loop device under the source, the configuration says [cache] mode =
# kernel and readahead = 256K, with a comment naming where that came from,
# stderr says so, and a mount of it reads ahead by 256 KiB; read_ahead_kb
# = 4096 becomes 1024K (scatterfs's largest) with a note; a tmpfs source
# (no block device) gets the kernel's default, 128K, and says why.
# TIMEOUT: 300
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

declare -F sfs_require >/dev/null || sfs_require() {
	command -v "$1" >/dev/null && return 0
	echo "SKIP: $SFS_NAME: $1 is not installed" >&2
	SFS_FAILED=1 # the reason is printed; no "a command failed" message
	exit 77
}
sfs_require mkfs.ext4
sfs_require filefrag

T=$SFS_TMP
M=$T/mnt
E=$T/ext4
PLAN=$SFS_BUILD/bench/scatterfs-plan
REPORT=$SFS_BUILD/bench/scatterfs-report

# fragment DIR - a and b of 8 x 4 KiB, appended alternately, each append
# fsynced so the allocator places it at once (small files share ext4's
# group preallocation, so the two interleave)
fragment() {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		head -c 4096 /dev/urandom >>"$1/a"
		python3 -c 'import os,sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$1/a"
		head -c 4096 /dev/urandom >>"$1/b"
		python3 -c 'import os,sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$1/b"
	done
}

# filefrag_rel FILE - "logical,relative physical,length" in bytes per extent
# of filefrag -v output FILE, physical relative to the file's lowest
filefrag_rel() {
	awk '/blocks of [0-9]+ bytes/ { for (i = 1; i <= NF; i++) if ($i == "of" && $(i+2) ~ /^bytes/) bs = $(i+1) }
	     $1 ~ /^[0-9]+:$/ { gsub(/[.:]/, " "); split($0, f, " +");
		n++; l[n] = $2 * bs; p[n] = $4 * bs; len[n] = $6 * bs; if (n == 1 || p[n] < lo) lo = p[n] }
	     END { for (i = 1; i <= n; i++) print l[i] "," p[i] - lo "," len[i] }' "$1"
}

# extents_rel CSV - the same from a .scatterfs/extents CSV
extents_rel() {
	awk -F, 'NR > 1 { n++; l[n] = $1; p[n] = $2; len[n] = $3; if (n == 1 || $2 < lo) lo = $2 }
	         END { for (i = 1; i <= n; i++) print l[i] "," p[i] - lo "," len[i] }' "$1"
}

# check_copy CONFIG SRC NAME WANT - mount a fresh backing with CONFIG, copy
# SRC/{a,b} in, and compare each file's extents with WANT.NAME (relative)
check_copy() {
	local conf=$1 src=$2 tag=$3 want=$4 f
	sfs_mount "$T/$tag.backing" "$M" "config=$conf,size=64M"
	for f in a b; do
		cp "$src/$f" "$M/$f"
		sync "$M/$f"
		cmp "$src/$f" "$M/$f" || fail "$tag: $f reads back other bytes"
		sfs_extents "$M" "$f" >"$T/$tag.$f.csv"
		extents_rel "$T/$tag.$f.csv" >"$T/$tag.$f.rel"
		cmp -s "$T/$tag.$f.rel" "$want.$f" ||
			fail "$tag: extents of $f differ from the source's (want, got):
$(diff "$want.$f" "$T/$tag.$f.rel")"
	done
	sfs_umount "$M"
	note "$tag: $(wc -l <"$want.a") and $(wc -l <"$want.b") extents as on the source"
}

truncate -s 64M "$T/ext4.img"
mkfs.ext4 -q -F -b 4096 "$T/ext4.img"
mkdir -p "$E"
mount -o loop "$T/ext4.img" "$E"
fragment "$E"
for f in a b; do
	filefrag -v "$E/$f" >"$T/filefrag.$f"
	filefrag_rel "$T/filefrag.$f" >"$T/want.$f"
done
(($(wc -l <"$T/want.a") > 2)) || fail "ext4 did not fragment a: $(cat "$T/filefrag.a")"
# c: 16 KiB preallocated, its first 4 KiB written: one written and one unwritten extent.
fallocate -l 16K "$E/c"
head -c 4096 /dev/urandom | dd of="$E/c" conv=notrunc,fsync status=none
filefrag -v "$E/c" >"$T/filefrag.c"
filefrag_rel "$T/filefrag.c" >"$T/want.c"
grep -q unwritten "$T/filefrag.c" || fail "c has no unwritten extent: $(cat "$T/filefrag.c")"

# 1. scatterfs-plan clone
dev=$(mountpoint -d "$E")
echo 256 >"/sys/class/bdi/$dev/read_ahead_kb"
# a file for DIR: refused (it wrote an empty clone.ini and exited 0)
: >"$T/notadir"
rc=0
"$PLAN" clone "$T/notadir" --out "$T/nd.ini" 2>"$T/nd.err" || rc=$?
assert_eq "$rc $(cat "$T/nd.err")" "1 scatterfs-plan: clone $T/notadir: Not a directory" "clone of a file"
[[ ! -e $T/nd.ini ]] || fail "clone of a file wrote $T/nd.ini"
"$PLAN" clone "$E" --out "$T/clone.ini" 2>"$T/clone.err" || fail "clone: $(cat "$T/clone.err")"
assert_eq "$(grep -m1 'cache.mode' "$T/clone.err")" \
	"scatterfs-plan: cache.mode = kernel, cache.readahead = 256K: as the source, which reads through the page cache with read_ahead_kb = 256 (/sys/class/bdi/$dev/read_ahead_kb)" \
	"clone: what stderr says of the cache"
assert_eq "$(sed -n '/^# The source reads/,/^readahead/p' "$T/clone.ini")" \
	"# The source reads through the kernel's page cache, reading ahead by
# 256K (/sys/class/bdi/$dev/read_ahead_kb):
# so does the clone.
[cache]
mode = kernel
readahead = 256K" "clone: the [cache] section and its comment"
# stderr gives the size to mount with: the maps' span up to a whole MiB
span=$(sed -n 's/^# The maps span \([0-9]*\) bytes.*/\1/p' "$T/clone.ini")
mib=$(((span + 1048575) / 1048576))
assert_eq "$(tail -n 1 "$T/clone.err" | sed 's/.*; the maps span/the maps span/')" \
	"the maps span $span bytes of the device: mount on a backing at least that large, e.g. -o size=${mib}M (a new backing file is sparse: it takes only what is written)" \
	"clone: the size stderr gives"
sfs_mount "$T/span.backing" "$M" "config=$T/clone.ini,size=${mib}M"
sfs_umount "$M"
rm -f "$T/span.backing"*
check_copy "$T/clone.ini" "$E" clone "$T/want"
sfs_mount "$T/clone.backing" "$M" "config=$T/clone.ini"
assert_eq "$(sfs_readahead_kb "$M")" 256 "a mount of the clone: read_ahead_kb"
assert_eq "$(sed -n '/^\[cache\]/,/^$/p' "$M/.scatterfs/config" | grep -v '^#' | tr '\n' ' ')" \
	"[cache] mode = kernel readahead = 256K writeback = true  " "a mount of the clone: [cache] in .scatterfs/config"
sfs_umount "$M"
echo 4096 >"/sys/class/bdi/$dev/read_ahead_kb"
"$PLAN" clone "$E" --out "$T/clone4m.ini" 2>"$T/clone4m.err" || fail "clone: $(cat "$T/clone4m.err")"
assert_eq "$(grep -A2 '^\[cache\]' "$T/clone4m.ini" | tr '\n' ' ')" "[cache] mode = kernel readahead = 1024K " \
	"clone of a source reading ahead by 4 MiB"
grep -q "read_ahead_kb = 4096 (/sys/class/bdi/$dev/read_ahead_kb) (scatterfs takes a multiple of 4K from 4K to 1M: 1024K)\$" "$T/clone4m.err" ||
	fail "clone of a source reading ahead by 4 MiB: $(cat "$T/clone4m.err")"
echo 128 >"/sys/class/bdi/$dev/read_ahead_kb"
note "clone: cache.mode = kernel with the source's read-ahead"
# c: the copy leaves its unwritten part a hole (--sparse=always: its zeros
# are not written); CONFIG.prealloc allocates it
# where the map says, unwritten (flags bit 1 in the catalog).
sfs_mount "$T/prealloc.backing" "$M" "config=$T/clone.ini,size=64M"
cp --sparse=always "$E/c" "$M/c"
sh "$T/clone.ini.prealloc" "$M"
cmp "$E/c" "$M/c" || fail "c reads back other bytes"
sfs_extents "$M" c >"$T/prealloc.c.csv"
sfs_umount "$M"
extents_rel "$T/prealloc.c.csv" >"$T/prealloc.c.rel"
cmp -s "$T/prealloc.c.rel" "$T/want.c" ||
	fail "extents of c differ from the source's (want, got): $(diff "$T/want.c" "$T/prealloc.c.rel")"
assert_eq "$(sqlite3 "$T/prealloc.backing.scatterfs" \
	"select logical, flags & 1 from extent_by_path where path = 'c' order by logical" | tr '\n' ' ')" \
	"0|0 4096|1 " "c's written and unwritten extents"
note "c: written and unwritten extents as on the source"
# The static score of the clone is the score of filefrag -v's map.
for f in a b; do
	want=$("$REPORT" --layout "$T/filefrag.$f")
	got=$("$REPORT" --layout "$T/clone.$f.csv")
	assert_eq "$got" "$want" "static layout of the clone of $f"
done
note "static layout of a: $want"
# .scatterfs/layout/PATH says the same, and stats has the mount's score.
sfs_mount "$T/clone.backing" "$M" "config=$T/clone.ini"
for f in a b; do
	assert_eq "$(cat "$M/.scatterfs/layout/$f")" "$("$REPORT" --layout "$T/filefrag.$f")" \
		".scatterfs/layout/$f"
done
grep -q '"layout_score": 0\.' "$M/.scatterfs/stats" ||
	fail "no layout_score below 1 in stats: $(cat "$M/.scatterfs/stats")"
sfs_umount "$M"

# 2. filefrag -v text as the map (b 8M further: the two maps stay apart)
printf '[file "a"]\npattern = map\nmap = %s\n[file "b"]\npattern = map\nmap = %s\nmap_base = 8M\n' \
	"$T/filefrag.a" "$T/filefrag.b" >"$T/filefrag.ini"
check_copy "$T/filefrag.ini" "$E" filefrag "$T/want"
umount "$E"

# A file FIEMAP cannot map (tmpfs) is named and placed contiguously.
mkdir -p "$T/tmpfs"
mount -t tmpfs -o size=1M tmpfs "$T/tmpfs"
echo data >"$T/tmpfs/t"
"$PLAN" clone "$T/tmpfs" --out "$T/tmpfs.ini" 2>"$T/tmpfs.err" || fail "clone of tmpfs: $(cat "$T/tmpfs.err")"
grep -q "^scatterfs-plan: $T/tmpfs/t: .*: placed contiguously$" "$T/tmpfs.err" ||
	fail "clone of tmpfs does not name t: $(cat "$T/tmpfs.err")"
grep -A1 -x '\[file "t"\]' "$T/tmpfs.ini" | grep -qx 'pattern = contiguous' ||
	fail "clone of tmpfs: t is not contiguous: $(cat "$T/tmpfs.ini")"
assert_eq "$(grep -A2 '^\[cache\]' "$T/tmpfs.ini" | tr '\n' ' ')" "[cache] mode = kernel readahead = 128K " "clone of tmpfs: [cache]"
grep -qx "scatterfs-plan: cache.mode = kernel, cache.readahead = 128K: the source reads through the page cache; its read-ahead could not be read (no block device under $T/tmpfs), so the kernel's default" "$T/tmpfs.err" ||
	fail "clone of tmpfs: what stderr says of the cache: $(cat "$T/tmpfs.err")"
umount "$T/tmpfs"

# 3. xfs_bmap -v text of the same kind of files on XFS
if command -v mkfs.xfs >/dev/null && command -v xfs_bmap >/dev/null; then
	X=$T/xfs
	truncate -s 320M "$T/xfs.img"
	mkfs.xfs -q -f "$T/xfs.img"
	mkdir -p "$X"
	mount -o loop "$T/xfs.img" "$X"
	fragment "$X"
	for f in a b; do
		xfs_bmap -v "$X/$f" >"$T/bmap.$f"
		# [l1..l2]: p1..p2 in 512-byte units, relative to the lowest p1
		awk '$1 ~ /^[0-9]+:$/ && $3 != "hole" { gsub(/[\[\]:]/, "", $2); split($2, L, /\.\./); split($3, P, /\.\./);
			n++; l[n] = L[1] * 512; p[n] = P[1] * 512; len[n] = (L[2] - L[1] + 1) * 512; if (n == 1 || p[n] < lo) lo = p[n] }
			END { for (i = 1; i <= n; i++) print l[i] "," p[i] - lo "," len[i] }' "$T/bmap.$f" >"$T/xwant.$f"
	done
	printf '[file "a"]\npattern = map\nmap = %s\n[file "b"]\npattern = map\nmap = %s\nmap_base = 8M\n' \
		"$T/bmap.a" "$T/bmap.b" >"$T/bmap.ini"
	check_copy "$T/bmap.ini" "$X" xfs_bmap "$T/xwant"
	umount "$X"
else
	note "xfsprogs missing: the xfs_bmap case is not run"
fi
