#!/bin/bash
# Trims, counted per device and carrying their file (issue 25): a hole
# punch, a truncate and a removed file free device runs, and once the
# catalog no longer points at them (the background sync, every 5 s) each
# run goes down its device's stack as one trim.  .scatterfs/stats counts
# them per device (trim_ios, trim_bytes), and each trim carries the file
# it came from: a fault rule with op = trim and file = GLOB matches
# exactly the trims of that file's runs.
#
# Two devices, main and [device "two"] (files under t/ go there), 1 MiB
# extents (one extent per MiB of a file, none shared), both stacks
# accounting, faults, base.  A removal frees each run of device-adjacent
# extents as one (extmap_remove()), so t/r's two extents, one after the
# other on two, are one trim.  Expected, step by step:
#   punch p [256K, +128K)      main 1 trim,  131072 bytes   (rule tp 1)
#   truncate p to 512K         main 1 trim,  524288 bytes   (rule tp 1)
#   rm q (1 MiB)               main 1 trim, 1048576 bytes   (no rule)
#   rm t/r (2 MiB: 2 extents)  two  1 trim, 2097152 bytes   (rule tt 1)
#   rm p ([0,256K) [384K,512K)) main 2 trims, 393216 bytes  (rule tp 2)
# TIMEOUT: 300
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 fallocate

T=$SFS_TMP
M=$T/mnt
B=$T/main.img
cat >"$T/trims.ini" <<'EOF'
[device]
layers = accounting, faults, base
[layout]
extent_size = 1M
[device "two"]
backing = two.img
size = 32M
layers = accounting, faults, base
[file "t/*"]
device = two
[fault "tp"]
op = trim
file = p
delay_ms = 1
[fault "tt"]
op = trim
file = t/*
delay_ms = 1
EOF
sfs_mount "$B" "$M" "config=$T/trims.ini,size=64M"

# trims - "MAIN_IOS MAIN_BYTES / TWO_IOS TWO_BYTES": trim_ios and
# trim_bytes of main and two in .scatterfs/stats
trims() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["devices"]
print(d["main"]["trim_ios"], d["main"]["trim_bytes"], "/", d["two"]["trim_ios"], d["two"]["trim_bytes"])' \
		"$M/.scatterfs/stats"
}

# wait_trims WHAT WANT - waits (up to 30 s: the sync runs every 5 s) until
# trims prints WANT
wait_trims() {
	local what=$1 want=$2 got end=$((SECONDS + 30))
	while :; do
		got=$(trims)
		[[ $got == "$want" || $SECONDS -ge $end ]] && break
		sleep 0.2
	done
	assert_eq "$got" "$want" "trims (main / two) after $what"
	note "$what: trims (main / two) $got"
}

mkdir "$M/t"
for f in p q; do
	head -c 1M /dev/urandom >"$M/$f"
done
head -c 2M /dev/urandom >"$M/t/r"
sync "$M/p" "$M/q" "$M/t/r"
assert_eq "$(sfs_extents "$M" p | tail -n +2 | wc -l)" 1 "p's extents"
assert_eq "$(sfs_extents "$M" t/r | tail -n +2 | cut -d, -f3,4 | tr '\n' ' ')" \
	"1048576,two 1048576,two " "t/r's extents"
sleep 6 # one sync: nothing freed, nothing trimmed
wait_trims "writing" "0 0 / 0 0"

fallocate -p -o 256K -l 128K "$M/p"
wait_trims "punching 128K of p" "1 131072 / 0 0"
truncate -s 512K "$M/p"
wait_trims "truncating p to 512K" "2 655360 / 0 0"
rm "$M/q"
wait_trims "removing q" "3 1703936 / 0 0"
rm "$M/t/r"
wait_trims "removing t/r" "3 1703936 / 1 2097152"
rm "$M/p"
wait_trims "removing p" "5 2097152 / 1 2097152"

# The trims carried their files: tp saw p's four, tt t/r's one, nothing q's.
got=$(sfs_ctl "$M" "fault list")
assert_eq "$got" "tp op=trim file=p delay_ms=1 matched=4 fired=4
tt op=trim file=t/* delay_ms=1 matched=1 fired=1
ok" "the trim rules' counts"
sfs_umount "$M"
note "pass"
