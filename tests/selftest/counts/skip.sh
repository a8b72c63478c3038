#!/bin/bash
# Fixture of tests/selftest.sh: a mount test whose tool is missing, so
# lib.sh's sfs_require skips it (exit 77).
# shellcheck source=SCRIPTDIR/../../lib.sh
source "$(dirname "$0")/../../lib.sh"
sfs_require sfs-selftest-no-such-tool
echo "not reached"
