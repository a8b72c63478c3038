#!/bin/bash
# scatterfs-report end to end (issue 4, "Done when"): on the request log of
# 3,000 random 8 KiB O_DIRECT fio reads it says 3,000 reads, 100% at 8192
# bytes; its fio iolog (version 3) replays with fio --read_iolog (exit 0, the
# same 3,000 reads, which reach the daemon again as 3,000 reads of 8192),
# also with --replay_redirect to another file, and as version 2; --plot
# writes a valid PNG (and an SVG with --timeline); without gnuplot on PATH
# --plot fails naming gnuplot-nox.
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
