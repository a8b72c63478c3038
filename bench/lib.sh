# bench/lib.sh: what the experiments in bench/ share.  Source it after
# setting `root` (the project root), first with bench_stage=options (the
# options and the progress lines only, so that --help and bad input need
# neither root nor a build), then with bench_stage=setup: it installs and
# builds what is missing (tools/setup) and sources tests/lib.sh (sfs_mount,
# note, fail, SFS_TMP and the EXIT trap that unmounts and cleans up).
# The shared options: --layouts L1,L2,... (names from conf/ or INI paths),
# --baseline B, --set SECTION.KEY=V1,V2,... (repeatable), --disk FILE|none,
# as bench/run takes them (bench/README-run.md).
if ! declare -p bench_sets >/dev/null 2>&1; then # a second sourcing keeps what was parsed
	bench_layouts=
	bench_baseline=
	bench_sets=()
	bench_disk=
fi

bench_die() {
	echo "bench/${0##*/}: $*" >&2
	SFS_FAILED=1 # the message says it all: no logs from the EXIT trap
	exit 2
}

# bench_options 'SPEC...' ARGS... - parses ARGS: --help (the script's header
# comment), the shared options (into bench_layouts, bench_baseline,
# bench_disk and the array bench_sets) and the script's own, each SPEC word
# --NAME (a flag: NAME=1), --NAME=DEFAULT (a value; a DEFAULT of digits
# asks for a positive integer) or --NAME=A|B|C (one of them, A the
# default), into the variable NAME (- as _).
bench_options() {
	local spec=$1 w v
	local -A kind=([--layouts]== [--baseline]== [--set]== [--disk]==)
	shift
	for w in $spec; do
		v=${w%%=*} && kind[$v]=${w#"$v"} && v=${v#--} && v=${v//-/_}
		if [[ $w != *=* ]]; then printf -v "$v" ''; else w=${w#*=}; printf -v "$v" %s "${w%%|*}"; fi
	done
	while (($#)); do
		[[ $1 == -h || $1 == --help ]] && { sed -n '2,/^[^#]/{/^[^#]/d;s/^# \{0,1\}//;p}' "$0"; exit 0; }
		[[ -n ${kind[$1]+set} ]] || bench_die "unknown option '$1' (see --help)"
		v=${1#--} v=${v//-/_}
		if [[ -z ${kind[$1]} ]]; then printf -v "$v" 1; shift; continue; fi
		(($# >= 2)) || bench_die "$1 needs a value (see --help)"
		case $1 in
		--set) bench_sets+=("$2") ;;
		--layouts | --baseline | --disk) printf -v "bench_$v" %s "$2" ;;
		*) printf -v "$v" %s "$2" ;;
		esac
		w=${kind[$1]#=}
		if [[ $w =~ ^[0-9]+$ && ! $2 =~ ^[1-9][0-9]*$ ]]; then
			bench_die "$1 must be a positive integer, not '$2'"
		elif [[ $w == *'|'* && "|$w|" != *"|$2|"* ]]; then
			w=${w//|/, }
			bench_die "$1 must be ${w%, *} or ${w##*, }, not '$2'"
		fi
		shift 2
	done
}

# bench_sweep OUT ARGS... - bench/run ARGS --format json into OUT, with
# --baseline, --workdir and --keep; bad input (bench/run said why) or no
# table ends the experiment with bench/run's status, else bench_rc is it
bench_sweep() {
	local out=$1
	shift
	bench_rc=0
	"$root/bench/run" "$@" ${bench_baseline:+--baseline "$bench_baseline"} --workdir "$SFS_TMP" \
		${keep:+--keep} --format json >"$out" || bench_rc=$?
	((bench_rc <= 1)) && [[ -s $out ]] || { SFS_FAILED=1; exit "$((bench_rc ? bench_rc : 1))"; }
}

# bench_table ARGS... < SCRIPT - the experiment's table step, python3 SCRIPT
# ARGS with bench/deftable.py importable; ends the experiment with its
# status (1: a failed row, which the table shows: no logs from the EXIT trap)
bench_table() {
	local rc=0
	PYTHONPATH=$root/bench python3 - "$@" || rc=$?
	((rc == 0)) || SFS_FAILED=1
	exit "$rc"
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
	local d=$((bench_steps_done += ${3:-1})) ms=$((($(date +%s%N) - bench_t0) / 1000000))
	printf '%s [%s] %s: %.3f s; step %d/%d, elapsed %s, about %s left\n' "$(basename "$0")" "$(date +%T)" "$1" "$2" \
		"$d" "$bench_steps_total" "$(bench_fmt_s "${ms}e-3")" "$(bench_fmt_s "$((d > 0 ? ms * (bench_steps_total - d) / d : 0))e-3")" >&2
}


[[ ${bench_stage:-setup} == setup ]] || return 0
[[ -z ${workdir:-} ]] || { mkdir -p "$workdir" && TMPDIR=$(readlink -f "$workdir") && export TMPDIR; }
[[ -z ${keep:-} ]] || export SCATTERFS_KEEP=1

((EUID == 0)) || { echo "$(basename "$0"): run as root (it mounts FUSE and drops the page cache)" >&2; exit 1; }
bench_build=${SCATTERFS_BUILD:-$root/build}
SCATTERFS_BUILDDIR=$bench_build "$root/tools/setup" >&2 || { echo "$(basename "$0"): set-up failed" >&2; exit 1; }
export SCATTERFS_BUILD=$bench_build
# shellcheck source=../tests/lib.sh
source "$root/tests/lib.sh"
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

# drop_caches - write dirty pages and drop the page cache (cold reads)
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

now_us() { date +%s%6N; }

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

BENCH_PLAN=$bench_build/bench/scatterfs-plan
