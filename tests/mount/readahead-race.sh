#!/bin/bash
# The read size a mount asks for is in place before anything can read
# (bench/scan once ran a row at the kernel's 128 KiB instead of 16 KiB).
# 1. 20 mounts with cache.mode=kernel,cache.readahead=1M, each probed the
#    moment it appears in mountinfo: the first statfs that the mount
#    answers finds read_ahead_kb at 1024 already (the daemon writes it
#    before it answers INIT, and the kernel holds every request until
#    then), and a file opened right after it is read in 1 MiB requests
#    (the dominant read size of the log is exactly 1048576: a file takes
#    its readahead when it is opened).  The daemon used to write the value
#    from a thread after INIT, which raced with both.
# 2. 10 mounts with the default readahead, then, as soon as sfs_mount
#    returns, 16 KiB written to read_ahead_kb as bench/scan did: 0.3 s
#    later it is still 16 (nothing of the daemon's writes it after the
#    mount answers; it used to overwrite it with its own 128).
# TIMEOUT: 300
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
sfs_mount "$B" "$M" "size=128M"
head -c 8M /dev/urandom >"$M/f"
sfs_umount "$M"

# probe DAEMON BACKING MNT OPTS - starts DAEMON -f, waits for the mount in
# mountinfo, then at once: statfs, read_ahead_kb (printed), and a
# sequential read of MNT/f in 64 KiB read() calls; leaves it mounted
probe() {
	python3 - "$@" <<'PY'
import os, subprocess, sys, time
daemon, backing, mnt, opts, dlog = sys.argv[1:6]
real = os.path.realpath(mnt)
with open(dlog, "w") as log:
    p = subprocess.Popen([daemon, backing, mnt, "-f", "-o", opts], stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log)
print(p.pid, flush=True)
dev, deadline = None, time.monotonic() + 10
while dev is None:
    with open("/proc/self/mountinfo") as f:
        for line in f:
            x = line.split()
            if x[4] == real and x[x.index("-") + 1] == "fuse.scatterfs":
                dev = x[2]
    if dev is None:
        if p.poll() is not None or time.monotonic() > deadline:
            sys.exit("the mount did not appear")
        time.sleep(0.0002)
os.statvfs(mnt)
with open(f"/sys/class/bdi/{dev}/read_ahead_kb") as f:
    print(f.read().strip(), flush=True)
with open(os.path.join(mnt, "f"), "rb", buffering=0) as f:
    while f.read(65536):
        pass
PY
}

# dominant_read LOG - the most common size of the read rows of f
dominant_read() {
	sfs_log_awk "$1" 'NR > 1 && $f_op == "read" && $f_path == "f" { n[$f_size]++ } END { for (s in n) if (n[s] > c) { c = n[s]; d = s } print d }' "$1"
}

for ((i = 1; i <= 20; i++)); do
	L=$SFS_TMP/probe$i.csv
	out=$(probe "$SFS_BIN" "$B" "$M" "cache.mode=kernel,cache.readahead=1M,log=$L" "$SFS_TMP/probe$i.daemon") ||
		fail "round $i: the probe failed: $out $(cat "$SFS_TMP/probe$i.daemon")"
	sfs_add_log "$SFS_TMP/probe$i.daemon"
	{
		read -r pid
		read -r kb
	} <<<"$out"
	sfs_fusermount_u "$M" "round $i"
	for ((t = 0; t < 300; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	assert_eq "$kb" 1024 "round $i: read_ahead_kb when the mount first answered"
	assert_eq "$(dominant_read "$L")" 1048576 "round $i: dominant read size of a file opened at once"
done
note "20 mounts: readahead 1M in place at the first answered request, 1 MiB reads"

for ((i = 1; i <= 10; i++)); do
	sfs_mount "$B" "$M" "cache.mode=kernel"
	echo 16 >"/sys/class/bdi/$(mountpoint -d "$M")/read_ahead_kb"
	sleep 0.3
	assert_eq "$(sfs_readahead_kb "$M")" 16 "round $i: read_ahead_kb 0.3 s after writing 16 once the mount answered"
	sfs_umount "$M"
done
note "10 mounts: a readahead written once the mount answered stayed"
