#!/usr/bin/env python3
"""Planning with the mhacfg module, notebook style (each `# %%` is a cell; run whole as a script).

1. A sweep of context length x GPU x tensor parallelism for Llama-3-70B: KV cache per GPU, the batch
   that fits, tokens/s and TPOT, written to sweep.csv (and sweep.png when matplotlib is installed:
   Debian's python3-matplotlib).
2. "Which attention for my 13B at 128k on 8x H100?": the recommendation, tier by tier (designs that score
   within the model's error of each other share a rank), with its reasons.

    PYTHONPATH=build/python python3 examples/plan.py [--out DIR]
"""
# %% Setup
import argparse
import csv
import os
import sys
from pathlib import Path

try:
    import mhacfg
except ImportError:
    if os.environ.get("MHACFG_PYTHON_BUILT", "ON") != "ON":
        print("the mhacfg Python module was not built: skipped")
        sys.exit(77)  # CTest: skipped
    raise

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out", default="plan-out", help="folder for sweep.csv and sweep.png")
args = ap.parse_args()
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)

# %% 1. Context x GPU x tp sweep: two in-process calls a point (no process per call). recommend's
# model_design is the model's own attention served at the largest batch that fits (the one memory rule
# the recommender applies); analyze at that batch adds the served TPOT.
MODEL = "llama-3-70b"
GPUS = ["h100-sxm", "h200-sxm-cudnn", "b200"]
TPS = [2, 4, 8]
CONTEXTS = [8192, 32768, 131072]
rows = []
for gpu in GPUS:
    for tp in TPS:
        for context in CONTEXTS:
            point = dict(context=context, tp=tp, target=gpu, weight_dtype="fp8")
            try:
                own = mhacfg.recommend(MODEL, top=1, **point)["model_design"]
            except mhacfg.Infeasible as e:
                own = e.document["model_design"]
            batch = own["batch"] if own.get("memory", {}).get("fits", own["batch"] > 0) else 0
            served = mhacfg.analyze(MODEL, batch=max(batch, 1), prompt_len=min(context, 2048), **point)["predicted"]
            rows.append({"gpu": gpu, "tp": tp, "context": context, "batch": batch,
                         "kv_kib_per_token": own["kv_cache"]["bytes_per_token"] // 1024,
                         "tokens_per_s": round(own["predicted"]["at_batch"]["tokens_per_s"], 1) if batch else 0.0,
                         "tpot_ms": round(served["tpot_ms"], 2) if batch else None, "basis": served["basis"]})
with open(out / "sweep.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
print(f"{MODEL}, fp8 weights: {len(rows)} points -> {out / 'sweep.csv'}")
print(f"  {'gpu':<15} {'tp':>2} {'context':>7} {'batch':>5} {'tokens/s':>9} {'TPOT ms':>8}")
for r in rows:
    tpot = f"{r['tpot_ms']:>8.2f}" if r["tpot_ms"] is not None else f"{'-':>8}"
    print(f"  {r['gpu']:<15} {r['tp']:>2} {r['context']:>7} {r['batch']:>5} {r['tokens_per_s']:>9.0f} {tpot}")
assert any(r["batch"] for r in rows), "nothing fits: the sweep is wrong"

# %% The plot: tokens/s against context, one line per GPU and tp (only with matplotlib).
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed (Debian: python3-matplotlib): no sweep.png")
else:
    fig, ax = plt.subplots(figsize=(8, 5))
    for gpu in GPUS:
        for tp in TPS:
            pts = [r for r in rows if r["gpu"] == gpu and r["tp"] == tp and r["batch"] >= 1]
            ax.plot([r["context"] for r in pts], [r["tokens_per_s"] for r in pts], marker="o", label=f"{gpu} tp{tp}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("context (tokens)")
    ax.set_ylabel("tokens/s at the largest batch that fits")
    ax.set_title(f"{MODEL}, fp8 weights")
    ax.legend(fontsize=7, ncol=3)
    fig.savefig(out / "sweep.png", dpi=120, bbox_inches="tight")
    assert (out / "sweep.png").stat().st_size > 0, "the plot was not written"
    print(f"  -> {out / 'sweep.png'}")

# %% 2. Which attention for a 13B model at 128k on 8x H100?
try:
    rec = mhacfg.recommend(params="13B", context=131072, tp=8, target="h100-sxm", top=3, variants=["mha", "gqa", "mqa", "mla"])
except mhacfg.Infeasible as e:
    sys.exit(f"nothing fits: {e} (closest: {e.closest})")
shape = rec["shape"]
print(f"\n13B at 128k on 8x h100-sxm: d_model {shape['d_model']}, {shape['layers']} layers; "
      f"{rec['search']['feasible']} feasible designs of {rec['search']['evaluated']}")
# Designs whose scores are within the model's error of each other share a rank: a tier.
tiers = {}
for c in rec["candidates"]:
    tiers.setdefault(c["rank"], []).append(c)
for rank, members in list(tiers.items())[:3]:
    print(f"tier {rank}: " + ", ".join(c["design"] for c in members))
    best = members[0]
    at = best["predicted"]["at_batch"]
    print(f"  {best['design']}: {best['kv_cache']['bytes_per_token'] // 1024} KiB KV/token, batch {best['batch']}, "
          f"{at['tokens_per_s']:.0f} tokens/s, quality risk {best['quality_risk']}")
    for reason in best["rationale"]:
        print(f"    {reason}")
for r in rec["rejected"][:3]:
    print(f"  not chosen: {r['design']}: {r['reason']}")
