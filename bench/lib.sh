# bench/lib.sh: what the experiments in bench/ share.  Source it after
# setting `root` (the project root): it installs and builds what is missing
# (tools/setup), then sources tests/lib.sh for sfs_mount, sfs_umount, note,
# fail and the EXIT trap that unmounts and cleans up.  An experiment that
# takes the shared options sources it twice: first with
# bench_stage=options, for the options and the progress lines only
# (nothing else happens, so that --help and bad input need neither root
# nor a build), then with bench_stage=setup once the options are read.
#
# Environment: SCATTERFS_BUILD (build directory, default build/),
# SCATTERFS_KEEP=1 (keep the work directory).

# --- the options every experiment takes ----------------------------------
#   --layouts L1,L2,...  names from conf/ or paths to any INI file
#   --baseline B         the row the ratios are taken against: a layout, a
#                        SECTION.KEY=VALUE of a --set, or several joined by ','
#   --set SECTION.KEY=V1,V2,...  (repeatable) sweep a key: every
#                        combination of the values, with every layout
#   --disk FILE|none     load FILE's [disk] section over every mount (FILE
#                        may also be relative to the project, or a conf/ name)
if ! declare -p bench_sets >/dev/null 2>&1; then # a second sourcing keeps what was parsed
	bench_layouts=
	bench_baseline=
	bench_sets=()
	bench_disk=
fi

# bench_opt ARGS... - when $1 is one of the shared options, takes it (and its
# value) and sets bench_shift to the words used; else bench_shift=0.
bench_opt() {
	bench_shift=0
	case $1 in
	--layouts | --baseline | --set | --disk) (($# >= 2)) || bench_die "$1 needs a value (see --help)" ;;
	*) return 0 ;;
	esac
	case $1 in
	--layouts) bench_layouts=$2 ;;
	--baseline) bench_baseline=$2 ;;
	--set) bench_sets+=("$2") ;;
	--disk) bench_disk=$2 ;;
	esac
	bench_shift=2
}

bench_die() {
	echo "$(basename "$0"): $*" >&2
	SFS_FAILED=1 # the message says it all: no logs from the EXIT trap
	exit 2
}

# --- progress on stderr ----------------------------------------------------
# One line per step: the step, its time, steps done of all, elapsed, and an
# estimate of what is left (the mean step time so far times the steps
# left).  A step that runs past a minute is announced every 30 s by a
# ticker in the background, so that a long run never goes silent.
bench_steps_total=0
bench_steps_done=0
bench_t0=0
bench_ticker=

# bench_progress_init TOTAL - TOTAL steps to come
bench_progress_init() {
	bench_steps_total=$1
	bench_steps_done=0
	bench_t0=$(date +%s%N)
}

bench_fmt_s() {
	awk -v s="$1" 'BEGIN { s = int(s + 0.5)
		if (s < 60) printf "%d s", s; else if (s < 3600) printf "%d:%02d", s / 60, s % 60
		else printf "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60 }'
}

