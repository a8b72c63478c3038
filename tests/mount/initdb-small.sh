#!/bin/bash
# A new PostgreSQL cluster fits a 96 MiB mount with the defaults (no
# config=: extent_size auto, whose first extents are 64 KiB): initdb as
# user postgres succeeds (with 1 MiB first extents its ~1,000 small files
# took 813 MB), the server starts, a table of 1,000 rows is created and
# counted back exactly, and the server stops; no allocation was refused
# (.scatterfs/stats devices.main.enospc 0, no "is full" line from the
# daemon) and the used bytes are within the device.  Skipped (77) only
# when PostgreSQL 15 or its user is absent.
# TIMEOUT: 600
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
D=$M/data
sfs_pg_setup 54341

pg_running=0
# shellcheck disable=SC2016 # expanded when the hook runs
sfs_on_exit '((pg_running)) && as_pg "$PGBIN/pg_ctl" -D "$D" -w -t 20 -m immediate stop'

sfs_mount "$T/backing" "$M" "allow_other,size=96M"
chown postgres:postgres "$M"
sfs_pg_initdb "$D" "initdb on a 96 MiB mount with the defaults"
read -r used size enospc < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"]["main"]
print(d["used"], d["size"], d["enospc"])' "$M/.scatterfs/stats")
note "initdb done: $used of $size bytes used"
assert_eq "$size" 100663296 "device size"
assert_eq "$enospc" 0 "devices.main.enospc after initdb"
sfs_pg_start "$D" "PostgreSQL on a 96 MiB mount"
pg_running=1
psql() { as_pg "$PGBIN/psql" -h "$S" -p "$PORT" -d postgres -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
psql "create table t as select g as id, repeat('x', 100) as pad from generate_series(1, 1000) g" >/dev/null
assert_eq "$(psql 'select count(*), sum(id) from t')" "1000|500500" "rows of the new table"
out=$(as_pg "$PGBIN/pg_ctl" -D "$D" -w -t 120 -m fast stop 2>&1) || fail "pg_ctl stop: $out"
pg_running=0
assert_eq "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["devices"]["main"]["enospc"])' "$M/.scatterfs/stats")" 0 \
	"devices.main.enospc after the server ran"
assert_eq "$(grep -c "is full" "$SFS_LAST_DLOG" || true)" 0 "ENOSPC messages of the daemon"
sfs_umount "$M"
