#!/bin/bash
# Configurations compose: -o config=a.ini,config=b.ini mounts with the keys
# of both (b's win key by key, a's others stay, also inside one [file]
# rule), b's include = line is read relative to b's directory whatever the
# daemon's working directory, .scatterfs/config names the file and line of
# each key, and the placement follows the merged keys.  size=1GB is refused
# with what to write instead, and creates nothing.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
C=$T/conf
mkdir -p "$C/presets"
printf '%s\n' '[layout]' 'pattern = interleaved' 'extent_size = 64K' 'gap = 128K' \
	'[autoextend]' 'next = 256K' '[file "*.db"]' 'extent_size = 128K' 'gap = 64K' >"$C/a.ini"
printf '%s\n' 'include = presets/log.ini' '[layout]' 'extent_size = 32K' \
	'[file "*.db"]' 'gap = 256K' >"$C/b.ini"
printf '%s\n' '[log]' 'ops = read,write' >"$C/presets/log.ini"

cd / # an include = is relative to its file, not to the working directory
sfs_mount "$T/backing" "$M" "size=64M,config=$C/a.ini,config=$C/b.ini,log=$T/req.csv"

# Every key line of the effective config as "SECTION KEY = VALUE | ORIGIN".
awk '/^\[/ { sec = $0; next }
	/^# set / { origin = substr($0, 3); next }
	/^[a-z_]+ = / { print sec " " $0 " | " origin; origin = "" }
	{ origin = "" }' "$M/.scatterfs/config" >"$T/keys"
want() {
	grep -qxF -- "$1" "$T/keys" || fail "effective config lacks '$1'; it has:
$(grep -F -- "${1%% = *} = " "$T/keys")"
}
want "[layout] pattern = interleaved | set at $C/a.ini:2"
want "[layout] extent_size = 32K | set at $C/b.ini:3"
want "[layout] gap = 128K | set at $C/a.ini:4"
want "[autoextend] next = 256K | set at $C/a.ini:6"
want "[autoextend] max_size = 0 | "
want "[log] ops = read,write | set at $C/presets/log.ini:2"
want "[log] path = $T/req.csv | set by -o log=$T/req.csv"
want "[device] size = 64M | set by -o size=64M"
want "[file \"*.db\"] pattern = interleaved | "
want "[file \"*.db\"] extent_size = 128K | set at $C/a.ini:8"
want "[file \"*.db\"] gap = 256K | set at $C/b.ini:5"
assert_eq "$(grep '^# loaded from' "$M/.scatterfs/config")" "# loaded from $C/a.ini
# loaded from $C/b.ini
# loaded from $C/presets/log.ini (include = at $C/b.ini:1)" "files named in .scatterfs/config"
note "effective config: b's keys over a's, a's others kept, origins named"

# The placement follows the merged keys: extents of 32K every 32K + 128K,
# and for *.db extents of 128K every 128K + 256K.
head -c 131072 /dev/urandom >"$T/src"
cp "$T/src" "$M/t"
cp "$T/src" "$M/t.db"
sync "$M/t" "$M/t.db"
steps() {
	sfs_extents "$M" "$1" | awk -F, -v len="$2" -v step="$3" 'NR == 1 { next }
		$3 != len { print "extent of " $3 " bytes"; bad = 1 }
		NR > 2 && $2 - prev != step { print "step of " $2 - prev " bytes"; bad = 1 }
		{ prev = $2; n++ }
		END { if (n < 2) print "only " n " extents"; exit bad || n < 2 }' >"$T/err" ||
		fail "extents of $1: $(cat "$T/err"): $(sfs_extents "$M" "$1")"
}
steps t 32768 163840
steps t.db 131072 393216
cmp "$T/src" "$M/t" || fail "t reads back wrong"
cmp "$T/src" "$M/t.db" || fail "t.db reads back wrong"
sfs_umount "$M"
[[ $(sfs_log_count "$T/req.csv" write) -ge 1 ]] || fail "no write row: log.ops from the included file not in effect"
note "placement follows the merged keys; the included log.ops is in effect"

# size=1GB: refused, with what to write instead, and nothing created.
rc=0
"$SFS_BIN" "$T/new" "$M" -o size=1GB >"$T/out" 2>&1 </dev/null || rc=$?
((rc != 0)) || fail "size=1GB: mounted"
assert_eq "$(cat "$T/out")" "scatterfs: -o size=1GB: write 1G or 1GiB (powers of 1024); KB/MB/GB/TB are not accepted" "message for size=1GB"
[[ ! -e $T/new && ! -e $T/new.scatterfs ]] || fail "size=1GB created $(ls "$T"/new*)"
! sfs_is_mounted "$M" || fail "size=1GB: mounted"
# The same in a file, for any size key.
printf '%s\n' '[layout]' 'extent_size = 64KB' >"$C/kb.ini"
rc=0
"$SFS_BIN" "$T/new" "$M" -o "size=64M,config=$C/kb.ini" >"$T/out" 2>&1 </dev/null || rc=$?
((rc != 0)) || fail "extent_size = 64KB: mounted"
assert_eq "$(cat "$T/out")" "scatterfs: $C/kb.ini:2: [layout] extent_size = 64KB: write 64K or 64KiB (powers of 1024); KB/MB/GB/TB are not accepted" "message for extent_size = 64KB"
[[ ! -e $T/new && ! -e $T/new.scatterfs ]] || fail "extent_size = 64KB created $(ls "$T"/new*)"
note "size=1GB and extent_size = 64KB refused with what to write; nothing created"
