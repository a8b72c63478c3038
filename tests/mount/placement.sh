#!/bin/bash
# Placement visible: a 7000 KiB file written on equi-fragmented (70 KiB
# extents, 70 KiB gaps) shows in .scatterfs/extents/FILE every device-offset
# step equal to extent + gap (143360 bytes); the same file on contiguous is
# one physical run.  The map survives a remount unchanged, matches what
# scatterfs-plan predicts, and the bytes read back are the bytes written.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

T=$SFS_TMP
M=$T/mnt
F=t
SIZE=7168000 # 7000K = 100 extents of 71680
EXTENT=71680
STEP=143360
PLAN=$SFS_BUILD/bench/scatterfs-plan

head -c $SIZE /dev/urandom >"$T/src"

# write_file CONF NAME - write the file on a fresh backing with CONF; leaves
# its extent map in $T/NAME.csv (taken from a second mount)
write_file() {
	local conf=$SFS_ROOT/conf/$1.ini b=$T/$2.backing csv=$T/$2.csv
	sfs_mount "$b" "$M" "config=$conf,size=512M,log=$T/$2.log"
	cp "$T/src" "$M/$F"
	sync "$M/$F"
	assert_eq "$(stat -c %s "$M/$F")" $SIZE "size of $F on $1"
	sfs_extents "$M" "$F" >"$csv.before"
	sfs_umount "$M"
	sfs_mount "$b" "$M" "config=$conf,log=$T/$2.2.log"
	sfs_extents "$M" "$F" >"$csv"
	cmp "$M/$F" "$T/src" || fail "content of $F on $1 differs from what was written"
	sfs_umount "$M"
	cmp -s "$csv.before" "$csv" ||
		fail "extent map of $F on $1 changed across a remount: $(diff "$csv.before" "$csv" | head -n 20)"
	assert_eq "$(head -n 1 "$csv")" logical_offset,device_offset,length "header of .scatterfs/extents/$F"
}

# check_map NAME - the map starts at logical 0, is contiguous in logical
# offsets and covers the file
check_map() {
	local csv=$T/$1.csv
	awk -F, -v size=$SIZE 'NR == 2 && $1 != 0 { print "first row at logical " $1; exit 1 }
		NR > 2 && $1 != pl + pn { print "row " NR - 1 ": logical " $1 ", expected " pl + pn; exit 1 }
		NR > 1 { pl = $1; pn = $3; total += $3 }
		END { if (total < size) { print "extents cover " total " bytes < " size; exit 1 } }' "$csv" >"$T/err" ||
		fail "extent map of $F on $1: $(cat "$T/err"); map:
$(head -n 20 "$csv")"
}

# same_as_plan CONF NAME - scatterfs-plan predicts the mount's map exactly
same_as_plan() {
	[[ -x $PLAN ]] || fail "scatterfs-plan not built: $PLAN"
	"$PLAN" "$SFS_ROOT/conf/$1.ini" "$F" $SIZE >"$T/$2.plan" 2>"$T/$2.plan.err" || fail "scatterfs-plan: $(cat "$T/$2.plan.err")"
	cmp -s "$T/$2.plan" "$T/$2.csv" ||
		fail "extents of $F on $1 differ from scatterfs-plan's prediction:
$(diff "$T/$2.plan" "$T/$2.csv" | head -n 20)"
}

# equi-fragmented: every extent 70 KiB, every device step extent + gap.
write_file equi-fragmented equi
check_map equi
csv=$T/equi.csv
n=$(($(wc -l <"$csv") - 1))
((n >= 100)) || fail "equi-fragmented: $n extents for $SIZE bytes, expected at least 100"
assert_eq "$(awk -F, 'NR > 1 && $3 != '$EXTENT' ' "$csv" | wc -l)" 0 "equi-fragmented: extents whose length is not $EXTENT"
bad=$(awk -F, 'NR > 2 && $2 - pd != '$STEP' { print "row " NR - 1 ": step " $2 - pd } NR > 1 { pd = $2 }' "$csv")
[[ -z $bad ]] || fail "equi-fragmented: device-offset steps other than $STEP: $(head -n 5 <<<"$bad")"
note "equi-fragmented: $n extents of $EXTENT, every device step $STEP"
same_as_plan equi-fragmented equi

# contiguous: one physical run.
write_file contiguous contig
check_map contig
csv=$T/contig.csv
bad=$(awk -F, 'NR > 2 && $2 != pd + pn { print "row " NR - 1 ": device " $2 ", expected " pd + pn } NR > 1 { pd = $2; pn = $3 }' "$csv")
[[ -z $bad ]] || fail "contiguous: not one physical run: $(head -n 5 <<<"$bad")"
note "contiguous: $(($(wc -l <"$csv") - 1)) rows, one physical run"
same_as_plan contiguous contig
