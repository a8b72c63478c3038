#!/bin/bash
# Bad input at mount time, table-driven: 48 malformed configuration files and
# option sets, each refused with a non-zero exit and a message that names
# the problem (the key, the value or the file), mounting nothing and
# leaving the backing and its catalog byte for byte unchanged.
source "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
B=$T/backing
mkdir -p "$M"
sfs_mount "$B" "$M" "size=64M"
echo data >"$M/file"
sfs_umount "$M"

state() { sha256sum "$B" "$B".scatterfs; ls "$T" | grep -v -e '\.stderr$' -e '\.ini$' -e '^mnt$' | sort; }

n=0
# case NAME REGEX INI-TEXT [-o OPTIONS]: INI-TEXT "-" = no config file
case_() {
	local name=$1 re=$2 ini=$3 opts=${4:-} rc=0 before args=("$B" "$M")
	n=$((n + 1))
	if [[ $ini != - ]]; then
		printf '%b' "$ini" >"$T/$name.ini"
		opts="config=$T/$name.ini${opts:+,$opts}"
	fi
	[[ -n $opts ]] && args+=(-o "$opts")
	before=$(state)
	timeout 30 "$SFS_BIN" "${args[@]}" >/dev/null 2>"$T/$name.stderr" </dev/null || rc=$?
	((rc != 0 && rc != 124)) || fail "$name: exit $rc, expected a refusal"
	grep -Eqi -- "$re" "$T/$name.stderr" || fail "$name: message does not match /$re/: $(cat "$T/$name.stderr")"
	! sfs_is_mounted "$M" || fail "$name: mounted"
	assert_eq "$(state)" "$before" "$name: backing and catalog after the refusal"
}

