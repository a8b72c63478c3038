# shellcheck shell=bash
# tests/lib.sh: helpers for the mount tests in tests/mount/*.sh.
#
# A test sources this file, then mounts with sfs_mount and unmounts with
# sfs_umount.  Each daemon runs with -f in the background, so the test
# always knows its pid, and with stdout and stderr in its own log file,
# which fail() prints.  Readiness is a poll of /proc/self/mountinfo for the
# mount point with fstype fuse.scatterfs that also checks the daemon is
# still alive: never a blind sleep.  An EXIT trap runs the test's own
# cleanup hooks (sfs_on_exit: stop a database first), lazily unmounts
# whatever is still mounted under the work dir, kills leftover daemons and
# removes the work dir.
#
# Exit status: 0 passed, 77 skipped (sfs_skip, sfs_require: something the
# test needs is not on this machine; the reason is the "SKIP: " line on
# stderr), anything else failed.  A test may declare its time limit in a
# "# TIMEOUT: SECONDS" line among its first 20 lines (tests/run and
# tests/meson.build read it).  Tests run side by side: a test keeps what it
# makes in its work dir, and one that times something or changes
# machine-wide state says so in an "# EXCLUSIVE: REASON" line, which makes
# it run alone.
#
# Environment:
#   SCATTERFS_BUILD     build directory holding fs/scatterfs (default build/)
#   SCATTERFS_BIN       the daemon itself (default $SCATTERFS_BUILD/fs/scatterfs)
#   SCATTERFS_DEBUG=1   start daemons with -d (FUSE request trace in their log)
#   SCATTERFS_KEEP=1    keep the work dir (backings, logs) after the test
#   SCATTERFS_TRANSPORT auto, uring or dev: every sfs_mount adds
#                       -o transport=VALUE before the test's own options
#                       (tests/run sets enable_uring for uring)
#   TMPDIR              where the work dir is created (default /tmp)

set -euo pipefail

SFS_ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
SFS_BUILD=${SCATTERFS_BUILD:-$SFS_ROOT/build}
SFS_BIN=${SCATTERFS_BIN:-$SFS_BUILD/fs/scatterfs}
SFS_NAME=$(basename "$0" .sh)
# 0755: PostgreSQL runs as another user and must reach its mount point.
SFS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sfs-$SFS_NAME.XXXXXX")
chmod 755 "$SFS_TMP"

# shellcheck disable=SC2034 # SFS_DLOG, SFS_LAST_PID, SFS_LAST_DLOG: for the tests
declare -gA SFS_PID=()   # mount point -> daemon pid (running)
declare -gA SFS_DLOG=()  # mount point -> daemon stdout/stderr file
SFS_LOGS=()              # every daemon log of this test, in start order
SFS_EXTRA_LOGS=()        # other logs fail() prints (sfs_add_log)
SFS_HOOKS=()             # commands the EXIT trap runs first (sfs_on_exit)
SFS_NSTART=0
SFS_FAILED=0
SFS_SKIPPED=0
# PostgreSQL 15 from Debian, run as user postgres (tests and experiments).
PGBIN=/usr/lib/postgresql/15/bin

# note MSG... - progress line on stdout (shown when the test fails)
note() { echo "[$SFS_NAME $(date +%T)] $*"; }

# sfs_add_log FILE - fail() prints FILE too (database server logs)
sfs_add_log() { SFS_EXTRA_LOGS+=("$1"); }

# sfs_on_exit CMD - run CMD (eval'd) at exit, before unmounting
sfs_on_exit() { SFS_HOOKS+=("$1"); }

sfs_print_logs() {
	local f
	for f in "${SFS_LOGS[@]}" "${SFS_EXTRA_LOGS[@]}"; do
		[[ -e $f ]] || continue
		echo "---- $f (last 80 lines)"
		tail -n 80 "$f" || true
	done
	echo "----"
}

