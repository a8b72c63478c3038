#!/bin/bash
# The man pages under doc/: each renders with man -l (80 columns, UTF-8)
# and with groff -ww without one warning; scatterfs.ini(5) documents every
# key of conf/default.ini (commented-out ones too) in its own section's
# part of the page, and every table and view of the catalog schema in
# fs/catalog.c with each of its columns.
# Then what the code offers against what the pages say, each list taken
# from the code (the build's --help outputs, fs/ctl.c, the scripts), so
# that the next pattern, model, control entry, subcommand or option is
# caught without an edit here:
# - every key of `scatterfs --help` in scatterfs.ini(5) under its section;
#   every placement pattern, disk model and device layer it lists (from
#   the registries) in scatterfs(1) and in scatterfs.ini(5) under
#   [layout], [disk] and [device];
#   its -o options in scatterfs(1);
# - every entry of the control directory (the names fs/ctl.c lists in it)
#   in scatterfs(1)'s THE CONTROL DIRECTORY and in `scatterfs --help`;
# - every subcommand and option of `scatterfs-plan --help` in
#   scatterfs-plan(1)'s synopsis and options, every option of
#   `scatterfs-report --help` in scatterfs-report(1);
# - every script in bench/: the options its code takes (its case labels,
#   bench_options' spec and its shared ones, argparse's add_argument)
#   in its --help synopsis, and every option of that synopsis in a synopsis of it in
#   README.md or bench/README*.md (a line naming bench/NAME with options,
#   and its continuation lines);
# - no man page and no --help output speaks of an issue ("issue 15") or of
#   "today".
# Exit 0 when all of that holds, 77 when man or groff is missing, 1
# otherwise (each problem printed; also when the build is missing:
# SCATTERFS_BUILDDIR or SCATTERFS_BUILD, default build/).
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

# --- the code against the pages ---------------------------------------
build=${SCATTERFS_BUILDDIR:-${SCATTERFS_BUILD:-$root/build}}
work=$(mktemp -d "${TMPDIR:-/tmp}/mancheck.XXXXXX")
trap 'rm -rf "$work"' EXIT
for b in fs/scatterfs bench/scatterfs-plan bench/scatterfs-report; do
	if [[ ! -x $build/$b ]]; then
		echo "mancheck: $build/$b is not built (tools/setup): the lists to check come from it"
		exit 1
	fi
	"$build/$b" --help >"$work/help.${b##*/}" 2>&1 || { echo "mancheck: $b --help failed"; bad=1; }
done
for p in "${pages[@]}"; do
	MANWIDTH=80 man -l -E UTF-8 "$p" 2>/dev/null >"$work/page.${p##*/}"
