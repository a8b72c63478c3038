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
sfs_require sqlite3 python3

T=$SFS_TMP
M=$T/mnt
B=$T/main.img
W=$T/wal.img
CAT=$B.scatterfs
D=$M/pgdata
L=$T/log.csv
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
psql_val() { "$PGBIN/psql" -h "$S" -p "$PORT" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

pm_pid=
writer_pid=
bench_pid=
# shellcheck disable=SC2016 # expanded when the hook runs
sfs_on_exit 'for p in $writer_pid $bench_pid; do kill -9 $p; done; [[ -n $pm_pid ]] && kill -9 $pm_pid'

pg_start() {
	sfs_pg_start "$D" "$1"
	pm_pid=$(head -n 1 "$D/postmaster.pid")
}

pg_stop() {
	local out
	out=$(as_pg "$PGBIN/pg_ctl" -D "$D" -w -t 120 -m fast stop 2>&1) || fail "$1: pg_ctl stop: $out"
	pm_pid=
}

# pg_kill - the postmaster and its children after the daemon died: SIGQUIT, then SIGKILL.
pg_kill() {
	local kids p t
	[[ -n $pm_pid ]] || return 0
	kids=$(ps -o pid= --ppid "$pm_pid" || true)
	kill -QUIT "$pm_pid" 2>/dev/null || true
	for ((t = 0; t < 100; t++)); do
		kill -0 "$pm_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pm_pid" 2>/dev/null || true
	for p in $kids; do
		for ((t = 0; t < 100; t++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null || true
	done
	pm_pid=
}

# One session, one INSERT per transaction; an id is acknowledged once its RETURNING line is back.
cat >"$T/writer.sh" <<EOF
#!/bin/bash
n=\$("$PGBIN/psql" -h "$S" -p "$PORT" -U postgres -d postgres -XAtq -c 'SELECT coalesce(max(id), 0) FROM acked') || exit 2
coproc P { exec "$PGBIN/psql" -h "$S" -p "$PORT" -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 2>&1; }
echo "SET synchronous_commit = on;" >&\${P[1]}
while :; do
	n=\$((n + 1))
	echo "INSERT INTO acked VALUES (\$n, repeat(md5(\$n::text), 1 + \$n % 16)) RETURNING id;" >&\${P[1]} || break
	IFS= read -r -t 60 line <&\${P[0]} || { echo "writer: no answer for id \$n"; exit 3; }
	[[ \$line == "\$n" ]] || { echo "writer: id \$n: \$line"; exit 3; }
	echo \$n >>"$T/ack"
done
EOF

# check_db PHASE - every acknowledged id is there, payloads intact, pgbench balances agree
check_db() {
	local ack=0 out cnt mx bad a b t h
	[[ -s $T/ack ]] && ack=$(tail -n 1 "$T/ack")
	out=$(psql_val 'SELECT count(*), coalesce(max(id), 0),
		count(*) FILTER (WHERE pad IS DISTINCT FROM repeat(md5(id::text), 1 + (id % 16)::int)) FROM acked') ||
		fail "$1: querying acked: $out"
	IFS='|' read -r cnt mx bad <<<"$out"
	((mx >= ack)) || fail "$1: acknowledged inserts lost: max(id) = $mx, last acknowledged id = $ack"
	((mx <= ack + 1)) || fail "$1: max(id) = $mx but only $ack were acknowledged (at most one in flight)"
	assert_eq "$cnt" "$mx" "$1: count(*) of acked (ids 1..max(id) without gaps)"
	assert_eq "$bad" 0 "$1: rows of acked whose payload differs from what was inserted"
	((mx > ack)) && echo "$mx" >>"$T/ack"
	out=$(psql_val 'SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(bbalance) FROM pgbench_branches),
		(SELECT sum(tbalance) FROM pgbench_tellers), (SELECT coalesce(sum(delta), 0) FROM pgbench_history)') ||
		fail "$1: querying the pgbench tables: $out"
	IFS='|' read -r a b t h <<<"$out"
	[[ $a == "$b" && $a == "$t" && $a == "$h" ]] ||
		fail "$1: pgbench balances disagree: accounts $a, branches $b, tellers $t, history $h"
	note "$1: $cnt rows acknowledged and there; pgbench balances $a"
}

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
	local f n=0 devs wrong
	while IFS= read -r f; do
		devs=$(tail -n +2 "$M/.scatterfs/extents/pgdata/pg_wal/$f" | cut -d, -f4 | sort -u | tr '\n' ' ')
		[[ -z $devs || $devs == "wal " ]] || fail "$1: pg_wal/$f has extents on: $devs"
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
out=$(as_pg "$PGBIN/initdb" -D "$D" -U postgres --auth=trust -E UTF8 --no-locale -k 2>&1) ||
	fail "initdb on the mount: $out"
cat >>"$D/postgresql.conf" <<EOF
fsync = on
synchronous_commit = on
shared_buffers = 4MB
min_wal_size = 32MB
max_wal_size = 48MB
checkpoint_timeout = 30s
EOF
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
dpid=${SFS_PID[$M]}
kill -9 "$dpid"
wait "$dpid" 2>/dev/null || true
unset "SFS_PID[$M]"
pg_kill
for p in $writer_pid $bench_pid; do
	for ((t = 0; t < 100; t++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
done
writer_pid='' bench_pid=''
note "killed daemon $dpid; last acknowledged id $(tail -n 1 "$T/ack")"
fusermount3 -u "$M" 2>/dev/null || fusermount3 -u -z "$M" || fail "cannot unmount $M after the kill"
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
