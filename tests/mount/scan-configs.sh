#!/bin/bash
# bench/scan with configuration paths, run from /: --layouts takes a path
# to conf/contiguous.ini and a copy of equi-fragmented.ini elsewhere (its
# row is labelled by its file name); --set sweeps layout.extent_size over
# two values; --baseline contiguous; --disk none; --jobs 2 (bench/run's,
# two rows side by side).  Each layout gives a row
# per extent size, with no error; contiguous's vs_baseline is 1.00 and the
# copy's is its avg_s over contiguous's at the same extent size.  A
# missing layout file or one the daemon refuses stops it before anything
# runs (bench/run's check, as every experiment over it): exit status 2 and
# one line naming the file, with the daemon's own message for the refused
# one, and no table.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
cp "$SFS_ROOT/conf/equi-fragmented.ini" "$T/my.ini"
printf '[layout]\npattern = bogus\n' >"$T/bad.ini"
mkdir -p "$T/m"
msg=$("$SFS_BIN" "$T/b" "$T/m" -f -o "size=64M,config=$T/bad.ini" 2>&1 </dev/null) &&
	fail "the daemon mounted $T/bad.ini"
msg=${msg#scatterfs: }
[[ -n $msg ]] || fail "no message from the daemon for $T/bad.ini"

out=$T/out.csv
rc=0
(cd / && SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/scan" --rows 5000 --runs 2 --read-sizes 16K \
	--layouts "$SFS_ROOT/conf/contiguous.ini,$T/my.ini" \
	--set layout.extent_size=70K,140K --baseline contiguous --disk none --jobs 2 --format csv) \
	>"$out" 2>"$T/err" </dev/null || rc=$?
sfs_add_log "$T/err"
sfs_add_log "$out"
cat "$out"
assert_eq "$rc" 0 "exit status"
assert_eq "$(head -n 1 "$out")" \
	"layout,layout.extent_size,read_size,runs,first_s,min_s,avg_s,max_s,device_ios,dominant_read_size,vs_baseline,error" "CSV header"
assert_eq "$(tail -n +2 "$out" | cut -d, -f1,2 | paste -sd' ')" \
	"contiguous,70K contiguous,140K my,70K my,140K" "rows"
field() { awk -F, -v l="$1" -v e="$2" -v c="$3" '$1 == l && $2 == e { print $c }' "$out"; }
for es in 70K 140K; do
	assert_eq "$(field contiguous $es 12)" "" "contiguous $es: error"
	assert_eq "$(field my $es 12)" "" "my $es: error"
	assert_eq "$(field contiguous $es 11)" 1.00 "contiguous $es: vs_baseline"
	assert_eq "$(field my $es 11)" "$(awk -v a="$(field my $es 7)" -v c="$(field contiguous $es 7)" 'BEGIN { printf "%.2f", a / c }')" \
		"my $es: vs_baseline"
done

for l in "missing.ini|layout file $T/missing.ini: no such file" "bad.ini|layout bad: $msg"; do
	rc=0
	got=$(cd / && SCATTERFS_BUILD=$SFS_BUILD "$SFS_ROOT/bench/scan" --rows 5000 --runs 2 --read-sizes 16K \
		--layouts "$SFS_ROOT/conf/contiguous.ini,$T/${l%%|*}" --disk none --format csv 2>"$T/err2" </dev/null) || rc=$?
	sfs_add_log "$T/err2"
	assert_eq "$rc:$got" "2:" "${l%%|*}: exit status and table"
	assert_eq "$(grep -v '^== \|^ninja: ' "$T/err2")" "bench/run: ${l#*|}" "${l%%|*}: the message"
done
note "pass"
