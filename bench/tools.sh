# bench/tools.sh: what bench/'s tools other than the experiments share
# (bench/dirs, perf, scale, ssd-interleave): progress lines per step with a
# ticker, and helpers for a run's set-up and table.  The experiments over
# bench/run (scan, cache, autoextend, blocksize, wal) get their progress
# from bench/run.  Source it after bench/lib.sh.

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
	# stopped at every exit of the script (the EXIT trap), and ends by
	# itself once the script is gone (a SIGINT or SIGKILL it survived)
	[[ -n ${bench_ticker_trap:-} ]] || { sfs_on_exit bench_step_end_ticker && bench_ticker_trap=1; }
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "${tick%%:*}" &
		s=$!
		wait "$s"
		n=${tick%%:*}
		while kill -0 "$$" 2>/dev/null; do
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
