#!/bin/bash
# scatterfs-plan --dump and --expect, which the experiments in bench/ ask
# instead of parsing INI or re-deriving a disk model's formula:
# - --dump prints every key of the effective configuration as
#   SECTION.KEY=VALUE (the values .scatterfs/config writes), named
#   sections as 'device "NAME".KEY', with --set applied; --explicit only
#   the keys the file or a --set wrote; a mount's own .scatterfs/config
#   dumps to the same [disk] keys as the preset it was mounted with; a bad
#   configuration is refused with the daemon's message and exit 1;
# - --expect prints the model's figures: the hdd's random 4 KiB read
#   (seek_avg_ms + half a revolution + 4 KiB at the outer rate), its write
#   into an empty cache (the link time) and on a full one (the seek curve
#   averaged over the dirty ranges' gaps), the ssd's QD 1 and QD 32 reads
#   and its sequential write bound; a model without figures, and a bad
#   option value, are refused;
# - --check refuses what the mount refuses: [fault] sections, a flash
#   model too big for the device's size.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

P=$SFS_BUILD/bench/scatterfs-plan
T=$SFS_TMP
cat >"$T/c.ini" <<'INI'
[device]
size = 1G
[disk]
model = hdd
rpm = 5400
[device "wal"]
backing = /nonexistent/wal
size = 64M
INI

out=$("$P" --dump "$T/c.ini" --set disk.seek_avg_ms=9) || fail "--dump failed: $out"
line() { grep -x -- "$1" <<<"$out" >/dev/null || fail "--dump lacks the line '$1':"$'\n'"$out"; }
line "device.size=1G"
line "device.block_size=4K"
line "disk.model=hdd"
line "disk.rpm=5400"
line "disk.seek_avg_ms=9"
line "disk.seek_track_ms=1"
line "disk.transfer_mib_s=150"
line "layout.pattern=contiguous"
line 'device "wal".size=64M'
line 'device "wal".model=none'
assert_eq "$(grep -c -v '^[a-z_]*\(\( "[^"]*"\)\)\?\.[a-z_]*=' <<<"$out")" 0 "--dump lines not of the form SECTION.KEY=VALUE"

out=$("$P" --dump --explicit "$T/c.ini" --set disk.seek_avg_ms=9) || fail "--dump --explicit failed: $out"
assert_eq "$out" 'device.size=1G
disk.model=hdd
disk.rpm=5400
disk.seek_avg_ms=9
device "wal".backing=/nonexistent/wal
device "wal".size=64M' "--dump --explicit"

if out=$("$P" --dump "$T/c.ini" --set disk.rpm=0 2>&1); then fail "--dump accepted disk.rpm=0: $out"; fi
[[ $out == "scatterfs-plan: "*"rpm"* ]] || fail "--dump's message for disk.rpm=0: $out"

# A mount's effective configuration dumps to the preset's [disk] keys.
M=$T/mnt
sfs_mount "$T/backing" "$M" "size=256M,config=$SFS_ROOT/conf/hdd-7200.ini"
mounted=$("$P" --dump "$M/.scatterfs/config" | grep '^disk\.') || fail "--dump of the mount's .scatterfs/config failed"
sfs_umount "$M"
preset=$("$P" --dump "$SFS_ROOT/conf/hdd-7200.ini" | grep '^disk\.')
assert_eq "$mounted" "$preset" "the [disk] keys of a mount of conf/hdd-7200.ini against the preset's"