case_ unknown-key "bogus" '[layout]\nbogus = 1\n'
case_ unknown-section "\\[nosuch\\]|nosuch" '[nosuch]\nkey = 1\n'
case_ key-outside-section "outside|section" 'pattern = random\n'
case_ duplicate-section "duplicate|twice|again" '[layout]\npattern = random\n[layout]\nseed = 2\n'
case_ duplicate-key "duplicate|twice|again" '[layout]\nseed = 1\nseed = 2\n'
case_ duplicate-rule "duplicate|twice|again" '[file "*.db"]\npattern = random\n[file "*.db"]\npattern = reverse\n'
case_ empty-file "empty" ''
case_ comments-only "empty" '# nothing here\n; nor here\n'
case_ non-utf8 "utf-8|UTF-8" '[layout]\npattern = r\xe9verse\n'
case_ bad-pattern "zigzag" '[layout]\npattern = zigzag\n'
case_ bad-size-suffix "70Q" '[layout]\nextent_size = 70Q\n'
case_ negative-size "-1" '[layout]\nextent_size = -1\n'
case_ fraction-size "1.5M" '[layout]\nextent_size = 1.5M\n'
case_ huge-size "99999999999999999999" '[autoextend]\nnext = 99999999999999999999\n'
case_ size-not-block-multiple "multiple" '[layout]\nextent_size = 1000\n'
case_ block-not-power-of-two "power of two" '[device]\nblock_size = 3000\n'
case_ ratio-above-one "contiguous_ratio" '[layout]\npattern = random\ncontiguous_ratio = 1.5\n'
case_ ratio-negative "contiguous_ratio" '[layout]\npattern = random\ncontiguous_ratio = -0.1\n'
case_ gap-larger-than-device "gap|device" '[layout]\npattern = interleaved\ngap = 1T\n'
case_ extent-larger-than-device "extent_size|device" '[layout]\nextent_size = 1G\n'
case_ gap-for-contiguous "gap" '[layout]\npattern = contiguous\ngap = 64K\n'
case_ single-without-initial "initial_size" '[layout]\npattern = single\n'
case_ readahead-too-big "readahead" '[cache]\nreadahead = 4M\n'
case_ bad-cache-mode "cache|mode" '[cache]\nmode = sometimes\n'
case_ bad-zero-fill "zero_fill" '[autoextend]\nzero_fill = maybe\n'
case_ bad-log-op "ops|delete" '[log]\nops = read,delete\n'
case_ max-below-extent "max_size" '[autoextend]\nmax_size = 4K\n'
case_ seeks-out-of-order "seek" '[disk]\nmodel = hdd\nseek_avg_ms = 30\n'
case_ zero-rpm "rpm" '[disk]\nmodel = hdd\nrpm = 0\n'
case_ capacity-below-device "capacity" '[disk]\nmodel = hdd\ncapacity = 1M\n'
case_ metadata-past-disk "metadata_offset = 1073741824 is not below the main disk's size \\(67108864 bytes\\); allowed: 0 to 67108863, or metadata_io = false" '[disk]\nmodel = hdd\nmetadata_offset = 1G\n'
case_ zero-cache-size "cache_size" '[disk]\nmodel = hdd\ncache_size = 0\n'
case_ bad-write-cache "write_cache.*sometimes" - "disk.write_cache=sometimes"
# The ssd's refusals: whole (it was cut at 256 bytes) and in its own keys (it named hdd's).
case_ ssd-gc-free-blocks "lower pages_per_block or gc_free_blocks, or a capacity of at least [0-9]+ bytes\\)$" '[disk]\nmodel = ssd\ngc_free_blocks = 1000\n'
case_ ssd-small-buffer ": write_buffer_size = 1024: allowed one page \\(page_size = 4096\\) to 1 TiB with write_buffer = true$" '[disk]\nmodel = ssd\nwrite_buffer_size = 1K\n'
case_ negative-prefetch "negative-prefetch.ini:3: \\[disk\\] prefetch = -1: must be >= 0" '[disk]\nmodel = hdd\nprefetch = -1\n'
case_ bad-prefetch-max "prefetch_max.*lots" - "disk.prefetch_max=lots"
case_ unknown-layer "unknown-layer.ini:2: \\[device\\] layers = accounting,cache,base: unknown layer 'cache'; allowed: accounting, faults, timing, volatile, base, top first" '[device]\nlayers = accounting,cache,base\n'
case_ layer-after-base "layer 'timing' after 'base', which is the bottom of every stack and must come last" '[device]\nlayers = base,timing\n'
case_ no-base-layer "the stack must end with layer 'base'" - "device.layers=accounting"
case_ layer-twice "layer 'accounting' named twice" - "device.layers=accounting:accounting:base"
case_ model-without-timing "model-without-timing.ini:2: \\[device\\] layers = accounting,base has no layer 'timing', which runs the \\[disk\\] model hdd" '[device]\nlayers = accounting,base\n[disk]\nmodel = hdd\n'
# These two were refused with a wrong message about the capacity:
case_ huge-prefetch "huge-prefetch.ini:3: \\[disk\\] prefetch = 2147483648: must be at most 1000" '[disk]\nmodel = hdd\nprefetch = 2147483648\n'
case_ tiny-rpm "rpm = 1e-300.*cannot represent" - "disk.model=hdd,disk.rpm=1e-300"
case_ option-unknown-key "layout.nosuch|nosuch" - "layout.nosuch=1"
case_ option-bad-value "extent_size|12Q" - "layout.extent_size=12Q"
case_ option-list-with-comma "not understood|unknown option" - "log.ops=read,write"
case_ option-bad-section "nosuch" - "nosuch.key=1"
case_ missing-config-file "nonexistent" - "config=$T/nonexistent.ini"
case_ config-is-directory "directory|Is a directory|read" - "config=$T"
# Bad extent maps for pattern = map (issue 14): the map file, its line and the reason.
h='logical_offset,device_offset,length\n'
printf "${h}8192,0,4096\n0,4096,4096\n" >"$T/unsorted.map"
printf "${h}0,0,4096\nnot,a,row\n" >"$T/garbage.map"
: >"$T/empty.map"
printf "${h}0,0,4096\n4096,67108864,4096\n" >"$T/past.map"
printf "${h}0,0,8192\n" >"$T/one.map"
printf "${h}0,4096,4096\n" >"$T/two.map"
case_ map-unsorted "unsorted.map:3: logical offset 0 is before the end of line 2's extent" "[file \"f\"]\npattern = map\nmap = $T/unsorted.map\n"
case_ map-garbage "garbage.map:3: expected LOGICAL_OFFSET,DEVICE_OFFSET,LENGTH" "[file \"f\"]\npattern = map\nmap = $T/garbage.map\n"
case_ map-empty "empty.map:0: no extents in the map" "[file \"f\"]\npattern = map\nmap = $T/empty.map\n"
case_ map-past-device "past.map:3: extent ends at device offset 67112960, past the device" "[file \"f\"]\npattern = map\nmap = $T/past.map\n"
case_ map-overlap "two.map:2: overlaps the map of \\[file \"a\"\\] \\($T/one.map:2\\)" "[file \"a\"]\npattern = map\nmap = $T/one.map\n[file \"b\"]\npattern = map\nmap = $T/two.map\n"
note "$n bad configurations and option sets refused, nothing changed"
((n >= 30)) || fail "only $n cases"