# fail MSG... - report the failure, print the daemon logs and exit 1
fail() {
	SFS_FAILED=1
	echo "FAIL: $*" >&2
	sfs_print_logs >&2
	exit 1
}

# sfs_skip REASON... - the test cannot run here: print "SKIP: REASON" on
# stderr and exit 77 (the automake and meson convention for a skipped test),
# which tests/run counts as skipped, never as passed or failed
sfs_skip() {
	SFS_SKIPPED=1
	echo "SKIP: $*" >&2
	exit 77
}

# The Debian package that provides a command, for the skip message.
declare -gA SFS_PACKAGE_OF=([fio]=fio [gnuplot]=gnuplot-nox [sqlite3]=sqlite3
	[valgrind]=valgrind [meson]=meson [ninja]=ninja-build [python3]=python3
	[runuser]=util-linux [man]=man-db [groff]=groff-base [setfacl]=acl [getfacl]=acl
	[/usr/sbin/mariadbd]=mariadb-server [/usr/bin/mariadb-install-db]=mariadb-server
	[mdb_load]=lmdb-utils [mdb_stat]=lmdb-utils [mdb_dump]=lmdb-utils
	[dask-scheduler]=python3-distributed [dask-worker]=python3-distributed [perf]=linux-perf)

# sfs_require CMD... - skip the test (sfs_skip) unless every CMD is an
# executable: a name looked up on PATH, or a path.  Call it before the test
# changes anything, so that a skipped test leaves nothing behind.
sfs_require() {
	local c missing=()
	for c in "$@"; do
		if [[ $c == */* ]]; then
			[[ -x $c ]] || missing+=("$c")
		else
			command -v "$c" >/dev/null 2>&1 || missing+=("$c")
		fi
	done
	((${#missing[@]} == 0)) && return 0
	local what='' m pkg
	for m in "${missing[@]}"; do
		pkg=${SFS_PACKAGE_OF[$m]:-}
		[[ $m == "$PGBIN"/* ]] && pkg=postgresql-15
		what+="${what:+, }$m${pkg:+ (package $pkg)}"
	done
	sfs_skip "missing $what"
}

# assert_eq ACTUAL EXPECTED WHAT - exact comparison
assert_eq() {
	[[ $1 == "$2" ]] || fail "$3: got '$1', expected '$2'"
}

# The cache modes of a test that runs in each (sfs_cache_opts gives each
# one's -o options): none (direct I/O), kernel (the page cache, writes
# through: cache.writeback = false) and writeback (the page cache and the
# kernel's write-back cache, kernel mode's default).
# shellcheck disable=SC2034 # for the tests
SFS_CACHE_MODES=(none kernel writeback)

# sfs_cache_opts MODE - the -o options of MODE, one of SFS_CACHE_MODES
sfs_cache_opts() {
	case $1 in
	none) echo cache.mode=none ;;
	kernel) echo cache.mode=kernel,cache.writeback=false ;;
	writeback) echo cache.mode=kernel,cache.writeback=true ;;
	*) fail "sfs_cache_opts: unknown cache mode '$1' (allowed: ${SFS_CACHE_MODES[*]})" ;;
	esac
}

# sfs_check_cache_mode MNT MODE - .scatterfs/stats of the mount at MNT says
# the write-back cache is on exactly when MODE is writeback
sfs_check_cache_mode() {
	local want=False
	[[ $2 != writeback ]] || want=True
	assert_eq "$(sfs_stats "$1" writeback_cache)" "$want" "$2: stats writeback_cache"
}

# sfs_fstype MNT - fstype of the mount at MNT, empty when MNT is not a mount point
sfs_fstype() {
	local m
	m=$(readlink -f "$1")
	# mountinfo: field 5 is the mount point; the fstype follows the " - " separator.
	awk -v m="$m" '$5 == m { for (i = 7; i <= NF; i++) if ($i == "-") { t = $(i + 1); break } }
		END { print t }' /proc/self/mountinfo
}

sfs_is_mounted() { [[ -n $(sfs_fstype "$1") ]]; }

# sfs_readahead_kb MNT - the readahead of the mount at MNT in KiB, as its
# bdi says (/sys/class/bdi/MAJ:MIN/read_ahead_kb); a file opened now reads
# ahead by it
sfs_readahead_kb() {
	local dev
	dev=$(mountpoint -d "$1") || fail "sfs_readahead_kb: $1 is not a mount point"
	cat "/sys/class/bdi/$dev/read_ahead_kb" || fail "sfs_readahead_kb: no bdi $dev for $1"
}

# sfs_mount BACKING MNT [OPTS [ARGS...]] - start the daemon with -f in the
# background, "-o OPTS" when OPTS is not empty and any further ARGS, then wait
# (up to 10 s) for MNT to appear in mountinfo as fuse.scatterfs, and for it
# to answer a request (statfs: the kernel holds every request until the
# daemon has answered INIT, so the mount's readahead is in place and
# nothing of the daemon's writes it any more).  Fails the test when the
# daemon exits or the mount does not appear or answer.  Sets SFS_LAST_PID
# and SFS_LAST_DLOG.
sfs_mount() {
	local backing=$1 mnt=$2 opts=${3:-} pid dlog rc t fstype
	shift 2
	(($#)) && shift
	[[ -e /dev/fuse ]] || fail "/dev/fuse is missing: mount tests need the fuse module"
	[[ -x $SFS_BIN ]] || fail "daemon not built: $SFS_BIN"
	mkdir -p "$mnt"
	sfs_is_mounted "$mnt" && fail "sfs_mount: $mnt is already a mount point"
	SFS_NSTART=$((SFS_NSTART + 1))
	dlog=$SFS_TMP/daemon.$SFS_NSTART.log
	local args=("$backing" "$mnt" -f)
	[[ -n ${SCATTERFS_DEBUG:-} ]] && args+=(-d)
	# First, so that a transport= of the test's own options wins.
	[[ -n ${SCATTERFS_TRANSPORT:-} ]] && args+=(-o "transport=$SCATTERFS_TRANSPORT")
	[[ -n $opts ]] && args+=(-o "$opts")
	args+=("$@")
	echo "\$ $SFS_BIN ${args[*]}" >"$dlog"
	SFS_LOGS+=("$dlog")
	"$SFS_BIN" "${args[@]}" >>"$dlog" 2>&1 </dev/null &
	pid=$!
	SFS_PID[$mnt]=$pid
	# shellcheck disable=SC2034 # for the tests
	SFS_DLOG[$mnt]=$dlog SFS_LAST_PID=$pid SFS_LAST_DLOG=$dlog
	for ((t = 0; t < 200; t++)); do
		fstype=$(sfs_fstype "$mnt")
		if [[ -n $fstype ]]; then
			[[ $fstype == fuse.scatterfs ]] ||
				fail "sfs_mount: $mnt mounted with fstype '$fstype', expected fuse.scatterfs (subtype=scatterfs)"
			kill -0 "$pid" 2>/dev/null || fail "sfs_mount: daemon $pid died after mounting $mnt"
			timeout 10 stat -f "$mnt" >/dev/null ||
				fail "sfs_mount: $mnt did not answer statfs within 10 s (daemon $pid)"
			note "mounted $mnt (daemon $pid, options $opts)"
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			rc=0
			wait "$pid" || rc=$?
			unset "SFS_PID[$mnt]"
			fail "sfs_mount: daemon exited with status $rc before $mnt was mounted"
		fi
		sleep 0.05
	done
	fail "sfs_mount: $mnt did not appear in /proc/self/mountinfo within 10 s (daemon $pid alive)"
}

# sfs_fusermount_u MNT WHAT - fusermount3 -u MNT, retried while busy (a
# file a process just closed can hold the mount for a moment), up to 10 s;
# then fails naming WHAT
sfs_fusermount_u() {
	local t err
	for ((t = 0; ; t++)); do
		err=$(fusermount3 -u "$1" 2>&1) && return 0
		((t < 100)) || fail "$2: fusermount3 -u $1: $err"
		sleep 0.1
	done
}

# sfs_umount MNT - fusermount3 -u (retried while busy, up to 10 s), then wait
# (up to 30 s) for the daemon to exit, so its catalog and request log are
# flushed.  The daemon must exit with status 0.
sfs_umount() {
	local mnt=$1 pid=${SFS_PID[$1]:-} t rc
	sfs_is_mounted "$mnt" || fail "sfs_umount: $mnt is not mounted (daemon died?)"
	sfs_fusermount_u "$mnt" sfs_umount
	[[ -n $pid ]] || return 0
	for ((t = 0; t < 300; t++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && fail "sfs_umount: daemon $pid still running 30 s after unmounting $mnt"
	rc=0
	wait "$pid" || rc=$?
	unset "SFS_PID[$mnt]"
	((rc == 0)) || fail "sfs_umount: daemon exited with status $rc after unmounting $mnt"
	note "unmounted $mnt"
}

sfs_cleanup() {
	local rc=$? h m pid t
	trap - EXIT
	set +e
	for h in "${SFS_HOOKS[@]}"; do
		eval "$h" >/dev/null 2>&1
	done
	# Everything mounted under the work dir, including mounts a daemon made
	# on its own (a second mount that should have been refused).
	awk -v t="$SFS_TMP/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo |
		while read -r m; do
			fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		done
	for pid in "${SFS_PID[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${SFS_PID[@]}"; do
		for ((t = 0; t < 50; t++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
	done
	if ((rc != 0 && SFS_FAILED == 0 && !(rc == 77 && SFS_SKIPPED))); then
		# An unexpected error (set -e) rather than fail(): show the logs too.
		if ((rc == 130)); then
			# Ctrl-C: the user knows why; say what was cleaned up, not FAIL
			echo "$SFS_NAME: interrupted (SIGINT): unmounted and cleaned up" >&2
		elif ((rc > 128)); then
			echo "FAIL: $SFS_NAME: killed by signal $((rc - 128)) (timeout?)" >&2
		else
			echo "FAIL: $SFS_NAME: a command failed (exit $rc)" >&2
		fi
		((rc == 130)) || sfs_print_logs >&2
	fi
	if [[ -n ${SCATTERFS_KEEP:-} ]]; then
		echo "kept $SFS_TMP" >&2
	elif awk -v t="$SFS_TMP/" 'index($5, t) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		echo "not removing $SFS_TMP: something is still mounted there" >&2
	else
		rm -rf "$SFS_TMP"
	fi
	exit "$rc"
}
trap sfs_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

# --- request log ----------------------------------------------------------

# The header without model_us, from the schema the daemon writes it from.
SFS_LOG_HEADER=$(sed -n 's/^#define LOG_HEADER_BASE "\([a-z_,]*\)"$/\1/p' "$SFS_ROOT/layout/logschema.h")
[[ -n $SFS_LOG_HEADER ]] || {
	echo "tests/lib.sh: no LOG_HEADER_BASE in $SFS_ROOT/layout/logschema.h" >&2
	exit 1
}

# sfs_log_check_header LOG - the log's first line is exactly the contract header
sfs_log_check_header() {
	[[ -f $1 ]] || fail "request log $1 does not exist"
	assert_eq "$(head -n 1 "$1")" "$SFS_LOG_HEADER" "header of request log $1"
}

# sfs_log_fields LOG - awk options naming each column of LOG's header by its
# field number (-v f_ts_us=1 -v f_op=2 ... -v f_model_us=10 when present),
# one a line, so that awk programs find a column by its header name and a
# new column shifts nothing.  A column the log lacks is an unset variable
# (0: test it before use).  sfs_log_awk is the usual way to use them.
sfs_log_fields() {
	local h
	h=$(head -n 1 "$1" 2>/dev/null | tr -d '\r')
	[[ $h == "${SFS_LOG_HEADER%%,*}",* && $h =~ ^[a-z_,]+$ ]] ||
		fail "sfs_log_fields: $1 does not begin with a request log header: '$h'"
	awk -F, '{ for (i = 1; i <= NF; i++) printf "-v\nf_%s=%d\n", $i, i }' <<<"$h"
}

# sfs_log_awk LOG ARG... - awk -F, ARG... with LOG's columns named as
# sfs_log_fields says; ARG... are awk's own (options, program, files), and
# the input may be LOG itself or rows taken from it:
#   sfs_log_awk "$L" 'NR > 1 && $f_op == "read" { s += $f_size } END { print s }' "$L"
#   sfs_log_rows "$L" read t.db | sfs_log_awk "$L" '{ s += $f_size } END { print s }'
sfs_log_awk() {
	local fields
	fields=$(sfs_log_fields "$1") || exit 1
	local -a field_opts
	mapfile -t field_opts <<<"$fields"
	awk -F, "${field_opts[@]}" "${@:2}"
}

# sfs_log_rows LOG [OP [PATH [SIZE]]] - the data rows matching (empty = any).
# Paths here never hold a comma or a quote, so a plain split is exact.
sfs_log_rows() {
	sfs_log_awk "$1" -v op="${2:-}" -v path="${3:-}" -v size="${4:-}" \
		'NR > 1 && (op == "" || $f_op == op) && (path == "" || $f_path == path) && (size == "" || $f_size == size)' "$1"
}

# sfs_log_count LOG [OP [PATH [SIZE]]] - how many data rows match
sfs_log_count() { sfs_log_rows "$@" | wc -l; }

# sfs_log_summary LOG - op,path,size histogram (for failure messages)
sfs_log_summary() {
	sfs_log_awk "$1" 'NR > 1 { n[$f_op " " $f_path " size=" $f_size]++ } END { for (k in n) print n[k], k }' "$1" |
		sort -rn | head -n 20
}

# --- the control directory's counters -----------------------------------

# sfs_stats MNT FIELD... - the values of FIELDs in MNT/.scatterfs/stats, space-separated
sfs_stats() {
	local mnt=$1
	shift
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(*(s[k] for k in sys.argv[2:]))' "$mnt/.scatterfs/stats" "$@"
}

# sfs_stats_delta BEFORE AFTER - AFTER minus BEFORE, field by field (two sfs_stats outputs)
sfs_stats_delta() {
	paste -d' ' <(tr ' ' '\n' <<<"$1") <(tr ' ' '\n' <<<"$2") |
		awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 - $1 } END { print "" }'
}

# --- sizes and bytes ------------------------------------------------------

# sfs_extents MNT PATH - the extent map CSV of PATH from the control directory
sfs_extents() {
	local f=$1/.scatterfs/extents/$2
	[[ -r $f ]] || fail "cannot read $f"
	cat "$f"
}

# sfs_bytes_are FILE OFFSET LENGTH BYTE - LENGTH bytes of FILE from OFFSET all
# equal BYTE (an octal escape for tr, e.g. '\0' or '\253')
sfs_bytes_are() {
	local file=$1 off=$2 len=$3 byte=$4 got
	got=$(tail -c +$((off + 1)) "$file" | head -c "$len" | tr -d "$byte" | wc -c)
	local have
	have=$(tail -c +$((off + 1)) "$file" | head -c "$len" | wc -c)
	[[ $have == "$len" ]] || return 1
	[[ $got == 0 ]]
}

# --- simulated power failure ([device] volatile = true) ---------------------

# sfs_ctl M CMD... - sends each command on one open control file, prints the replies
sfs_ctl() {
	python3 - "$1/.scatterfs/control" "${@:2}" <<'PYEOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
for cmd in sys.argv[2:]:
    os.write(fd, (cmd + "\n").encode())
out = b""
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    out += b
os.close(fd)
sys.stdout.write(out.decode())
PYEOF
}

# sfs_power_fail M ARGS... - sends the control command ARGS (crash ...) to
# M's daemon and waits up to 10 s for it to end (status 0); the write of the
# command succeeds (its reply is never read: the power is off).  The dead
# mount stays: the caller stops what still has files open there, then
# sfs_umount_dead.  Fails naming M's daemon when any of it does not hold.
sfs_power_fail() {
	local mnt=$1 pid=${SFS_PID[$1]}
	shift
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, (" ".join(sys.argv[2:]) + "\n").encode())' "$mnt/.scatterfs/control" "$@" ||
		fail "the write of '$*' to $mnt/.scatterfs/control failed"
	sfs_reap "$pid"
	kill -0 "$pid" 2>/dev/null && fail "daemon $pid still runs 10 s after '$*'"
	wait "$pid" || fail "daemon $pid exited with status $? after '$*'"
	unset "SFS_PID[$mnt]"
}

# sfs_crash M ARGS... - sfs_power_fail, then sfs_umount_dead
sfs_crash() {
	sfs_power_fail "$@"
	sfs_umount_dead "$1"
}

# sfs_umount_dead M [PHASE] - unmounts M, whose daemon has ended (lazily
# while something still has it open); fails naming PHASE when it cannot.
sfs_umount_dead() {
	fusermount3 -u "$1" 2>/dev/null || fusermount3 -u -z "$1" || fail "${2:+$2: }cannot unmount $1"
}

# sfs_reap [-9] PID... - waits up to 10 s for each PID to end; with -9, one
# still running then gets SIGKILL and is reaped (a child of this shell).
sfs_reap() {
	local kill= p t
	[[ ${1:-} == -9 ]] && { kill=1; shift; }
	for p in "$@"; do
		for ((t = 0; t < 100; t++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		[[ -n $kill ]] || continue
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}

# --- the catalog against the mount ----------------------------------------

# sfs_remount_killed MNT BACKING OPTS CAT PHASE - after the daemon of MNT
# was killed: unmount the dead mount (lazily if busy), record the catalog's
# orphans, mount BACKING again with OPTS and check its space (PHASE names
# the check).
sfs_remount_killed() {
	local mnt=$1 backing=$2 opts=$3 cat=$4 phase=$5
	sfs_umount_dead "$mnt" "$phase"
	sfs_catalog_orphans "$cat"
	sfs_mount "$backing" "$mnt" "$opts"
	sfs_check_space "$mnt" "$cat" "$phase after remount"
}

# sfs_space_verdict WHAT - fails when any sfs_check_space found used_bytes
# and the catalog apart, listing each check; WHAT says what else held.
sfs_space_verdict() {
	((${#SFS_SPACE_ERRORS[@]} == 0)) && return 0
	fail "used_bytes differs from the catalog in ${#SFS_SPACE_ERRORS[@]} checks ($1):
$(printf '  %s\n' "${SFS_SPACE_ERRORS[@]}")"
}

# as_pg CMD... - CMD as user postgres (directly when this shell is postgres
# already: a step of an experiment that bench/run runs --as postgres)
as_pg() {
	if [[ $(id -un) == postgres ]]; then "$@"; else runuser -u postgres -- "$@"; fi
}

# sfs_csv_col FILE COLUMN FIRST - the cells of COLUMN (a header name) in
# the rows of CSV table FILE whose first cell is FIRST
sfs_csv_col() {
	awk -F, -v c="$2" -v l="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } $1 == l { print $k[c] }' "$1"
}

# sfs_bench_run OUT ARGS... - bench/run --layouts contiguous,equi-fragmented
# --runs 2 --size 1G ARGS --format csv into OUT (printed; its stderr in
# $SFS_TMP/err, both in the logs); fails unless it exits 0 with a row per
# layout, each without error and with 2 counted runs
sfs_bench_run() {
	local out=$1 l
	shift
	sfs_add_log "$SFS_TMP/err"
	SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/run" --layouts contiguous,equi-fragmented --runs 2 --size 1G "$@" \
		--format csv >"$out" 2>"$SFS_TMP/err" </dev/null || fail "bench/run exited $?"
	sfs_add_log "$out"
	cat "$out"
	for l in contiguous equi-fragmented; do
		assert_eq "$(sfs_csv_col "$out" error "$l")" "" "$l: error"
		assert_eq "$(sfs_csv_col "$out" runs "$l")" 2 "$l: runs"
	done
}

# sfs_two_devices - for a test of a mount with a second device wal: T
# (SFS_TMP), M (the mount point), B and W (main's and wal's backings), CAT
# (the catalog) and L (the request log); needs sqlite3 and python3
sfs_two_devices() {
	sfs_require sqlite3 python3
	T=$SFS_TMP M=$SFS_TMP/mnt B=$SFS_TMP/main.img W=$SFS_TMP/wal.img
	CAT=$B.scatterfs L=$SFS_TMP/log.csv
}

# sfs_pg_setup PORT - for a test that runs PostgreSQL: skips the test
# unless it is installed with its user postgres; sets PORT, S (the socket directory) and PGLOG (the server log,
# printed when the test fails), both owned by postgres.
sfs_pg_setup() {
	sfs_require "$PGBIN/initdb" "$PGBIN/pg_ctl" "$PGBIN/postgres" "$PGBIN/pgbench" "$PGBIN/psql" runuser
	id postgres >/dev/null 2>&1 || sfs_skip "no user postgres (the postgresql-15 package creates it)"
	PORT=$1
	S=$SFS_TMP/sock
	PGLOG=$SFS_TMP/postgres.log
	mkdir -p "$S"
	chown postgres:postgres "$S"
	touch "$PGLOG"
	chown postgres:postgres "$PGLOG"
	sfs_add_log "$PGLOG"
	# a server still running at exit is stopped before the mounts go
	[[ -n ${SFS_PG_HOOKED:-} ]] ||
		sfs_on_exit '[[ -z $SFS_PG_UP ]] || as_pg "$PGBIN/pg_ctl" -D "$SFS_PG_UP" -m immediate -w stop'
	SFS_PG_HOOKED=1
}

# Where tests and the experiments in bench/ start and stop PostgreSQL as
# root (the server as user postgres); steps that bench/run runs as user
# postgres (bench/scan, bench/cache) use bench/lib.sh's bench_pg_sh.
# SFS_PG_UP is the data directory of the running server, empty when none
# runs.
SFS_PG_UP=

# sfs_pg_initdb DATADIR PHASE [INITDB_ARG...] [-- SETTING...] - initdb of
# DATADIR as postgres (user postgres, trust, UTF8, no locale, and the
# INITDB_ARGs), then each SETTING ("name = value") appended to its
# postgresql.conf; fails naming PHASE, with initdb's output.
sfs_pg_initdb() {
	local d=$1 phase=$2 args=() out
	shift 2
	while (($#)) && [[ $1 != -- ]]; do
		args+=("$1")
		shift
	done
	(($#)) && shift
	out=$(as_pg "$PGBIN/initdb" -D "$d" -U postgres --auth=trust -E UTF8 --no-locale "${args[@]}" 2>&1) ||
		fail "$phase: initdb: $out"
	(($#)) && printf '%s\n' "$@" >>"$d/postgresql.conf"
	return 0
}

# sfs_pg_start DATADIR PHASE [-c NAME=VALUE]... - pg_ctl start on S and
# PORT (sfs_pg_setup), logging to PGLOG, with the given server settings
# besides listen_addresses=''; fails naming PHASE, with the end of PGLOG.
sfs_pg_start() {
	local d=$1 phase=$2 out
	shift 2
	out=$(as_pg "$PGBIN/pg_ctl" -D "$d" -l "$PGLOG" -w -t 300 \
		-o "-p $PORT -k $S -c listen_addresses='' $*" start 2>&1) ||
		fail "$phase: pg_ctl start: $out; $(tail -5 "$PGLOG")"
	SFS_PG_UP=$d
}

# sfs_pg_stop PHASE [MODE] - pg_ctl stop (-m MODE, default fast) of the
# server sfs_pg_start started, if one runs; fails naming PHASE.
sfs_pg_stop() {
	local out
	[[ -n $SFS_PG_UP ]] || return 0
	out=$(as_pg "$PGBIN/pg_ctl" -D "$SFS_PG_UP" -m "${2:-fast}" -w -t 300 stop 2>&1) ||
		fail "$1: pg_ctl stop: $out; $(tail -5 "$PGLOG")"
	SFS_PG_UP=
}

# sfs_catalog_orphans CAT - sets SFS_ORPHANS to what catalog CAT holds for
# inodes without a name (left by a daemon killed while they were open):
# "N orphan inode(s) holding B bytes of extents".  Printed with a failing
# sfs_check_space, which it usually explains.
SFS_ORPHANS=
sfs_catalog_orphans() {
	SFS_ORPHANS=$(sqlite3 "$1" 'SELECT count(*), (SELECT coalesce(sum(length), 0) FROM extent WHERE ino IN
		(SELECT ino FROM inode WHERE ino != 1 AND ino NOT IN (SELECT ino FROM dirent)))
		FROM inode WHERE ino != 1 AND ino NOT IN (SELECT ino FROM dirent);' |
		awk -F'|' '{ print $1 " orphan inode(s) holding " $2 " bytes of extents" }')
}

# sfs_check_space MNT CAT PHASE - used_bytes of MNT's stats (read first: it
# flushes every in-memory inode) against the extents and gaps of catalog
# CAT, and no two catalog runs overlap on the device (that fails at once).
# A database still running on MNT may be allocating while this reads (the
# flush skips an inode a writer holds), so a difference counts only when it
# lasts: both are read again every second for up to 7 s (the daemon's
# background flush runs every 5 s).
# A used_bytes mismatch is collected in SFS_SPACE_ERRORS, so that a test can
# go on with its other checks and fail at the end.
SFS_SPACE_ERRORS=()
sfs_check_space() {
	local mnt=$1 cat=$2 phase=$3 used cat_bytes overlaps t
	for ((t = 0; t < 8; t++)); do
		((t == 0)) || sleep 1
		used=$(sed -n 's/.*"used_bytes": *\([0-9]*\).*/\1/p' "$mnt/.scatterfs/stats")
		[[ -n $used ]] || fail "$phase: no used_bytes in $mnt/.scatterfs/stats"
		cat_bytes=$(sqlite3 "$cat" 'SELECT (SELECT coalesce(sum(length), 0) FROM extent) +
			(SELECT coalesce(sum(length), 0) FROM gap);') || fail "$phase: cannot query the catalog $cat"
		[[ $used == "$cat_bytes" ]] && break
		note "$phase: used_bytes $used, catalog $cat_bytes: reading again"
	done
	if [[ $used != "$cat_bytes" ]]; then
		SFS_SPACE_ERRORS+=("$phase: .scatterfs/stats used_bytes = $used, the catalog's extents and gaps = $cat_bytes for 7 s (before this mount the catalog held ${SFS_ORPHANS:-0 orphan inodes})")
		note "MISMATCH ${SFS_SPACE_ERRORS[-1]}"
	fi
	# Per device: each has its own offsets (the dev column).
	overlaps=$(sqlite3 "$cat" 'WITH r(v, d, l) AS (SELECT dev, device, length FROM extent UNION ALL
		SELECT dev, device, length FROM gap), o AS (SELECT d, lag(d + l) OVER
		(PARTITION BY v ORDER BY d) AS pe FROM r) SELECT count(*) FROM o WHERE pe > d;')
	assert_eq "$overlaps" 0 "$phase: catalog runs (extents and gaps) that overlap another on the device"
}
