#!/bin/bash
# TIMEOUT: 120
# scatterfs-report's command line on logs and extent maps of several
# devices (issue 15; no mount: the unit tests in test_report.c pin the
# metrics, this the tool around them): --iolog-device NAME=FILE writes
# one fio iolog per device, PATH with .NAME before its extension, and not
# PATH itself, and fio replays them side by side (when fio is installed);
# its usage errors exit 2 naming both options; a device without a target
# exits 1 naming the log's line; --plot --timeline draws the devices (when
# gnuplot is installed); --layout with the device column prints a
# line per device and the whole map's last, with exact values; a one-device
# map prints one line, as before.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
REPORT=$SFS_BUILD/bench/scatterfs-report
[[ -x $REPORT ]] || fail "scatterfs-report not built: $REPORT"
cd "$T" || fail "cd $T"

cat >two.csv <<'EOF'
ts_us,op,pid,path,offset,size,result,latency_us,device_io
100,read,10,base/t,0,8192,8192,50,main:8192+8192
150,write,20,pg_wal/w,0,8192,8192,40,wal:0+8192
200,read,10,base/t,8192,8192,8192,60,main:16384+8192
250,write,20,pg_wal/w,8192,8192,8192,30,wal:8192+8192
EOF
head -c 1M /dev/zero >main.img
head -c 1M /dev/zero >wal.img

note "--iolog-device NAME=FILE: one iolog per device"
"$REPORT" two.csv --metric summary --fio-iolog r.iolog --iolog-device main=main.img \
	--iolog-device wal=wal.img >/dev/null 2>err || fail "scatterfs-report exited $?: $(cat err)"
assert_eq "$(cat err)" "scatterfs-report: fio iolog r.main.iolog (version 3): 2 reads, 0 writes
scatterfs-report: fio iolog r.wal.iolog (version 3): 0 reads, 2 writes" "stderr"
[[ ! -e r.iolog ]] || fail "r.iolog was left beside the devices' iologs"
assert_eq "$(cat r.wal.iolog)" "fio version 3 iolog
51 wal.img add
51 wal.img open
51 wal.img write 0 8192
151 wal.img write 8192 8192
151 wal.img close" "r.wal.iolog"
assert_eq "$(grep -c ' main.img read ' r.main.iolog)" 2 "reads in r.main.iolog"
if command -v fio >/dev/null; then
	fio --output-format=terse --terse-version=3 --name=main --read_iolog=r.main.iolog \
		--name=wal --read_iolog=r.wal.iolog >fio.out 2>&1 || fail "fio --read_iolog: $(cat fio.out)"
	# terse v3: field 3 the job, 6 read KiB, 47 write KiB
	assert_eq "$(awk -F';' '{ printf "%s %s %s ", $3, $6, $47 }' fio.out)" "main 16 0 wal 0 16 " "fio's replay"
fi

if command -v gnuplot >/dev/null; then
	note "--plot --timeline: one colour per device"
	"$REPORT" two.csv --metric summary --plot t.png --timeline >/dev/null 2>err ||
		fail "--plot --timeline exited $?: $(cat err)"
	assert_eq "$(head -c 8 t.png | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "t.png's PNG signature"
fi

note "usage errors and a device without its FILE"
rc=0
"$REPORT" two.csv --fio-iolog x.iolog --iolog-device main=main.img --iolog-device /dev/null \
	>/dev/null 2>err || rc=$?
assert_eq "$rc" 2 "exit status of FILE with NAME=FILE"
assert_eq "$(head -n 1 err)" "scatterfs-report: --iolog-device /dev/null and --iolog-device main=main.img: FILE is for a one-device log, NAME=FILE for a log of several devices" "FILE with NAME=FILE"
rc=0
"$REPORT" two.csv --fio-iolog x.iolog --iolog-device main=main.img >/dev/null 2>err || rc=$?
assert_eq "$rc" 1 "exit status of a device without FILE"
assert_eq "$(cat err)" "scatterfs-report: two.csv:3: device wal has no --iolog-device wal=FILE (the file its iolog replays on)" "a device without FILE"
[[ ! -e x.iolog && ! -e x.main.iolog ]] || fail "an incomplete iolog was left: $(ls)"

note "--layout with the device column"
cat >ext.csv <<'EOF'
logical_offset,device_offset,length,device
0,1048576,65536,main
65536,0,65536,wal
131072,1114112,65536,main
196608,2097152,65536,main
EOF
assert_eq "$("$REPORT" --layout ext.csv)" "device=main extents=3 runs=2 blocks=48 scored=47 contiguous=46 layout_score=0.978723 largest_jump=917504
device=wal extents=1 runs=1 blocks=16 scored=15 contiguous=15 layout_score=1.000000 largest_jump=0
extents=4 runs=3 blocks=64 scored=62 contiguous=61 layout_score=0.983871 largest_jump=917504" "--layout of two devices"
printf 'logical_offset,device_offset,length\n0,1048576,65536\n65536,1114112,65536\n' >one.csv
assert_eq "$("$REPORT" --layout one.csv)" "extents=2 runs=1 blocks=32 scored=31 contiguous=31 layout_score=1.000000 largest_jump=0" "--layout of one device"
note "pass"
