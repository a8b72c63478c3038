#!/bin/bash
# [disk] time_dilation: the disk model's times stretched N times on the
# clock, its figures left in model time.  On the ssd model's defaults a
# 4 KiB read of a mapped page alone on its die takes command 5 + tR 40 +
# 4096 B / 400 MB/s + 4096 B / 560 MB/s = 62.554 us (each term rounded to
# the ns).  A 64 KiB file is written, then eight such reads one after
# another, at factor 1 and 20:
#   - every read's model_us in the log is 62 at both factors (model time),
#     and its latency_us (the clock's / N) at least that;
#   - the device's busy_ms grows by exactly 8 x 62.554 us at both factors;
#   - at factor 20 each read takes at least 20 x 62.554 us on the clock;
#   - .scatterfs/stats says the factor.
# Values outside 1 to 1000, and the key in a [device "NAME"] section
# (it is mount-wide), are refused naming the key, creating nothing.
source "$(dirname "$0")/../lib.sh"
sfs_require python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
L=$T/req.csv
base="size=256M,cache.mode=none,autoextend.zero_fill=none,disk.model=ssd,disk.metadata_io=false,log=$L,log.ops=read"

# eight 4 KiB O_DIRECT reads of pages 0..7, one after another: the least
# wall time of one, in ns
reads8() {
	python3 - "$M/f" <<'PY'
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
least = None
for i in range(8):
    t = time.monotonic_ns()
    assert os.preadv(fd, [buf], i * 4096) == 4096
    t = time.monotonic_ns() - t
    least = t if least is None else min(least, t)
print(least)
PY
}

# busy_ms of main, and time_dilation, from .scatterfs/stats
stats() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(s["devices"]["main"]["busy_ms"], s["time_dilation"])' "$M/.scatterfs/stats"
}

for n in 1 20; do
	rm -f "$B" "$B.scatterfs" "$L"
	sfs_mount "$B" "$M" "$base,disk.time_dilation=$n"
	dd if=/dev/urandom of="$M/f" bs=64k count=1 oflag=direct status=none
	sleep 0.1 # the write buffer's programs end (at factor 20, 5 ms on the clock)
	read -r b0 _ < <(stats)
	least=$(reads8)
	read -r b1 td < <(stats)
	sfs_umount "$M"
	note "factor $n: busy_ms $b0 -> $b1, least read $least ns on the clock"
	assert_eq "$td" "$n" "stats time_dilation"
	python3 -c 'import sys; d = float(sys.argv[2]) - float(sys.argv[1]); sys.exit(0 if abs(d - 8 * 0.062554) < 1e-9 else 1)' "$b0" "$b1" ||
		fail "factor $n: busy_ms grew by $b1 - $b0, expected 8 x 0.062554 ms (model time)"
	assert_eq "$(sfs_log_count "$L" read f 4096)" 8 "factor $n: reads in the log"
	bad=$(sfs_log_rows "$L" read f | sfs_log_awk "$L" '$f_model_us != 62 || $f_latency_us < 62')
	[[ -z $bad ]] || fail "factor $n: reads whose model_us is not 62 or latency_us below it: $bad"
	if ((n == 20)); then
		((least >= 20 * 62554)) || fail "factor 20: a read took $least ns, less than 20 x 62554"
	fi
done

# bad values: the key and the allowed range; nothing is created
for v in 0 1001 2.5; do
	rc=0
	"$SFS_BIN" "$B.bad" "$M" -o "size=64M,disk.model=ssd,disk.time_dilation=$v" >/dev/null 2>"$T/err" </dev/null || rc=$?
	((rc != 0)) || fail "time_dilation = $v mounted"
	grep -q "time_dilation = $v: must be a whole number from 1 to 1000" "$T/err" || fail "time_dilation = $v: $(cat "$T/err")"
	[[ ! -e $B.bad ]] || fail "time_dilation = $v created the backing"
done
printf '[device "wal"]\nbacking = %s\ntime_dilation = 2\n' "$T/wal" >"$T/dev.ini"
rc=0
"$SFS_BIN" "$B.bad" "$M" -o "size=64M,config=$T/dev.ini" >/dev/null 2>"$T/err" </dev/null || rc=$?
((rc != 0)) || fail "time_dilation in a [device] section mounted"
grep -q "key 'time_dilation' is mount-wide (one clock for every device): set it in \[disk\]" "$T/err" ||
	fail "time_dilation in [device \"wal\"]: $(cat "$T/err")"
[[ ! -e $B.bad && ! -e $T/wal ]] || fail "the refused mount created a backing"
note "pass"
