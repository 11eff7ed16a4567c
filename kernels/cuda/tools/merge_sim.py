#!/usr/bin/env python3
# Host check of the decode kernel's in-grid split merges, no GPU needed: simulates merge_splits (a warp
# per (row, 4 dims), lanes over the splits, kMergeBatch splits per lane per round, a running
# (max, sum, O) rescaled per round, then the shuffle reduction) and merge_splits_by_row (<= 8 splits,
# every lane reading every split) of src/decode_attention.cu step by step, in log2 units, against a
# direct log-sum-exp merge. Empty splits (lse -inf) hold NaN partials, as the poisoned workspace of the
# [cuda] tests does: a merge that multiplies one fails here. Keep it in step with the kernel.
# Run: python3 kernels/cuda/tools/merge_sim.py
import math
import random

INF = float("inf")
K_MERGE_BATCH = 8     # kMergeBatch
K_ROW_MAX_SPLITS = 8  # kRowMergeMaxSplits


def exp2(x):
    return 0.0 if x == -INF else 2.0 ** x


def direct(ls, parts):
    m = max(ls)
    if m == -INF:
        return [0.0] * 4
    w = [exp2(l - m) for l in ls]
    total = sum(w)
    return [sum(w[s] * parts[s][k] for s in range(len(ls)) if w[s] > 0) / total for k in range(4)]


def merge_splits(ls, parts):  # lanes over the splits
    S = len(ls)
    lanes = []
    for lane in range(32):
        mx, total, acc = -INF, 0.0, [0.0] * 4
        for s0 in range(0, S, 32 * K_MERGE_BATCH):
            lj, pj = [], []
            for j in range(K_MERGE_BATCH):  # every load issued before any is used
                s = s0 + lane + 32 * j
                sc = s if s < S else S - 1
                lj.append(ls[sc] if s < S else -INF)
                pj.append(parts[sc])
            m_new = max([mx] + lj)
            if m_new == -INF:
                continue
            alpha = exp2(mx - m_new)
            total *= alpha
            acc = [a * alpha for a in acc]
            for j in range(K_MERGE_BATCH):
                w = exp2(lj[j] - m_new)
                if w > 0:
                    total += w
                    acc = [a + w * p for a, p in zip(acc, pj[j])]
            mx = m_new
        lanes.append((mx, total, acc))
    wmx = max(l[0] for l in lanes)  # the shuffle max
    total, acc = 0.0, [0.0] * 4
    for mx, t, a in lanes:
        f = 0.0 if mx == -INF else exp2(mx - wmx)
        total += t * f
        acc = [x + y * f for x, y in zip(acc, a)]
    inv = 1.0 / total if total > 0 else 0.0
    return [x * inv for x in acc]


def merge_splits_by_row(ls, parts):  # every lane reads every split (its own dims)
    S = len(ls)
    assert S <= K_ROW_MAX_SPLITS
    l8 = [ls[s] if s < S else -INF for s in range(K_ROW_MAX_SPLITS)]
    p8 = [parts[min(s, S - 1)] for s in range(K_ROW_MAX_SPLITS)]
    mx = max(l8)
    total, acc = 0.0, [0.0] * 4
    if mx != -INF:
        for s in range(K_ROW_MAX_SPLITS):
            w = exp2(l8[s] - mx)
            if w > 0:
                total += w
                acc = [a + w * p for a, p in zip(acc, p8[s])]
    inv = 1.0 / total if total > 0 else 0.0
    return [x * inv for x in acc]


def close(a, b):
    return all(abs(x - y) <= 1e-9 * max(1.0, abs(x)) for x, y in zip(a, b))


def main():
    rng = random.Random(1)
    cases = 0
    for S in [2, 3, 4, 7, 8, 9, 31, 32, 33, 128, 255, 256, 257, 300, 513, 1024]:
        for trial in range(4):
            ls = [rng.gauss(0, 20) for _ in range(S)]
            parts = [[rng.gauss(0, 1) for _ in range(4)] for _ in range(S)]
            if trial >= 1:  # a third of the splits empty, their partials never written (NaN)
                for e in rng.sample(range(S), S // 3):
                    ls[e], parts[e] = -INF, [math.nan] * 4
            if trial == 3:  # every split empty: the output is 0
                ls, parts = [-INF] * S, [[math.nan] * 4] * S
            want = direct(ls, parts)
            got = merge_splits(ls, parts)
            assert close(want, got), ("merge_splits", S, trial, want, got)
            if S <= K_ROW_MAX_SPLITS:
                got = merge_splits_by_row(ls, parts)
                assert close(want, got), ("merge_splits_by_row", S, trial, want, got)
            cases += 1
    print(f"merge ok ({cases} cases, 2-1024 splits)")


if __name__ == "__main__":
    main()
