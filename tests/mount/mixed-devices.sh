#!/bin/bash
# TIMEOUT: 300
# PostgreSQL on two devices with different disk models (issue 26): the data
# directory on main with conf/hdd-7200.ini's [disk] (model = hdd), pg_wal/*
# ([file "*pg_wal/*"], adding to conf/postgres.ini's rule of that glob)
# on [device "wal"] with preset = conf/ssd-nvme.ini (model = ssd, 1G).
# initdb and pgbench -i -s 1 run on a mount of the same devices without a
# model (the load); then a mount with both models runs pgbench -n -c 2
# -T 5, and:
#   - .scatterfs/stats names both models (devices.main.model hdd,
#     devices.wal.model ssd) and both devices served I/O during the run
#     (read_ios + write_ios grew on each; the ssd model's
#     host_pages_written and the hdd device's busy_ms grew);
#   - the request log's header has model_us, dies and collisions, its
#     device_io names both devices, every pg_wal row's device I/Os are on
#     wal and carry dies >= 1 (pages on the flash model), and a table file's
#     read or write on main carries dies 0 (the hdd model has none).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/main.img
D=$M/pgdata
L=$T/log.csv
# wal_ini MODEL - the wal device and the pg_wal rule; with MODEL=1 its ssd preset
wal_ini() {
	{
		echo "[device \"wal\"]"
		[[ $1 == 1 ]] && echo "preset = $SFS_ROOT/conf/ssd-nvme.ini"
		echo "backing = wal.img"
		echo "size = 1G"
		echo "[file \"*pg_wal/*\"]"
		echo "device = wal"
		echo "[log]"
		echo "ops = read,write,extend,fsync"
	} >"$T/wal$1.ini"
}
wal_ini 0
wal_ini 1
load_opts="allow_other,config=$SFS_ROOT/conf/postgres.ini,config=$T/wal0.ini"
run_opts="allow_other,config=$SFS_ROOT/conf/postgres.ini,config=$SFS_ROOT/conf/hdd-7200.ini,config=$T/wal1.ini,log=$L"

sfs_pg_setup 54443
# shellcheck source=SCRIPTDIR/../pg_crash.sh
. "$SFS_ROOT/tests/pg_crash.sh"

sfs_mount "$B" "$M" "$load_opts,size=1G"
chown postgres:postgres "$M"
sfs_pg_initdb "$D" "initdb on the mount" -k -- "fsync = on" "synchronous_commit = on" "shared_buffers = 4MB"
pg_start "load"
out=$("$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -i -s 1 postgres 2>&1) || fail "pgbench -i -s 1: $out"
pg_stop "after the load"
sfs_umount "$M"

sfs_mount "$B" "$M" "$run_opts"
# counters DEV - "model read_ios+write_ios busy_ms host_pages_written" of device DEV
counters() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"][sys.argv[2]]
t = d.get("timing", {})
print(d.get("model", "none"), d["read_ios"] + d["write_ios"], d["busy_ms"], t.get("host_pages_written", 0))' \
		"$M/.scatterfs/stats" "$1"
}
read -r main_model main_ios0 main_busy0 _ < <(counters main)
read -r wal_model wal_ios0 _ wal_pages0 < <(counters wal)
assert_eq "$main_model $wal_model" "hdd ssd" "stats: the models of main and wal"
pg_start "with the models"
out=$("$PGBIN/pgbench" -h "$S" -p "$PORT" -U postgres -n -c 2 -T 5 postgres 2>&1) || fail "pgbench -n -c 2 -T 5: $out"
tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -n 1)
[[ -n $tps ]] || fail "pgbench printed no tps: $out"
pg_stop "after pgbench"
read -r _ main_ios main_busy _ < <(counters main)
read -r _ wal_ios _ wal_pages < <(counters wal)
note "pgbench $tps tps; main (hdd): $((main_ios - main_ios0)) device I/Os, busy ${main_busy0} -> ${main_busy} ms; wal (ssd): $((wal_ios - wal_ios0)) device I/Os, host pages $wal_pages0 -> $wal_pages"
((main_ios > main_ios0)) || fail "main served no device I/O during pgbench"
((wal_ios > wal_ios0)) || fail "wal served no device I/O during pgbench"
((wal_pages > wal_pages0)) || fail "the ssd model on wal programmed no host page ($wal_pages0 -> $wal_pages)"
awk -v a="$main_busy0" -v b="$main_busy" 'BEGIN { exit !(b > a) }' || fail "main's busy_ms stayed at $main_busy"

cat "$M/.scatterfs/stats" >/dev/null # flushes the request log
head -n 1 "$L" | grep -q ',model_us,dies,collisions$' || fail "the log's header: $(head -n 1 "$L")"
names=$(sfs_log_awk "$L" 'NR > 1 { n = split($f_device_io, items, ";")
	for (i = 1; i <= n; i++) print substr(items[i], 1, index(items[i], ":") - 1) }' "$L" | sort -u | tr '\n' ' ')
assert_eq "$names" "main wal " "devices named in the log's device_io"
bad=$(sfs_log_awk "$L" 'NR > 1 && $f_path ~ /pg_wal\// && $f_device_io != "" && ($f_device_io ~ /main:/ || $f_dies < 1) { print; exit }' "$L")
assert_eq "$bad" "" "a pg_wal row with a device I/O on main or without a flash die"
nwal=$(sfs_log_awk "$L" 'NR > 1 && $f_path ~ /pg_wal\// && $f_device_io ~ /wal:/' "$L" | wc -l)
nmain=$(sfs_log_awk "$L" 'NR > 1 && $f_path ~ /^pgdata\/base\// && $f_device_io ~ /main:/ && ($f_op == "read" || $f_op == "write") && $f_dies == 0' "$L" | wc -l)
((nwal > 0 && nmain > 0)) || fail "rows: $nwal pg_wal rows on wal, $nmain table rows on main with dies 0"
note "log: $nwal pg_wal rows on wal (ssd, dies >= 1), $nmain table rows on main (hdd, dies 0)"
sfs_umount "$M"
note "pass"
