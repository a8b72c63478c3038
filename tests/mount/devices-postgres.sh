#!/bin/bash
# TIMEOUT: 240
# (about 60 s on 2 vCPUs shared with two other builds, 2026-12-01)
# PostgreSQL 15 on two devices (issue 15): conf/postgres.ini with a second
# configuration that adds [device "wal"] (wal.img, 512M, 8K blocks) and
# puts "*pg_wal/*" on it.  initdb, pgbench -i -s 1 and pgbench -n -c 2 run;
# then:
#   - every extent of every file under pg_wal is on wal and every extent
#     of every file under base on main (.scatterfs/extents' device column
#     for the WAL files, the catalog's dev column for all files);
#   - the request log's device_io names both devices;
#   - after a clean stop and a remount, and after a kill -9 of the daemon
#     during pgbench and a client that inserts one row per transaction and
#     records each acknowledged id (as crash-postgres.sh does), PostgreSQL
#     starts (recovers), no acknowledged insert is lost, pgbench's balances
#     agree, and each device's used bytes in .scatterfs/stats equal the
#     bytes of its extents and gaps in the catalog.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_two_devices
D=$M/pgdata
cat >"$T/wal.ini" <<EOF
[device "wal"]
backing = wal.img
size = 512M
block_size = 8K
[file "*pg_wal/*"]
device = wal
[log]
ops = read,write,extend,fsync
EOF
opts="allow_other,config=$SFS_ROOT/conf/postgres.ini,config=$T/wal.ini,log=$L"

sfs_pg_setup 54341
# shellcheck source=SCRIPTDIR/../pg_crash.sh
. "$SFS_ROOT/tests/pg_crash.sh"

# check_dev_space PHASE - each device's used_bytes (stats, read first: it
# flushes) against its extents and gaps in the catalog; read again each
# second for up to 7 s while PostgreSQL may be allocating.
check_dev_space() {
	local t got want
	for ((t = 0; t < 8; t++)); do
		((t == 0)) || sleep 1
		got=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"]
print(d["main"]["used"], d["wal"]["used"])' "$M/.scatterfs/stats")
		want=$(sqlite3 "$CAT" "SELECT group_concat(b, ' ') FROM (SELECT d, (SELECT coalesce(sum(length), 0) FROM extent WHERE dev = d) +
			(SELECT coalesce(sum(length), 0) FROM gap WHERE dev = d) AS b FROM (SELECT 0 AS d UNION ALL SELECT 1) ORDER BY d)")
		[[ $got == "$want" ]] && break
		note "$1: used_bytes main wal $got, catalog $want: reading again"
	done
	assert_eq "$got" "$want" "$1: used bytes of main and wal against the catalog"
	note "$1: used bytes main wal $got, as the catalog"
}

# check_placement PHASE - WAL extents on wal, table extents on main
check_placement() {
	local f n=0 devs rows wrong
	while IFS= read -r f; do
		# A checkpoint may recycle (rename) a segment after the listing:
		# one that is gone from pg_wal by now is skipped.
		if ! rows=$(tail -n +2 "$M/.scatterfs/extents/pgdata/pg_wal/$f" 2>&1); then
			[[ ! -e $D/pg_wal/$f ]] || fail "$1: cannot read the extents of pg_wal/$f: $rows"
			continue
		fi
		devs=$(cut -d, -f4 <<<"$rows" | sort -u | tr '\n' ' ')
		[[ -z $devs || $devs == "wal " || $devs == " " ]] || fail "$1: pg_wal/$f has extents on: $devs"
		n=$((n + 1))
	done < <(cd "$D/pg_wal" && find . -maxdepth 1 -type f -printf '%P\n')
	((n > 0)) || fail "$1: no WAL files"
	sfs_stats "$M" used_bytes >/dev/null # flushes every extent to the catalog
	wrong=$(sqlite3 "$CAT" "WITH RECURSIVE p(ino, path) AS (SELECT 1, '' UNION ALL
		SELECT d.ino, CASE p.path WHEN '' THEN d.name ELSE p.path || '/' || d.name END FROM dirent d JOIN p ON d.parent = p.ino)
		SELECT p.path || ' on ' || e.dev FROM extent e JOIN p ON p.ino = e.ino WHERE
		(p.path GLOB 'pgdata/pg_wal/*' AND e.dev != 1) OR (p.path GLOB 'pgdata/base/*' AND e.dev != 0) LIMIT 5")
	assert_eq "$wrong" "" "$1: extents on the wrong device (catalog)"
	counts=$(sqlite3 "$CAT" "WITH RECURSIVE p(ino, path) AS (SELECT 1, '' UNION ALL
		SELECT d.ino, CASE p.path WHEN '' THEN d.name ELSE p.path || '/' || d.name END FROM dirent d JOIN p ON d.parent = p.ino)
		SELECT (SELECT count(*) FROM extent e JOIN p ON p.ino = e.ino WHERE p.path GLOB 'pgdata/pg_wal/*'),
		(SELECT count(*) FROM extent e JOIN p ON p.ino = e.ino WHERE p.path GLOB 'pgdata/base/*')")
	IFS='|' read -r nw nb <<<"$counts"
	((nw > 0 && nb > 0)) || fail "$1: the catalog has $nw WAL and $nb table extents"
	note "$1: $n WAL files, $nw WAL extents all on wal, $nb table extents all on main"
}

