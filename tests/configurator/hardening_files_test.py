"""Outputs the binary must refuse before any work (issue 26, points 5 and 7): a bind-mounted file, which
rename cannot replace, and a link another user planted in a sticky world-writable folder, which root
must not follow. Both need root (mount, chown -h); elsewhere the test exits 77, which CTest reports as
skipped. Usage: hardening_files_test.py MHACFG SOURCE_DIR WORK_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

mhacfg, source, work = sys.argv[1:4]
if os.geteuid() != 0:
    print("skip: needs root (mount --bind, chown -h)")
    sys.exit(77)
records = os.path.join(source, "tests/fixtures/h200-torch.train.jsonl")
os.makedirs(work, exist_ok=True)
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(f"{what}: {detail}")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def refused(what, args, message):
    """`args` exits 2 with `message` as its one line and nothing on stdout."""
    r = subprocess.run([mhacfg] + args, capture_output=True, text=True, timeout=240)
    expected = "mhacfg: error: " + message + "\n"
    check(f"{what}: exit 2, one line", r.returncode == 2 and r.stderr == expected and r.stdout == "",
          f"exit {r.returncode}, stderr {r.stderr!r}, expected {expected!r}")


def succeeds(what, args):
    r = subprocess.run([mhacfg] + args, capture_output=True, text=True, timeout=240)
    check(f"{what}: exit 0", r.returncode == 0, f"exit {r.returncode}, stderr {r.stderr!r}")


# Point 5: a bind-mounted file (docker -v FILE:FILE). Each command refuses before measuring or reading.
mounts = tempfile.mkdtemp(dir=work)
host, mounted = os.path.join(mounts, "host.json"), os.path.join(mounts, "mounted.json")
write(host, "host\n")
write(mounted, "under\n")
m = subprocess.run(["mount", "--bind", host, mounted], capture_output=True, text=True)
if m.returncode != 0:
    print("skip bind-mounted outputs: mount --bind failed: " + m.stderr.strip())
else:
    try:
        why = (": is a mount point (a bind-mounted file), which a new file cannot be renamed over: "
               "mount its folder instead and write inside it")
        refused("calibrate --device cpu --quick --out MOUNTED",
                ["calibrate", "--device", "cpu", "--quick", "--out", mounted], "--out = " + mounted + why)
        refused("calibrate --save-measurements MOUNTED",
                ["calibrate", "--device", "cpu", "--quick", "--out", os.path.join(mounts, "p.json"),
                 "--save-measurements", mounted], "--save-measurements = " + mounted + why)
        refused("bench --out MOUNTED", ["bench", "--in", records, "--out", mounted], "--out = " + mounted + why)
        refused("predict --out MOUNTED", ["predict", "--profile", "h200-sxm", "--in", records, "--out", mounted],
                "--out = " + mounted + why)
        check("the mounted file is untouched", read(mounted) == "host\n", read(mounted))
        check("nothing else written", sorted(os.listdir(mounts)) == ["host.json", "mounted.json"], os.listdir(mounts))
    finally:
        subprocess.run(["umount", mounted])

# Point 7: another user's link in a sticky world-writable folder (a /tmp of its own).
shared, elsewhere = tempfile.mkdtemp(dir=work), tempfile.mkdtemp(dir=work)
os.chmod(shared, 0o1777)
victim, link = os.path.join(elsewhere, "victim.json"), os.path.join(shared, "out.json")
write(victim, "keep\n")
os.symlink(victim, link)
os.lchown(link, 65534, 65534)  # chown -h nobody


def planted(path):
    return (f"will not follow the link {path}: another user's (uid 65534) in the sticky world-writable folder "
            f"{shared} (the fs.protected_symlinks rule); remove the link or write elsewhere")


refused("calibrate --from R --out PLANTED", ["calibrate", "--from", records, "--out", link],
        f"--out = {link}: " + planted(link))
refused("predict --out PLANTED", ["predict", "--profile", "h200-sxm", "--in", records, "--out", link],
        f"--out = {link}: " + planted(link))
check("the planted link's target is untouched", read(victim) == "keep\n", read(victim))
reports = os.path.join(shared, "reports")
os.symlink(elsewhere, reports)
os.lchown(reports, 65534, 65534)
refused("analyze --format markdown --out-dir PLANTED",
        ["analyze", "--model", "llama-3-8b", "--format", "markdown", "--out-dir", reports],
        f"--out-dir = {reports}: " + planted(reports))
refused("analyze --out-dir PLANTED/new", ["analyze", "--model", "llama-3-8b", "--format", "markdown",
                                          "--out-dir", reports + "/new"], f"--out-dir = {reports}/new: " + planted(reports))
check("nothing written through the planted folder link", sorted(os.listdir(elsewhere)) == ["victim.json"],
      os.listdir(elsewhere))

# The links the rule allows: root's own link there, and another user's link outside a sticky folder.
os.lchown(link, 0, 0)
succeeds("calibrate --out ROOTS-LINK", ["calibrate", "--from", records, "--out", link])
check("root's link: the file it names is the new profile", '"name"' in read(victim) and os.path.islink(link))
plain = tempfile.mkdtemp(dir=work)
os.chmod(plain, 0o777)
write(victim, "keep\n")
os.symlink(victim, os.path.join(plain, "out.json"))
os.lchown(os.path.join(plain, "out.json"), 65534, 65534)
succeeds("calibrate --out LINK-IN-NON-STICKY-FOLDER", ["calibrate", "--from", records, "--out", os.path.join(plain, "out.json")])
check("non-sticky folder: the file it names is the new profile", '"name"' in read(victim))

for d in (mounts, shared, elsewhere, plain):
    shutil.rmtree(d, ignore_errors=True)
if failures:
    print("\n".join(failures))
    sys.exit(1)
