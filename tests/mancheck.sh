#!/bin/bash
# The man pages under doc/: each renders with man -l (80 columns, UTF-8)
# and with groff -ww without one warning; scatterfs.ini(5) documents every
# key of conf/default.ini (commented-out ones too) in its own section's
# part of the page, and every table and view of the catalog schema in
# fs/catalog.c with each of its columns.  Exit 0 when all of that holds,
# 77 when man or groff is missing, 1 otherwise (each problem printed).
set -uo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
cd "$root" || exit 1

for c in man groff python3; do
	command -v "$c" >/dev/null || { echo "SKIP: missing $c (packages man-db, groff-base, python3)"; exit 77; }
done

pages=(doc/scatterfs.1 doc/scatterfs-plan.1 doc/scatterfs-report.1 doc/scatterfs.ini.5)
bad=0
for p in "${pages[@]}"; do
	if [[ ! -f $p ]]; then
		echo "mancheck: $p is missing"
		bad=1
		continue
	fi
	out=$(MANWIDTH=80 man --warnings -l -E UTF-8 "$p" 2>&1 >/dev/null)
	[[ -z $out ]] || { echo "mancheck: man -l $p warns:"; echo "$out"; bad=1; }
	out=$(groff -ww -z -man -Kutf8 "$p" 2>&1)
	[[ -z $out ]] || { echo "mancheck: groff -ww $p warns:"; echo "$out"; bad=1; }
	lines=$(MANWIDTH=80 man -l -E UTF-8 "$p" 2>/dev/null | wc -l)
	((lines > 20)) || { echo "mancheck: $p renders to $lines lines"; bad=1; }
done

# The keys and the schema against the rendered text: a key counts only as
# the first word of a line inside its section's part (after the heading
# "[section]", before the next heading), a table or view as a heading
# line of its own naming it, and a column as the first word of a line in
# that table's part.
[[ -f doc/scatterfs.ini.5 ]] || exit 1
MANWIDTH=80 man -l -E UTF-8 doc/scatterfs.ini.5 2>/dev/null >"${TMPDIR:-/tmp}/mancheck.$$"
python3 - "${TMPDIR:-/tmp}/mancheck.$$" conf/default.ini fs/catalog.c <<'PY' || bad=1
import re, sys

text = open(sys.argv[1], encoding="utf-8").read().splitlines()
bad = 0

def part(heading):
    """Lines after the subsection heading that is exactly HEADING, up to
    the next line at the same or a smaller indentation (next heading)."""
    for i, line in enumerate(text):
        # A subsection heading (.SS) is indented by 3 columns.
        if line.strip() == heading and line.startswith("   ") and line[3] != " ":
            indent = len(line) - len(line.lstrip())
            out = []
            for rest in text[i + 1:]:
                if rest.strip() and len(rest) - len(rest.lstrip()) <= indent:
                    break
                out.append(rest)
            return out
    return None

def first_words(lines):
    return {l.split()[0] for l in lines if l.split()}

# conf/default.ini: "key = value" lines, or "#key = value" for the keys
# that are commented out; the per-file rule example at the end is not a
# section of its own.
section, keys = None, []
for line in open(sys.argv[2], encoding="utf-8"):
    if line.startswith("#[file"):
        break
    m = re.match(r"\[([a-z]+)\]", line)
    if m:
        section = m.group(1)
        continue
    m = re.match(r"#?([a-z_]+) = ", line)
    if m and section:
        keys.append((section, m.group(1)))
if len(keys) < 20:
    print(f"mancheck: only {len(keys)} keys found in {sys.argv[2]}")
    bad = 1
for section, key in keys:
    lines = part(f"[{section}]")
    if lines is None:
        print(f"mancheck: scatterfs.ini(5) has no heading [{section}]")
        bad = 1
    elif key not in first_words(lines):
        print(f"mancheck: scatterfs.ini(5) does not document {section}.{key} under [{section}]")
        bad = 1

# fs/catalog.c: the schema is one string of concatenated C literals.
src = open(sys.argv[3], encoding="utf-8").read()
m = re.search(r"schema_sql\[\]\s*=\s*((?:\s*\"(?:[^\"\\]|\\.)*\")+)\s*;", src)
if not m:
    print("mancheck: no schema_sql in fs/catalog.c")
    sys.exit(1)
sql = "".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(1)))
objects = {}
for name, cols in re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+) \((.*?)\)(?: WITHOUT ROWID)?;", sql):
    items = re.split(r",(?![^(]*\))", cols)
    objects[name] = [i.split()[0] for i in items if not re.match(r"\s*(PRIMARY|UNIQUE|CHECK|FOREIGN)", i)]
for name, cols in re.findall(r"CREATE VIEW (\w+) AS .*?\) SELECT (.*?) FROM", sql):
    objects[name] = [c.strip().split(".")[-1] for c in cols.split(",")]
if len(objects) < 7:
    print(f"mancheck: only {len(objects)} tables and views found in fs/catalog.c")
    bad = 1
for name, cols in objects.items():
    lines = part(name)
    if lines is None:
        print(f"mancheck: scatterfs.ini(5) has no heading for the catalog's {name}")
        bad = 1
        continue
    words = first_words(lines)
    for c in cols:
        if c not in words:
            print(f"mancheck: scatterfs.ini(5) does not document column {name}.{c}")
            bad = 1
sys.exit(bad)
PY
rm -f "${TMPDIR:-/tmp}/mancheck.$$"
((bad == 0)) && echo "mancheck: ${#pages[@]} pages render without warnings; every key and catalog column is documented"
exit "$bad"
