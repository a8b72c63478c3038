#!/bin/bash
# Fixture of tests/selftest.sh: a mount test that outlives its own limit.
# TIMEOUT: 2
sleep 60
