#!/bin/bash
# The check of tools/setup's package step, against fake dpkg-query, dpkg
# and apt-get (first on PATH) that keep dpkg's status in a file, log every
# call, and fail as a held lock would for their first N calls:
#   - a half-configured and an unpacked package are configured with one
#     `dpkg --configure -a` (which meets the lock twice and is run again
#     until it gets it), not reinstalled; a package that is not installed
#     and one with only its configuration files left are installed with
#     apt-get -o DPkg::Lock::Timeout=600, after `apt-get update`, which
#     meets the lock once; the calls are exactly these, in this order;
#   - every package installed: no call at all;
#   - a lock held past SCATTERFS_APT_LOCK_TIMEOUT=0: exit 3, the lock named;
#   - SCATTERFS_NO_INSTALL=1: exit 3, naming the missing and the
#     unconfigured packages, no call.
# Exit 0 when all of it holds, 1 otherwise (each difference is printed);
# 77 when not root (tools/setup installs only as root).
set -uo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
if ((EUID != 0)); then
	echo "SKIP: tools/setup installs only as root"
	exit 77
fi
unset SCATTERFS_NO_INSTALL SCATTERFS_APT_LOCK_TIMEOUT
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir "$fake/bin"

# dpkg-query -W -f='${Status}\n' PKG: the status file's line "PKG STATUS...";
# a package without a line is unknown to dpkg, as dpkg-query says.
cat >"$fake/bin/dpkg-query" <<'EOF'
#!/bin/bash
pkg=${!#}
line=$(grep -m1 "^$pkg " "$FAKE/status") || { echo "dpkg-query: no packages found matching $pkg" >&2; exit 1; }
echo "${line#* }"
EOF
# A call of a fake that still has lock failures left (FAKE/NAME.locked)
# fails as apt and dpkg do; otherwise it does its work.
cat >"$fake/bin/dpkg" <<'EOF'
#!/bin/bash
echo "dpkg $*" >>"$FAKE/calls"
n=$(cat "$FAKE/dpkg.locked" 2>/dev/null || echo 0)
if ((n > 0)); then
	echo $((n - 1)) >"$FAKE/dpkg.locked"
	echo "dpkg: error: dpkg frontend lock was locked by another process with pid 4242" >&2
	exit 2
fi
[[ $* == "--configure -a" ]] || exit 1
sed -i -E 's/ install ok (unpacked|half-configured)$/ install ok installed/' "$FAKE/status"
EOF
cat >"$fake/bin/apt-get" <<'EOF'
#!/bin/bash
echo "apt-get $*" >>"$FAKE/calls"
n=$(cat "$FAKE/apt-get.locked" 2>/dev/null || echo 0)
if ((n > 0)); then
	echo $((n - 1)) >"$FAKE/apt-get.locked"
	echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
	exit 100
fi
EOF
chmod +x "$fake/bin/"*
export FAKE=$fake PATH=$fake/bin:$PATH

bad=0
expect() { # ACTUAL EXPECTED WHAT
	if [[ $1 != "$2" ]]; then
		printf 'setup check: %s:\n  got      %q\n  expected %q\n' "$3" "$1" "$2"
		bad=1
	fi
}

# The package list, read from tools/setup itself: every one installed.
pkgs=$(sed -n '/^packages=(/,/)/p' "$root/tools/setup" | tr -d '()' | sed 's/packages=//' | tr -s ' \t\n' '\n' | grep .)
status_all_installed() {
	local p
	for p in $pkgs; do echo "$p install ok installed"; done >"$fake/status"
	rm -f "$fake/calls" "$fake/dpkg.locked" "$fake/apt-get.locked"
	touch "$fake/calls"
}
for p in libfuse3-dev fio gnuplot-nox lmdb-utils; do
	grep -qx "$p" <<<"$pkgs" || { echo "setup check: $p is not in tools/setup's list any more"; exit 1; }
done

# 1. Two to configure, two to install, locks on the way.
status_all_installed
sed -i -e 's/^libfuse3-dev .*/libfuse3-dev install ok half-configured/' \
	-e 's/^fio .*/fio install ok unpacked/' \
	-e 's/^gnuplot-nox .*/gnuplot-nox deinstall ok config-files/' \
	-e '/^lmdb-utils /d' "$fake/status"
echo 2 >"$fake/dpkg.locked"
echo 1 >"$fake/apt-get.locked"
out=$("$root/tools/setup" --packages 2>"$fake/err")
expect "$?" 0 "exit status with packages to configure and to install"
expect "$out" "== configuring (unpacked or half-configured): libfuse3-dev fio
== installing: gnuplot-nox lmdb-utils" "stdout"
expect "$(cat "$fake/calls")" "dpkg --configure -a
dpkg --configure -a
dpkg --configure -a
apt-get -o DPkg::Lock::Timeout=600 update -q
apt-get -o DPkg::Lock::Timeout=600 update -q
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends gnuplot-nox lmdb-utils" \
	"calls (dpkg meets the lock twice, apt-get update once)"
expect "$(grep -c 'holds the package lock; waiting' "$fake/err")" 3 "waiting messages on stderr"
expect "$(grep -v '^lmdb-utils \|^gnuplot-nox ' "$fake/status" | grep -vc ' install ok installed$')" 0 \
	"every other package installed and configured after the run"

# 2. Nothing to do: no call.
status_all_installed
out=$("$root/tools/setup" --packages 2>&1)
expect "$?" 0 "exit status with every package installed"
expect "$out" "" "output with every package installed"
expect "$(cat "$fake/calls")" "" "calls with every package installed"

# 3. A lock held past the limit: exit 3, the lock named, one try.
status_all_installed
sed -i 's/^fio .*/fio install ok half-configured/' "$fake/status"
echo 99 >"$fake/dpkg.locked"
SCATTERFS_APT_LOCK_TIMEOUT=0 "$root/tools/setup" --packages >/dev/null 2>"$fake/err"
expect "$?" 3 "exit status with the lock held past SCATTERFS_APT_LOCK_TIMEOUT"
expect "$(tail -n 1 "$fake/err")" "tools/setup: the package lock is still held after 0 s (SCATTERFS_APT_LOCK_TIMEOUT); giving up: dpkg --configure -a" \
	"message with the lock held"
expect "$(cat "$fake/calls")" "dpkg --configure -a" "calls with the lock held"

# 4. SCATTERFS_NO_INSTALL: named, nothing run.
status_all_installed
sed -i -e 's/^fio .*/fio install ok half-configured/' -e '/^lmdb-utils /d' "$fake/status"
SCATTERFS_NO_INSTALL=1 "$root/tools/setup" --packages >/dev/null 2>"$fake/err"
expect "$?" 3 "exit status with SCATTERFS_NO_INSTALL"
expect "$(cat "$fake/err")" "tools/setup: packages missing (SCATTERFS_NO_INSTALL set): lmdb-utils; not configured: fio" \
	"message with SCATTERFS_NO_INSTALL"
expect "$(cat "$fake/calls")" "" "calls with SCATTERFS_NO_INSTALL"

exit $bad
