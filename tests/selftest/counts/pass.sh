#!/bin/bash
# Fixture of tests/selftest.sh: a mount test that passes.
# TIMEOUT: 30
exit 0
