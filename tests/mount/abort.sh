#!/bin/bash
# A connection aborted (/sys/fs/fuse/connections/N/abort) while reads are
# in flight: the daemon exits, the request log is complete, and a read
# whose reply could not be sent is logged with its -errno, never with a
# positive number that reads as a byte count.  Four readers' 1 MiB reads
# are in flight most of the time: read the synchronous way under the disk
# model (whose timing layer never queues a read), and queued to the
# completion thread on a direct backing with async_reads = always (no
# model: every read counts in async_reads), on /dev/fuse (transport=dev),
# where a reply that cannot be sent fails at once.
# On FUSE over io_uring (where the kernel has it on), the abort under the model: the
# daemon exits and every read row is its size or -errno, but a read in
# flight may be logged with its size: its reply is queued on the ring and
# the kernel's refusal comes with the commit's completion, after the row
# (fs/transport.c ring_reply), so that case is not required there.
source "$(dirname "$0")/../lib.sh"
sfs_require python3

B=$SFS_TMP/backing
M=$SFS_TMP/mnt
T=$SFS_TMP

# The fuse control file system (fusectl) holds each connection's abort file.
C=/sys/fs/fuse/connections
if ! mountpoint -q "$C"; then
	mount -t fusectl fusectl "$C" || fail "cannot mount the fuse control file system on $C"
fi

abort_run() { # OPTIONS LOG
	rm -f "$B" "$B.scatterfs"
	sfs_mount "$B" "$M" "size=128M,cache.mode=none,log=$2,log.ops=read$1"
	local pid=$SFS_LAST_PID
	dd if=/dev/zero of="$M/f" bs=1M count=64 status=none
	local dev
	dev=$(stat -c %d "$M")
	local readers=()
	for k in 1 2 3 4; do
		python3 - "$M/f" "$k" 2>/dev/null <<'PY' &
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
	# Abort once reads flow (on a loaded machine the readers may take
	# seconds to start), with some of them in flight.
	local t
	for ((t = 0; t < 300; t++)); do
		(($(sfs_stats "$M" reads) >= 8)) && break
		sleep 0.1
	done
	(($(sfs_stats "$M" reads) >= 8)) || fail "the readers made no 8 reads in 30 s"
	queued=$(sfs_stats "$M" async_reads)
	echo 1 >"$C/$dev/abort" || fail "cannot abort connection $dev"
	for ((t = 0; t < 100; t++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && fail "daemon $pid still running 10 s after the abort"
	kill "${readers[@]}" 2>/dev/null || true
	wait "${readers[@]}" 2>/dev/null || true
	wait "$pid" || true
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M"
	unset "SFS_PID[$M]"
}

i=0
cases=("disk.model=hdd,transport=dev" "transport=dev,device.direct=true,device.async_reads=always")
[[ $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null) == Y ]] && cases+=("disk.model=hdd,transport=uring")
for opts in "${cases[@]}"; do
	# Whether a read is in the daemon's hands at the abort is timing: on
	# /dev/fuse the run is repeated (at most three times) until one is,
	# and every run's rows are checked.
	for ((attempt = 1; attempt <= 3; attempt++)); do
		log=$T/abort$((++i)).log
		abort_run ",$opts" "$log"
		# (no read reaches the end of the file: each answered one reads all it asked)
		good=$(sfs_log_rows "$log" read f | sfs_log_awk "$log" '$f_result == $f_size' | wc -l)
		failed=$(sfs_log_rows "$log" read f | sfs_log_awk "$log" '$f_result < 0' | wc -l)
		other=$(sfs_log_rows "$log" read f | sfs_log_awk "$log" '$f_result != $f_size && $f_result >= 0' | head -n 3)
		note "options '$opts', run $attempt: $good reads answered, $failed failed with -errno, $queued queued"
		assert_eq "$other" "" "read rows ($opts, run $attempt) whose result is neither the size nor -errno"
		[[ $opts == *async_reads=always* ]] && { ((queued >= 8)) || fail "$queued reads queued before the abort ($opts, run $attempt), expected every one"; }
		((good > 0)) || fail "no read answered before the abort ($opts, run $attempt)"
		if [[ $opts == *uring* ]] || ((failed > 0)); then break; fi
	done
	[[ $opts == *uring* ]] ||
		((failed > 0)) || fail "no read in flight at the abort in $((attempt - 1)) runs ($opts): the case was not exercised"
done
note ok
