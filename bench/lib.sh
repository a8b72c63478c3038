# bench/lib.sh: what the tools in bench/ share.  Source it (it only defines),
# parse the options (bench_options: --help and bad input need neither root
# nor a build), then call bench_setup.  The experiments' shared options:
# --layouts L1,L2,... (names from conf/ or INI paths), --baseline B, --set
# SECTION.KEY=V1,V2,... (repeatable), --disk FILE|none, --jobs N and --dask
# SCHEDULER, as bench/run takes them (bench/README-run.md).
bench_name=$(basename "$(readlink -f "$0")") # the script's own name (a link may have another)

bench_die() {
	echo "bench/$bench_name: $*" >&2
	SFS_FAILED=1 # the message says it all: no logs from the EXIT trap
	exit 2
}

# bench_options 'SPEC...' ARGS... - parses ARGS (bench/benchopts.py: the
# SPEC words, the shared options and the variables they set); bad input
# ends the experiment with benchopts.py's one line, --help with bench_help
bench_options() {
	local out rc=0
	out=$(python3 "$root/bench/benchopts.py" "bench/$bench_name" "$@") || rc=$?
	((rc != 3)) || bench_help
	((rc == 0)) || { SFS_FAILED=1; exit 2; }
	eval "$out"
}

# bench_help - the script's header comment on stdout, then its synopsis
# and options from bench/README.md's "Every script's options" (the one
# copy); exits 0
bench_help() {
	sed -n '2,/^[^#]/{/^[^#]/d;s/^# \{0,1\}//;p}' "$0"
	awk -v n="bench/$bench_name" '/^## Every script/ { s = 1 } s && $1 == n && /^    / { p = 1; print "" }
		p && /^[^ ]/ { exit } p { sub(/^    /, "  "); print }' "$root/bench/README.md" | sed '$d'
	echo "  --format text|csv   an aligned table under a title, or CSV"
	exit 0
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
