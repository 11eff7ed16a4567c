#!/usr/bin/env python3
"""Calibrates this machine's CPU (the quick grid) with the repository's held-out sets (all but KDA's) measured in
the same interleaved rounds, and checks the loop end to end: a measured profile with every op class,
its provenance, the kernel-speed ratios, and the held-out prediction error.

The error bounds are guards against a broken model or harness, not the acceptance target: on the
shared 2-vCPU VMs this project runs on, other tenants slow every core in bursts, and a separate bench
started right after minutes of calibrations once ran 8-25 % (once 10-76 %) slower than the
calibrations' own rounds, so a 5 % median cannot be asserted reliably in CI on machines like these.
Four quick calibrations of this version (2026-11-30, late) on the development VM: set 1 median
2.3-3.6 %, p90 5.7-6.6 %; set 2 median 2.9-4.3 %, p90 11.4-14.6 %; set 3 median 4.5-6.1 %, p90
8.6-11.6 % (their misses are in docs/calibration.md). The measured figures are printed and recorded in the issue notes. Usage: cpu_holdout_test.py MHACFG SOURCE_DIR WORK_DIR
"""
import json
import subprocess
import sys
from pathlib import Path

mhacfg, source, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
work.mkdir(parents=True, exist_ok=True)
profile = work / "cpu.json"
# Four held-out sets in the same rounds, each validated on its own: the first (19 shapes); a second of
# 20 other shapes (other head_dims, groups 3-8, odd KV-head counts, MLA batch 3, GEMM m 2-768, blocks);
# a third of 18 in other regimes (decode of 2-4 query positions, windows, prefill against a longer
# cache, MLA rank 384, GEMM m 3/48/200, a d_model-4096 decode block); a fourth of 11 with chunked
# attention (Llama 4's layers: prefill across chunk boundaries, decode in the last chunk, and one prefill
# shape in chunks, in a window of the same size and in full, side by side); a fifth of 17 linear-attention
# cores (Gated DeltaNet and Mamba2 decode steps and prefills at widths, groupings and batches the grid
# does not have); and a seventh of 11 lightning-indexer calls (DeepSeek-V3.2's and GLM-5's widths and
# narrower ones, decode and prefill at lengths the grid does not have). Set 6 (KDA) is full-grid only.
numbers = ["1", "2", "3", "4", "5", "7"]
sets = [source / f"tests/fixtures/cpu-holdout-shapes{'' if n == '1' else '-' + n}.jsonl" for n in numbers]
counts = [len(s.read_text().splitlines()) for s in sets]
holdout_args = [arg for s in sets for arg in ("--holdout", str(s))]
r = subprocess.run([mhacfg, "calibrate", "--device", "cpu", "--quick", *holdout_args,
                    "--save-holdout", str(work / "holdout-measured.jsonl"), "--out", str(profile)],
                   capture_output=True, text=True)
print(r.stdout)
assert r.returncode == 0, r.stderr
p = json.loads(profile.read_text())
failures = []
checks_run = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    checks_run.append(what)
    if not cond:
        failures.append(what)


# The profile carries the tiles the CPU kernels published, which its fits counted with.
facts = p.get("cpu_kernel_facts", {})
check(sorted(facts) == ["decode_small_rows", "indexer_key_tile", "indexer_tile_rows", "linear_token_block",
                        "prefill_key_tile", "prefill_tile_rows", "row_block", "skinny_gemm_rows"]
      and all(isinstance(v, int) and v > 0 for v in facts.values()),
      "the profile carries the CPU kernels' tile facts: %s" % facts)


check(p["source"] == "measured" and p["kind"] == "cpu", "a measured CPU profile")
# The machine probe stored for --check-machine: 40 rounds before and 40 after the grid, one every 50 timings between.
probe = p.get("machine_probe", {})
check(probe.get("rounds", 0) > 80 and probe.get("gemm_flop_per_s", 0) > 0 and probe.get("stream_bytes_per_s", 0) > 0,
      "the profile stores its machine probe: %s" % {k: probe.get(k) for k in ("gemm_flop_per_s", "stream_bytes_per_s", "rounds")})
check(set(p["ops"]) == {"attention/prefill", "attention/decode", "attention/decode/mla", "gemm",
                        "linear_attention/prefill", "linear_attention/decode", "indexer/prefill", "indexer/decode"},
      "every op class fitted")
check(p["provenance"]["threads"] == 1 and p["provenance"]["grid"] == "quick", "provenance: threads and grid")
check(p["provenance"]["seconds"] < 120, f"quick calibration took {p['provenance']['seconds']:.1f} s")
m = p["measured"]
check(m["prefill_fraction_of_gemm"] > 0 and m["decode_fraction_of_read_bw"] > 0,
      f"kernel speed ratios: prefill {m['prefill_fraction_of_gemm']:.2f} of GEMM, decode {m['decode_fraction_of_read_bw']:.2f} of read")
check(len(p["validation"]) == len(sets), "one validation per held-out file")
for i, (v, n) in enumerate(zip(p["validation"], counts)):
    check(v["records"] == n and sets[i].name in v["what"] and v["median_ape"] <= 0.25 and v["p90_ape"] <= 0.60,
          f"held-out set {numbers[i]}: median {v['median_ape']:.1%}, p90 {v['p90_ape']:.1%} on {v['records']} records (guards: 25 %, 60 %)")
# validate on each file's saved measurements reproduces the profile's own figure for it.
measured = (work / "holdout-measured.jsonl").read_text().splitlines()
check(len(measured) == sum(counts), "every held-out shape saved")
ends = [sum(counts[:i + 1]) for i in range(len(counts))]
for i, part in enumerate(measured[end - n:end] for end, n in zip(ends, counts)):
    path = work / f"holdout-set{numbers[i]}.jsonl"
    path.write_text("\n".join(part) + "\n")
    out = subprocess.run([mhacfg, "validate", "--profile", str(profile), "--in", str(path), "--format", "json"],
                         capture_output=True, text=True)
    c = [c for c in json.loads(out.stdout)["classes"] if c["op_class"] == "all"][0]
    check(abs(c["median_ape"] - p["validation"][i]["median_ape"]) < 1e-9, f"validate agrees with calibrate on set {numbers[i]}")
print(f"{len(checks_run)} checks, {len(failures)} failed")
sys.exit(1 if failures else 0)
