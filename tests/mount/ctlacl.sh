#!/bin/bash
# TIMEOUT: 360
# .scatterfs/extents/PATH and .scatterfs/layout/PATH grant exactly what
# PATH grants, POSIX ACLs included (issue 24, item 2): each check below is
# made by nobody (uid 65534, group nogroup, no supplementary group) on the
# real path and on both mirrors, and all three must give the expected
# outcome: EACCES, or the contents root reads there (the file's bytes on
# the path, its extent map or layout line on the mirrors; a directory's
# names).
#   - a user entry (u:nobody:---) denies a 0755 directory: listing it,
#     and reading or stat-ing a file in it;
#   - a group entry (g:nogroup:---) denies the same;
#   - the mask denies: a 0644 file with u:nobody:r--,m::-w- (mode 0624:
#     the mode alone would let nobody read, as "other"), and a directory
#     with u:nobody:rwx,m::--x, which nobody may search (read a file in
#     it) but not list;
#   - an entry allows where the mode alone denies: a 0700 directory and a
#     0600 file with u:nobody:r-x and u:nobody:r--;
#   - a directory on the way that nobody may list but not search
#     (u:nobody:r--): a/ lists, a/b/ and a/b/f give EACCES;
#   - a default ACL does not deny access (u:nobody:--- as default only);
#   - the mirrors carry the path's ACL (getfacl), a file's without
#     execute;
#   - after a first access, and with directory descriptors of the path
#     and both mirrors held open by nobody: a user entry on a file, then on
#     its directory, setfacl -b, chmod 0700 and chown nobody each take
#     effect at once on all three (a fresh path walk and an openat()
#     through the held descriptor).
# In both cache modes, for a tree on the main device and one on a second
# device ([file "dev2/*"] device = second).
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
sfs_require python3 setfacl getfacl

T=$SFS_TMP
M=$T/mnt
id nobody >/dev/null 2>&1 || fail "no user nobody"
getent group nogroup >/dev/null || fail "no group nogroup"
cat >"$T/two.ini" <<EOF
[device "second"]
backing = second.img
size = 32M
[file "dev2/*"]
device = second
EOF

# tree P - the directories and files the checks use, under $M/P
tree() {
	local p=$M/$1
	mkdir -m 0755 "$p"
	mkdir -m 0755 "$p/uacl" "$p/gacl" "$p/maskd" "$p/a" "$p/a/b" "$p/dflt" "$p/chg"
	mkdir -m 0700 "$p/allow"
	for f in uacl/f gacl/f maskf maskd/f a/b/f dflt/f chg/f chg/g allow/f; do
		echo "bytes of $1/$f" >"$p/$f"
		chmod 0644 "$p/$f"
	done
	chmod 0600 "$p/allow/f"
	setfacl -m u:nobody:--- "$p/uacl"
	setfacl -m g:nogroup:--- "$p/gacl"
	setfacl -m u:nobody:r--,m::-w- "$p/maskf"
	setfacl -m u:nobody:rwx,m::--x "$p/maskd"
	setfacl -m u:nobody:r-x "$p/allow"
	setfacl -m u:nobody:r-- "$p/allow/f"
	setfacl -m u:nobody:r-- "$p/a"
	setfacl -d -m u:nobody:--- "$p/dflt"
	sync "$p/uacl/f" # the extent maps are the catalog's and the inode's alike
}

