#!/bin/bash
# bench/run --data DIR copies an existing data directory onto each
# configuration's mount: a workload that lists the mount (owner, group,
# mode, size and type of every entry, the target of a symlink, the SHA-256
# of every regular file) finds exactly what the source holds, in every run
# (each run is a new mount of the same backing) and for both layouts; the
# root of the mount takes the source directory's owner and mode; a file with
# an 8 MiB hole between two 1 MiB runs of data keeps its hole: the copy's
# write requests (the load's request log, log.ops=read:write:extend) cover
# exactly its 2 MiB of data and nothing of the hole.  (Where scatterfs then
# places extents is the layout's business: autoextend allocates
# sequentially, so the hole may have device space; it still reads as zeros,
# which the checksums show.)
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

RUN=$SFS_ROOT/bench/run
id nobody >/dev/null 2>&1 || fail "no user nobody"
id postgres >/dev/null 2>&1 || fail "no user postgres (package postgresql-15)"

src=$SFS_TMP/src
mkdir -p "$src/sub/deeper"
head -c 300000 /dev/urandom >"$src/plain"
head -c 5000 /dev/urandom >"$src/sub/secret"
head -c 123 /dev/urandom >"$src/sub/deeper/small"
: >"$src/empty"
ln -s sub/secret "$src/link"
# 1 MiB of data, an 8 MiB hole, 1 MiB of data
dd if=/dev/urandom of="$src/sparse" bs=1M count=1 status=none
dd if=/dev/urandom of="$src/sparse" bs=1M count=1 seek=9 conv=notrunc status=none
chown nobody:nogroup "$src/plain"
chown postgres:postgres "$src/sub" "$src/sub/secret"
chown nobody:postgres "$src/sub/deeper/small"
chmod 0640 "$src/plain"
chmod 0700 "$src/sub"
chmod 0600 "$src/sub/secret"
chmod 0751 "$src/sub/deeper"
chmod 4755 "$src/sub/deeper/small"
chown postgres:nogroup "$src"
chmod 0750 "$src"
holes=$(python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print(os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 2 << 20, os.SEEK_DATA))' "$src/sparse")
assert_eq "$holes" "1048576 9437184" "the source file's hole (SEEK_HOLE, SEEK_DATA)"

# The listing: one line per entry, sorted, then each file's size and checksum
cat >"$SFS_TMP/listing" <<'EOF'
#!/bin/sh
cd "$1" || exit 1
find . -printf '%p %u %g %m %y %l\n' | sort
find . -type f -printf '%p size %s\n' | sort
find . -type f -exec sha256sum {} + | sort -k 2
EOF
chmod +x "$SFS_TMP/listing"
"$SFS_TMP/listing" "$src" >"$SFS_TMP/want"
sfs_add_log "$SFS_TMP/want"

out=$SFS_TMP/out.csv
SCATTERFS_BUILD=$SFS_BUILD "$RUN" --layouts contiguous,equi-fragmented --runs 2 --size 256M \
	--data "$src" --format csv --set log.ops=read:write:extend --workdir "$SFS_TMP/work" --keep \
	--workload "$SFS_TMP/listing \"\$SCATTERFS_MOUNT\" >$SFS_TMP/got.\$(basename \"\$(dirname \"\$SCATTERFS_MOUNT\")\").\$SCATTERFS_RUN" \
	>"$out" 2>"$SFS_TMP/err" </dev/null || { sfs_add_log "$SFS_TMP/err"; fail "bench/run exited $?"; }
sfs_add_log "$out"
assert_eq "$(tail -n +2 "$out" | cut -d, -f1,2 | paste -sd' ')" \
	"contiguous,read:write:extend equi-fragmented,read:write:extend" "rows"
work=$(echo "$SFS_TMP"/work/bench-run.*)
for c in config1 config2; do
	for r in 1 2; do
		got=$SFS_TMP/got.$c.$r
		[[ -f $got ]] || fail "$c run $r: the workload left no listing"
		sfs_add_log "$got"
		diff -u "$SFS_TMP/want" "$got" >&2 || fail "$c run $r: the mount's listing differs from the source's"
	done
	load=$work/$c/load.csv
	[[ -f $load ]] || fail "$c: no load log $load"
	sfs_log_check_header "$load"
	assert_eq "$(sfs_log_rows "$load" write sparse | awk -F, '{ b += $6 } END { print b + 0 }')" 2097152 \
		"$c: bytes the copy wrote to the sparse file"
	assert_eq "$(sfs_log_rows "$load" write sparse | awk -F, '$5 < 1048576 && $5 + $6 > 1048576 || $5 + $6 > 1048576 && $5 < 9437184 || $5 + $6 > 10485760' | wc -l)" 0 \
		"$c: writes to the sparse file that reach into its hole or past its end"
done
note "pass"
