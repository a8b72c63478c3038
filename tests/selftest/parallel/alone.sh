#!/bin/bash
# Fixture of tests/selftest.sh: a test with an EXCLUSIVE line, which
# tests/run starts only once no other test runs, and after the others.
# EXCLUSIVE: the self-test of tests/run's scheduling
D=${SFS_SELFTEST_DIR:?}
running=$(cd "$D" && ls running.* 2>/dev/null)
[[ -z $running ]] || { echo "ran beside: $running"; exit 1; }
[[ -e $D/started.a && -e $D/started.b ]] || { echo "ran before a and b"; exit 1; }
exit 0
