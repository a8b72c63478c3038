#!/bin/bash
# bench/scan's remarks on the seed (departures in bench/deftable.py), on
# figures given here (no mount): README's table (equi-fragmented 3.14
# times contiguous at 16 KiB, 2.62 at 96 KiB; random-fragmented 3.29 at
# 96 KiB; contiguous 1.044 s at 16 KiB, 0.445 s at 96 KiB) against seed
# 000 (equi-fragmented 2.82 at 16 KiB, 0.77 at 96 KiB; no random figure
# at 96 KiB; contiguous 87.68 s at 16 KiB, 146.67 s at 96 KiB) gives
# exactly two departures, equi-fragmented at 96 KiB and contiguous getting
# faster where the seed's got slower, then the reasons (extent-bounded
# multiblock reads; the seed's contiguous table slowing above 32 KiB);
# figures that agree with the seed give nothing; a row with --set values
# is named with them.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

departures() { python3 "$SFS_ROOT/bench/deftable.py" departures; }

got=$(printf '%s\n' \
	"equi-fragmented,equi-fragmented,16384,3.276,1.044" \
	"equi-fragmented,equi-fragmented,98304,1.165,0.445" \
	"random-fragmented,random-fragmented,98304,1.462,0.445" \
	"contiguous,contiguous,16384,1.044,1.044" \
	"contiguous,contiguous,98304,0.445,0.445" \
	"single-extent,single-extent,16384,1.050,1.044" | departures)
assert_eq "$(head -n 4 <<<"$got")" "Where these results depart from the seed:
  equi-fragmented at 96 KiB reads: 2.62 times contiguous here, 0.77 in the seed (113.65 s against 146.67 s)
  contiguous at 96 KiB reads: 0.445 s here, faster than the 1.044 s at 16 KiB; the seed 146.67 s, slower than its 87.68 s
Why: the seed's scans were Oracle multiblock reads, and a multiblock read ends at an" \
	"README's figures against the seed's"
# the reasons: both, in one paragraph of 8 lines
assert_eq "$(tail -n +4 <<<"$got" | wc -l)" 8 "lines of the reasons"
grep -q "^extent boundary: with 70 KiB extents no read moved more than 70 KiB" <<<"$got" || fail "no extent-bounded reads in: $got"
grep -q "^32 KiB reads (86.71 s at 32 KiB, 105 to 147 s from 64 KiB on)" <<<"$got" || fail "no slower seed table in: $got"

got=$(printf '%s\n' \
	"equi-fragmented,equi-fragmented,16384,2.9,1.0" \
	"equi-fragmented,equi-fragmented,98304,0.8,1.1" \
	"contiguous,contiguous,16384,1.0,1.0" \
	"contiguous,contiguous,98304,1.1,1.1" | departures)
assert_eq "$got" "" "figures that agree with the seed"

got=$(printf '%s\n' "equi-fragmented,equi-fragmented layout.seed=7,98304,2.0,1.0" | departures | sed -n 2p)
assert_eq "$got" "  equi-fragmented layout.seed=7 at 96 KiB reads: 2.00 times contiguous here, 0.77 in the seed (113.65 s against 146.67 s)" \
	"a row with a --set value"
note "pass"
