"""The CLI binary under conditions an in-process test cannot make (issue 26): a reader that closed the
pipe, and too little memory while parsing. Usage: hardening_cli_test.py MHACFG WORK_DIR"""
import os
import subprocess
import sys

mhacfg, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failures = []


def check(what, ok, detail):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(f"{what}: {detail}")


# Writing into a closed pipe: exit 3 with one line, not death by SIGPIPE (-13 here, 141 in a shell).
# The read end is closed before the process starts: closed after it, a busy machine can let the
# process write its output into the pipe's buffer first, which succeeds.
read_end, write_end = os.pipe()
os.close(read_end)
p = subprocess.Popen([mhacfg, "analyze", "--model", "llama-3-8b", "--format", "json"],
                     stdout=write_end, stderr=subprocess.PIPE)
os.close(write_end)
err = p.stderr.read().decode()
code = p.wait()
check("closed pipe: exit 3, one line", code == 3 and err == "mhacfg: runtime failure: cannot write to standard output\n",
      f"exit {code}, stderr {err!r}")

# Out of memory while parsing a large profile: exit 3 with one line, not SIGABRT (134). Each limit
# runs out at a different point of the parse; none may abort.
try:
    import resource
except ImportError:
    resource = None
if resource is None or not hasattr(resource, "RLIMIT_AS"):
    print("skip out-of-memory: no RLIMIT_AS here")
else:
    big = os.path.join(work, "big-profile.json")
    with open(big, "w") as f:
        f.write("[" + ",".join(['{"a":1}'] * (5 << 20)) + "]")  # 40 MiB of small objects
    seen = set()
    for limit_mb in range(560, 1400, 40):
        def limit(mb=limit_mb):
            resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
        r = subprocess.run([mhacfg, "recommend", "--params", "1B", "--target", big],
                           capture_output=True, text=True, preexec_fn=limit)
        seen.add(r.returncode)
        ok = (r.returncode == 3 and r.stderr == "mhacfg: runtime failure: out of memory\n") or \
             (r.returncode == 2 and r.stderr.count("\n") == 1)  # enough memory: not a profile
        check(f"out of memory at {limit_mb} MiB: exit {r.returncode}", ok, r.stderr[-300:])
    check("some limit ran out of memory while parsing", 3 in seen, sorted(seen))
    os.remove(big)

if failures:
    print("\n".join(failures))
    sys.exit(1)
