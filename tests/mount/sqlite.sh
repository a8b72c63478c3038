#!/bin/bash
# SQLite on a random-fragmented mount, rollback journal and WAL: load
# 100,000 rows shaped like the seed's table with the sqlite3 shell,
# integrity_check is ok and the count and content are exact; after an
# unmount and a remount, the same again.
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require sqlite3

T=$SFS_TMP
M=$T/mnt
B=$T/backing
opts="config=$SFS_ROOT/conf/random-fragmented.ini,size=1G"
rows=100000

# 10 transactions of 10,000 rows: a sequence number, a 22-character string,
# two dates as text, two small numbers and a short sentence.
load_sql() {
	local mode=$1 i
	echo "PRAGMA journal_mode=$mode;"
	echo "CREATE TABLE seed(id INTEGER PRIMARY KEY, code TEXT, created TEXT, changed TEXT, qty INTEGER, flag INTEGER, remark TEXT);"
	for ((i = 0; i < rows; i += 10000)); do
		cat <<-EOF
			BEGIN;
			WITH RECURSIVE s(n) AS (SELECT $((i + 1)) UNION ALL SELECT n + 1 FROM s WHERE n < $((i + 10000)))
			INSERT INTO seed SELECT n, substr(hex(randomblob(11)), 1, 22),
			  date('2000-01-01', '+' || (n % 9000) || ' days'),
			  date('2010-06-30', '+' || (n % 4000) || ' days'),
			  n % 100, n % 7, 'row ' || n || ' of the seed table, shaped like the seed' FROM s;
			COMMIT;
		EOF
	done
}

# check DB MODE PHASE - integrity, journal mode, count, exact sums and the
# content digest recorded at load time
check() {
	local db=$1 mode=$2 phase=$3 out
	out=$(sqlite3 "$db" 'PRAGMA integrity_check;') || fail "$phase: sqlite3 $db failed: $out"
	assert_eq "$out" ok "$phase: PRAGMA integrity_check of $db"
	assert_eq "$(sqlite3 "$db" 'PRAGMA journal_mode;')" "$mode" "$phase: journal_mode of $db"
	assert_eq "$(sqlite3 "$db" 'SELECT count(*) FROM seed;')" "$rows" "$phase: count(*) of $db"
	# sum of n % 100 over 1..100000 = 1000 * 4950; sum of ids = n(n+1)/2
	assert_eq "$(sqlite3 "$db" 'SELECT sum(qty), sum(id), min(length(code)), max(length(code)) FROM seed;')" \
		"4950000|5000050000|22|22" "$phase: sums of $db"
	assert_eq "$(sqlite3 "$db" 'SELECT * FROM seed ORDER BY id;' | sha256sum)" "${digest[$mode]}" \
		"$phase: content digest of $db"
}

declare -A digest size
sfs_mount "$B" "$M" "$opts,log=$T/req1.log"
for mode in delete wal; do
	db=$M/$mode.db
	out=$(load_sql $mode | sqlite3 -bail "$db" 2>&1) || fail "loading $db ($mode journal): $out"
	assert_eq "$out" "$mode" "output of the load into $db"
	digest[$mode]=$(sqlite3 "$db" 'SELECT * FROM seed ORDER BY id;' | sha256sum)
	check "$db" $mode "after load"
	size[$mode]=$(stat -c %s "$db")
	note "$mode: $rows rows, $(stat -c %s "$db") bytes"
done
sfs_umount "$M"

sfs_mount "$B" "$M" "$opts,log=$T/req2.log"
# readdir itself: the two databases, no journal left, .scatterfs hidden
# shellcheck disable=SC2012
assert_eq "$(ls -A "$M" | tr '\n' ' ')" "delete.db wal.db " "readdir after remount"
for mode in delete wal; do
	assert_eq "$(stat -c %s "$M/$mode.db")" "${size[$mode]}" "size of $mode.db after remount"
	check "$M/$mode.db" $mode "after remount"
done
sfs_umount "$M"
sfs_log_check_header "$T/req2.log"
reads=$(sfs_log_count "$T/req2.log" read)
((reads > 0)) || fail "no read rows in the request log after remount"
note "pass: $reads reads logged after remount"
