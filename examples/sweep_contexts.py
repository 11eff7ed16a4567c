#!/usr/bin/env python3
"""Sweeps context lengths and device targets through mhacfg's JSON and prints a summary table.

For each (target, context): the recommended attention design for a Llama-3-8B-shaped model, its KV
cache per token, the batch that fits and the predicted tokens/s, next to what Llama-3-8B itself
(32 query heads, 8 KV heads of 128) would need at that context. Standard library only.

    python3 examples/sweep_contexts.py [--mhacfg build/mhacfg] [--targets h100-sxm,h200-sxm]
                                       [--contexts 4096,32768]
"""
import argparse
import json
import subprocess
import sys


def mhacfg_json(binary, args):
    result = subprocess.run([binary, *args, "--format", "json"], capture_output=True, text=True)
    if result.returncode not in (0, 1):  # 1 = nothing feasible, still a JSON answer
        sys.exit(f"mhacfg {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
    return json.loads(result.stdout)


def gib(n):
    return f"{n / 2**30:.1f} GiB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mhacfg", default="build/mhacfg", help="path to the mhacfg binary")
    ap.add_argument("--targets", default="h100-sxm,h200-sxm,a100-80gb")
    ap.add_argument("--contexts", default="4096,16384,65536")
    args = ap.parse_args()
    rows = []
    for target in args.targets.split(","):
        for context in (int(c) for c in args.contexts.split(",")):
            rec = mhacfg_json(args.mhacfg, ["recommend", "--d-model", "4096", "--layers", "32", "--context", str(context),
                                            "--target", target, "--top", "1"])
            llama = mhacfg_json(args.mhacfg, ["analyze", "--model", "llama-3-8b", "--context", str(context),
                                              "--target", target])
            if rec["feasible"]:
                best = rec["candidates"][0]
                design = f"{best['variant']} {best['num_q_heads']}/{best['num_kv_heads']} x {best['head_dim']}"
                kv, batch = best["kv_cache"]["bytes_per_token"], best["batch"]
                tps = best["predicted"]["at_batch"]["tokens_per_s"]
            else:
                design, kv, batch, tps = "none fits", 0, 0, 0.0
            rows.append((target, context, design, kv // 1024, batch, tps, gib(llama["kv_cache"]["bytes_total"]),
                         rec["profile"]["basis"]))
    header = ("target", "context", "recommended", "KV KiB/token", "batch", "tokens/s", "llama-3-8b KV/seq", "basis")
    widths = [max(len(str(h)), *(len(f"{r[i]:.0f}" if isinstance(r[i], float) else str(r[i])) for r in rows))
              for i, h in enumerate(header)]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        cells = [f"{v:.0f}" if isinstance(v, float) else str(v) for v in r]
        print("  ".join(c.rjust(w) if isinstance(v, (int, float)) else c.ljust(w) for c, v, w in zip(cells, r, widths)))


if __name__ == "__main__":
    main()