sfs_mount "$B" "$M" "$opts,size=1G"
chown postgres:postgres "$M"
sfs_pg_initdb "$D" "initdb on the mount" -k -- "fsync = on" "synchronous_commit = on" "shared_buffers = 4MB" \
	"min_wal_size = 32MB" "max_wal_size = 48MB" "checkpoint_timeout = 30s"
pg_start "setup"
psql_val 'CREATE TABLE acked (id bigint PRIMARY KEY, pad text NOT NULL)' >/dev/null
out=$("$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -i -s 1 postgres 2>&1) || fail "pgbench -i -s 1: $out"
out=$("$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -n -c 2 -T 5 postgres 2>&1) || fail "pgbench -n -c 2 -T 5: $out"
tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -n 1)
note "pgbench: $tps tps"
[[ -n $tps ]] || fail "pgbench printed no tps: $out"
check_placement "after pgbench"
check_dev_space "after pgbench"

# The log names both devices.
cat "$M/.scatterfs/stats" >/dev/null # flushes the request log
names=$(sfs_log_awk "$L" 'NR > 1 { n = split($f_device_io, items, ";")
	for (i = 1; i <= n; i++) print substr(items[i], 1, index(items[i], ":") - 1) }' "$L" | sort -u | tr '\n' ' ')
assert_eq "$names" "main wal " "devices named in the log's device_io"
bad=$(sfs_log_awk "$L" 'NR > 1 && $f_path ~ /pg_wal\// && $f_device_io ~ /main:/ { print $f_path; exit }' "$L")
assert_eq "$bad" "" "a WAL request with a device I/O on main"

# Clean stop and remount.
bash "$T/writer.sh" >"$T/writer.0.log" 2>&1 &
writer_pid=$!
sleep 2
kill "$writer_pid" 2>/dev/null || true
wait "$writer_pid" 2>/dev/null || true
writer_pid=
pg_stop "before the remount"
sfs_umount "$M"
sfs_mount "$B" "$M" "$opts"
pg_start "after the remount"
check_db "after the remount"
check_dev_space "after the remount"

# kill -9 of the daemon under load.
"$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -n -c 2 -T 120 postgres >"$T/pgbench.kill.log" 2>&1 &
bench_pid=$!
bash "$T/writer.sh" >"$T/writer.1.log" 2>&1 &
writer_pid=$!
sleep 3
kill -0 "$writer_pid" 2>/dev/null || fail "the client stopped before the daemon was killed: $(cat "$T/writer.1.log")"
crash_daemon
note "killed daemon $dpid; last acknowledged id $(tail -n 1 "$T/ack")"
sfs_umount_dead "$M" "after the kill"
sfs_mount "$B" "$M" "$opts"
check_dev_space "after the kill, before recovery"
logpos=$(wc -l <"$PGLOG")
pg_start "after the kill"
tail -n +$((logpos + 1)) "$PGLOG" | grep -q "was not properly shut down; automatic recovery in progress" ||
	fail "no crash recovery in the server log after the kill"
check_db "after the kill"
check_placement "after the kill"
pg_stop "at the end"
check_dev_space "at the end"
sfs_umount "$M"
note "pass"