done
for f in bench/*; do
	[[ -f $f && -x $f ]] && head -c 2 "$f" | grep -q '#!' || continue
	timeout 60 "$f" --help >"$work/bench.${f##*/}" 2>&1 </dev/null ||
		{ echo "mancheck: $f --help failed: $(tail -n 3 "$work/bench.${f##*/}")"; bad=1; }
done
python3 - "$work" <<'PY' || bad=1
import glob, os, re, sys

work = sys.argv[1]
bad = 0


def fail(msg):
    global bad
    print(f"mancheck: {msg}")
    bad = 1


def read(name):
    with open(os.path.join(work, name), encoding="utf-8", errors="replace") as f:
        return f.read()


pages = {os.path.basename(p)[5:]: read(os.path.basename(p)) for p in glob.glob(os.path.join(work, "page.*"))}
helps = {n[5:]: read(n) for n in map(os.path.basename, glob.glob(os.path.join(work, "help.*")))}
benches = {n[6:]: read(n) for n in map(os.path.basename, glob.glob(os.path.join(work, "bench.*")))}


def section(text, heading, top=True):
    """Lines of the rendered page's section (top: .SH, at column 0) or
    subsection (.SS, at column 3) HEADING, up to the next of the same or
    a higher level."""
    lines = text.splitlines()
    indent = 0 if top else 3
    for i, line in enumerate(lines):
        if line.strip() == heading and len(line) - len(line.lstrip()) == indent:
            out = []
            for rest in lines[i + 1:]:
                if rest.strip() and len(rest) - len(rest.lstrip()) <= indent:
                    break
                out.append(rest)
            return "\n".join(out)
    return None


def has_word(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


# issues and "today", in every page and every --help
for name, text in list(pages.items()) + [(f"{n} --help", t) for n, t in helps.items()] + \
        [(f"bench/{n} --help", t) for n, t in benches.items()]:
    for i, line in enumerate(text.splitlines(), 1):
        if re.search(r"\bissues? +#?[0-9]+", line, re.I) or re.search(r"\btoday\b", line, re.I):
            fail(f"{name}, line {i}, speaks of an issue or of today: {line.strip()}")

# scatterfs --help: keys, patterns, models, -o options, control entries
h = helps["scatterfs"]
ini = pages["scatterfs.ini.5"]
man1 = pages["scatterfs.1"]
keys = re.findall(r"^ {4}([a-z_]+)\.([a-z_]+) {2,}", h, re.M)
if len(keys) < 20:
    fail(f"only {len(keys)} keys in scatterfs --help")
for sec, key in keys:
    part = section(ini, f"[{sec}]", top=False)
    if part is None:
        fail(f"scatterfs.ini(5) has no heading [{sec}] (key {sec}.{key} of scatterfs --help)")
    elif key not in {l.split()[0] for l in part.splitlines() if l.split()}:
        fail(f"scatterfs.ini(5) does not document {sec}.{key} (scatterfs --help) under [{sec}]")


def listed(key):
    m = re.search(r"^ {4}" + re.escape(key) + r" .*?; one of ([a-z0-9_, -]+) \((?:[a-z]+ pattern; )?default", h, re.M)
    if not m:
        fail(f"scatterfs --help does not list the values of {key}")
        return []
    return [v.strip() for v in m.group(1).split(",")]


for what, key, sec in (("placement pattern", "layout.pattern", "[layout]"), ("disk model", "disk.model", "[disk]"),
                       ("device layer", "device.layers", "[device]")):
    for v in listed(key):
        if v == "none":
            continue
        if not has_word(section(ini, sec, top=False) or "", v):
            fail(f"scatterfs.ini(5) does not document the {what} {v} under {sec}")
        if not has_word(man1, v):
            fail(f"scatterfs(1) does not name the {what} {v}")
own = h[h.find("scatterfs options:"):h.find("Unmount with")]
for opt in set(re.findall(r"^ +-o ([a-z_]+)(?:=|\s)", own, re.M)):
    if not has_word(section(man1, "OPTIONS") or "", opt):
        fail(f"scatterfs(1) OPTIONS does not document -o {opt} (scatterfs --help)")

# the control directory: the names fs/ctl.c lists in it
src = open("fs/ctl.c", encoding="utf-8").read()
m = re.search(r"names\[\]\s*=\s*\{([^}]*)\}", src)
entries = re.findall(r'"([^"]+)"', m.group(1)) if m else []
if len(entries) < 4:
    fail(f"only {len(entries)} control-directory entries found in fs/ctl.c")
ctl = section(man1, "THE CONTROL DIRECTORY") or ""
ctl_help = re.search(r"^Control files:.*?\{([^}]*)\}", h, re.M)
for e in entries:
    if not re.search(r"^ {7}" + re.escape(e) + r"(/|\s|$)", ctl, re.M):
        fail(f"scatterfs(1) THE CONTROL DIRECTORY does not document .scatterfs/{e}")
    if not ctl_help or not re.search(r"(^|,)" + re.escape(e) + r"(/|,|$)", ctl_help.group(1)):
        fail(f"scatterfs --help's 'Control files:' line does not name {e}")

# scatterfs-plan: subcommands and options; scatterfs-report: options
plan = pages["scatterfs-plan.1"]
syn = section(plan, "SYNOPSIS") or ""
for sub in re.findall(r"^(?:usage:)?\s+scatterfs-plan ([a-z]+)\b", helps["scatterfs-plan"], re.M):
    if not re.search(r"scatterfs-plan " + sub + r"\b", syn):
        fail(f"scatterfs-plan(1)'s synopsis has no subcommand {sub} (scatterfs-plan --help)")
for tool, page in (("scatterfs-plan", plan), ("scatterfs-report", pages["scatterfs-report.1"])):
    for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*(?!\w)", helps[tool]))):
        if not has_word(page, opt):
            fail(f"{tool}(1) does not document {opt} ({tool} --help)")

# the scripts in bench/
docs = ""
for p in ["README.md"] + sorted(glob.glob("bench/README*.md")):
    docs += open(p, encoding="utf-8").read() + "\n"
doc_lines = docs.splitlines()


def synopsis_options(lines, name, start_re):
    """Options of every synopsis of bench/NAME in LINES: a line matching
    START_RE and its continuation lines (indented ones, up to a blank line;
    a table row is one line)."""
    opts = set()
    for i, line in enumerate(lines):
        if not re.search(start_re, line):
            continue
        block = [line[line.index(name):] if name in line else line]
        if not line.lstrip().startswith("|"):
            for rest in lines[i + 1:]:
                if not rest.strip() or not rest.startswith(" "):
                    break
                block.append(rest)
        opts |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*(?!\w)", "\n".join(block)))
    return opts


for path in sorted(glob.glob("bench/*")):
    name = os.path.basename(path)
    if name not in benches:
        continue
    code = open(path, encoding="utf-8").read()
    accepted = set()
    for labels in re.findall(r"^\s*((?:--[a-z][a-z0-9-]*\s*\|\s*)*--[a-z][a-z0-9-]*)\)", code, re.M):
        accepted |= {l.strip() for l in labels.split("|")}
    accepted |= set(re.findall(r"add_argument\(\s*\"(--[a-z][a-z0-9-]*)\"", code))
    for spec in re.findall(r"^bench_options '([^']*)'", code, re.M):
        accepted |= set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", spec))
    if "bench_options '" in code:
        accepted |= {"--layouts", "--baseline", "--set", "--disk"}
    accepted -= {"--help"}
    if not accepted:
        fail(f"bench/{name}: no option found in its code")
    helped = synopsis_options(benches[name].splitlines(), f"bench/{name}",
                              r"^\s*(usage: )?bench/" + re.escape(name) + r" +(\[|--|\(|[A-Z])")
    for opt in sorted(accepted - helped):
        fail(f"bench/{name} takes {opt}, which its --help synopsis does not show")
    paged = synopsis_options(doc_lines, f"bench/{name}", r"bench/" + re.escape(name) + r" +(\[|--|\(|[A-Z])")
    if not paged:
        fail(f"bench/{name} has no synopsis in README.md or bench/README*.md")
    for opt in sorted((accepted | helped) - paged - {"--help"}):
        fail(f"bench/{name} takes {opt}, which no synopsis of it in README.md or bench/README*.md shows")
sys.exit(bad)
PY
((bad == 0)) && echo "mancheck: ${#pages[@]} pages render without warnings; every key and catalog column is documented, and every key, pattern, model, control entry, subcommand and option the code offers"
exit "$bad"
