#!/bin/bash
# Fixture of tests/selftest.sh: a mount test that fails with exit status 3.
echo "fixture failure"
exit 3
