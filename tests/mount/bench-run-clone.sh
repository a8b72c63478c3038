#!/bin/bash
# bench/run --data on a PostgreSQL data directory cloned from a fragmented
# source (issue 14), at small scale.  A 160 MiB ext4 loop image is filled
# with 64 KiB files and every other one is deleted, so that its free space
# is 64 KiB holes; initdb there (1 MiB WAL segments), a table of 20,000
# rows, VACUUM (FREEZE), CHECKPOINT, stop: the table's file and the others
# are spread over the holes.  scatterfs-plan clone maps the data directory;
# bench/run --data runs it on the cloned configuration and on contiguous,
# 2 runs with the first discarded, as postgres, pg_ctl start and stop
# around a SELECT count(*).
# Asserted: bench/run exits 0; both rows have no error and 1 counted run;
# the workload printed 20000 in each counted run; static_score and
# dynamic_score are numbers in [0, 1] in both rows; contiguous's
# static_score is exactly 1.0000 (every file copied sequentially into
# contiguous space); the clone's static_score is below 0.99 (so below
# contiguous's): the whole mount's score, over every file of the data
# directory, where the source's table file alone has more than 4 extents.
# The dynamic scores are not compared: the workload reads the catalog
# files and the WAL as well as the table, so whole-run dynamic scores
# differ by run (0.91 against 0.90 one way or the other here), while the
# static score is a property of the layout.
# TIMEOUT: 600
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 mkfs.ext4 filefrag
sfs_pg_setup 54431

T=$SFS_TMP
E=$T/ext4
SRC=$E/src
PLAN=$SFS_BUILD/bench/scatterfs-plan
ROWS=20000

truncate -s 160M "$T/ext4.img"
mkfs.ext4 -q -F -b 4096 "$T/ext4.img"
mkdir -p "$E"
mount -o loop "$T/ext4.img" "$E"
sfs_on_exit "as_pg '$PGBIN/pg_ctl' -D '$SRC/pgdata' -m immediate stop; umount -l '$E'"
# fragment the free space: 64 KiB files until the file system is full,
# then every other one deleted
nholes=$("$SFS_ROOT/bench/fragment-free" "$E/fill" 2>/dev/null) || fail "bench/fragment-free on the ext4 image"
note "free space: $nholes holes of 64 KiB"
mkdir -p "$SRC"
chown postgres:postgres "$SRC"
as_pg "$PGBIN/initdb" -D "$SRC/pgdata" -A trust --wal-segsize=1 >"$T/initdb.log" 2>&1 ||
	fail "initdb: $(tail -n 5 "$T/initdb.log")"
sfs_pg_start "$SRC/pgdata" source
as_pg "$PGBIN/psql" -X -q -At -h "$S" -p "$PORT" -d postgres \
	-c "CREATE TABLE t AS SELECT x AS id, md5(x::text) AS pad FROM generate_series(1, $ROWS) x" \
	-c 'VACUUM (FREEZE, ANALYZE) t' -c CHECKPOINT >"$T/psql.log" 2>&1 ||
	fail "creating the table: $(cat "$T/psql.log")"
relpath=$(as_pg "$PGBIN/psql" -X -q -At -h "$S" -p "$PORT" -d postgres -c "SELECT pg_relation_filepath('t')")
as_pg "$PGBIN/pg_ctl" -D "$SRC/pgdata" -m fast -w stop >/dev/null || fail "pg_ctl stop (source)"
filefrag -v "$SRC/pgdata/$relpath" >"$T/filefrag.t"
sfs_add_log "$T/filefrag.t"
extents=$(awk '/extents? found/ { print $2 }' "$T/filefrag.t")
note "source: table file $relpath in $extents extents"
((extents > 4)) || fail "the table's file is not fragmented on the source: $(cat "$T/filefrag.t")"

"$PLAN" clone "$SRC" --out "$T/cloned.ini" 2>"$T/clone.err" || fail "clone: $(cat "$T/clone.err")"

out=$T/out.csv
err=$T/err.txt
sfs_add_log "$err"
pg="$PGBIN/pg_ctl -D \$SCATTERFS_MOUNT/pgdata -l $PGLOG -w -t 120 -o '-p $PORT -k $S -c listen_addresses='\\'''\\'"
SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/run" --layouts "$T/cloned.ini,contiguous" \
	--data "$SRC" --as postgres --runs 2 --discard 1 --size 512M --format csv \
	--workdir "$T/work" --before "$pg start" --after "$pg -m fast stop" \
	--workload "$PGBIN/psql -X -q -At -h $S -p $PORT -d postgres -c 'SELECT count(*) FROM t' | sed 's/^/count: /' >&2" \
	>"$out" 2>"$err" </dev/null || fail "bench/run exited $?"
sfs_add_log "$out"
cat "$out"

assert_eq "$(grep -c "^count: $ROWS\$" "$err")" 4 "SELECT count(*) printed $ROWS in each of the 2 runs of both configurations"
# columns by header name
col() { awk -F, -v l="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } $1 == l { print $h[c] }' "$out"; }
for l in cloned contiguous; do
	assert_eq "$(col $l error)" "" "$l: error"
	assert_eq "$(col $l runs)" 1 "$l: counted runs"
	for s in static_score dynamic_score; do
		v=$(col $l $s)
		if ! [[ $v =~ ^[01]\.[0-9]{4}$ ]] || ! awk -v v="$v" 'BEGIN { exit !(v >= 0 && v <= 1) }'; then
			fail "$l: $s '$v' is not a score"
		fi
	done
done
assert_eq "$(col contiguous static_score)" 1.0000 "contiguous: static_score"
cs=$(col cloned static_score)
awk -v c="$cs" 'BEGIN { exit !(c < 0.99) }' || fail "cloned: static_score $cs, expected below 0.99 (contiguous: 1.0000)"
note "static_score cloned $cs, contiguous 1.0000; dynamic_score cloned $(col cloned dynamic_score), contiguous $(col contiguous dynamic_score)"
note "pass"
