#!/bin/bash
# Fixture of tests/selftest.sh: a mount test that fails with exit status 3,
# its "FAIL: " line (lib.sh's fail()) followed by other output, as a
# daemon's log printed after it.
echo "FAIL: fixture failure" >&2
echo "a daemon log line after the failure"
exit 3
