#!/usr/bin/env python3
# Host check of the CUDA indexer's index math (src/indexer.cu), no GPU needed. Keep it in step with the
# kernel.
# 1. score_kernel's fragments: the cp.async placement of a 64-key tile into swizzled shared memory,
#    each lane's 16-byte loads of A (query rows, from global) and B (key rows, from shared memory)
#    split into the registers of two mma k-steps (the k-permutation), an mma.m16n8k32 simulated from
#    the PTX ISA's 8-bit fragment layout (a0 = (g, 4t..4t+3), a1 = (g+8, ..), a2 = (g, 16+4t..),
#    a3 = (g+8, 16+4t..); b0 = (k 4t..4t+3, n g), b1 = (k 16+4t.., n g); c0, c1 = (g, 2t, 2t+1),
#    c2, c3 = (g+8, ..)), and the epilogue's key of each accumulator: every (row, key) product must be
#    the plain dot product over all head dims. Also: the 8 lanes of each 128-bit shared-load phase hit
#    8 distinct 16-byte bank groups.
# 2. select_kernel: order keys, the three histogram passes with the bin finder (each of 256 threads
#    owning 8 bins), and the warp-segment compaction, against the contract (top min(topk, n) scores,
#    NaN as -inf, -0 == +0, ties to the lower positions, increasing) on random rows with many ties.
# Run: python3 kernels/cuda/tools/indexer_sim.py
import math
import random
import struct

KEY_TILE = 64
SELECT_THREADS = 256
SELECT_WARPS = SELECT_THREADS // 32
BINS = 2048


def key_chunk_offset(D, r, c):
    return r * D + ((c ^ ((r & 1) << 2)) if D == 128 else c) * 16


def words(b16):  # 16 bytes -> 4 little-endian 32-bit words, as lists of 4 bytes
    return [b16[4 * i:4 * i + 4] for i in range(4)]


def mma_m16n8k32(a_regs, b_regs):
    """a_regs[lane] = 4 registers of 4 bytes, b_regs[lane] = 2 registers; returns c[lane] = 4 values."""
    A = [[None] * 32 for _ in range(16)]
    B = [[None] * 8 for _ in range(32)]
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        a0, a1, a2, a3 = a_regs[lane]
        for byte in range(4):
            A[g][4 * t + byte] = a0[byte]
            A[g + 8][4 * t + byte] = a1[byte]
            A[g][16 + 4 * t + byte] = a2[byte]
            A[g + 8][16 + 4 * t + byte] = a3[byte]
            B[4 * t + byte][g] = b_regs[lane][0][byte]
            B[16 + 4 * t + byte][g] = b_regs[lane][1][byte]
    assert all(x is not None for row in A for x in row) and all(x is not None for row in B for x in row)
    C = [[sum(A[m][k] * B[k][n] for k in range(32)) for n in range(8)] for m in range(16)]
    out = []
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        out.append([C[g][2 * t], C[g][2 * t + 1], C[g + 8][2 * t], C[g + 8][2 * t + 1]])
    return out


