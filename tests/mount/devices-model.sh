#!/bin/bash
# TIMEOUT: 120
# Each device has its own disk model and virtual head (issue 15, item 1):
# with the hdd model on main and on [device "wal"] (rotation = average, so
# a read's modelled time depends only on where the head is), 200 random
# 4 KiB reads of a file on wal get exactly the same model_us, read by read,
# whether they run alone or while another process reads a file on main at
# random, and main's reads are modelled too.  Were the devices one model,
# main's reads would move wal's head.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/main.img
cat >"$T/model.ini" <<EOF
[disk]
model = hdd
rotation = average
[device "wal"]
backing = wal.img
size = 256M
model = hdd
rotation = average
[file "wal/*"]
device = wal
[log]
ops = read
EOF

sfs_mount "$B" "$M" "config=$T/model.ini,size=256M"
mkdir "$M/wal" "$M/data"
head -c $((64 << 20)) /dev/zero >"$M/wal/f"
head -c $((64 << 20)) /dev/zero >"$M/data/f"
sfs_umount "$M"

# reads FILE SEED N - N reads of 4 KiB at random 4 KiB-aligned offsets (fixed seed)
cat >"$T/reads.py" <<'EOF'
import os, random, sys
path, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
for _ in range(n):
    os.pread(fd, 4096, rng.randrange(size // 4096) * 4096)
os.close(fd)
EOF

# run NAME [--load] - mount, read wal/f (with main's reader alongside), unmount; the model_us of wal/f's reads in $T/NAME.us
run() {
	local name=$1 load=${2:-} lpid=
	sfs_mount "$B" "$M" "config=$T/model.ini,log=$T/$name.csv"
	if [[ -n $load ]]; then
		python3 "$T/reads.py" "$M/data/f" 7 100000 &
		lpid=$!
		sleep 0.2
	fi
	python3 "$T/reads.py" "$M/wal/f" 1 200
	if [[ -n $lpid ]]; then
		kill "$lpid" 2>/dev/null || true
		wait "$lpid" 2>/dev/null || true
	fi
	cat "$M/.scatterfs/stats" >/dev/null # flushes the log
	sfs_umount "$M"
	# in the order the reads were issued (ts_us): the log's rows of
	# requests answered on different threads need not be in that order
	sfs_log_rows "$T/$name.csv" read wal/f | sfs_log_awk "$T/$name.csv" '{ print $f_ts_us, $f_model_us }' |
		sort -n -k 1,1 | cut -d' ' -f2 >"$T/$name.us"
	sfs_log_rows "$T/$name.csv" read data/f | sfs_log_awk "$T/$name.csv" '$f_model_us > 0 { n++ } END { print n + 0 }' >"$T/$name.main"
}

run alone
run loaded --load
assert_eq "$(wc -l <"$T/alone.us")" 200 "reads of wal/f logged alone"
assert_eq "$(cat "$T/alone.main")" 0 "reads of data/f in the run alone"
main_reads=$(cat "$T/loaded.main")
((main_reads > 0)) || fail "no modelled read of data/f while wal/f was read"
cmp -s "$T/alone.us" "$T/loaded.us" ||
	fail "wal/f's modelled read times changed with reads on main: $(diff "$T/alone.us" "$T/loaded.us" | head -n 6)"
note "pass: 200 reads on wal modelled the same alone and beside $main_reads modelled reads on main ($(awk '{ s += $1 } END { print s }' "$T/alone.us") us in all)"