# bench_step_begin WHAT - a step starts (the ticker watches it)
bench_step_begin() {
	bench_step_end_ticker
	local what=$1
	# SCATTERFS_TICKER_S=FIRST:EVERY (seconds, default 60:30): for the tests.
	local tick=${SCATTERFS_TICKER_S:-60:30}
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "${tick%%:*}" &
		s=$!
		wait "$s"
		n=${tick%%:*}
		while :; do
			echo "$(basename "$0") [$(date +%T)] $what: still running after $(bench_fmt_s $n)" >&2
			sleep "${tick#*:}" &
			s=$!
			wait "$s"
			n=$((n + ${tick#*:}))
		done
	) &
	bench_ticker=$!
}

bench_step_end_ticker() {
	[[ -n $bench_ticker ]] || return 0
	kill "$bench_ticker" 2>/dev/null
	wait "$bench_ticker" 2>/dev/null || true
	bench_ticker=
}

# bench_step_end WHAT SECONDS [STEPS] - a step (or STEPS of them) ended
# after SECONDS: prints the progress line
bench_step_end() {
	bench_step_end_ticker
	local n=${3:-1} now
	bench_steps_done=$((bench_steps_done + n))
	now=$(date +%s%N)
	awk -v w="$1" -v t="$2" -v d="$bench_steps_done" -v n="$bench_steps_total" \
		-v el="$(((now - bench_t0) / 1000000))" -v p="$(basename "$0")" -v ts="$(date +%T)" '
		function f(s) { s = int(s + 0.5)
			if (s < 60) return s " s"; if (s < 3600) return sprintf("%d:%02d", s / 60, s % 60)
			return sprintf("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) }
		BEGIN { el /= 1000; left = d > 0 ? el / d * (n - d) : 0
			printf "%s [%s] %s: %.3f s; step %d/%d, elapsed %s, about %s left\n", p, ts, w, t, d, n, f(el), f(left) }' >&2
}


# seed_departures < ROWS - where bench/scan's results depart from seed
# 000's, and why; nothing when they agree.  ROWS: CSV lines
# "layout,name,read_size,avg_s,baseline_avg_s" (layout as in
# bench/seed-figures.csv, name as printed, the baseline being contiguous
# at the same read size).  A departure: at a read size the seed measured,
# one of the two ratios to contiguous above 1.1 and the other below 0.9;
# or contiguous faster at a read size than at the one nearest 32 KiB (the
# seed's best) below it, where the seed's contiguous table was slower.
seed_departures() {
	{
		grep -v '^#' "$root/bench/seed-figures.csv" | awk -F, '$1 == "000" { print "seed," $4 "," $3 "," $5 }'
		sed 's/^/row,/'
	} | awk -F, '
		$1 == "seed" { seed[$2, $3] = $4; next }
		{ label[++n] = $2; name[n] = $3; rs[n] = $4; avg[n] = $5; base[n] = $6 }
		END {
			for (i = 1; i <= n; i++) {
				if (label[i] == "contiguous" || !((label[i], rs[i]) in seed) || !(("contiguous", rs[i]) in seed) || base[i] <= 0)
					continue
				ours = avg[i] / base[i]; theirs = seed[label[i], rs[i]] / seed["contiguous", rs[i]]
				if ((ours > 1.1 && theirs < 0.9) || (ours < 0.9 && theirs > 1.1))
					out[++m] = sprintf("  %s at %d KiB reads: %.2f times contiguous here, %.2f in the seed (%s s against %s s)",
						name[i], rs[i] / 1024, ours, theirs, seed[label[i], rs[i]], seed["contiguous", rs[i]])
			}
			for (i = 1; i <= n; i++) {
				if (label[i] != "contiguous" || !(("contiguous", rs[i]) in seed) || rs[i] > 32768) continue
				if (!(name[i] in ref) || rs[i] > rs[ref[name[i]]]) ref[name[i]] = i
			}
			for (i = 1; i <= n; i++) {
				if (label[i] != "contiguous" || !(name[i] in ref) || !(("contiguous", rs[i]) in seed)) continue
				r = ref[name[i]]
				if (rs[i] > rs[r] && avg[i] < avg[r] && seed["contiguous", rs[i]] > seed["contiguous", rs[r]])
					out[++m] = sprintf("  %s at %d KiB reads: %.3f s here, faster than the %.3f s at %d KiB; the seed %s s, slower than its %s s",
						name[i], rs[i] / 1024, avg[i], avg[r], rs[r] / 1024, seed["contiguous", rs[i]], seed["contiguous", rs[r]])
			}
			if (m == 0) exit
			print "Where these results depart from the seed:"
			for (k = 1; k <= m; k++) print out[k]
			print "Why: the seed'"'"'s scans were Oracle multiblock reads, and a multiblock read ends at an"
			print "extent boundary: with 70 KiB extents no read moved more than 70 KiB, in one I/O, whatever"
			print "the multiblock read count, so larger reads helped the fragmented tables as much as the"
			print "contiguous one.  Here a read is the kernel'"'"'s readahead, which runs on across extent"
			print "boundaries: on a fragmented table it becomes one device I/O per extent it touches, each"
			print "paying a seek on the disk model.  And the seed'"'"'s contiguous table slowed down above"
			print "32 KiB reads (86.71 s at 32 KiB, 105 to 147 s from 64 KiB on), a trait of that 1999"
			print "system which the disk model does not have: its transfer time only grows with the size."
		}'
}

[[ ${bench_stage:-setup} == setup ]] || return 0

((EUID == 0)) || { echo "$(basename "$0"): run as root (it mounts FUSE and drops the page cache)" >&2; exit 1; }
bench_build=${SCATTERFS_BUILD:-$root/build}
SCATTERFS_BUILDDIR=$bench_build "$root/tools/setup" >&2 || { echo "$(basename "$0"): set-up failed" >&2; exit 1; }
export SCATTERFS_BUILD=$bench_build
# shellcheck source=../tests/lib.sh
source "$root/tests/lib.sh"
BENCH_REPORT=$bench_build/bench/scatterfs-report
# Progress goes to stderr: stdout is the table (clean CSV with --format csv).
note() { echo "[$SFS_NAME $(date +%T)] $*" >&2; }

# disk_overrides FILE - the keys FILE's [disk] section writes, as -o
# overrides ("disk.rpm=7200,disk.seek_avg_ms=8.5,..."), list values joined
# with ':' (scatterfs-plan --dump --explicit).  Empty for an empty FILE
# argument.
disk_overrides() {
	[[ -n ${1:-} ]] || return 0
	[[ -f $1 ]] || fail "no such disk preset: $1"
	local dump line out=
	dump=$("$BENCH_PLAN" --dump --explicit "$1") || fail "disk preset $1 is not a valid configuration"
	while IFS= read -r line; do
		[[ $line == disk.* ]] && out+=${out:+,}${line//,/:}
	done <<<"$dump"
	printf '%s\n' "$out"
}

# config_value FILE SECTION.KEY - the key's value in configuration FILE
# (an INI file or a mount's .scatterfs/config), as scatterfs-plan --dump
# resolves it; empty when it has none.
config_value() {
	local line
	while IFS= read -r line; do
		[[ $line == "$2="* ]] && { printf '%s\n' "${line#*=}"; return 0; }
	done < <("$BENCH_PLAN" --dump "$1")
}

# drop_caches - write dirty pages and drop the page cache (cold reads)
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# bench_readahead_ok MNT BYTES WHAT - 0 when the mount's readahead (its
# bdi's read_ahead_kb) is BYTES; else says so on stderr, naming WHAT, and
# returns 1.  Checked after the mount answered (sfs_mount waits for it)
# and before the first read, so that a row does not run at a read size it
# did not ask for.  The experiments set the read size with cache.readahead
# at mount, where the daemon writes it before the kernel lets any file be
# opened.
bench_readahead_ok() {
	local kb
	kb=$(sfs_readahead_kb "$1")
	[[ $kb == "$(($2 / 1024))" ]] && return 0
	echo "$(basename "$0") [$(date +%T)] $3: the mount's readahead is $kb KiB (read_ahead_kb), not the $(($2 / 1024)) KiB it was mounted with" >&2
	return 1
}

now_us() { date +%s%6N; }

# bench_model_stats MNT - "busy_ms reads pages collisions collision_wait_ns
# dies late_replies modelled_replies" of MNT's main device now, from
# .scatterfs/stats: its modelled busy time, the ssd model's reads, pages
# read, read collisions and their wait (read_collision_wait_ns), the dies
# the reads touched summed (read_dies_milli, the mount's average, times
# the reads), and the mount's late and modelled replies (the emulation
# floor).  The ssd counters are 0 under another model or none.
bench_model_stats() {
	python3 - "$1/.scatterfs/stats" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
d = s["devices"]["main"]
t = d.get("timing", {})
print(d["busy_ms"], t.get("reads", 0), t.get("read_pages", 0), t.get("read_collisions", 0),
      t.get("read_collision_wait_ns", 0), t.get("read_dies_milli", 0) * t.get("reads", 0) / 1000,
      s["late_replies"], s["modelled_replies"])
PY
}

# bench_is_ssd FILE - 0 when configuration FILE's [disk] model is ssd (as
# scatterfs-plan --dump resolves it: a preset = line counts too)
bench_is_ssd() {
	[[ -n ${1:-} && $(config_value "$1" disk.model) == ssd ]]
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

# --- configurations: layouts x --set values --------------------------------
BENCH_PLAN=$bench_build/bench/scatterfs-plan

# bench_plan_check ARGS... - scatterfs-plan --check ARGS; on failure prints
# the daemon's message (without the tool's name) and returns 1
bench_plan_check() {
	local out
	out=$("$BENCH_PLAN" --check "$@" 2>&1) && return 0
	echo "${out#scatterfs-plan: }"
	return 1
}

# bench_size_bytes VALUE - sets bench_bytes to VALUE in bytes, read as the
# daemon reads a size (bytes, or a K/M/G/T suffix, powers of 1024, with an
# optional "iB"), and returns 0; for any other VALUE sets bench_size_error
# to the daemon's own message for it (KB, fractions, too large: from
# scatterfs-plan --check) and returns 1.
bench_size_bytes() {
	local n shift=0 msg
	if [[ $1 =~ ^([0-9]{1,18})([KkMmGgTt]([iI][bB])?)?$ ]]; then
		n=$((10#${BASH_REMATCH[1]}))
		case ${BASH_REMATCH[2]:0:1} in K | k) shift=10 ;; M | m) shift=20 ;; G | g) shift=30 ;; T | t) shift=40 ;; esac
		if ((n <= (0x7fffffffffffffff >> shift))); then
			bench_bytes=$((n << shift))
			return 0
		fi
	fi
	if msg=$(bench_plan_check --parse-only --set "device.size=$1"); then
		bench_size_error="'$1' is not a size (bytes, or a K/M/G/T suffix)"
	else
		bench_size_error=${msg##*"size = $1: "}
	fi
	return 1
}