def check_scores(D, MT, rng):
    KP, KS = D // 64, D // 32
    rows = 16 * MT
    Q = [[rng.randint(-7, 7) for _ in range(D)] for _ in range(rows)]
    K = [[rng.randint(-7, 7) for _ in range(D)] for _ in range(KEY_TILE)]
    # cp.async placement: chunk id -> (row, chunk) -> swizzled offset; every byte written once.
    smem = [None] * (KEY_TILE * D)
    for cid in range(KEY_TILE * D // 16):
        r, c = cid // (D // 16), cid % (D // 16)
        off = key_chunk_offset(D, r, c)
        for i in range(16):
            assert smem[off + i] is None
            smem[off + i] = K[r][16 * c + i]
    assert None not in smem
    # A fragments (per lane), as the kernel loads them.
    af = []
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        regs = [[[None] * 4 for _ in range(KS)] for _ in range(MT)]
        for i in range(MT):
            for half in range(2):
                row = 16 * i + g + 8 * half
                for kp in range(KP):
                    w = words(Q[row][kp * 64 + t * 16: kp * 64 + t * 16 + 16])
                    regs[i][2 * kp][half] = w[0]
                    regs[i][2 * kp][2 + half] = w[1]
                    regs[i][2 * kp + 1][half] = w[2]
                    regs[i][2 * kp + 1][2 + half] = w[3]
        af.append(regs)
    for slab in range(4):
        bf = []
        for j in range(2):
            # bank groups of each 128-bit load phase (8 consecutive lanes)
            for kp in range(KP):
                offs = [key_chunk_offset(D, slab * 16 + j * 8 + (lane >> 2), kp * 4 + (lane & 3)) for lane in range(32)]
                for phase in range(4):
                    groups = {(o // 16) % 8 for o in offs[8 * phase:8 * phase + 8]}
                    assert len(groups) == 8, ("bank conflict", D, slab, j, kp, phase)
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            regs = [[[None, None] for _ in range(KS)] for _ in range(2)]
            for j in range(2):
                for kp in range(KP):
                    off = key_chunk_offset(D, slab * 16 + j * 8 + g, kp * 4 + t)
                    w = words(smem[off:off + 16])
                    regs[j][2 * kp] = [w[0], w[1]]
                    regs[j][2 * kp + 1] = [w[2], w[3]]
            bf.append(regs)
        for i in range(MT):
            for j in range(2):
                acc = [[0] * 4 for _ in range(32)]
                for s in range(KS):
                    c = mma_m16n8k32([af[lane][i][s] for lane in range(32)], [bf[lane][j][s] for lane in range(32)])
                    acc = [[x + y for x, y in zip(acc[lane], c[lane])] for lane in range(32)]
                for lane in range(32):
                    g, t = lane >> 2, lane & 3
                    for e in range(2):
                        key = slab * 16 + j * 8 + 2 * t + e
                        for half in range(2):
                            row = 16 * i + g + 8 * half
                            want = sum(Q[row][d] * K[key][d] for d in range(D))
                            assert acc[lane][2 * half + e] == want, (D, MT, slab, i, j, lane, e, half)


def order_key(f):
    if math.isnan(f):
        f = -math.inf
    if f == 0.0:
        f = 0.0
    u = struct.unpack("<I", struct.pack("<f", f))[0]
    return (~u & 0xFFFFFFFF) if (u & 0x80000000) else (u | 0x80000000)


def select(scores, topk):
    n = len(scores)
    k = min(topk, n)
    if k == n:
        return list(range(n)) + [-1] * (topk - n)
    keys = [order_key(x) for x in scores]
    prefix, mask, remaining = 0, 0, k
    for shift, bits in ((21, 11), (10, 11), (0, 10)):
        bin_mask = (1 << bits) - 1
        hist = [0] * BINS
        for key in keys:
            if key & mask == prefix:
                hist[(key >> shift) & bin_mask] += 1
        per = BINS // SELECT_THREADS
        mine = [sum(hist[tid * per:tid * per + per]) for tid in range(SELECT_THREADS)]
        total = sum(mine)
        found = []
        incl = 0
        for tid in range(SELECT_THREADS):
            incl += mine[tid]
            above = total - incl
            if above < remaining <= above + mine[tid]:
                for i in range(per - 1, -1, -1):
                    c = hist[tid * per + i]
                    if above + c >= remaining:
                        found.append((tid * per + i, above))
                        break
                    above += c
        assert len(found) == 1, found
        digit, above = found[0]
        remaining -= above
        prefix |= digit << shift
        mask |= bin_mask << shift
    threshold, ties_kept = prefix, remaining
    out = [None] * topk
    seg = (n + SELECT_WARPS - 1) // SELECT_WARPS
    counts = []
    for w in range(SELECT_WARPS):
        lo, hi = w * seg, min(n, w * seg + seg)
        counts.append((sum(1 for j in range(lo, hi) if keys[j] > threshold),
                       sum(1 for j in range(lo, hi) if keys[j] == threshold)))
    for w in range(SELECT_WARPS):
        lo, hi = w * seg, min(n, w * seg + seg)
        above_before = sum(c[0] for c in counts[:w])
        ties_before = sum(c[1] for c in counts[:w])
        for j in range(lo, hi):  # the ballots' lane order is position order
            gt, eq = keys[j] > threshold, keys[j] == threshold
            if gt or (eq and ties_before < ties_kept):
                slot = above_before + min(ties_before, ties_kept)
                assert out[slot] is None
                out[slot] = j
            above_before += gt
            ties_before += eq
    assert all(x is not None for x in out[:k]), "unfilled slot"
    return out[:k] + [-1] * (topk - k)


def contract(scores, topk):
    clean = [(-math.inf if math.isnan(x) else x) for x in scores]
    n = len(scores)
    k = min(topk, n)
    order = sorted(range(n), key=lambda j: (-clean[j], j))[:k]
    return sorted(order) + [-1] * (topk - k)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    rng = random.Random(28)
    for D in (64, 128):
        for MT in (1, 2, 4):
            check_scores(D, MT, rng)
    print("indexer_sim: score fragments OK (head_dim 64/128, 1/2/4 m-tiles, swizzle conflict-free)")
    trials = 0
    for n in (1, 2, 3, 31, 32, 33, 257, 1000, 2500):
        for topk in (1, 2, 7, 64, 256, 999, 3000):
            for kind in ("random", "ties", "special"):
                if kind == "random":
                    row = [f32(rng.uniform(-3, 3)) for _ in range(n)]
                elif kind == "ties":
                    vals = [f32(rng.uniform(-1, 1)) for _ in range(5)]
                    row = [vals[rng.randrange(5)] for _ in range(n)]
                else:
                    pool = [0.0, -0.0, math.nan, -math.inf, math.inf, 1e-40, -1e-40, 1.0, 1.0000001, -2.5]
                    row = [f32(pool[rng.randrange(len(pool))]) if rng.random() < 0.6 else f32(rng.uniform(-1, 1))
                           for _ in range(n)]
                got, want = select(row, topk), contract(row, topk)
                assert got == want, (n, topk, kind, got[:10], want[:10])
                trials += 1
    print(f"indexer_sim: radix select OK ({trials} rows: random, 5-value ties, NaN/inf/-0/subnormals)")


if __name__ == "__main__":
    main()
