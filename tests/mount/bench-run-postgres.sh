#!/bin/bash
# bench/run drives PostgreSQL 15 at a small scale, as user postgres (--as):
# --load runs initdb on the mount, starts the server, loads 50000 rows,
# checkpoints and stops it; --before starts the server with pg_ctl on each
# run's fresh mount and --after stops it; the workload is a full scan
# (count(*)).  Each of the 2 runs of both layouts counts 50000 rows as user
# postgres, who can read the request log (its header); both rows have no
# error and 2 runs; a cold scan read at least
# the table's file from the mount (bytes_read >= its size, taken in the
# load); the interleaved layout's scans became more device I/Os than the
# contiguous one's (ios_vs_baseline > 1, baseline contiguous).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

sfs_pg_setup 54437
ROWS=50000
pgopts="-p $PORT -k $S -c listen_addresses='' -c shared_buffers=128kB"
start="$PGBIN/pg_ctl -D \"\$SCATTERFS_MOUNT/pgdata\" -l $PGLOG -w -t 120 -o \"$pgopts\" start >/dev/null"
stop="$PGBIN/pg_ctl -D \"\$SCATTERFS_MOUNT/pgdata\" -m fast -w stop >/dev/null"
sql="psql -X -q -At -h $S -p $PORT -d postgres"
tag="\$(basename \"\$(dirname \"\$SCATTERFS_MOUNT\")\")"
load="$PGBIN/initdb -D \"\$SCATTERFS_MOUNT/pgdata\" -A trust >$S/initdb.log 2>&1 || { cat $S/initdb.log >&2; exit 1; }
$start || exit 1
$sql -c \"CREATE TABLE t (id int, pad text); INSERT INTO t SELECT x, repeat('x', 100) FROM generate_series(1, $ROWS) x; CHECKPOINT;\" &&
$sql -c \"SELECT pg_relation_size('t')\" >$S/size.$tag || { $stop; exit 1; }
$stop"
workload="$sql -c 'SELECT count(*) FROM t' >$S/count.$tag.\$SCATTERFS_RUN && id -un >$S/user.$tag.\$SCATTERFS_RUN &&
head -1 \"\$SCATTERFS_LOG\" | cut -d, -f1-2 >$S/log.$tag.\$SCATTERFS_RUN"

out=$SFS_TMP/out.csv
sfs_bench_run "$out" --as postgres --set cache.mode=kernel --load "$load" --before "$start" --after "$stop" \
	--workload "$workload"
col() { sfs_csv_col "$out" "$@"; }
k=0
for layout in contiguous equi-fragmented; do
	k=$((k + 1))
	size=$(cat "$S/size.config$k")
	((size >= ROWS * 100)) || fail "$layout: table of $size bytes, less than the rows' $((ROWS * 100))"
	(($(col bytes_read $layout | cut -d. -f1) >= size)) ||
		fail "$layout: $(col bytes_read $layout) bytes read per run, less than the table's $size"
	for r in 1 2; do
		assert_eq "$(cat "$S/count.config$k.$r")" "$ROWS" "$layout run $r: rows counted"
		assert_eq "$(cat "$S/user.config$k.$r")" postgres "$layout run $r: the workload's user"
		assert_eq "$(cat "$S/log.config$k.$r")" ts_us,op "$layout run $r: the request log's header, read by the workload"
	done
done
awk -v r="$(col ios_vs_baseline equi-fragmented)" 'BEGIN { exit !(r > 1) }' ||
	fail "equi-fragmented: ios_vs_baseline $(col ios_vs_baseline equi-fragmented), expected more than 1"
note "pass"
