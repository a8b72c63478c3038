#!/usr/bin/python3
"""tests/mesonlog.py: tests/run's reader of meson's test list and results.

  BUILD is a build directory, or a file with its `meson introspect --tests`.

  mesonlog.py list BUILD SUITE [NAME]... [--not SUITE]...
      prints the names of BUILD's tests (`meson introspect --tests`) in
      SUITE and in none of the --not suites, highest priority first (meson's
      order); with NAMEs, only those of them in SUITE (in that order; a
      NAME may end in .sh).

  mesonlog.py report BUILD TESTLOG TALLY [--prefix P] [--per-binary]
                     [--multiplier N] [--cpu-dir DIR]
      reads TESTLOG (meson-logs/testlog.json of one `meson test` run, one
      JSON object per test) and prints one line per test:
        PASS name (12 s, cpu 3.4 s)        exit status 0
        SKIP name: reason                  exit status 77 (the reason is the
                                           test's last "SKIP: " line, else
                                           its last line)
        FAIL name (exit 3, 12 s, ...):     anything else, then its output
                                           indented (a time-out adds
                                           "(timed out after L s)")
      A TAP test (the criterion binaries) counts each of its cases, one
      "ok"/"not ok" line each ("# SKIP" ones as skipped): "PASS name: N
      tests (W s)", "FAIL name: K of N passed (W s)"; a binary that fails
      without a "not ok" line (it crashed, or its plan was not met) is one
      failure more.  With --per-binary (the valgrind pass) a binary is one
      test.  The CPU time (user + system) of a test comes from
      DIR/NAME.cpu in clock ticks (tests/mount-test writes it); meson does
      not measure it, so the criterion binaries show wall time only.
      Appends to TALLY: "count PASSED FAILED SKIPPED", then per failure
      "fail NAME<TAB>WHY" (WHY: its first "FAIL: " or "(timed out" line,
      else its last line, at most 300 characters) and per test
      "time WALL CPU_TICKS NAME" (CPU_TICKS -1 when unknown).
"""
import argparse
import json
import os
import re
import subprocess
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def introspect(build):
    if build.endswith(".json"):
        with open(build) as f:
            return json.load(f)
    out = subprocess.run(["meson", "introspect", build, "--tests"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def suites_of(t):
    return {s.rpartition(":")[2] for s in t.get("suite") or []}


def cmd_list(a):
    nots = set(a.nots)
    names = [re.sub(r"\.sh$", "", os.path.basename(n)) for n in a.names]
    tests = [t for t in introspect(a.build) if a.suite in suites_of(t)]
    if names:
        by_name = {t["name"]: t for t in tests}
        tests = [by_name[n] for n in names if n in by_name]
    else:
        tests.sort(key=lambda t: -t.get("priority", 0))
    for t in tests:
        if names or not suites_of(t) & nots:
            print(t["name"])


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else ""


def skip_reason(text):
    r = [l for l in text.splitlines() if l.startswith("SKIP: ")]
    return r[-1][len("SKIP: "):] if r else last_line(text)


def why(text):
    for l in text.splitlines():
        if l.startswith("FAIL: ") or l.startswith("(timed out"):
            return l[:300]
    return last_line(text)[:300]


def indent(text, tail=None):
    lines = text.rstrip("\n").splitlines()
    if tail:
        lines = lines[-tail:]
    return "".join("    " + l + "\n" for l in lines)


def secs(ticks):
    return "%d.%d" % (ticks // CLK_TCK, ticks % CLK_TCK * 10 // CLK_TCK)


def cmd_report(a):
    testlog, tally = a.testlog, a.tally
    prefix, per_binary, mult, cpu_dir = a.prefix, a.per_binary, a.multiplier, a.cpu_dir
    info = {t["name"]: t for t in introspect(a.build)}
    passed = failed = skipped = 0
    tal = []
    out = sys.stdout
    with open(testlog, encoding="utf-8", errors="replace") as f:
        results = [json.loads(l) for l in f if l.strip()]
    for r in results:
        name = r["name"].rpartition(" / ")[2]
        t = info.get(name, {})
        shown = prefix + name
        wall = int(round(r.get("duration") or 0))
        ticks = -1
        if cpu_dir:
            try:
                with open(os.path.join(cpu_dir, name + ".cpu")) as c:
                    ticks = int(c.read())
            except (OSError, ValueError):
                pass
        dur = "%d s" % wall + (", cpu %s s" % secs(ticks) if ticks >= 0 else "")
        tal.append("time %d %d %s" % (wall, ticks, shown))
        res = r["result"]
        stdo = ANSI.sub("", r.get("stdout") or "")
        stde = ANSI.sub("", r.get("stderr") or "")
        text = stdo + (("\n" if stdo and not stdo.endswith("\n") else "") + stde if stde else "")
        if res == "TIMEOUT":
            limit = (t.get("timeout") or 0) * mult
            text += "(timed out after %g s)\n" % limit
        rc = r.get("returncode")
        if t.get("protocol") == "tap" and not per_binary:
            ok = nok = sk = 0
            for l in stdo.splitlines():
                m = re.match(r"(not )?ok\b", l)
                if not m:
                    continue
                if re.search(r"#\s*skip", l, re.I):
                    sk += 1
                elif m.group(1):
                    nok += 1
                else:
                    ok += 1
            bad = nok
            if res not in ("OK", "SKIP") and nok == 0:
                bad = 1
            passed += ok
            skipped += sk
            failed += bad
            skips = ", %d skipped" % sk if sk else ""
            if bad == 0:
                out.write("PASS %s: %d tests%s (%s)\n" % (shown, ok, skips, dur))
            else:
                if nok:
                    out.write("FAIL %s: %d of %d passed%s (%s)\n" % (shown, ok, ok + nok, skips, dur))
                else:
                    out.write("FAIL %s: %s, exit %s after %d passed (%s)\n"
                              % (shown, res.lower(), rc, ok, dur))
                out.write(indent(text))
                tal.append("fail %s\t%s" % (shown, why(text)))
            continue
        if res == "OK":
            passed += 1
            out.write("PASS %s (%s)\n" % (shown, dur))
        elif res == "SKIP":
            skipped += 1
            out.write("SKIP %s: %s\n" % (shown, skip_reason(text)))
        else:
            failed += 1
            code = "timed out" if res == "TIMEOUT" else "exit %s" % rc
            out.write("FAIL %s (%s, %s):\n" % (shown, code, dur))
            out.write(indent(text, 60 if per_binary else None))
            tal.append("fail %s\t%s" % (shown, why(text)))
    with open(tally, "a") as f:
        f.write("count %d %d %d\n" % (passed, failed, skipped))
        for l in tal:
            f.write(l + "\n")


def main():
    p = argparse.ArgumentParser(prog="tests/mesonlog.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    lp = sub.add_parser("list")
    lp.add_argument("build")
    lp.add_argument("suite")
    lp.add_argument("--not", action="append", default=[], dest="nots", metavar="SUITE")
    lp.add_argument("names", nargs="*", metavar="NAME")
    lp.set_defaults(run=cmd_list)
    rp = sub.add_parser("report")
    rp.add_argument("build")
    rp.add_argument("testlog")
    rp.add_argument("tally")
    rp.add_argument("--prefix", default="")
    rp.add_argument("--per-binary", action="store_true")
    rp.add_argument("--multiplier", type=float, default=1.0)
    rp.add_argument("--cpu-dir")
    rp.set_defaults(run=cmd_report)
    a = p.parse_args()
    a.run(a)


if __name__ == "__main__":
    main()
