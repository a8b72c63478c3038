#!/bin/bash
# Fixture of tests/selftest.sh: a TAP test with one case of each outcome:
# passed, failed, skipped.
echo "1..3"
echo "ok 1 - fixture::passes"
echo "not ok 2 - fixture::fails"
echo "# fixture::fails: expected 1, got 2"
echo "ok 3 - fixture::skips # SKIP fixture skip"
exit 1
