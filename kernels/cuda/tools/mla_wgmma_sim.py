#!/usr/bin/env python3
# Host check of the wgmma MLA decode's index math (src/mla_decode_hopper.cu), no GPU needed. Reuses
# hopper_sim.py's model of the hardware (128-byte-swizzled TMA boxes, the shared-memory matrix
# descriptors, wgmma's register layouts, quad reductions) and runs whole blocks with the kernel's own
# formulas:
#  - Q [64 heads x 576] as 9 TMA boxes of 64 dims x 64 heads (heads past num_heads read as zeros);
#    a latent tile [64 tokens x 576] per stage (tokens past kv_len read as zeros);
#  - S = Q K^T as 36 wgmma.m64n64k16 steps (ss, K-major: start + 32 bytes per k16 step inside a box,
#    the next box 64 rows = 8 KiB further) over the 576 latent dims;
#  - the mask (tokens at or past the split's end), the online softmax in log2 units on the
#    accumulators with quad reductions, P packed to bf16 fragments;
#  - the P hand-over: warpgroup 0 thread i stores 4 uint4 at sP[kk * 128 + i] and its row factors at
#    sRow[i]; warpgroup 1 thread i loads the same slots as its A fragments;
#  - O[:, 256 wg .. 256 wg + 255] += P V with V = the tile's first 512 columns read N-major (rs form,
#    N = 256: LBO 8 KiB between 64-column boxes, SBO 1024 between 8-token groups, warpgroup 1 starting
#    4 boxes in), or as four N = 64 products (the pv64 diagnostic);
#  - partials (O / sum, lse in log2 units) per split and the combine's log-sum-exp merge;
# against a direct float64 MLA attention (scores over 576 dims, values = the first 512). It also
# replays the kernel's synchronisation (mbarrier ring with warpgroup 1's refills, named barriers 1 and
# 2 for P and the row sums) as two interleaved programs: no deadlock, every phase completes, no
# stage refilled before all 256 threads released it, no P slot overwritten before it was read.
# Mutations (LBO/SBO swapped, warpgroup 1's V offset missing, a k step of 16 bytes, P read from the
# wrong slot, the mask off by one, warpgroup 1 not arriving on barrier 2) make it fail.
# What it cannot settle is the hardware model itself: that is the device run's job (NOTES.md).
#   Run: python3 kernels/cuda/tools/mla_wgmma_sim.py
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hopper_sim as hs  # noqa: E402

