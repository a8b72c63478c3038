#!/bin/bash
# TIMEOUT: 240
# EXCLUSIVE: it switches the kernel's enable_uring for the whole machine (tests/run runs it alone)
# -o transport=auto|uring|dev (issue 28, item 1).  With the kernel's FUSE
# over io_uring disabled (enable_uring = N): transport=uring is refused
# with one line naming enable_uring and how to set it, and creates nothing
# (no backing, no catalog, no mount); auto falls back to /dev/fuse and
# .scatterfs/stats says "dev".  Enabled (Y): auto and uring take the ring
# (stats: "uring", one queue per possible CPU, requests counted on the
# ring), dev does not; data written through the ring reads back after a
# remount on /dev/fuse.  The daemon ends cleanly on unmount (status 0), on
# SIGTERM and on kill -9 under load (the mount goes, the backing mounts
# again), and the kernel logs no warning.  A bad value is refused with the
# allowed ones.  enable_uring is restored at exit.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 fio
P=/sys/module/fuse/parameters/enable_uring
[[ -e /dev/fuse ]] && exec 3<>/dev/fuse && exec 3>&- # loads the module
[[ -e $P ]] || sfs_skip "this kernel has no FUSE over io_uring ($P missing)"
was=$(cat "$P")
echo N >"$P" 2>/dev/null || sfs_skip "cannot write $P (not root?)"
sfs_on_exit "echo $was >$P"
unset SCATTERFS_TRANSPORT # this test chooses its own
T=$SFS_TMP
M=$T/mnt
B=$T/b.img
mkdir -p "$M"
queues=$(python3 -c 'import re,sys
s = open("/sys/devices/system/cpu/possible").read()
print(max(int(x) for x in re.split("[-,]", s.strip())) + 1)')
kmsg_before=$(dmesg | wc -l)

# refused OPTS WANT - the mount is refused with exactly WANT and creates nothing
refused() {
	local out rc=0
	out=$("$SFS_BIN" "$B" "$M" -o "$1" 2>&1) || rc=$?
	((rc != 0)) || fail "-o $1 was accepted"
	assert_eq "$out" "$2" "message of -o $1"
	[[ -e $B || -e $B.scatterfs ]] && fail "-o $1 created $(ls "$T")"
	sfs_is_mounted "$M" && fail "-o $1 left a mount"
	return 0
}
refused "size=64M,transport=uring" "scatterfs: -o transport=uring: FUSE over io_uring is disabled ($P is N); enable it as root with: echo Y > $P"
refused "size=64M,transport=ring" "scatterfs: -o transport=ring: allowed: auto, uring, dev"

sfs_mount "$B" "$M" "size=64M,transport=auto"
assert_eq "$(sfs_stats "$M" transport ring_queues ring_requests)" "dev 0 0" "auto with enable_uring=N"
head -c 3000000 /dev/urandom >"$T/data"
cp "$T/data" "$M/data"
sfs_umount "$M"

echo Y >"$P"
for t in auto uring; do
	sfs_mount "$B" "$M" "transport=$t"
	cmp "$T/data" "$M/data" || fail "data written on /dev/fuse, read on the ring ($t)"
	read -r tr q n <<<"$(sfs_stats "$M" transport ring_queues ring_requests)"
	assert_eq "$tr $q" "uring $queues" "transport=$t with enable_uring=Y"
	((n > 0)) || fail "transport=$t: no request counted on the ring"
	cp "$T/data" "$M/data.$t"
	sfs_umount "$M"
done
sfs_mount "$B" "$M" "transport=dev"
assert_eq "$(sfs_stats "$M" transport ring_requests)" "dev 0" "transport=dev with enable_uring=Y"
cmp "$T/data" "$M/data.uring" || fail "data written on the ring, read on /dev/fuse"
sfs_umount "$M"

# SIGTERM: the daemon ends and the mount goes.
sfs_mount "$B" "$M" "transport=uring"
cat "$M/data" >/dev/null
kill -TERM "$SFS_LAST_PID"
for ((i = 0; i < 100; i++)); do kill -0 "$SFS_LAST_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SFS_LAST_PID" 2>/dev/null && fail "daemon still running 10 s after SIGTERM"
unset "SFS_PID[$M]"
sfs_is_mounted "$M" && fail "mount left after SIGTERM"

# kill -9 under load: the mount can be unmounted and the backing mounts again.
sfs_mount "$B" "$M" "transport=uring"
fio --name=load --filename="$M/load" --size=32M --rw=randrw --bs=8k --iodepth=8 \
	--ioengine=libaio --direct=1 --numjobs=2 --time_based --runtime=20 >/dev/null 2>&1 &
fio_pid=$!
sleep 2
kill -9 "$SFS_LAST_PID"
wait "$SFS_LAST_PID" 2>/dev/null || true
unset "SFS_PID[$M]"
wait "$fio_pid" 2>/dev/null || true
for ((i = 0; i < 100; i++)); do fusermount3 -u "$M" 2>/dev/null && break; sleep 0.1; done
sfs_is_mounted "$M" && fail "mount left after kill -9 and fusermount3 -u"
sfs_mount "$B" "$M" "transport=uring"
cmp "$T/data" "$M/data" || fail "data after kill -9"
sfs_umount "$M"
warn=$(dmesg | tail -n +"$((kmsg_before + 1))" | grep -E 'WARNING|BUG:|uring|qid=|commit_id' || true)
assert_eq "$warn" "" "kernel messages during the test"
