#!/bin/bash
# Writers of an inode are not starved by its readers.  Under the disk
# model each read holds its file's lock through its modelled wait, so with
# four readers overlapping there is always a reader inside; an inode's
# lock lets a waiting writer in first (an open, a write, and the flush of
# every inode that reading .scatterfs/stats does), so each of those
# finishes within a few reads' time.  With glibc's default lock kind
# (readers first) the stats read and the opens waited as long as the
# reads went on (minutes).
# TIMEOUT: 120
source "$(dirname "$0")/../lib.sh"

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
sfs_mount "$B" "$M" "size=128M,cache.mode=none,disk.model=hdd"
dd if=/dev/zero of="$M/f" bs=1M count=64 status=none
readers=()
for k in 1 2 3 4; do
	python3 - "$M/f" "$k" <<'PY' &
import os, sys
f = os.open(sys.argv[1], os.O_RDONLY)
k = int(sys.argv[2])
n = 0
while True:
    os.pread(f, 1 << 20, ((n * 37 + k * 11) % 64) << 20)
    n += 1
PY
	readers+=($!)
done
sfs_on_exit "kill ${readers[*]}"
for ((t = 0; t < 600; t++)); do
	(($(sfs_stats "$M" reads) >= 16)) && break
	sleep 0.1
done
# Each of these must get the lock within a few 1 MiB reads (about 20 ms
# each on the modelled disk): allow 10 s, against minutes before.
for what in stats open write; do
	start=$(date +%s%N)
	case $what in
	stats) timeout 30 cat "$M/.scatterfs/stats" >/dev/null || fail "reading stats timed out" ;;
	open) timeout 30 python3 -c "import os; os.close(os.open('$M/f', os.O_RDONLY))" || fail "open timed out" ;;
	write) timeout 30 dd if=/dev/zero of="$M/f" bs=4k count=1 seek=100 conv=notrunc status=none || fail "write timed out" ;;
	esac
	ms=$((($(date +%s%N) - start) / 1000000))
	note "$what with four readers: $ms ms"
	((ms < 10000)) || fail "$what took $ms ms while four readers read f"
done
kill "${readers[@]}" 2>/dev/null || true
wait "${readers[@]}" 2>/dev/null || true
sfs_umount "$M"
