#!/bin/bash
# scatterfs-report end to end (issue 4, "Done when"): on the request log of
# 3,000 random 8 KiB O_DIRECT fio reads it says 3,000 reads, 100% at 8192
# bytes; its fio iolog (version 3) replays with fio --read_iolog (exit 0, the
# same 3,000 reads, which reach the daemon again as 3,000 reads of 8192),
# also with --replay_redirect to another file, and as version 2; --plot
# writes a valid PNG (and an SVG with --timeline); without gnuplot on PATH
# --plot fails naming gnuplot-nox.  --latency gives the nearest-rank
# percentiles of latency_us (and of model_us under the disk model) that
# sort and awk find in the log, also with a --until window.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require fio gnuplot python3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
F=data.bin
REPORT=$SFS_BUILD/bench/scatterfs-report
[[ -x $REPORT ]] || fail "scatterfs-report not built: $REPORT"

# fio_reads JSON - read total_ios of fio's --output-format=json output
fio_reads() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"])' "$1"
}

# Layout step: the 64 MiB file.
sfs_mount "$B" "$M" "size=256M"
head -c 64M /dev/urandom >"$M/$F"
sync "$M/$F"
sfs_umount "$M"

# 3,000 random 8 KiB O_DIRECT reads (as tests/mount/logging.sh).
sfs_mount "$B" "$M" "log=$T/req.log"
out=$(fio --name=randread8k --filename="$M/$F" --rw=randread --bs=8k --direct=1 \
	--number_ios=3000 --size=64M --ioengine=psync --numjobs=1 --randrepeat=1 2>&1) ||
	fail "fio: $out"
grep -q 'issued rwts: total=3000,0,0,0' <<<"$out" || fail "fio did not issue 3000 reads: $out"
sfs_umount "$M"
L=$T/req.log
sfs_add_log "$L"

# The report: 3000 reads, one read size, 8192 at 100%.
"$REPORT" "$L" --format csv --metric read_sizes >"$T/sizes.csv" 2>"$T/err" ||
	fail "scatterfs-report --metric read_sizes: $(cat "$T/err")"
assert_eq "$(cat "$T/sizes.csv")" "by,group,size,count,share_pct,bytes
all,all,8192,3000,100.00,24576000" "read sizes of the fio log (CSV)"
"$REPORT" "$L" --format json >"$T/report.json" 2>"$T/err" || fail "scatterfs-report --format json: $(cat "$T/err")"
assert_eq "$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["sequentiality"]["reads"], [(r["size"], r["count"], r["share_pct"]) for r in j["read_sizes"]])' "$T/report.json")" \
	"3000 [(8192, 3000, 100.0)]" "reads and read sizes in the JSON report"
"$REPORT" "$L" >"$T/report.txt" 2>"$T/err" || fail "scatterfs-report (text): $(cat "$T/err")"
grep -Eq '^ +8192 +3000 +100\.00% +24576000$' "$T/report.txt" ||
	fail "text report lacks the row '8192 3000 100.00% 24576000': $(cat "$T/report.txt")"
note "report: 3000 reads, 100% at 8192 bytes"

# --latency against the log by a second method: each column's values sorted
# (sort -n), the percentile taken at its nearest rank ceil(p/100 x n).
# ranked LOG COLUMN [FILTER] - "n p50 p90 p99 p99.9 max" of COLUMN over the
# read rows passing the awk condition FILTER
ranked() {
	sfs_log_rows "$1" read | sfs_log_awk "$1" "${3:-1} { print \$f_$2 }" | sort -n |
		awk '{ v[NR] = $1 } END {
			printf "%d", NR
			split("500 900 990 999 1000", pm, " ")
			for (i = 1; i <= 5; i++) { r = int((pm[i] * NR + 999) / 1000); printf " %s", v[r < 1 ? 1 : r] }
			print "" }'
}
# latency_row CSV OP COLUMN - the same six numbers from scatterfs-report's latency table
latency_row() {
	awk -F, -v op="$2" -v c="$3" '$1 == "all" && $3 == op && $4 == c { print $5, $6, $7, $8, $9, $10 }' "$1"
}
"$REPORT" "$L" --latency --format csv --metric latency >"$T/lat.csv" 2>"$T/err" ||
	fail "scatterfs-report --latency: $(cat "$T/err")"
