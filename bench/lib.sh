# bench/lib.sh: what the tools in bench/ share.  Source it (it only defines),
# parse the options (bench_options: --help and bad input need neither root
# nor a build), then call bench_setup.  The experiments' shared options:
# --layouts L1,L2,... (names from conf/ or INI paths), --baseline B, --set
# SECTION.KEY=V1,V2,... (repeatable), --disk FILE|none, --jobs N and --dask
# SCHEDULER, as bench/run takes them (bench/README-run.md).
bench_layouts='' bench_baseline='' bench_disk='' bench_dask='' jobs=1
bench_sets=()
bench_name=$(basename "$(readlink -f "$0")") # the script's own name (a link may have another)

bench_die() {
	echo "bench/$bench_name: $*" >&2
	SFS_FAILED=1 # the message says it all: no logs from the EXIT trap
	exit 2
}

# bench_options 'SPEC...' ARGS... - parses ARGS: --help (bench_help), the
# shared options (into bench_layouts, bench_baseline, bench_disk,
# bench_dask, jobs and the array bench_sets) and the script's own, each
# SPEC word --NAME (a flag: NAME=1), --NAME=DEFAULT (a value; a DEFAULT of
# digits asks for a positive integer) or --NAME=A|B|C (one of them, A the
# default), into the variable NAME (- as _).  An empty value, or one that
# is an option, is refused; --plot FILE as bench_plot_file takes it.
bench_options() {
	local spec=$1 w v
	local -A kind=([--layouts]== [--baseline]== [--set]== [--disk]== [--dask]== [--jobs]==1)
	shift
	for w in $spec; do
		v=${w%%=*} && kind[$v]=${w#"$v"} && v=${v#--} && v=${v//-/_}
		if [[ $w != *=* ]]; then printf -v "$v" ''; else w=${w#*=}; printf -v "$v" %s "${w%%|*}"; fi
	done
	while (($#)); do
		[[ $1 == -h || $1 == --help ]] && bench_help
		[[ -n ${kind[$1]+set} ]] || bench_die "unknown option '$1' (see --help)"
		v=${1#--} v=${v//-/_}
		if [[ -z ${kind[$1]} ]]; then printf -v "$v" 1; shift; continue; fi
		(($# >= 2)) || bench_die "$1 needs a value (see --help)"
		[[ -n $2 ]] || bench_die "$1: an empty value"
		[[ $2 != --* ]] || bench_die "$1 needs a value, not the option '$2' (see --help)"
		case $1 in
		--set) bench_sets+=("$2") ;;
		--layouts | --baseline | --disk | --dask) printf -v "bench_$v" %s "$2" ;;
		*) printf -v "$v" %s "$2" ;;
		esac
		w=${kind[$1]#=}
		if [[ $w =~ ^[0-9]+$ && ! $2 =~ ^[1-9][0-9]{0,8}$ ]]; then
			bench_die "$1 must be a positive integer (at most 999999999), not '$2'"
		elif [[ $w == *'|'* && "|$w|" != *"|$2|"* ]]; then
			w=${w//|/, }
			bench_die "$1 must be ${w%, *} or ${w##*, }, not '$2'"
		fi
		shift 2
	done
	[[ -z $bench_layouts ]] || bench_list --layouts "$bench_layouts"
	[[ -z ${plot:-} ]] || bench_plot_file
}

# bench_plot_file - --plot's FILE: a .png or .svg (any case) in a directory
# the experiment may write, else the experiment ends before it runs;
# resolved to an absolute path
bench_plot_file() {
	[[ ${plot,,} == *.png || ${plot,,} == *.svg ]] || bench_die "--plot: the file must end in .png or .svg, not '$plot'"
	plot=$(readlink -m "$plot")
	[[ -d ${plot%/*} && -w ${plot%/*} ]] || bench_die "--plot: no directory ${plot%/*} to write $plot in"
}

# bench_help - the script's header comment on stdout, its synopsis (from
# bench/README.md's "Every script's options", the one copy) after the
# first paragraph; exits 0
bench_help() {
	local h
	h=$(sed -n '2,/^[^#]/{/^[^#]/d;s/^# \{0,1\}//;p}' "$0")
	printf '%s\n\n' "${h%%$'\n\n'*}"
	awk -v n="bench/$bench_name" '/^## Every script/ { s = 1 } s && $1 == n && /^    / { p = 1 }
		p && /^$/ { exit } p { sub(/^    /, "  "); print }' "$root/bench/README.md"
	printf '\n%s\n' "${h#*$'\n\n'}"
	echo "  --format text|csv   an aligned table under a title, or CSV"
	exit 0
}

# bench_list OPTION LIST - LIST's comma-separated items into the array
# bench_l; an empty LIST or item, or an item given twice (two identical
# rows), ends the experiment
bench_list() {
	[[ -n $2 ]] || bench_die "$1: an empty list"
	[[ ,$2, != *,,* ]] || bench_die "$1: an empty item in '$2'"
	IFS=, read -r -a bench_l <<<"$2"
	local -A seen=()
	local i
	for i in "${bench_l[@]}"; do
		[[ -z ${seen[$i]:-} ]] || bench_die "$1: '$i' given twice in '$2'"
		seen[$i]=1
	done
}

# bench_bytes OPTION SIZE [ALSO] - SIZE (a positive whole number of bytes, or
# of KiB, MiB or GiB with a K, M or G suffix) in bytes into bench_b; anything
# else ends the experiment with "OPTION: 'SIZE' is not a size ..." (with
# ALSO: "is neither ALSO nor a size ...")
bench_bytes() {
	local not=not
	[[ -z ${3:-} ]] || not="neither $3 nor"
	[[ $2 =~ ^([1-9][0-9]{0,11})([KMGkmg]?)$ ]] || bench_die "$1: '$2' is $not a size (bytes, or a K, M or G suffix)"
	local u=${BASH_REMATCH[2]^}
	u=${u/K/10} u=${u/M/20} u=${u/G/30}
	bench_b=$((BASH_REMATCH[1] << ${u:-0}))
}

# bench_own KEY=WHY... - a --set of the user's that names KEY (the
# experiment's own) ends the experiment: "--set KEY: WHY"
bench_own() {
	local k
	for k; do [[ " ${bench_sets[*]%%=*} " != *" ${k%%=*} "* ]] || bench_die "--set ${k%%=*}: ${k#*=}"; done
}

# bench_set_args [SECTION.KEY=VALUE...] - bench/run's --set arguments into
# the array bench_set_args: each default given whose key no --set of the
# user's names, then the user's --set's; the user's keys, in order, into
# the array bench_keys
bench_set_args() {
	local d s
	bench_set_args=() bench_keys=("${bench_sets[@]%%=*}")
	for d; do [[ " ${bench_keys[*]} " == *" ${d%%=*} "* ]] || bench_set_args+=(--set "$d"); done
	for s in "${bench_sets[@]}"; do bench_set_args+=(--set "$s"); done
}

# bench_check ARGS... - bench/run ARGS --list with --baseline: a layout,
# --set value, --baseline or --disk it refuses (it says why) ends the
# experiment with its status before the experiment's own preparation
bench_check() {
	"$root/bench/run" "$@" ${bench_baseline:+--baseline "$bench_baseline"} --load : --workload : --list >/dev/null ||
		{ bench_rc=$?; SFS_FAILED=1; exit "$bench_rc"; }
}

# bench_sweep OUT ARGS... - bench/run ARGS --format json into OUT, with
# --baseline, --jobs, --dask, --workdir and --keep; bad input (bench/run said why) or no
# table ends the experiment with bench/run's status, else bench_rc is it
bench_sweep() {
	local out=$1
	shift
	bench_rc=0
	"$root/bench/run" "$@" ${bench_baseline:+--baseline "$bench_baseline"} --jobs "$jobs" \
		${bench_dask:+--dask "$bench_dask"} --workdir "$SFS_TMP" \
		${keep:+--keep} --format json >"$out" || bench_rc=$?
	((bench_rc <= 1)) && [[ -s $out ]] || { SFS_FAILED=1; exit "$((bench_rc ? bench_rc : 1))"; }
}

# bench_table ARGS... < SCRIPT - the experiment's table step: python3 -c
# SCRIPT ARGS after "import math, os, statistics, sys" and "from deftable
# import *" (bench/deftable.py); ends the experiment with its status (1: a
# failed row, which the table shows: no logs from the EXIT trap)
bench_table() {
	local rc=0
	PYTHONPATH=$root/bench python3 -c "import math, os, statistics, sys
from deftable import *
$(cat)" "$@" || rc=$?
	((rc == 0)) || SFS_FAILED=1
	exit "$rc"
}

# bench_step NAME... - with --step (one of the NAMEs, the steps bench/run
# runs; not for users, hence bench/run's SCATTERFS_MOUNT and SCATTERFS_JOB
# must be set): the script's run_step STEP, after sourcing tests/lib.sh
# (but for config, whose output is a configuration); then exits
bench_step() {
	[[ -n $step || -z $socket_dir ]] || bench_die "--socket-dir goes with --step (bench/run's steps; not for users)"
	[[ -n $step ]] || return 0
	[[ " $* " == *" $step "* ]] || bench_die "--step: no step '$step' (one of: $*)"
	[[ -n ${SCATTERFS_MOUNT:-} && -n ${SCATTERFS_JOB:-} ]] ||
		bench_die "--step $step: one of the steps bench/run runs (SCATTERFS_MOUNT and SCATTERFS_JOB unset); not for users"
	if [[ $step != config ]]; then
		unset SCATTERFS_KEEP
		# shellcheck source=../tests/lib.sh
		source "$root/tests/lib.sh"
	fi
	run_step "$step"
	exit 0
}

# bench_pg_env - in a step bench/run runs as root (tests/lib.sh sourced), what
# sfs_pg_start and sfs_pg_stop use: PORT (54391 + SCATTERFS_JOB), S (the
# --socket-dir) and PGLOG (in TMPDIR, postgres's)
# shellcheck disable=SC2034 # tests/lib.sh's
bench_pg_env() {
	PORT=$((54391 + SCATTERFS_JOB)) S=$socket_dir PGLOG=$TMPDIR/postgres.log
	[[ -e $PGLOG ]] || { : >"$PGLOG" && chown postgres: "$PGLOG"; }
}

# bench_pg_socket DIR - ends the experiment when PostgreSQL's socket in DIR
# (.s.PGSQL. and a port of 5 digits) would pass the 107 bytes a Unix
# socket's path may have (the work directory is too deep), before anything
# is mounted
bench_pg_socket() {
	local p=$1/.s.PGSQL.54321
	((${#p} <= 107)) || bench_die "--workdir: PostgreSQL's socket would be $p, ${#p} bytes, more than the 107 a Unix socket's path may have: give a shorter --workdir (or TMPDIR)"
}

# bench_pg_sh PORT SOCKDIR OPTIONS - shell code for bench/run's steps (sh
# -c, run as user postgres: --as) that defines, for the row's cluster at
# $SCATTERFS_MOUNT/pgdata on port PORT + SCATTERFS_JOB with its socket in
# SOCKDIR: sql (psql ARGS... as postgres), start (pg_ctl start with the
# server OPTIONS, which the step expands when it starts; its log in
# TMPDIR, the end of it on stderr when it fails) and stop
bench_pg_sh() {
	cat <<EOF
pgdata=\$SCATTERFS_MOUNT/pgdata port=\$(($1 + SCATTERFS_JOB))
sql() { PGOPTIONS='-c client_min_messages=warning' psql -X -q -At -v ON_ERROR_STOP=1 -h "$2" -p "\$port" -d postgres "\$@"; }
start() { $PGBIN/pg_ctl -D "\$pgdata" -l "\$TMPDIR/pg.log" -w -t 300 -o "-p \$port -k $2 -c listen_addresses='' $3" start >/dev/null || { tail -20 "\$TMPDIR/pg.log" >&2; exit 1; }; }
stop() { $PGBIN/pg_ctl -D "\$pgdata" -m fast -w -t 300 stop >/dev/null; }
EOF
}

# bench_setup - as root, installs and builds what is missing (tools/setup),
# sources tests/lib.sh (sfs_mount, fail, SFS_TMP and the EXIT trap that
# unmounts and cleans up) in --workdir's TMPDIR, and defines note (progress
# on stderr: stdout is the table, clean CSV with --format csv)
bench_setup() {
	if [[ -n ${workdir:-} ]]; then
		mkdir -p "$workdir" 2>/dev/null && [[ -d $workdir && -w $workdir ]] ||
			bench_die "--workdir $workdir: not a directory this user can create or write"
		TMPDIR=$(readlink -f "$workdir") && export TMPDIR
	fi
	[[ -z ${keep:-} ]] || export SCATTERFS_KEEP=1

	((EUID == 0)) || { echo "$(basename "$0"): run as root (it mounts FUSE and drops the page cache)" >&2; exit 1; }
	bench_build=${SCATTERFS_BUILD:-$root/build}
	SCATTERFS_BUILDDIR=$bench_build "$root/tools/setup" >&2 || { echo "$(basename "$0"): set-up failed" >&2; exit 1; }
	export SCATTERFS_BUILD=$bench_build
	# shellcheck source=../tests/lib.sh
	source "$root/tests/lib.sh"
	note() { echo "[$SFS_NAME $(date +%T)] $*" >&2; }

	BENCH_PLAN=$bench_build/bench/scatterfs-plan
}
