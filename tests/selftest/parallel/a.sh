#!/bin/bash
# Fixture of tests/selftest.sh: a.sh and b.sh, the same script, are two
# mount tests that must run at the same time.  Each prints three lines,
# the second and third only once its twin has started (or 5 s went by),
# and exits 3 when it saw its twin start, 4 when it did not (the failure
# prints its output, whose lines must stay together).
me=$(basename "$0" .sh)
other=$([[ $me == a ]] && echo b || echo a)
D=${SFS_SELFTEST_DIR:?}
touch "$D/started.$me" "$D/running.$me"
echo "$me line 1"
for ((i = 0; i < 50; i++)); do
	[[ -e $D/started.$other ]] && break
	sleep 0.1
done
echo "$me line 2"
sleep 0.3
echo "$me line 3"
rm -f "$D/running.$me"
[[ -e $D/started.$other ]] && exit 3
exit 4
