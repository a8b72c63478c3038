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
	echo "bench/${0##*/}: $*" >&2
	SFS_FAILED=1 # the message says it all: no logs from the EXIT trap
	exit 2
}

# bench_options 'SPEC...' ARGS... - parses ARGS: the shared options
# (bench_opt), --help (the script's header comment), and the script's own,
# each SPEC word --NAME (a flag: NAME=1), --NAME=DEFAULT (a value; a
# DEFAULT of digits asks for a positive integer) or --NAME=A|B|C (one of
# them, A the default), into the variable NAME (- as _).
bench_options() {
	local spec=$1 w o v
	local -A kind=()
	shift
	for w in $spec; do
		o=${w%%=*} v=${o#--}
		kind[$o]=${w#"$o"}
		v=${v//-/_}
		if [[ $w != *=* ]]; then printf -v "$v" ''; else w=${w#*=}; printf -v "$v" %s "${w%%|*}"; fi
	done
	while (($#)); do
		bench_opt "$@"
		((bench_shift)) && { shift "$bench_shift"; continue; }
		[[ $1 == -h || $1 == --help ]] && { sed -n '2,/^[^#]/{/^[^#]/d;s/^# \{0,1\}//;p}' "$0"; exit 0; }
		[[ -n ${kind[$1]+set} ]] || bench_die "unknown option '$1' (see --help)"
		o=${1#--} v=${1//-/_} v=${v#__}
		if [[ -z ${kind[$1]} ]]; then printf -v "$v" 1; shift; continue; fi
		(($# >= 2)) || bench_die "$1 needs a value (see --help)"
		printf -v "$v" %s "$2"
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

# bench_resolve_layout NAME - "label<TAB>file" of a layout: NAME.ini in
# conf/, or NAME as a path (relative to where the experiment was started);
# the file may be missing (bench_configs reports it)
bench_resolve_layout() {
	local n=$1 f
	if [[ $n != */* && $n != *.ini ]]; then
		printf '%s\t%s\n' "$n" "$root/conf/$n.ini"
	else
		f=$(readlink -m "$n")
		n=${f##*/}
		printf '%s\t%s\n' "${n%.ini}" "$f"
	fi
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

# bench_step_skip STEPS - steps that will not run (a configuration failed)
bench_step_skip() { bench_steps_done=$((bench_steps_done + $1)); }

[[ ${bench_stage:-setup} == setup ]] || return 0
[[ -z ${workdir:-} ]] || { mkdir -p "$workdir" && TMPDIR=$(readlink -f "$workdir") && export TMPDIR; }
[[ -z ${keep:-} ]] || export SCATTERFS_KEEP=1

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

# mount_start_us MNT - the mount's wall-clock start (ts_us 0 of its log)
mount_start_us() {
	sed -n 's/.*"mount_start_us": *\([0-9]*\).*/\1/p' "$1/.scatterfs/stats"
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

# bench_configs DEFAULT_LAYOUTS DEFAULT_DISK DEVICE_SIZE - the configurations
# of the shared options: every layout of --layouts (DEFAULT_LAYOUTS when not
# given; empty = the built-in defaults, no config file) with every
# combination of the --set values.  Bad input stops here, before anything
# is mounted: a --set of an unknown key or a value out of range, a missing
# --disk file, a --baseline that is none of the rows.  A missing layout
# file or a configuration the daemon would refuse (checked against a device
# of DEVICE_SIZE; 0 = unknown) is kept, with the daemon's message in
# cfg_error, so the experiment reports it in its row and runs the others.
# Sets cfg_n and, per configuration i: cfg_label (the layout), cfg_file,
# cfg_values (the --set values as CSV cells, in --set order), cfg_name
# (label and values, for progress lines), cfg_opts (config= and the --set
# values as -o overrides), cfg_sets (the overrides alone), cfg_error, cfg_base (index of its baseline row,
# empty when that failed); bench_set_keys (the --set keys),
# bench_disk_file and bench_disk_opts (its [disk] keys as -o overrides,
# apart, so that an experiment can load its data without the model).
bench_configs() {
	local layouts=${bench_layouts:-$1} disk=${bench_disk:-$2} devsize=$3
	local s key vals v l label file combos new c i j msg dsets base_tok
	local -a keys=() vlists=() llabels=() lfiles=() checkargs=()
	bench_set_keys=()
	for s in "${bench_sets[@]}"; do
		key=${s%%=*} vals=${s#*=}
		[[ $s == *=* && $key == *.* && -n $vals ]] || bench_die "--set '$s': expected SECTION.KEY=V1,V2,..."
		for k in "${keys[@]}"; do [[ $k != "$key" ]] || bench_die "--set $key given twice"; done
		IFS=, read -r -a vl <<<"$vals"
		for v in "${vl[@]}"; do
			msg=$(bench_plan_check --parse-only --set "$key=$v") || bench_die "--set $key=$v: $msg"
		done
		keys+=("$key")
		vlists+=("$vals")
	done
	bench_set_keys=("${keys[@]}")
	bench_disk_file=
	bench_disk_opts=
	dsets=
	if [[ -n $disk && $disk != none ]]; then
		# conf/hdd-7200.ini or hdd-7200 work from any directory
		if [[ -f $disk ]]; then
			bench_disk_file=$(readlink -f "$disk")
		elif [[ -f $root/$disk ]]; then
			bench_disk_file=$root/$disk
		elif [[ -f $root/conf/$disk.ini ]]; then
			bench_disk_file=$root/conf/$disk.ini
		else
			bench_die "--disk $disk: no such file"
		fi
		dsets=$(disk_overrides "$bench_disk_file")
		[[ -n $dsets ]] || bench_die "--disk $disk: no [disk] section"
		bench_disk_opts=$dsets
		IFS=, read -r -a dl <<<"$dsets"
		for v in "${dl[@]}"; do
			msg=$(bench_plan_check --parse-only --set "$v") || bench_die "--disk $disk: $msg"
		done
	fi
	if [[ -n $layouts ]]; then
		IFS=, read -r -a ll <<<"$layouts"
		for l in "${ll[@]}"; do
			IFS=$'\t' read -r label file <<<"$(bench_resolve_layout "$l")"
			for j in "${llabels[@]}"; do [[ $j != "$label" ]] || bench_die "--layouts: two layouts named '$label'"; done
			llabels+=("$label")
			lfiles+=("$file")
		done
	else
		llabels=(default)
		lfiles=("")
	fi
	combos=("")
	for vals in "${vlists[@]}"; do
		new=()
		IFS=, read -r -a vl <<<"$vals"
		for c in "${combos[@]}"; do
			for v in "${vl[@]}"; do new+=("$c,$v"); done
		done
		combos=("${new[@]}")
	done
	cfg_n=0
	cfg_label=() cfg_file=() cfg_values=() cfg_name=() cfg_opts=() cfg_sets=() cfg_error=() cfg_base=()
	for i in "${!llabels[@]}"; do
		for c in "${combos[@]}"; do
			c=${c#,}
			cfg_label+=("${llabels[i]}")
			cfg_file+=("${lfiles[i]}")
			cfg_values+=("$c")
			local o=${lfiles[i]:+config=${lfiles[i]}} name=${llabels[i]} so=
			checkargs=(${devsize:+--device-size "$devsize"})
			[[ -n ${lfiles[i]} ]] && checkargs+=("${lfiles[i]}")
			for v in ${dsets//,/ }; do checkargs+=(--set "$v"); done
			IFS=, read -r -a vl <<<"$c"
			for j in "${!keys[@]}"; do
				o+=${o:+,}${keys[j]}=${vl[j]}
				so+=${so:+,}${keys[j]}=${vl[j]}
				name+=" ${keys[j]}=${vl[j]}"
				checkargs+=(--set "${keys[j]}=${vl[j]}")
			done
			cfg_opts+=("$o")
			cfg_sets+=("$so")
			cfg_name+=("$name")
			if [[ -n ${lfiles[i]} && ! -f ${lfiles[i]} ]]; then
				if [[ ${lfiles[i]} == "$root/conf/"* ]]; then
					msg="no layout '${llabels[i]}' (conf/${llabels[i]}.ini)"
				else
					msg="${lfiles[i]}: no such file"
				fi
			else
				msg=$(bench_plan_check "${checkargs[@]}") || true
			fi
			cfg_error+=("$msg")
			cfg_n=$((cfg_n + 1))
		done
	done
	# the baseline as "label|v1|v2..." with * where a row keeps its own
	local -a want=("*")
	for k in "${keys[@]}"; do want+=("*"); done
	if [[ -n $bench_baseline ]]; then
		IFS=, read -r -a bl <<<"$bench_baseline"
		for base_tok in "${bl[@]}"; do
			if [[ $base_tok == *=* ]]; then
				key=${base_tok%%=*} v=${base_tok#*=}
				j=-1
				for i in "${!keys[@]}"; do [[ ${keys[i]} != "$key" ]] || j=$i; done
				((j >= 0)) || bench_die "--baseline $base_tok: $key is not a --set key"
				[[ ,${vlists[j]}, == *,"$v",* ]] || bench_die "--baseline $base_tok: $v is not one of ${vlists[j]}"
				want[j + 1]=$v
			else
				IFS=$'\t' read -r label file <<<"$(bench_resolve_layout "$base_tok")"
				j=-1
				for i in "${!llabels[@]}"; do
					[[ ${llabels[i]} == "$base_tok" || ${lfiles[i]} == "$file" ]] && j=$i
				done
				((j >= 0)) || bench_die "--baseline $base_tok: not one of the layouts (${llabels[*]})"
				want[0]=${llabels[j]}
			fi
		done
	else
		for i in "${!llabels[@]}"; do [[ ${llabels[i]} != contiguous ]] || want[0]=contiguous; done
		if [[ ${want[0]} == "*" ]]; then
			want[0]=${llabels[0]}
			for j in "${!vlists[@]}"; do want[j + 1]=${vlists[j]%%,*}; done
		fi
	fi
	bench_baseline_want=$(IFS=,; echo "${want[*]}")
	for i in $(seq 0 $((cfg_n - 1))); do
		IFS=, read -r -a vl <<<"${cfg_label[i]},${cfg_values[i]}"
		local -a t=()
		for j in "${!want[@]}"; do t+=("$([[ ${want[j]} == "*" ]] && echo "${vl[j]}" || echo "${want[j]}")"); done
		local target
		target=$(IFS=,; echo "${t[*]}")
		cfg_base+=("")
		for j in $(seq 0 $((cfg_n - 1))); do
			if [[ ${cfg_label[j]}${cfg_values[j]:+,${cfg_values[j]}} == "$target" && -z ${cfg_error[j]} ]]; then
				cfg_base[i]=$j
			fi
		done
	done
}

# bench_each_config METRIC ARGS... - for an experiment that runs its whole
# table on one configuration (ARGS: its command line as given): with one
# configuration, sets bench_cfg (its index) and returns, and the experiment
# runs as it always did, with that configuration on its mounts.  With
# several, runs the experiment once per configuration, as a child given
# BENCH_CONFIG_INDEX and --format csv, and prints one table: the
# configuration's layout and --set values, the child's columns, and
# vs_baseline (METRIC, a column of the child's table, over the baseline
# configuration's on the same row); a configuration that failed is a row
# with its message.  Then exits (1 when a configuration failed).
bench_each_config() {
	local metric=$1 i t0 rc out failed=0 setcols
	shift
	if [[ -n ${BENCH_CONFIG_INDEX:-} ]]; then
		bench_cfg=$BENCH_CONFIG_INDEX
		return 0
	fi
	if ((cfg_n == 1)); then
		bench_cfg=0
		[[ -z ${cfg_error[0]} ]] || bench_die "${cfg_name[0]}: ${cfg_error[0]}"
		return 0
	fi
	bench_progress_init "$cfg_n"
	declare -A table=()
	for ((i = 0; i < cfg_n; i++)); do
		if [[ -n ${cfg_error[i]} ]]; then
			echo "$(basename "$0") [$(date +%T)] config $((i + 1))/$cfg_n (${cfg_name[i]}) FAILED: ${cfg_error[i]}" >&2
			bench_step_skip 1
			failed=1
			continue
		fi
		echo "$(basename "$0") [$(date +%T)] config $((i + 1))/$cfg_n (${cfg_name[i]}): starting" >&2
		t0=$(date +%s%N)
		rc=0
		out=$(BENCH_CONFIG_INDEX=$i "$0" "$@" --format csv) || rc=$?
		if ((rc != 0)); then
			cfg_error[i]="the experiment exited with status $rc (its messages above)"
			failed=1
		else
			table[$i]=$out
		fi
		bench_step_end "config $((i + 1))/$cfg_n (${cfg_name[i]})" \
			"$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
	done
	setcols=$(IFS=,; echo "${bench_set_keys[*]}")
	{
		for ((i = 0; i < cfg_n; i++)); do
			if [[ -z ${table[$i]:-} ]]; then
				echo "@row $i ${cfg_label[i]}${cfg_values[i]:+,${cfg_values[i]}}"
				echo "@error ${cfg_error[i]//,/;}"
				continue
			fi
			echo "@row $i ${cfg_label[i]}${cfg_values[i]:+,${cfg_values[i]}} ${cfg_base[i]}"
			echo "${table[$i]}"
		done
	} | awk -v metric="$metric" -v keys="layout${setcols:+,$setcols}" '
		$1 == "@row" { cfg = $2; label[cfg] = $3; base[cfg] = $4; order[++n] = cfg; r = 0; next }
		$1 == "@error" { err[cfg] = substr($0, 8); next }
		r == 0 { hdr = $0; nf = split($0, h, ","); for (i = 1; i <= nf; i++) if (h[i] == metric) mc = i; r = 1; next }
		{ row[cfg, r] = $0; split($0, f, ","); val[cfg, r] = f[mc]; rows[cfg] = r; r++ }
		END {
			print keys "," hdr ",vs_baseline"
			for (k = 1; k <= n; k++) {
				c = order[k]
				if (c in err) { e = label[c]; for (i = 1; i <= nf; i++) e = e ","; print e "FAILED: " err[c]; continue }
				for (j = 1; j <= rows[c]; j++) {
					b = base[c]; v = ""
					if (b != "" && (b, j) in val && val[b, j] + 0 != 0 && val[c, j] ~ /^-?[0-9.]+$/) v = sprintf("%.2f", val[c, j] / val[b, j])
					print label[c] "," row[c, j] "," v
				}
			}
		}' | print_table "${format:-text}"
	# the failures are in the table: no "a command failed" from the EXIT trap
	((failed == 0)) || SFS_FAILED=1
	exit "$failed"
}
