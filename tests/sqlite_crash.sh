# shellcheck shell=bash
# SQLite crash-test helpers, sourced by tests/mount/crash-sqlite.sh and
# power-sqlite.sh after tests/lib.sh:
#   PY                     Debian's python3 (its sqlite3 module checked)
#   SQLW                   tests/sqlite_commits.py: the writer and checker
#   writer_pid             the caller's writer, killed when the test ends
#   last_ack FILE          the last acknowledged id in FILE (0 if none)
#   check_db DB MODE ACK PHASE
#                          DB passes PRAGMA integrity_check, is in journal
#                          mode MODE, holds every id acknowledged in file
#                          ACK (and at most one more, then recorded there
#                          as acknowledged by recovery), ids 1..max
#                          without gaps, each payload as written
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3)
"$PY" -c 'import sqlite3' || fail "$PY has no sqlite3 module"
SQLW=$SFS_ROOT/tests/sqlite_commits.py

# shellcheck disable=SC2034 # the caller's background writer
writer_pid=
# shellcheck disable=SC2016 # expanded when the hook runs
sfs_on_exit '[[ -n $writer_pid ]] && kill -9 $writer_pid'

last_ack() { if [[ -s $1 ]]; then tail -n 1 "$1"; else echo 0; fi; }

check_db() {
	local db=$1 mode=$2 ack=$3 phase=$4 a out ic cnt mx bad jm
	a=$(last_ack "$ack")
	out=$("$PY" "$SQLW" check "$db" 2>&1) || fail "$phase: checking $db: $out"
	IFS='|' read -r ic cnt mx bad jm <<<"$out"
	assert_eq "$ic" ok "$phase: PRAGMA integrity_check of $db"
	assert_eq "$jm" "$mode" "$phase: journal_mode of $db"
	((mx >= a)) || fail "$phase: $db lost acknowledged commits: max(id) = $mx, last acknowledged id = $a"
	((mx <= a + 1)) || fail "$phase: $db has max(id) = $mx but only $a were acknowledged (at most one in flight)"
	assert_eq "$cnt" "$mx" "$phase: count(*) of $db (ids 1..max(id) without gaps)"
	assert_eq "$bad" none "$phase: ids of $db whose payload differs from what was written"
	# The next round's writer continues after max(id): record a commit
	# that was in flight and survived as acknowledged by recovery.
	((mx > a)) && echo "$mx" >>"$ack"
	note "$phase: $(basename "$db") ok, $cnt rows (last acknowledged $a)"
}
