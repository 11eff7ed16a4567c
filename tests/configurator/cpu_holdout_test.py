#!/usr/bin/env python3
"""Calibrates this machine's CPU (the quick grid) with the repository's held-out shapes measured in
the same interleaved rounds, and checks the loop end to end: a measured profile with every op class,
its provenance, the kernel-speed ratios, and the held-out prediction error.

The error bounds are guards against a broken model or harness, not the acceptance target: on the
shared 2-vCPU VMs this project runs on, other tenants slow every core in bursts: with the model of
2026-11-30 evening the held-out median of six quick calibrations ranged from 1.4 % to 4.3 % (p90
5.3-10.1 %), but a separate bench of the same shapes started right after minutes of calibrations ran
8-25 % (once 10-76 %) slower than the calibrations' own rounds, so a 5 % median cannot be asserted
reliably in CI on machines like these. The measured figures are printed and recorded in the issue notes. Usage: cpu_holdout_test.py MHACFG SOURCE_DIR WORK_DIR
"""
import json
import subprocess
import sys
from pathlib import Path

mhacfg, source, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
work.mkdir(parents=True, exist_ok=True)
profile = work / "cpu.json"
holdout = source / "tests/fixtures/cpu-holdout-shapes.jsonl"
r = subprocess.run([mhacfg, "calibrate", "--device", "cpu", "--quick", "--holdout", str(holdout),
                    "--save-holdout", str(work / "holdout-measured.jsonl"), "--out", str(profile)],
                   capture_output=True, text=True)
print(r.stdout)
assert r.returncode == 0, r.stderr
p = json.loads(profile.read_text())
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


check(p["source"] == "measured" and p["kind"] == "cpu", "a measured CPU profile")
check(set(p["ops"]) == {"attention/prefill", "attention/decode", "attention/decode/mla", "gemm"}, "every op class fitted")
check(p["provenance"]["threads"] == 1 and p["provenance"]["grid"] == "quick", "provenance: threads and grid")
check(p["provenance"]["seconds"] < 120, f"quick calibration took {p['provenance']['seconds']:.1f} s")
m = p["measured"]
check(m["prefill_fraction_of_gemm"] > 0 and m["decode_fraction_of_read_bw"] > 0,
      f"kernel speed ratios: prefill {m['prefill_fraction_of_gemm']:.2f} of GEMM, decode {m['decode_fraction_of_read_bw']:.2f} of read")
v = p["validation"][0]
check(v["records"] == len(holdout.read_text().splitlines()), "every held-out shape validated")
check(v["median_ape"] <= 0.25 and v["p90_ape"] <= 0.60,
      f"held-out error: median {v['median_ape']:.1%}, p90 {v['p90_ape']:.1%} (guards: 25 %, 60 %)")
# validate on the saved held-out measurements reproduces the profile's own validation figure.
out = subprocess.run([mhacfg, "validate", "--profile", str(profile), "--in", str(work / "holdout-measured.jsonl"),
                      "--format", "json"], capture_output=True, text=True)
overall = [c for c in json.loads(out.stdout)["classes"] if c["op_class"] == "all"][0]
check(abs(overall["median_ape"] - v["median_ape"]) < 1e-9, "validate agrees with calibrate's validation")
print(f"{8 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
