#!/usr/bin/env python3
"""How long a planning sweep takes in-process against through the CLI, and threads sweeping in parallel.

1. 1,000 `analyze` configurations (8 contexts x 5 batches x 5 tp x 5 targets of llama-3-8b): the module
   in-process, then the same 1,000 through `mhacfg analyze --format json` (a process each); both
   answers are checked equal on a sample.
2. A `recommend` sweep (contexts x targets) on 1 thread and on THREADS threads: the module releases the
   GIL while it searches, so threads use the cores.

    PYTHONPATH=build/python python3 python/bench/sweep_bench.py [--mhacfg build/mhacfg] [--threads 2]

A benchmark to run and read, not a test: it asserts nothing about speed.
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import subprocess
import time

import mhacfg

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--mhacfg", default="build/mhacfg")
ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
ap.add_argument("--cli-sample", type=int, default=1000, help="how many of the 1,000 to run through the CLI")
args = ap.parse_args()

CONTEXTS = [2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144]
BATCHES = [1, 4, 16, 64, 256]
TPS = [1, 2, 4, 8, 16]
TARGETS = ["h100-sxm", "h200-sxm-cudnn", "a100-80gb", "b200", "mi300x"]
configs = [dict(context=c, batch=b, tp=t, target=g) for c, b, t, g in itertools.product(CONTEXTS, BATCHES, TPS, TARGETS)]
assert len(configs) == 1000


def flags(cfg):
    return [x for k, v in cfg.items() for x in (f"--{k.replace('_', '-')}", str(v))]


t0 = time.perf_counter()
docs = [mhacfg.analyze("llama-3-8b", **cfg) for cfg in configs]
in_process = time.perf_counter() - t0
print(f"in-process: {len(configs)} analyze calls in {in_process:.2f} s = {len(configs) / in_process:.0f} calls/s")

sample = configs[: args.cli_sample]
t0 = time.perf_counter()
cli_docs = [json.loads(subprocess.run([args.mhacfg, "analyze", "--model", "llama-3-8b", *flags(cfg), "--format", "json"],
                                      capture_output=True, text=True, check=True).stdout) for cfg in sample]
cli = time.perf_counter() - t0
print(f"CLI:        {len(sample)} analyze processes in {cli:.2f} s = {len(sample) / cli:.0f} calls/s "
      f"({cli / len(sample) * 1e3:.1f} ms each; in-process {in_process / len(configs) * 1e3:.2f} ms each, "
      f"{(cli / len(sample)) / (in_process / len(configs)):.0f}x faster)")
for i in range(0, len(sample), 97):
    assert docs[i] == cli_docs[i], f"the module and the CLI differ on {configs[i]}"

points = [dict(params="8B", context=c, target=g, top=3, variants=["mha", "gqa", "mqa", "mla"])
          for c in (4096, 16384, 65536) for g in TARGETS[:4]] * 2


def sweep(threads):
    wall, cpu = time.perf_counter(), time.process_time()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        results = list(pool.map(lambda p: mhacfg.recommend(**p), points))
    return time.perf_counter() - wall, time.process_time() - cpu, results


one, one_cpu, base = sweep(1)
many, many_cpu, results = sweep(args.threads)
assert results == base, "threads changed the answers"
print(f"recommend:  {len(points)} searches on 1 thread {one:.2f} s ({one_cpu:.2f} s CPU), on {args.threads} threads "
      f"{many:.2f} s ({many_cpu:.2f} s CPU): {one / many:.2f}x; the process used {one_cpu / one:.2f} and "
      f"{many_cpu / many:.2f} cores (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")

# The GIL is released while the library searches: a pure-Python thread keeps running meanwhile.
stop, spins = False, 0


def spin():
    global spins
    while not stop:
        spins += 1


spinner = concurrent.futures.ThreadPoolExecutor(1)
spinner.submit(spin)
time.sleep(0.05)
t0, before = time.perf_counter(), spins
time.sleep(0.5)  # alone: the rate the spinner reaches when nothing else wants the GIL
alone = (spins - before) / (time.perf_counter() - t0)
before = spins
t0 = time.perf_counter()
for p in points:
    mhacfg.recommend(**p)
searched = time.perf_counter() - t0
during = spins - before
stop = True
spinner.shutdown()
print(f"GIL:        a Python thread ran {during / searched / 1e6:.2f} M loop iterations/s while {len(points)} searches ran "
      f"on another ({searched:.2f} s), {alone / 1e6:.2f} M/s alone")
