#!/bin/bash
# device.direct = true opens the backing with O_DIRECT: unaligned writes
# and reads at odd offsets still give the exact bytes (aligned bounce
# buffers), holes read as zeros, SQLite in WAL mode works, and all of it
# survives a remount.
source "$(dirname "$0")/../lib.sh"

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
check() {
	python3 - "$M/x" <<'PY'
import os, sys
f = os.open(sys.argv[1], os.O_RDONLY)
d = os.pread(f, 30000, 0)
want = b'\0' * 7 + b'abc' * 1000 + b'\0' * (20000 - 3007) + b'Z' * 5000
sys.exit(0 if d == want else 1)
PY
}
sfs_mount "$B" "$M" "size=256M,device.direct=true"
grep -q 'direct = true' "$M/.scatterfs/config" || fail "effective config does not say direct = true"
python3 - "$M/x" <<'PY'
import os, sys
f = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(f, b'abc' * 1000, 7)
os.pwrite(f, b'Z' * 5000, 20000)
os.fsync(f)
PY
check || fail "unaligned writes read back wrong with device.direct"
sqlite3 "$M/t.db" "pragma journal_mode=wal; create table t(a); insert into t select value from generate_series(1, 20000);" >/dev/null
assert_eq "$(sqlite3 "$M/t.db" 'pragma integrity_check; select count(*), sum(a) from t')" "ok
20000|200010000" "sqlite on a direct backing"
sfs_umount "$M"
sfs_mount "$B" "$M" "device.direct=true"
check || fail "content after remount"
assert_eq "$(sqlite3 "$M/t.db" 'pragma integrity_check; select count(*), sum(a) from t')" "ok
20000|200010000" "sqlite after remount"
sfs_umount "$M"
note ok
