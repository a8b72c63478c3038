"""bench/deftable.py: the table step the experiments defined over bench/run
share (bench/scan, cache, blocksize, wal): bench/run's JSON rows in, the
experiment's table out (aligned text under a title, or CSV), the seed's own
figures after it, and a gnuplot plot.  Imported by their Python steps."""
import json, os, subprocess, sys

BENCH = os.path.dirname(os.path.abspath(__file__))


def load(*paths):
    """bench/run --format json files: (the first document, all their rows)."""
    docs = [json.load(open(p)) for p in paths]
    return docs[0], [r for d in docs for r in d["rows"]]


def disk(doc):
    """The disk model's file name, "" without one."""
    return "" if doc["disk"] == "none" else os.path.basename(doc["disk"])


def f3(x):
    return "%.3f" % x


def ratio(a, b):
    """a / b to two decimals; "" when b is not above 0."""
    return "%.2f" % (float(a) / float(b)) if b not in (None, "") and float(b) > 0 else ""


def align(lines):
    """CSV lines (lists of cells) as text columns, two spaces apart (the last not padded)."""
    w = [max(len(x[i]) for x in lines if i < len(x)) for i in range(max(map(len, lines)))]
    return ["  ".join([c.ljust(w[i]) for i, c in enumerate(x[:-1])] + x[-1:]) for x in lines]


def show(lines, fmt, title=(), after=()):
    """Prints the table LINES (lists of cells, header first): csv as is; text
    after a blank line and the TITLE lines if any, followed by the AFTER lines."""
    if fmt == "csv":
        print("\n".join(",".join(map(str, x)) for x in lines))
        return
    print("\n".join((["", *title] if title else []) + align([[str(c) for c in x] for x in lines]) + list(after)))


def seed(n, title):
    """The lines of seed N's own figures (bench/seed-figures.csv) under TITLE:
    seed 000's with the file's header, the others with their own first row."""
    rows = [l.rstrip("\n").split(",")[1:] for l in open(os.path.join(BENCH, "seed-figures.csv"))
            if not l.startswith("#") and l.split(",")[0] in ("seed", n)]
    return ["", title] + align(rows if n == "000" else rows[1:])


def configs(rows, keys, head, cells, vs=lambda r: "" if r["vs_baseline"] is None else "%.2f" % r["vs_baseline"],
            failed=lambda r: []):
    """An experiment's table over configurations: with one configuration its
    rows, cells(r) under HEAD; with several, each prefixed with the
    configuration's KEYS (layout and the user's --set keys) and ending with
    vs(r), vs_baseline (by default bench/run's own, to two decimals).  A
    failed row is FAILED after its failed(r) cells.  Returns (lines, the
    number of failed rows)."""
    multi = len({tuple(r[k] for k in keys) for r in rows}) > 1
    out, bad = [(keys if multi else []) + head + (["vs_baseline"] if multi else [])], 0
    for r in rows:
        pre = [str(r[k]) for k in keys] if multi else []
        if r["error"]:
            bad += 1
            x = pre + failed(r)
            out.append(x + [""] * (len(out[0]) - len(x) - 1) + ["FAILED: " + r["error"].replace(",", ";")])
        else:
            out.append(pre + [str(c) for c in cells(r)] + ([vs(r)] if multi else []))
    return out, bad


def plot(path, size, script):
    """Draws SCRIPT (gnuplot commands) into PATH (.png or .svg, any case) at
    SIZE ("900,600"); gnuplot's output never reaches stdout (the table's),
    and its failure ends the step with its message and status 1."""
    term = "svg" if path.lower().endswith(".svg") else "pngcairo"
    quoted = path.replace("'", "''")  # gnuplot's single-quoted string
    try:
        r = subprocess.run(["gnuplot"], input=f"set terminal {term} size {size}\nset output '{quoted}'\n{script}",
                           text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except FileNotFoundError:
        sys.exit("--plot needs gnuplot (Debian package gnuplot-nox)")
    if r.returncode != 0 or not os.path.isfile(path):
        sys.exit(f"--plot {path}: gnuplot failed: {' '.join(r.stderr.split())}")
    print(f"plot written to {path}", file=sys.stderr)


def departures(rows):
    """Where bench/scan's results depart from seed 000's, and why ([] when
    they agree).  ROWS: (layout as in seed-figures.csv, name as printed,
    read size, avg_s, contiguous's avg_s at that read size).  A departure:
    at a read size the seed measured, one of the two ratios to contiguous
    above 1.1 and the other below 0.9; or contiguous faster at a read size
    than at the largest up to 32 KiB (the seed's best) below it, where the
    seed's contiguous table was slower."""
    seed = {}
    for l in open(os.path.join(BENCH, "seed-figures.csv")):
        f = l.rstrip("\n").split(",")
        if f[0] == "000":
            seed[f[3], int(f[2])] = f[4]
    out, ref = [], {}
    for lay, name, rs, avg, base in rows:
        c, s = seed.get(("contiguous", rs)), seed.get((lay, rs))
        if lay != "contiguous" and s and c and float(base) > 0:
            ours, theirs = float(avg) / float(base), float(s) / float(c)
            if (ours > 1.1 and theirs < 0.9) or (ours < 0.9 and theirs > 1.1):
                out.append(f"  {name} at {rs // 1024} KiB reads: {ours:.2f} times contiguous here, "
                           f"{theirs:.2f} in the seed ({s} s against {c} s)")
        if lay == "contiguous" and c and rs <= 32768 and rs > ref.get(name, (0,))[0]:
            ref[name] = (rs, avg)
    for lay, name, rs, avg, base in rows:
        if lay == "contiguous" and name in ref and ("contiguous", rs) in seed:
            r, ra = ref[name]
            sr, sc = seed["contiguous", r], seed["contiguous", rs]
            if rs > r and float(avg) < float(ra) and float(sc) > float(sr):
                out.append(f"  {name} at {rs // 1024} KiB reads: {float(avg):.3f} s here, faster than the "
                           f"{float(ra):.3f} s at {r // 1024} KiB; the seed {sc} s, slower than its {sr} s")
    if not out:
        return []
    return ["Where these results depart from the seed:"] + out + """\
Why: the seed's scans were Oracle multiblock reads, and a multiblock read ends at an
extent boundary: with 70 KiB extents no read moved more than 70 KiB, in one I/O, whatever
the multiblock read count, so larger reads helped the fragmented tables as much as the
contiguous one.  Here a read is the kernel's readahead, which runs on across extent
boundaries: on a fragmented table it becomes one device I/O per extent it touches, each
paying a seek on the disk model.  And the seed's contiguous table slowed down above
32 KiB reads (86.71 s at 32 KiB, 105 to 147 s from 64 KiB on), a trait of that 1999
system which the disk model does not have: its transfer time only grows with the size.""".split("\n")


if __name__ == "__main__" and sys.argv[1:] == ["departures"]:
    # CSV lines on stdin: layout,name,read_size,avg_s,baseline_avg_s
    out = departures([(a, b, int(c), d, e) for a, b, c, d, e in (l.rstrip("\n").split(",") for l in sys.stdin if l.strip())])
    print("\n".join(out), end="\n" if out else "")
