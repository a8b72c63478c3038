"""bench/benchopts.py: the experiments' option parser (bench/lib.sh's
bench_options calls it): one place that reads the options of bench/scan,
cache, autoextend, blocksize and wal, checks them and says what is wrong
in one line, and prints the shell assignments of what it read.

    python3 benchopts.py bench/NAME 'SPEC...' ARGS...

SPEC words: --NAME (a flag: NAME=1), --NAME=DEFAULT (a value; DEFAULT of
digits asks for a positive integer), --NAME=A|B|C (one of them, A the
default), and a list, --NAME=DEFAULT~TYPE (comma-separated; no empty item,
none given twice), into the variable NAME (- as _) and the array NAME_l of
its items, where TYPE is list (any items), sizes (each a size: also the
array NAME_b of their bytes; sizes% also a percentage, 0 bytes for one),
mib (whole MiB: NAME_mib the MiB joined by commas), readaheads (sizes the
mount takes as cache.readahead), or A|B (each one of them).  A single
size: --NAME=DEFAULT~size or ~readahead (NAME_b its bytes).  A size is
a positive whole number of bytes, or of KiB, MiB or GiB with a K, M or G
suffix.  The shared options --layouts (a list), --baseline, --set
(repeatable: the array bench_sets), --disk, --dask (bench_layouts,
bench_baseline, bench_disk, bench_dask) and --jobs (an integer, jobs) go
with every SPEC; bench_given lists the options given (" --a --b "); --plot FILE must be a .png or .svg in a directory that is
there (made absolute).

Exit status: 0 (the assignments on stdout), 2 (bad input: one line on
stderr, "bench/NAME: ..."), 3 (--help or -h: the caller prints the help).
"""
import os, re, shlex, sys


class Bad(Exception):
    pass


def either(choices):
    """A|B|C as "A, B or C"."""
    c = choices.split("|")
    return ", ".join(c[:-1]) + " or " + c[-1]


def size(opt, text, also=None):
    """TEXT in bytes; Bad naming OPT (and ALSO, what else it may be) otherwise."""
    m = re.fullmatch(r"([1-9][0-9]{0,11})([KMGkmg]?)", text)
    if not m:
        what = f"neither {also} nor" if also else "not"
        raise Bad(f"{opt}: '{text}' is {what} a size (bytes, or a K, M or G suffix)")
    return int(m.group(1)) << (10 * " KMG".index(m.group(2).upper() or " "))


def readahead(opt, text):
    """TEXT in bytes when the mount takes it as cache.readahead; Bad naming OPT otherwise."""
    b = size(opt, text)
    if b % 4096 or b > 1048576:
        raise Bad(f"{opt}: '{text}' is not a readahead: a multiple of 4 KiB up to 1M (the kernel's "
                  "readahead is in pages; FUSE requests stop at 1 MiB)")
    return b


def items(opt, text):
    """TEXT's comma-separated items: none empty, none given twice."""
    if not text:
        raise Bad(f"{opt}: an empty list")
    if ",," in f",{text},":
        raise Bad(f"{opt}: an empty item in '{text}'")
    out = text.split(",")
    for i, x in enumerate(out):
        if x in out[:i]:
            raise Bad(f"{opt}: '{x}' given twice in '{text}'")
    return out


def typed(opt, var, kind, text):
    """The assignments of list or size option OPT of type KIND."""
    if kind in ("size", "readahead"):
        return {var + "_b": (size if kind == "size" else readahead)(opt, text)}
    it = items(opt, text)
    out = {var + "_l": it}
    if kind in ("sizes", "sizes%"):
        pct = kind == "sizes%"
        out[var + "_b"] = [0 if pct and re.fullmatch(r"[1-9][0-9]*%", x) else
                           size(opt, x, "a percentage (50%)" if pct else None) for x in it]
    elif kind == "readaheads":
        out[var + "_b"] = [readahead(opt, x) for x in it]
    elif kind == "mib":
        mib = []
        for x in it:
            if size(opt, x) % 1048576:
                raise Bad(f"{opt}: '{x}' is not a whole number of MiB")
            mib.append(str(size(opt, x) >> 20))
        out[var + "_mib"] = ",".join(mib)
    elif "|" in kind:
        for x in it:
            if x not in kind.split("|"):
                raise Bad(f"{opt}: '{x}' is {'neither ' + ' nor '.join(kind.split('|')) if kind.count('|') == 1 else 'not one of ' + either(kind)}")
    return out


def parse(spec, argv):
    """The assignments (name: value, a list for an array) ARGV gives under SPEC."""
    kind = {"--layouts": "", "--baseline": "", "--set": "", "--disk": "", "--dask": "", "--jobs": "1"}
    listed = {"--layouts": "list"}
    val = {"bench_layouts": "", "bench_baseline": "", "bench_disk": "", "bench_dask": "", "jobs": "1",
           "bench_sets": []}
    for w in spec.split():
        name, eq, default = w.partition("=")
        default, _, lt = default.partition("~")
        var = name[2:].replace("-", "_")
        kind[name] = default if eq else None
        if lt:
            listed[name] = lt
        val[var] = default.split("|")[0] if eq else ""
    given = set()
    while argv:
        opt = argv.pop(0)
        if opt in ("-h", "--help"):
            sys.exit(3)
        if opt not in kind:
            raise Bad(f"unknown option '{opt}' (see --help)")
        var = opt[2:].replace("-", "_")
        given.add(opt)
        if kind[opt] is None:
            val[var] = "1"
            continue
        if not argv:
            raise Bad(f"{opt} needs a value (see --help)")
        v = argv.pop(0)
        if not v:
            raise Bad(f"{opt}: an empty value")
        if v.startswith("--"):
            raise Bad(f"{opt} needs a value, not the option '{v}' (see --help)")
        if opt == "--set":
            val["bench_sets"].append(v)
        else:
            val["bench_" + var if opt in ("--layouts", "--baseline", "--disk", "--dask") else var] = v
        w = kind[opt]
        if re.fullmatch(r"[0-9]+", w) and not re.fullmatch(r"[1-9][0-9]{0,8}", v):
            raise Bad(f"{opt} must be a positive integer (at most 999999999), not '{v}'")
        if "|" in w and v not in w.split("|"):
            raise Bad(f"{opt} must be {either(w)}, not '{v}'")
    for opt, lt in listed.items():
        var = opt[2:].replace("-", "_")
        if opt == "--layouts":
            if "--layouts" in given:
                items(opt, val["bench_layouts"])
        else:
            val.update(typed(opt, var, lt, val[var]))
    val["bench_given"] = " " + " ".join(sorted(given)) + " "
    plot = val.get("plot")
    if plot:
        if not plot.lower().endswith((".png", ".svg")):
            raise Bad(f"--plot: the file must end in .png or .svg, not '{plot}'")
        plot = val["plot"] = os.path.realpath(plot)
        d = os.path.dirname(plot)
        if not (os.path.isdir(d) and os.access(d, os.W_OK)):
            raise Bad(f"--plot: no directory {d} to write {plot} in")
    return val


def main():
    prog, spec = sys.argv[1], sys.argv[2]
    try:
        val = parse(spec, sys.argv[3:])
    except Bad as e:
        print(f"{prog}: {e}", file=sys.stderr)
        sys.exit(2)
    for k, v in val.items():
        if isinstance(v, list):
            print(f"{k}=({' '.join(shlex.quote(str(x)) for x in v)})")
        else:
            print(f"{k}={shlex.quote(str(v))}")


if __name__ == "__main__":
    main()
