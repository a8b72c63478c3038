# bench/lib.sh: what the experiments in bench/ share.  Source it after
# setting `root` (the project root); it installs and builds what is missing
# (tools/setup), then sources tests/lib.sh for sfs_mount, sfs_umount, note,
# fail and the EXIT trap that unmounts and cleans up.
#
# Environment: SCATTERFS_BUILD (build directory, default build/),
# SCATTERFS_KEEP=1 (keep the work directory).

((EUID == 0)) || { echo "$(basename "$0"): run as root (it mounts FUSE and drops the page cache)" >&2; exit 1; }
bench_build=${SCATTERFS_BUILD:-$root/build}
SCATTERFS_BUILDDIR=$bench_build "$root/tools/setup" >&2 || { echo "$(basename "$0"): set-up failed" >&2; exit 1; }
export SCATTERFS_BUILD=$bench_build
# shellcheck source=../tests/lib.sh
source "$root/tests/lib.sh"
BENCH_REPORT=$bench_build/bench/scatterfs-report
# Progress goes to stderr: stdout is the table (clean CSV with --format csv).
note() { echo "[$SFS_NAME $(date +%T)] $*" >&2; }

# disk_overrides FILE - the keys of FILE's [disk] section as -o overrides
# ("disk.rpm=7200,disk.seek_avg_ms=8.5,..."), list values joined with ':'.
# Empty for an empty FILE argument.
disk_overrides() {
	[[ -n ${1:-} ]] || return 0
	[[ -f $1 ]] || fail "no such disk preset: $1"
	awk -F'=' '
		/^[ \t]*[#;]/ || /^[ \t]*$/ { next }
		/^[ \t]*\[/ { sec = $0; gsub(/[ \t\[\]]/, "", sec); next }
		sec == "disk" {
			k = $1; v = substr($0, index($0, "=") + 1)
			gsub(/[ \t]/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v); gsub(/[ \t]*,[ \t]*/, ":", v)
			out = out (out == "" ? "" : ",") "disk." k "=" v
		}
		END { print out }' "$1"
}

# drop_caches - write dirty pages and drop the page cache (cold reads)
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# set_readahead MNT BYTES - the mount's readahead (what cache.readahead sets at mount)
set_readahead() {
	local dev
	dev=$(mountpoint -d "$1") || fail "set_readahead: $1 is not a mount point"
	echo $(($2 / 1024)) >"/sys/class/bdi/$dev/read_ahead_kb" || fail "cannot set readahead of $1"
}

now_us() { date +%s%6N; }

# mount_start_us MNT - the mount's wall-clock start (ts_us 0 of its log)
mount_start_us() {
	sed -n 's/.*"mount_start_us": *\([0-9]*\).*/\1/p' "$1/.scatterfs/stats"
}

# log_window LOG PATH FROM_US TO_US - "reads device_ios size:count ..." for
# the read rows of PATH whose ts_us lies in [FROM_US, TO_US]: the number of
# read requests, of device I/Os they became, and their sizes by count.
log_window() {
	sfs_log_awk "$1" -v p="$2" -v lo="$3" -v hi="$4" '
		NR > 1 && $f_op == "read" && $f_path == p && $f_ts_us >= lo && $f_ts_us <= hi {
			reads++; size[$f_size]++
			if ($f_device_io != "") ios += split($f_device_io, x, ";")
		}
		END {
			printf "%d %d", reads, ios
			for (s in size) printf " %s:%d", s, size[s]
			printf "\n"
		}' "$1"
}

# dominant SIZE:COUNT... - the size with the highest count
dominant() {
	printf '%s\n' "$@" | awk -F: '$2 > c { c = $2; s = $1 } END { print s }'
}

# stats3 X... - "min avg max" of the numbers, 3 decimals
stats3() {
	printf '%s\n' "$@" | awk '
		{ s += $1; if (NR == 1 || $1 < mn) mn = $1; if (NR == 1 || $1 > mx) mx = $1 }
		END { printf "%.3f %.3f %.3f\n", mn, s / NR, mx }'
}

# print_table FORMAT < CSV - CSV as is (csv) or as aligned columns (text)
print_table() {
	if [[ $1 == csv ]]; then
		cat
	else
		awk -F, '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } if (NF > n) n = NF }
			END { for (r = 1; r <= NR; r++) { line = ""
				for (i = 1; i <= n; i++) line = line (i < n ? sprintf("%-*s  ", w[i], c[r, i]) : c[r, i])
				print line } }'
	fi
}

# seed_figures SEED - the seed's own rows from bench/seed-figures.csv
seed_figures() {
	grep -v '^#' "$root/bench/seed-figures.csv" | awk -F, -v s="$1" 'NR == 1 || $1 == s'
}