LATENT, RANK = 576, 512
HEADS, TILE = 64, 64          # hopper_detail::kHeads, kTile
BOXES = LATENT // 64          # 9
VCOLS = RANK // 2             # 256 columns per warpgroup
Q_BYTES = HEADS * LATENT * 2  # 73728
TILE_BYTES = TILE * LATENT * 2
P_BYTES = 128 * (TILE // 16) * 16
ROW_BYTES = 128 * 8
SMEM_BYTES = Q_BYTES + 2 * TILE_BYTES + P_BYTES + ROW_BYTES + 1024

MUT = os.environ.get("MLA_SIM_MUTATION", "")  # for checking that the checks bite (see the header)


def smem_budget():
    assert SMEM_BYTES + 64 <= 227 * 1024, "over the 227 KiB a block may opt into"
    for off in (Q_BYTES, TILE_BYTES):
        assert off % 1024 == 0, "every TMA box must start on a 1024-byte boundary"


def bf16(x):  # round to nearest even bf16, as pack_bf16x2 / the inputs
    if x == 0 or math.isinf(x):
        return x
    m, e = math.frexp(x)
    q = round(m * 256) / 256  # 8 significant bits (round half to even by Python's round)
    return math.ldexp(q, e)


def run_block(Q, KV, num_heads, h0, len_, start, tokens_per_split, scale_log2, pv64=False):
    """One block (head group h0 // 64, one split). Returns (o[row][col] normalised, lse[row]) for its
    valid rows, or None for an empty split. Q[h][576], KV[token][576]."""
    end = min(len_, start + tokens_per_split)
    if start >= end:
        return None
    heads = min(HEADS, num_heads - h0)
    num_tiles = (end - start + TILE - 1) // TILE
    sQ = 0
    sKV0 = sQ + Q_BYTES
    sm = hs.Smem(sKV0 + 2 * TILE_BYTES)
    sP, sRow = {}, {}  # the kernel's uint4 / float2 slots, by index
    # Q: coordinates (c * 64, 0, h0, b); rows past num_heads are outside the map: zeros.
    for c in range(BOXES):
        hs.tma_box(sm, sQ + c * HEADS * 128, lambda r, col: Q[h0 + r][col], HEADS, num_heads - h0, c * 64)

    def load_tile(n):  # coordinates (c * 64, 0, start + n * 64, b); tokens past kv_len: zeros
        s = n & 1
        t0 = start + n * TILE
        for c in range(BOXES):
            hs.tma_box(sm, sKV0 + s * TILE_BYTES + c * TILE * 128, lambda r, col: KV[t0 + r][col], TILE,
                       len(KV) - t0, c * 64)

    k_step = 16 if MUT == "kstep16" else 32
    q_desc = hs.smem_desc(sQ, 16, 1024)
    k_desc = hs.smem_desc(sKV0, 16, 1024)

    def v_desc(wg):
        off = 0 if MUT == "no_wg_offset" else wg * (VCOLS // 64) * TILE * 128
        lbo, sbo = (1024, TILE * 128) if MUT == "lbo_sbo" else (TILE * 128, 1024)
        return hs.smem_desc(sKV0 + off, lbo, sbo)

    def pv(o, pf, wg, s):  # pv_product
        for kk in range(TILE // 16):
            d = hs.desc_plus(v_desc(wg), s * TILE_BYTES + kk * 16 * 128)
            a = [pf[T][kk] for T in range(128)]
            if not pv64:
                hs.wgmma_rs_tb(sm, o, a, d, VCOLS)
            else:  # pv_block64<OFF>: d + (OFF / 32) boxes of 64 tokens x 128 bytes
                for c in range(VCOLS // 64):
                    sub = [o[T][32 * c:32 * c + 32] for T in range(128)]
                    hs.wgmma_rs_tb(sm, sub, a, hs.desc_plus(d, c * TILE * 128), 64)
                    for T in range(128):
                        o[T][32 * c:32 * c + 32] = sub[T]

    o = [[[0.0] * (VCOLS // 2) for _ in range(128)] for _ in range(2)]
    row_max = [[-math.inf, -math.inf] for _ in range(128)]
    row_sum = [[0.0, 0.0] for _ in range(128)]
    for n in range(num_tiles):
        s = n & 1
        load_tile(n)
        # warpgroup 0: S
        sacc = [[0.0] * (TILE // 2) for _ in range(128)]
        for kk in range(LATENT // 16):
            qa = (kk // 4) * HEADS * 128 + (kk % 4) * k_step
            kb = s * TILE_BYTES + (kk // 4) * TILE * 128 + (kk % 4) * k_step
            hs.wgmma_ss(sm, sacc, hs.desc_plus(q_desc, qa), hs.desc_plus(k_desc, kb), TILE, 1 if kk > 0 else 0)
        valid = end - (start + n * TILE) + (1 if MUT == "mask" else 0)
        for T in range(128):
            t = (T % 32) % 4
            for i in range(TILE // 8):
                for j in range(4):
                    col = 8 * i + 2 * t + (j & 1)
                    sacc[T][4 * i + j] = sacc[T][4 * i + j] * scale_log2 if col < valid else -math.inf
        alpha = [[0.0, 0.0] for _ in range(128)]
        for r in range(2):
            tmax = [max(max(sacc[T][4 * i + 2 * r], sacc[T][4 * i + 2 * r + 1]) for i in range(TILE // 8))
                    for T in range(128)]
            tmax = hs.quad_reduce(tmax, max)
            for T in range(128):
                new_max = max(row_max[T][r], tmax[T])
                ref = 0.0 if new_max == -math.inf else new_max
                alpha[T][r] = 2.0 ** (row_max[T][r] - ref) if row_max[T][r] != -math.inf else 0.0
                row_max[T][r] = new_max
                row_sum[T][r] *= alpha[T][r]
                for i in range(TILE // 8):
                    for e in range(2):
                        x = sacc[T][4 * i + 2 * r + e]
                        p = 0.0 if x == -math.inf else 2.0 ** (x - ref)
                        sacc[T][4 * i + 2 * r + e] = p
                        row_sum[T][r] += p
        pf0 = hs.pack_p(sacc, TILE)  # pf[T][kk][q] = (lo, hi)
        for T in range(128):  # sP[kk * 128 + ltid] = uint4(pf[kk][0..3]); sRow[ltid] = alpha
            for kk in range(TILE // 16):
                sP[kk * 128 + T] = tuple((bf16(lo), bf16(hi)) for lo, hi in pf0[T][kk])
            sRow[T] = (alpha[T][0], alpha[T][1])
        # both warpgroups: rescale, P V on their columns (warpgroup 1 from the shared slots)
        for wg in range(2):
            src = (lambda T: T ^ 1) if (MUT == "p_slot" and wg == 1) else (lambda T: T)
            pf = [[list(sP[kk * 128 + src(T)]) for kk in range(TILE // 16)] for T in range(128)]
            for T in range(128):
                a0, a1 = sRow[src(T)]
                for i in range(VCOLS // 8):
                    o[wg][T][4 * i] *= a0
                    o[wg][T][4 * i + 1] *= a0
                    o[wg][T][4 * i + 2] *= a1
                    o[wg][T][4 * i + 3] *= a1
            pv(o[wg], pf, wg, s)
    sums = [hs.quad_reduce([row_sum[T][r] for T in range(128)], lambda x, y: x + y) for r in range(2)]
    out, lse = {}, {}
    for wg in range(2):
        for T in range(128):
            w, l = T // 32, T % 32
            g, t = l // 4, l % 4
            for r in range(2):
                row = w * 16 + g + 8 * r
                if row >= heads:
                    continue
                sm_ = sums[r][T]
                inv = 1.0 / sm_ if sm_ > 0 else 0.0
                for i in range(VCOLS // 8):
                    for e in range(2):
                        col = wg * VCOLS + 8 * i + 2 * t + e
                        key = (row, col)
                        assert key not in out, "element written twice"
                        out[key] = o[wg][T][4 * i + 2 * r + e] * inv
                if wg == 0 and t == 0:
                    lse[row] = row_max[T][r] + math.log2(sm_) if sm_ > 0 else -math.inf
    return out, lse


def direct(Q, KV, heads, len_, scale):
    res = []
    for h in range(heads):
        sc = [scale * sum(a * b for a, b in zip(Q[h], KV[j])) for j in range(len_)]
        if not sc:
            res.append([0.0] * RANK)
            continue
        m = max(sc)
        p = [math.exp(x - m) for x in sc]
        z = sum(p)
        res.append([sum(p[j] * KV[j][c] for j in range(len_)) / z for c in range(RANK)])
    return res


def check_mla(num_heads, kv_len, len_, num_splits, seed, pv64=False):
    rnd = random.Random(seed)
    Q = [[bf16(rnd.uniform(-1, 1)) for _ in range(LATENT)] for _ in range(num_heads)]
    KV = [[bf16(rnd.uniform(-1, 1)) for _ in range(LATENT)] for _ in range(kv_len)]
    scale = 1 / math.sqrt(192)
    scale_log2 = scale * math.log2(math.e)
    per = -(-kv_len // num_splits)
    per = -(-per // TILE) * TILE  # a split is whole tiles
    ref = direct(Q, KV, num_heads, len_, scale)
    worst = 0.0
    for h0 in range(0, num_heads, HEADS):
        parts = [run_block(Q, KV, num_heads, h0, len_, sp * per, per, scale_log2, pv64) for sp in range(num_splits)]
        heads = min(HEADS, num_heads - h0)
        for row in range(heads):
            # the combine: weights 2^(lse_s - max lse) over the non-empty splits (combine.cu)
            live = [p for p in parts if p is not None and p[1][row] != -math.inf]
            for c in range(RANK):
                if not live:
                    got = 0.0
                else:
                    m = max(p[1][row] for p in live)
                    w = [2.0 ** (p[1][row] - m) for p in live]
                    got = sum(wi * p[0][(row, c)] for wi, p in zip(w, live)) / sum(w)
                worst = max(worst, abs(got - ref[h0 + row][c]))
    # P is rounded to bf16 as in the kernel: the error is bf16's, not the index math's (an index
    # error gives O(0.1)).
    assert worst < 4e-3, "heads %d kv_len %d len %d splits %d: max error %g" % (num_heads, kv_len, len_, num_splits, worst)
    print("mla ok: heads %d kv_len %d len %d splits %d%s: max error %.2e" % (
        num_heads, kv_len, len_, num_splits, " (pv64)" if pv64 else "", worst))


# ---- the synchronisation, replayed as two interleaved programs -----------------------------------
def replay(num_tiles):
    """Warpgroup 0 and 1 of the kernel as generators of barrier operations (one representative thread
    each: all threads of a warpgroup run the same program; arrivals count 128). Runs them round-robin
    until both finish; asserts no deadlock and the hazards named in the header."""
    full = [0, 0]        # completed phases of full[s]
    empty_arr = [0, 0]   # arrivals on empty[s] in its current phase
    empty = [0, 0]       # completed phases of empty[s]
    loaded = {0: 0}      # stage -> tile it holds (after its TMA completes)
    stage_readers = {}   # (stage, tile) -> set of warpgroups done with it
    named = {1: [0, 0], 2: [0, 0]}  # id -> [arrivals in the current phase, completed phases]
    slot = {"P": None, "P_read": True, "rows": None}
    log = []

    def tma(n):
        s = n & 1
        if n >= 2:
            assert stage_readers.get((s, n - 2)) == {0, 1}, "stage %d refilled before tile %d was released" % (s, n - 2)
        loaded[s] = n
        full[s] += 1  # the transaction bytes arrive (eventually; here at once)

    # tile 0 and 1 by thread 0 before the loop
    tma(0)
    if num_tiles > 1:
        tma(1)

    def named_arrive(i):
        named[i][0] += 128
        if named[i][0] == 256:
            named[i][0] = 0
            named[i][1] += 1

    def wg0():
        for n in range(num_tiles):
            s = n & 1
            yield ("wait", lambda s=s, n=n: full[s] > n >> 1)
            assert loaded[s] == n
            if n > 0:
                ph = named[2][1]
                named_arrive(2)  # bar.sync: arrive, then wait for the phase
                yield ("wait", lambda ph=ph: named[2][1] > ph)
            assert slot["P_read"], "P(%d) written over an unread P" % n
            slot["P"], slot["P_read"] = n, False
            named_arrive(1)
            stage_readers.setdefault((s, n), set()).add(0)
            empty_arr[s] += 128
            if empty_arr[s] == 256:
                empty_arr[s] = 0
                empty[s] += 1
        ph = named[2][1]
        named_arrive(2)
        yield ("wait", lambda ph=ph: named[2][1] > ph)
        assert slot["P_read"]
        slot["rows"] = "sums"
        named_arrive(1)

    def wg1():
        for n in range(num_tiles):
            s = n & 1
            ph = named[1][1]
            named_arrive(1)
            yield ("wait", lambda ph=ph: named[1][1] > ph)
            assert slot["P"] == n and not slot["P_read"], "read P(%s) for tile %d" % (slot["P"], n)
            slot["P_read"] = True
            if MUT != "no_bar2":
                named_arrive(2)
            yield ("wait", lambda s=s, n=n: full[s] > n >> 1)
            stage_readers.setdefault((s, n), set()).add(1)
            empty_arr[s] += 128
            if empty_arr[s] == 256:
                empty_arr[s] = 0
                empty[s] += 1
            if n + 2 < num_tiles:
                yield ("wait", lambda s=s, n=n: empty[s] > n >> 1)
                tma(n + 2)
        ph = named[1][1]
        named_arrive(1)
        yield ("wait", lambda ph=ph: named[1][1] > ph)
        assert slot["rows"] == "sums", "row sums read before they were written"

    progs = [wg0(), wg1()]
    pending = [None, None]
    done = [False, False]
    steps = 0
    while not all(done):
        moved = False
        for i in (1, 0) if steps % 2 else (0, 1):  # both interleavings
            if done[i]:
                continue
            if pending[i] is not None and not pending[i][1]():
                continue
            try:
                pending[i] = next(progs[i])
                moved = True
            except StopIteration:
                done[i] = True
                moved = True
        steps += 1
        assert moved, "deadlock at tiles %d (pending: %s)" % (num_tiles, [p is not None for p in pending])
    assert named[1][0] == 0 and named[2][0] == 0, "a named barrier phase left incomplete"
    assert named[1][1] == num_tiles + 1 and named[2][1] == num_tiles, "named barrier phase counts"
    assert empty_arr == [0, 0] and empty[0] + empty[1] == num_tiles, "empty barrier phases"
    log.append(num_tiles)


if __name__ == "__main__":
    smem_budget()
    for T in range(1, 9):
        replay(T)
    print("synchronisation ok: 1-8 tiles (mbarrier ring with warpgroup 1's refills, named barriers 1/2)")
    if MUT in ("no_bar2",):
        sys.exit(0)
    check_mla(64, 130, 130, 1, 1)            # 3 tiles: both stages, a refill, a ragged end
    check_mla(40, 100, 100, 2, 2)            # a partial head group; 2 splits of 64 merged by lse
    check_mla(70, 45, 45, 1, 3)              # two head groups (the second of 6 heads), one short tile
    check_mla(64, 200, 31, 3, 4)             # a shorter sequence (kv_lens): empty splits, masked capacity
    check_mla(64, 64, 64, 1, 5, pv64=True)   # the pv64 diagnostic's offsets
    print("all checks passed")