want=$(ranked "$L" latency_us)
[[ $want == 3000\ * ]] || fail "the log's read latencies: '$want'"
assert_eq "$(latency_row "$T/lat.csv" read latency_us)" "$want" "read latency_us: n p50 p90 p99 p99.9 max"
assert_eq "$(grep -c ',model_us,' "$T/lat.csv")" 0 "model_us rows of a log without the column"
# A filter: the reads of the log's first half in time (--until), one way and the other.
mid=$(sfs_log_awk "$L" 'NR > 1 { t[NR] = $f_ts_us } END { print t[int(NR / 2)] }' "$L")
until_s=$(awk -v t="$mid" 'BEGIN { printf "%d.%06d", t / 1000000, t % 1000000 }')
"$REPORT" "$L" --latency --format csv --metric latency --until "$until_s" --op read >"$T/lat2.csv" 2>"$T/err" ||
	fail "scatterfs-report --latency --until $until_s: $(cat "$T/err")"
assert_eq "$(latency_row "$T/lat2.csv" read latency_us)" "$(ranked "$L" latency_us "\$f_ts_us < $mid")" \
	"read latency_us of the rows before ts_us $mid (--until $until_s)"
n2=$(sfs_log_awk "$L" -v m="$mid" 'NR > 1 && $f_op == "read" && $f_ts_us < m' "$L" | wc -l)
grep -qx "scatterfs-report: $n2 of 3000 rows selected" "$T/err" || fail "--until: expected '$n2 of 3000 rows selected': $(cat "$T/err")"
note "latency: $want (n p50 p90 p99 p99.9 max, us), as sort and awk find; --until $until_s selects $n2"
# A window no row can be in (--until not after --since) is bad input, not an empty report.
for w in "5 2" "5 5"; do
	rc=0
	"$REPORT" "$L" --since "${w% *}" --until "${w#* }" >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "$rc $(head -n 1 "$T/err")" "2 scatterfs-report: --until ${w#* } is not after --since ${w% *}: no row could match" \
		"--since ${w% *} --until ${w#* }: exit status and message"
	assert_eq "$(wc -c <"$T/out")" 0 "--since ${w% *} --until ${w#* }: bytes on stdout"
done

# With the disk model the log has model_us: its percentiles too.
sfs_mount "$B" "$M" "log=$T/model.log,disk.model=hdd"
dd if="$M/$F" of=/dev/null bs=64k count=200 iflag=direct status=none || fail "dd under the disk model"
sfs_umount "$M"
"$REPORT" "$T/model.log" --latency --format csv --metric latency >"$T/lat3.csv" 2>"$T/err" ||
	fail "scatterfs-report --latency (model_us): $(cat "$T/err")"
assert_eq "$(latency_row "$T/lat3.csv" read latency_us)" "$(ranked "$T/model.log" latency_us)" "read latency_us under the disk model"
assert_eq "$(latency_row "$T/lat3.csv" read model_us)" "$(ranked "$T/model.log" model_us)" "read model_us under the disk model"
note "latency under the disk model: model_us $(ranked "$T/model.log" model_us)"

# fio iolog, version 3, replayed on the mount with O_DIRECT: exit 0, 3000 reads,
# and the replay's own log holds 3000 reads of 8192 again.
"$REPORT" "$L" --metric summary --fio-iolog "$T/io3.log" --iolog-dir "$M" >/dev/null 2>"$T/err" ||
	fail "scatterfs-report --fio-iolog: $(cat "$T/err")"
grep -q "3000 reads, 0 writes" "$T/err" || fail "scatterfs-report --fio-iolog: $(cat "$T/err")"
assert_eq "$(head -n 1 "$T/io3.log")" "fio version 3 iolog" "iolog version line"
assert_eq "$(grep -c " $M/$F read [0-9]* 8192\$" "$T/io3.log")" 3000 "read lines in the iolog"
sfs_mount "$B" "$M" "log=$T/replay.log"
fio --name=replay --read_iolog="$T/io3.log" --direct=1 --output-format=json \
	>"$T/replay.json" 2>"$T/replay.err" || fail "fio --read_iolog (version 3): $(cat "$T/replay.err" "$T/replay.json")"
