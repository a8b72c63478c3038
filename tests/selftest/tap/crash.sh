#!/bin/bash
# Fixture of tests/selftest.sh: a TAP test (as the criterion binaries
# are) that plans three cases, passes two and dies of a signal: two
# passed and one failed.
echo "1..3"
echo "ok 1 - fixture::first"
echo "ok 2 - fixture::second"
kill -SEGV $$