# --expect: the figures of the model's own formula (layout/models/hdd.c, ssd.c).
fig() { # fig NAME ARGS... - the value of NAME in --expect ARGS
	local n=$1
	shift
	"$P" --expect "$@" | sed -n "s/^$n=//p"
}
H=$SFS_ROOT/conf/hdd-7200.ini
# 1000 / (8.5 + 60000 / 7200 / 2 + 4096 / (150 MiB/s) in ms)
assert_eq "$(fig iops "$H" --device-size 1G)" 78.7853919 "hdd random 4 KiB read IOPS"
assert_eq "$(fig seek_ms "$H" --device-size 1G)" 8.5 "hdd random read seek"
assert_eq "$(fig latency_us "$H" --device-size 1G --qd 4)" 50770.8333 "hdd QD 4 read latency (four queued)"
assert_eq "$(fig mib_s "$H" --device-size 1G --size 1M --pattern sequential)" 150 "hdd sequential read MiB/s"
# 4 KiB over the 286 MiB/s link
assert_eq "$(fig latency_us "$H" --device-size 1G --op write)" 13.658 "hdd write into an empty cache"
# E[seek] over exponential gaps of mean 1 GiB / 2048 (8 MiB of 4 KiB blocks)
assert_eq "$(fig mean_gap_bytes "$H" --device-size 1G --op write --cache full)" 524288 "hdd destage gap"
assert_eq "$(fig seek_ms "$H" --device-size 1G --op write --cache full)" 1.00686342 "hdd destage E[seek]"
assert_eq "$(fig iops "$H" --device-size 1G --op write --cache full)" 192.323531 "hdd destage rate"
# cache off: a write pays what a read does
assert_eq "$(fig iops "$H" --device-size 1G --op write --set disk.write_cache=false)" 78.7853919 "hdd write without cache"
S=$SFS_ROOT/conf/ssd-sata.ini
# 10.2 + 49.4 + 4096 / 400 + 4096 / 560 us
assert_eq "$(fig latency_us "$S" --device-size 1G)" 77.1542857 "ssd QD 1 random 4 KiB read"
# min(1 / 10.2 us, 32 / 77.15 us): the datasheet's 98,000 IOPS
assert_eq "$(fig iops "$S" --device-size 1G --qd 32)" 98039.2157 "ssd QD 32 random 4 KiB read IOPS"
# min(1 MiB / (10.2 + 1 MiB / 560), 32 x 4096 / (4096 / 400 + 200 + 2000 / 64))
assert_eq "$(fig mb_s "$S" --device-size 1G --op write --size 1M --pattern sequential)" 542.763676 "ssd sequential write MB/s"

if out=$("$P" --expect "$SFS_ROOT/conf/default.ini" 2>&1); then fail "--expect without a model: $out"; fi
assert_eq "$out" "scatterfs-plan: --expect: [disk] model = none has no expected figures" "--expect without a model"
if out=$("$P" --expect "$H" --qd 0 2>&1); then fail "--expect --qd 0: $out"; fi
[[ $out == "scatterfs-plan: --qd '0': allowed:"* ]] || fail "--expect --qd 0: $out"
# each bad value is named with what its option takes (it was one line of
# every option's values), a size's as the mount says it
if out=$("$P" --expect "$H" --size 16KB 2>&1); then fail "--expect --size 16KB: $out"; fi
assert_eq "$out" "scatterfs-plan: --size '16KB': write 16K or 16KiB (powers of 1024); KB/MB/GB/TB are not accepted" "--expect --size 16KB"
if out=$("$P" --expect "$H" --op rd 2>&1); then fail "--expect --op rd: $out"; fi
assert_eq "$out" "scatterfs-plan: --op 'rd': allowed: read or write" "--expect --op rd"
# The device layers' own keys are the daemon's: scatterfs-plan knows them
# (it refused [device] volatile as an unknown key, a configuration the
# daemon mounts), and refuses one whose layer is not in the stack with the
# daemon's own message.
printf '[device]\nvolatile = true\nvolatile_max = 64M\n' >"$T/vol.ini"
out=$("$P" --check "$T/vol.ini" 2>&1) || fail "--check of [device] volatile = true: $out"
out=$("$P" --dump "$T/vol.ini") || fail "--dump of [device] volatile = true: $out"
line "device.volatile=true"
line "device.volatile_max=64M"
line "device.layers=accounting,timing,volatile,base"
printf '[device]\nlayers = accounting, faults, timing, base\nvolatile = true\n' >"$T/vol2.ini"
if out=$("$P" --check "$T/vol2.ini" 2>&1); then fail "--check of volatile without its layer: $out"; fi
assert_eq "$out" "scatterfs-plan: $T/vol2.ini:3: [device] volatile is a key of layer 'volatile', which this device's stack does not have (layers = accounting,faults,timing,base): add the layer to layers, or remove the key" \
	"--check of volatile without its layer"