sfs_umount "$M"
assert_eq "$(fio_reads "$T/replay.json")" 3000 "fio --read_iolog: read total_ios"
assert_eq "$(sfs_log_count "$T/replay.log" read "$F" 8192)" 3000 "read rows of 8192 for $F in the log of the replay"
note "iolog v3 replayed on the mount: 3000 reads"

# The same iolog, redirected to another file of the same size.
head -c 64M /dev/zero >"$T/other.img"
fio --name=redirect --read_iolog="$T/io3.log" --replay_redirect="$T/other.img" --replay_no_stall=1 \
	--output-format=json >"$T/redirect.json" 2>"$T/redirect.err" ||
	fail "fio --read_iolog --replay_redirect: $(cat "$T/redirect.err" "$T/redirect.json")"
assert_eq "$(fio_reads "$T/redirect.json")" 3000 "fio --replay_redirect: read total_ios"

# Version 2, against a copy of the file (file mode with another --iolog-dir).
mkdir "$T/copy"
head -c 64M /dev/zero >"$T/copy/$F"
"$REPORT" "$L" --metric summary --fio-iolog "$T/io2.log" --iolog-version 2 --iolog-dir "$T/copy" \
	>/dev/null 2>"$T/err" || fail "scatterfs-report --iolog-version 2: $(cat "$T/err")"
assert_eq "$(head -n 1 "$T/io2.log")" "fio version 2 iolog" "iolog version 2 line"
fio --name=v2 --read_iolog="$T/io2.log" --output-format=json >"$T/v2.json" 2>"$T/v2.err" ||
	fail "fio --read_iolog (version 2): $(cat "$T/v2.err" "$T/v2.json")"
assert_eq "$(fio_reads "$T/v2.json")" 3000 "fio --read_iolog (version 2): read total_ios"
note "iolog: --replay_redirect and version 2 replay 3000 reads"

# Plots.
"$REPORT" "$L" --metric summary --plot "$T/x.png" >/dev/null 2>"$T/err" || fail "--plot x.png: $(cat "$T/err")"
assert_eq "$(head -c 8 "$T/x.png" | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "PNG signature of --plot x.png"
"$REPORT" "$L" --metric summary --plot "$T/t.svg" --timeline >/dev/null 2>"$T/err" ||
	fail "--plot t.svg --timeline: $(cat "$T/err")"
grep -q '<svg' "$T/t.svg" || fail "--plot t.svg: no <svg element"
rc=0
PATH=/nonexistent "$REPORT" "$L" --metric summary --plot "$T/y.png" >/dev/null 2>"$T/err" || rc=$?
assert_eq "$rc" 1 "exit status of --plot without gnuplot"
grep -q 'gnuplot-nox' "$T/err" || fail "--plot without gnuplot: message does not name gnuplot-nox: $(cat "$T/err")"
[[ ! -e $T/y.png ]] || fail "--plot without gnuplot wrote $T/y.png"
note "plots: PNG, SVG timeline, and the missing-gnuplot error"

# --block-size takes what [device] block_size takes, with its suffixes
# (2K was refused as "expected bytes > 0"; 3000 and 1 were taken).
printf 'logical_offset,device_offset,length\n0,0,8192\n8192,65536,8192\n' >"$T/two.csv"
assert_eq "$("$REPORT" --layout "$T/two.csv" --block-size 2K)" "$("$REPORT" --layout "$T/two.csv" --block-size 2048)" \
	"--block-size 2K as 2048"
for b in 3000 1 0 2M -4096; do
	rc=0
	"$REPORT" --layout "$T/two.csv" --block-size "$b" >/dev/null 2>"$T/err" || rc=$?
	assert_eq "$rc $(head -n 1 "$T/err")" "2 scatterfs-report: --block-size '$b': allowed a power of two from 512 to 1M (K and M suffixes), as [device] block_size" \
		"--block-size $b"
done
note "--block-size: suffixes taken, what block_size refuses refused"
# --plot of a name gnuplot cannot write is a usage error, exit 2, before
# the log is read (it was exit 1)
rc=0
"$REPORT" "$L" --plot "$T/x.txt" >/dev/null 2>"$T/err" || rc=$?
assert_eq "$rc $(head -n 1 "$T/err")" "2 scatterfs-report: --plot $T/x.txt: the file name must end in .png or .svg" "--plot x.txt"
