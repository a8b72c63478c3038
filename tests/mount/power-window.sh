#!/bin/bash
# The 200 ms between a simulated power failure (crash) and the daemon's
# end: requests that arrive then fail, and quietly.  A writer keeps
# creating, writing and fsyncing files, and stat-ing and listing the
# mount, while another process sends crash; then:
#   - the daemon's log has its crash line and no catalog error (no
#     "scatterfs: catalog:" line: the catalog's failures after the power
#     failure are the power failure's, and its files, back at their last
#     sync, are never read into a cache that no longer matches them, so
#     no "malformed" either);
#   - after a remount the mount holds exactly the files that were fsynced
#     with their directory before the crash, whole.
# TIMEOUT: 120
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
OPTS="size=32M,device.block_size=4K,device.layers=accounting:faults:timing:volatile:base,device.volatile=true"

sfs_mount "$B" "$M" "$OPTS"
mkdir "$M/d"
for i in 1 2 3; do
	head -c 8192 /dev/zero | tr '\0' "$i" >"$M/d/synced$i"
done
python3 -c 'import os, sys
for i in (1, 2, 3):
    fd = os.open(sys.argv[1] + "/synced%d" % i, os.O_RDONLY); os.fsync(fd); os.close(fd)
fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd)' "$M/d"

# The writer runs until its requests fail (ENOTCONN once the daemon is gone).
python3 - "$M" >"$T/writer.out" 2>&1 <<'PY' &
import errno, os, sys, time
m = sys.argv[1]
ok = failed = 0
t_end = time.time() + 20
i = 0
while time.time() < t_end:
    i += 1
    try:
        fd = os.open("%s/d/new%d" % (m, i), os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, b"x" * 4096)
        os.fsync(fd)
        os.close(fd)
        os.stat("%s/d/synced1" % m)
        os.listdir("%s/d" % m)
        ok += 1
    except OSError as e:
        failed += 1
        if e.errno == errno.ENOTCONN:
            break
print("ok", ok, "failed", failed)
PY
wpid=$!
sleep 0.5
sfs_crash "$M" crash
wait "$wpid"
note "writer: $(cat "$T/writer.out")"
grep -qF "scatterfs: crash: " "$SFS_LAST_DLOG" || fail "the daemon did not report the crash"
if grep -E 'scatterfs: catalog:|malformed' "$SFS_LAST_DLOG"; then
	fail "catalog errors in the daemon's log after the crash (above)"
fi

sfs_mount "$B" "$M" "$OPTS"
assert_eq "$(ls "$M/d" | grep -v '^new' | tr '\n' ' ')" "synced1 synced2 synced3 " "the fsynced files after the remount"
for i in 1 2 3; do
	assert_eq "$(tr -d "$i" <"$M/d/synced$i" | wc -c) $(stat -c %s "$M/d/synced$i")" "0 8192" "synced$i after the remount"
done
# A new file that survived was fsynced (it and the directory: its size and
# data); one whose directory entry was durable without its data would read
# short or as zeros.
for f in "$M"/d/new*; do
	[[ -e $f ]] || continue
	assert_eq "$(tr -d x <"$f" | wc -c) $(stat -c %s "$f")" "0 4096" "$(basename "$f") after the remount"
done
sfs_umount "$M"
note "pass"