# --check refuses what the mount refuses, with its message: [fault]
# sections (a misspelt key, no fault layer, a rule with no effect, a bad
# value, a range past the device's end) and a flash model that cannot
# hold the device's size.  Before, --check took each of them (exit 0).
F="[device]
layers = accounting, faults, timing, base
[fault \"r\"]
op = read"
fault_cases=("$F
eror = EIO" "[fault \"r\"]
op = read
error = EIO" "$F" "$F
error = EIO
probability = 5" "$F
error = EIO
device = main
range = 2M+4K")
truncate -s 1M "$T/b1m"
mkdir -p "$T/m"
for c in "${fault_cases[@]}"; do
	printf '%s\n' "$c" >"$T/f.ini"
	if out=$("$P" --check --device-size 1M "$T/f.ini" 2>&1); then fail "--check of a bad [fault] took it: $c"; fi
	want=$("$SFS_BUILD/fs/scatterfs" "$T/b1m" "$T/m" -f -o "size=1M,config=$T/f.ini" 2>&1) &&
		fail "the mount took a bad [fault]: $c"
	assert_eq "${out#scatterfs-plan: }" "$(tail -n 1 <<<"${want#scatterfs: }")" "--check's message, as the mount's: $c"
done
printf '%s\n' "$F" "error = EIO" "device = main" "range = 0+4K" >"$T/f.ini"
out=$("$P" --check --device-size 1M "$T/f.ini" 2>&1) || fail "--check of a good [fault]: $out"
ssd="[disk] model = ssd: capacity 104857600 bytes: 5 blocks per die with over_provisioning = 0.0995 leave 0 spare, and garbage collection needs gc_free_blocks + 2 = 3 (raise over_provisioning, or lower pages_per_block or gc_free_blocks, or a capacity of at least 526434304 bytes)"
for m in --check --expect; do
	if out=$("$P" $m --device-size 100M "$SFS_ROOT/conf/ssd-nvme.ini" 2>&1); then fail "$m of ssd-nvme at 100M: $out"; fi
	assert_eq "$out" "scatterfs-plan: $ssd" "$m of ssd-nvme at 100M"
done
"$P" --check --device-size 1G "$SFS_ROOT/conf/ssd-nvme.ini" || fail "--check of ssd-nvme at 1G"

# The plan's options go before or after its operands, as GNU tools take
# them; a missing operand or an unknown option is named.
assert_eq "$("$P" "$SFS_ROOT/conf/contiguous.ini" t 1M --device-size 8G 2>&1)" "$("$P" --device-size 8G "$SFS_ROOT/conf/contiguous.ini" t 1M 2>&1)" \
	"the plan with --device-size after the operands"
rc=0
out=$("$P" "$SFS_ROOT/conf/contiguous.ini" t 2>&1) || rc=$?
assert_eq "$rc $(head -n 1 <<<"$out")" "2 scatterfs-plan: expected CONFIG PATH SIZE, got 2 arguments" "a plan without SIZE"
rc=0
out=$("$P" "$SFS_ROOT/conf/contiguous.ini" t 1M --bogus 2>&1) || rc=$?
assert_eq "$rc $(head -n 1 <<<"$out")" "2 scatterfs-plan: unknown option '--bogus'" "a plan with an unknown option"
note ok
