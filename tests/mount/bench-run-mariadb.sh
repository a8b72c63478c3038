#!/bin/bash
# bench/run drives MariaDB/InnoDB with innodb_flush_method=O_DIRECT at a
# small scale, as user mysql (--as): --load creates the data directory on
# the mount (mariadb-install-db), starts the server, loads 20000 rows and
# stops it; --before starts the server on each run's fresh mount, --after
# stops it; the workload counts the rows (a full scan).  Each of the 2 runs
# of both layouts counts 20000 rows, as user mysql, with SCATTERFS_MOUNT
# and SCATTERFS_LOG set; both rows have no error and 2 runs; a cold scan
# (each run is a new mount, the page cache dropped, the server restarted)
# read at least the rows' 200-byte pads from the mount: bytes_read >=
# 20000 x 200; t.ibd holds at least that.  Skipped (77) when MariaDB is
# not installed.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

sfs_require python3 /usr/sbin/mariadbd /usr/bin/mariadb-install-db
id mysql >/dev/null 2>&1 || sfs_skip "no user mysql (package mariadb-server creates it)"

S=$SFS_TMP/sock
mkdir -p "$S"
chown mysql:mysql "$S"
ROWS=20000
# The server's options: O_DIRECT (InnoDB's flush method under test), small
# memory, no network, everything under the mount or the socket directory.
opts="--no-defaults --datadir=\"\$SCATTERFS_MOUNT/data\" --socket=$S/sock --skip-networking \
--pid-file=$S/mariadb.pid --log-error=$S/error.log --innodb-flush-method=O_DIRECT \
--innodb-buffer-pool-size=16M --innodb-log-file-size=16M"
start="(/usr/sbin/mariadbd $opts >/dev/null 2>&1 & \
for i in \$(seq 600); do mariadb-admin --no-defaults -S $S/sock -u root ping >/dev/null 2>&1 && exit 0; \
kill -0 \$! 2>/dev/null || break; sleep 0.1; done; cat $S/error.log >&2; exit 1)"
stop="mariadb-admin --no-defaults -S $S/sock -u root shutdown"
sql="mariadb --no-defaults -S $S/sock -u root -N -B"
load="mariadb-install-db --no-defaults --datadir=\"\$SCATTERFS_MOUNT/data\" --auth-root-authentication-method=normal \
--skip-test-db >$S/install.log 2>&1 || { cat $S/install.log >&2; exit 1; }
$start || exit 1
$sql -e \"CREATE DATABASE b; USE b; CREATE TABLE t (id INT PRIMARY KEY, pad CHAR(200)) ENGINE=InnoDB;
INSERT INTO t SELECT seq, REPEAT('x', 200) FROM seq_1_to_$ROWS;\" || { $stop; exit 1; }
$stop && stat -c %s \"\$SCATTERFS_MOUNT/data/b/t.ibd\" >$S/ibd.\$(basename \"\$(dirname \"\$SCATTERFS_MOUNT\")\")"
workload="$sql -e 'SELECT count(*) FROM b.t' >$S/count.\$(basename \"\$(dirname \"\$SCATTERFS_MOUNT\")\").\$SCATTERFS_RUN &&
echo \"\$(id -un) \$SCATTERFS_MOUNT \$SCATTERFS_LOG\" >$S/env.\$(basename \"\$(dirname \"\$SCATTERFS_MOUNT\")\").\$SCATTERFS_RUN"

out=$SFS_TMP/out.csv
sfs_add_log "$S/error.log"
sfs_bench_run "$out" --as mysql --load "$load" --before "$start" --after "$stop" --workload "$workload" \
	--workdir "$SFS_TMP/work"
col() { sfs_csv_col "$out" "$1" "$2"; }
for k in 1 2; do
	layout=$(sed -n "$((k + 1))s/,.*//p" "$out")
	ibd=$(cat "$S/ibd.config$k")
	((ibd > ROWS * 200)) || fail "$layout: t.ibd is $ibd bytes, less than the rows' $((ROWS * 200))"
	(($(col bytes_read $layout | cut -d. -f1) >= ROWS * 200)) ||
		fail "$layout: $(col bytes_read $layout) bytes read per run, less than the rows' $((ROWS * 200))"
	for r in 1 2; do
		assert_eq "$(cat "$S/count.config$k.$r")" "$ROWS" "$layout run $r: rows counted"
		read -r user mnt log <"$S/env.config$k.$r"
		assert_eq "$user" mysql "$layout run $r: the workload's user"
		[[ $mnt == "$SFS_TMP"/work/bench-run.*/config$k/mnt ]] || fail "$layout run $r: SCATTERFS_MOUNT is '$mnt'"
		assert_eq "$log" "${mnt%/mnt}/run$r.csv" "$layout run $r: SCATTERFS_LOG"
	done
done
note "pass"