for mode in "${SFS_CACHE_MODES[@]}"; do
	sfs_mount "$T/backing" "$M" "config=$T/two.ini,size=64M,allow_other,$(sfs_cache_opts "$mode")"
	sfs_check_cache_mode "$M" "$mode"
	tree main
	tree dev2
	assert_eq "$(cut -d, -f4 "$M/.scatterfs/extents/dev2/a/b/f" | tail -n +2 | sort -u)" second \
		"$mode: the device of dev2/a/b/f's extents"
	assert_eq "$(stat -c %a "$M/main/maskf" "$M/main/allow" "$M/main/allow/f" | tr '\n' ' ')" "624 750 640 " \
		"$mode: modes the ACLs gave (group bits: the mask)"
	out=$(python3 - "$M" <<'PY'
import errno, grp, os, pwd, subprocess, sys

M = sys.argv[1]
MIRRORS = {"extents": M + "/.scatterfs/extents", "layout": M + "/.scatterfs/layout"}
fails = []


class Nobody:
    """One process as nobody, answering requests over pipes, so that it can
    hold directory descriptors across the changes root makes."""

    def __init__(self):
        uid, gid = pwd.getpwnam("nobody").pw_uid, grp.getgrnam("nogroup").gr_gid
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(w1)
            os.close(r2)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            held = {}
            out = os.fdopen(w2, "w")
            for line in os.fdopen(r1):
                op, arg = line.rstrip("\n").split(" ", 1)
                out.write(serve(op, arg, held) + "\n")
                out.flush()
            os._exit(0)
        os.close(r1)
        os.close(w2)
        self.w = os.fdopen(w1, "w")
        self.r = os.fdopen(r2)

    def ask(self, op, path):
        self.w.write(f"{op} {path}\n")
        self.w.flush()
        return self.r.readline().rstrip("\n")


def content(op, path, dir_fd=None):
    if op == "list":
        return " ".join(sorted(os.listdir(path)))
    if op == "stat":
        os.stat(path)
        return ""
    fd = os.open(path, os.O_RDONLY, dir_fd=dir_fd)
    with os.fdopen(fd) as f:
        return f.read().replace("\n", "|")


def serve(op, arg, held):
    try:
        if op == "hold":
            held[arg] = os.open(arg, os.O_RDONLY | os.O_DIRECTORY)
            return "OK"
        if op == "readat":
            d, name = arg.rsplit("/", 1)
            return "OK " + content("read", name, dir_fd=held[d])
        return "OK " + content(op, arg)
    except OSError as e:
        return errno.errorcode[e.errno]


def paths(rel):
    """The real path of @rel and its two mirrors."""
    return {"path": f"{M}/{rel}", **{k: f"{v}/{rel}" for k, v in MIRRORS.items()}}


def check(nb, what, op, rel, want):
    """@want: an errno name, or OK: what root reads there."""
    for where, p in paths(rel).items():
        opname = op
        if op == "readat":
            p = paths(rel.rsplit("/", 1)[0])[where] + "/" + rel.rsplit("/", 1)[1]
            expect = "OK " + content("read", paths(rel)[where]) if want == "OK" else want
        else:
            expect = "OK " + content(op, p) if want == "OK" else want
        got = nb.ask(opname, p)
        if got != expect:
            fails.append(f"{what}: nobody's {op} of {where} {rel}: got '{got}', expected '{expect}'")


def sh(*cmd):
    subprocess.run(cmd, check=True)


nb = Nobody()
for P in ("main", "dev2"):
    check(nb, "user entry", "list", f"{P}/uacl", "EACCES")
    check(nb, "user entry", "read", f"{P}/uacl/f", "EACCES")
    check(nb, "user entry", "stat", f"{P}/uacl/f", "EACCES")
    check(nb, "group entry", "list", f"{P}/gacl", "EACCES")
    check(nb, "group entry", "read", f"{P}/gacl/f", "EACCES")
    check(nb, "mask of a file", "read", f"{P}/maskf", "EACCES")
    check(nb, "mask of a directory", "list", f"{P}/maskd", "EACCES")
    check(nb, "mask of a directory", "read", f"{P}/maskd/f", "OK")
    check(nb, "allowed by an entry", "list", f"{P}/allow", "OK")
    check(nb, "allowed by an entry", "read", f"{P}/allow/f", "OK")
    check(nb, "directory on the way", "list", f"{P}/a", "OK")
    check(nb, "directory on the way", "list", f"{P}/a/b", "EACCES")
    check(nb, "directory on the way", "stat", f"{P}/a/b", "EACCES")
    check(nb, "directory on the way", "read", f"{P}/a/b/f", "EACCES")
    check(nb, "default ACL only", "list", f"{P}/dflt", "OK")
    check(nb, "default ACL only", "read", f"{P}/dflt/f", "OK")
    for rel in ("uacl", "gacl", "maskd", "allow", "a", "allow/f", "maskf"):
        acl = {w: subprocess.run(["getfacl", "-c", "-n", p], check=True, capture_output=True,
                                 text=True).stdout for w, p in paths(f"{P}/{rel}").items()}
        for w in MIRRORS:
            if acl[w] != acl["path"]:
                fails.append(f"getfacl of {w} {P}/{rel}: {acl[w]!r}, the path's {acl['path']!r}")

    # Changes after a first access, with the directories held open.
    for where, p in paths(f"{P}/chg").items():
        if nb.ask("hold", p) != "OK":
            fails.append(f"nobody cannot open {where} {P}/chg")
    steps = [
        ("before any change", None, [("list", "chg", "OK"), ("read", "chg/f", "OK"), ("readat", "chg/g", "OK")]),
        ("setfacl -m u:nobody:--- chg/f", ("setfacl", "-m", "u:nobody:---", "chg/f"),
         [("read", "chg/f", "EACCES"), ("readat", "chg/f", "EACCES"), ("readat", "chg/g", "OK")]),
        ("setfacl -m u:nobody:--- chg", ("setfacl", "-m", "u:nobody:---", "chg"),
         [("list", "chg", "EACCES"), ("readat", "chg/g", "EACCES"), ("read", "chg/g", "EACCES")]),
        ("setfacl -b chg chg/f", ("setfacl", "-b", "chg", "chg/f"),
         [("list", "chg", "OK"), ("readat", "chg/f", "OK"), ("read", "chg/g", "OK")]),
        ("chmod 0700 chg", ("chmod", "0700", "chg"),
         [("list", "chg", "EACCES"), ("readat", "chg/g", "EACCES")]),
        ("chown nobody chg", ("chown", "nobody", "chg"),
         [("list", "chg", "OK"), ("readat", "chg/g", "OK")]),
    ]
    for what, cmd, checks in steps:
        if cmd:
            sh(*[a if not a.startswith("chg") else f"{M}/{P}/{a}" for a in cmd])
        for op, rel, want in checks:
            check(nb, what, op, f"{P}/{rel}", want)
print("\n".join(fails) if fails else "all checks passed")
PY
) || fail "$mode: the checker failed: $out"
	[[ $out == "all checks passed" ]] || fail "$mode: $out"
	note "$mode: every check on the path, extents/ and layout/ as expected, on both devices"
	rm -rf "${M:?}/main" "$M/dev2"
	sfs_umount "$M"
done
echo "PASS: ctlacl"
