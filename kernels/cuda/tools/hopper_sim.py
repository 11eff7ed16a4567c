#!/usr/bin/env python3
# Host check of the Hopper prefill's index math (src/prefill_hopper.cu, src/hopper_ptx.cuh), no GPU
# needed. Simulates, with the kernel's own formulas:
#  - the 128-byte-swizzled tiles TMA writes (box of 64 bf16 x rows; chunk c of 128-byte line r lands
#    at chunk c ^ (r % 8), i.e. address bits 4-6 ^= bits 7-9 inside a 1024-byte-aligned pattern);
#  - the 64-bit shared-memory matrix descriptors (start, LBO, SBO, swizzle mode; PTX ISA 9.7.15.5.1.2.2)
#    and the operand each one names, for K-major (Q, K) and MN-major (V, imm-trans-b = 1) operands;
#  - wgmma.m64nNk16's register layouts: accumulator d[4i + j] of thread (warp w, lane l) is
#    (16w + l/4 + 8 (j >> 1), 8i + 2 (l % 4) + (j & 1)); A fragment a[q] holds
#    (16w + l/4 + 8 (q & 1), 2 (l % 4) + 8 (q >> 1) + e) for e = 0, 1 (PTX ISA figures 148/149);
#  - the causal / ragged-end mask on the accumulators, the online softmax with its quad (4-thread)
#    reductions (shfl.xor 1, 2), P packed from the S accumulators as the A operand of P V;
#  - the mbarrier parities of the two-stage K/V ring;
# and compares the output of a whole block schedule with a direct float64 attention. What it cannot
# settle is the hardware model itself (how wgmma reads a swizzled descriptor, what TMA writes): that
# is the device run's job (NOTES.md, session 22). Plain Python, no numpy.
#   Run: python3 kernels/cuda/tools/hopper_sim.py
import math
import operator
import random

# ---- descriptors ------------------------------------------------------------------------------
def smem_desc(addr, lbo, sbo):  # hopper::smem_desc
    return ((addr & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16) | (((sbo & 0x3FFFF) >> 4) << 32) | (1 << 62)

def desc_plus(d, nbytes):  # the kernel's desc_plus: add to the start-address field
    return d + (nbytes >> 4)

def decode(d):
    start = (d & 0x3FFF) << 4
    lbo = ((d >> 16) & 0x3FFF) << 4
    sbo = ((d >> 32) & 0x3FFF) << 4
    base_off = (d >> 49) & 7
    mode = (d >> 62) & 3
    assert mode == 1, "128-byte swizzle expected"
    assert base_off == 0
    return start, lbo, sbo

def swizzle128(a):  # the 128B pattern: bits 4-6 ^= bits 7-9
    return a ^ (((a >> 7) & 7) << 4)

class Smem:
    def __init__(self, size):
        self.size = size
        self.mem = {}
    def write(self, addr, x):
        assert 0 <= addr < self.size and addr % 2 == 0
        self.mem[addr] = x
    def read(self, addr):
        assert addr in self.mem, "read of a shared-memory byte no TMA wrote: %d" % addr
        return self.mem[addr]

def tma_box(sm, dst, get, rows, valid_rows, col0):
    # One TMA box: 64 bf16 columns (col0..col0+63) x `rows` rows, 128-byte swizzle; rows past
    # valid_rows (outside the tensor) are written as zeros.
    assert dst % 1024 == 0, "a 128B-swizzled box must start on a 1024-byte boundary"
    for r in range(rows):
        for c in range(64):
            x = get(r, col0 + c) if r < valid_rows else 0.0
            sm.write(dst + swizzle128(r * 128 + c * 2), x)

def fetch_kmajor(sm, desc, rows):  # operand[row][k], k < 16: rows of K-major data (A: M rows, B: N rows)
    start, _lbo, sbo = decode(desc)
    out = []
    for i in range(rows):
        lin = start + (i // 8) * sbo + (i % 8) * 128
        out.append([sm.read(swizzle128(lin + k * 2)) for k in range(16)])
    # the start may sit inside a 128-byte line (k steps of 32 bytes); the 16 k values stay in it
    assert (start % 128) + 32 <= 128
    return out

def fetch_mnmajor(sm, desc, n):  # B[k][nn], k < 16, nn < n: N contiguous in 64-element blocks
    start, lbo, sbo = decode(desc)
    assert start % 1024 == 0
    return [[sm.read(swizzle128(start + (nn // 64) * lbo + (k // 8) * sbo + (k % 8) * 128 + (nn % 64) * 2))
             for nn in range(n)] for k in range(16)]

# ---- register layouts -------------------------------------------------------------------------
def acc_coord(T, j):  # thread T (0..127) of the warpgroup, accumulator register j -> (row, col)
    w, l = T // 32, T % 32
    g, t = l // 4, l % 4
    return 16 * w + g + 8 * ((j >> 1) & 1), 8 * (j >> 2) + 2 * t + (j & 1)

def a_coord(T, q, e):  # A fragment register q (0..3), half e -> (row, k)
    w, l = T // 32, T % 32
    g, t = l // 4, l % 4
    return 16 * w + g + 8 * (q & 1), 2 * t + e + 8 * (q >> 1)

def check_layouts():
    for N in (64, 128, 256):
        seen = set()
        for T in range(128):
            for j in range(N // 2):
                seen.add(acc_coord(T, j))
        assert seen == {(r, c) for r in range(64) for c in range(N)}, "accumulator layout N=%d" % N
    seen = set()
    for T in range(128):
        for q in range(4):
            for e in range(2):
                seen.add(a_coord(T, q, e))
    assert seen == {(r, k) for r in range(64) for k in range(16)}, "A fragment layout"
    # P from S without shuffles: k16 step kk of P V takes n8 blocks 2kk, 2kk+1 of S; the kernel packs
    # pf[kk][q] = (sacc[8kk + 2q], sacc[8kk + 2q + 1]). Same thread, same (row, key) on both sides.
    for BN in (64, 128):
        for T in range(128):
            for kk in range(BN // 16):
                for q in range(4):
                    for e in range(2):
                        r_s, c_s = acc_coord(T, 8 * kk + 2 * q + e)
                        r_a, k_a = a_coord(T, q, e)
                        assert (r_s, c_s) == (r_a, 16 * kk + k_a), "P fragment != A fragment"

def mm_into(acc, A, B, N, scale_d):  # acc[T][j] (+)= (A (64 x 16) . B (16 x N)) at the fragment layout
    Bt = [[B[k][n] for k in range(16)] for n in range(N)]
    for T in range(128):
        for j in range(N // 2):
            r, c = acc_coord(T, j)
            v = sum(map(operator.mul, A[r], Bt[c]))
            acc[T][j] = (acc[T][j] if scale_d else 0.0) + v

def wgmma_ss(sm, acc, desc_a, desc_b, N, scale_d):
    A = fetch_kmajor(sm, desc_a, 64)
    Bn = fetch_kmajor(sm, desc_b, N)  # K-major B: N rows of 16 k
    B = [[Bn[n][k] for n in range(N)] for k in range(16)]
    mm_into(acc, A, B, N, scale_d)

def wgmma_rs_tb(sm, acc, afrag, desc_b, N):
    A = [[None] * 16 for _ in range(64)]
    for T in range(128):
        for q in range(4):
            for e in range(2):
                r, k = a_coord(T, q, e)
                A[r][k] = afrag[T][q][e]
    B = fetch_mnmajor(sm, desc_b, N)
    mm_into(acc, A, B, N, 1)

def quad_reduce(vals, op):  # vals[T]: shfl.xor 1 then 2 inside each quad (lanes 4g..4g+3)
    v = list(vals)
    for m in (1, 2):
        v = [op(v[T], v[T ^ m]) for T in range(len(v))]
    return v

# ---- the block schedule of prefill_hopper.cu ---------------------------------------------------
CONFIGS = {64: (128, 2), 128: (128, 2), 256: (64, 2)}  # D -> (BN, WG)

def smem_layout(D):
    BN, WG = CONFIGS[D]
    BM = 64 * WG
    q_bytes, tile_bytes = BM * D * 2, BN * D * 2
    total = q_bytes + 4 * tile_bytes + 1024
    assert total + 64 <= 232448, "over the 227 KiB a block may opt into"
    for off in (q_bytes, tile_bytes):
        assert off % 1024 == 0
    return BN, WG, BM, q_bytes, tile_bytes

def mask_tile(sacc, BN, n, kv_len, causal, offset, m0, wg):  # mask_tile, only where needs_mask says so
    key0 = n * BN
    if not (key0 + BN > kv_len or (causal and key0 + BN - 1 > offset + m0 + wg * 64)):
        return
    for T in range(128):
        w, l = T // 32, T % 32
        g, t = l // 4, l % 4
        pos0 = offset + m0 + wg * 64 + w * 16 + g
        for r in range(2):
            pos = pos0 + 8 * r
            last = (min(pos, kv_len - 1) if causal else kv_len - 1) - key0 - 2 * t
            for i in range(BN // 8):
                if i * 8 > last: sacc[T][4 * i + 2 * r] = -math.inf
                if i * 8 + 1 > last: sacc[T][4 * i + 2 * r + 1] = -math.inf

def softmax_tile(sacc, BN, row_max, row_sum, scale_log2):  # returns alpha[T][r]
    alpha = [[0.0, 0.0] for _ in range(128)]
    for r in range(2):
        tmax = [max(max(sacc[T][4 * i + 2 * r], sacc[T][4 * i + 2 * r + 1]) for i in range(BN // 8)) for T in range(128)]
        tmax = quad_reduce(tmax, max)
        for T in range(128):
            new_max = max(row_max[T][r], tmax[T])
            ref = 0.0 if new_max == -math.inf else new_max * scale_log2
            alpha[T][r] = 2.0 ** (row_max[T][r] * scale_log2 - ref) if row_max[T][r] != -math.inf else 0.0
            row_max[T][r] = new_max
            row_sum[T][r] *= alpha[T][r]
            for i in range(BN // 8):
                for e in range(2):
                    x = sacc[T][4 * i + 2 * r + e]
                    p = 0.0 if x == -math.inf else 2.0 ** (x * scale_log2 - ref)
                    sacc[T][4 * i + 2 * r + e] = p
                    row_sum[T][r] += p
    return alpha

def rescale_o(o, D, alpha):
    for T in range(128):
        for i in range(D // 8):
            o[T][4 * i] *= alpha[T][0]; o[T][4 * i + 1] *= alpha[T][0]
            o[T][4 * i + 2] *= alpha[T][1]; o[T][4 * i + 3] *= alpha[T][1]

def pack_p(sacc, BN):  # pf[T][kk][q] = (sacc[8kk + 2q], sacc[8kk + 2q + 1])
    return [[[(sacc[T][8 * kk + 2 * q], sacc[T][8 * kk + 2 * q + 1]) for q in range(4)] for kk in range(BN // 16)]
            for T in range(128)]

def run_block(Q, K, V, q_len, kv_len, D, causal, m_block, out, scale, specialised=False, pv64=False):
    BN, WG, BM, q_bytes, tile_bytes = smem_layout(D)
    sQ = 0
    sK0 = sQ + q_bytes
    sV0 = sK0 + 2 * tile_bytes
    chunks = D // 64
    m0 = m_block * BM
    q_rows = min(BM, q_len - m0)
    offset = kv_len - q_len
    n_end = min(kv_len, offset + m0 + q_rows) if causal else kv_len
    num_tiles = (n_end + BN - 1) // BN
    scale_log2 = scale * math.log2(math.e)
    sm = Smem(sV0 + 2 * tile_bytes)
    for c in range(chunks):
        tma_box(sm, sQ + c * BM * 128, lambda r, col: Q[m0 + r][col], BM, q_len - m0, c * 64)

    def load_k(n):
        s = n & 1
        for c in range(chunks):
            tma_box(sm, sK0 + s * tile_bytes + c * BN * 128, lambda r, col: K[n * BN + r][col], BN, kv_len - n * BN, c * 64)

    def load_v(n):
        s = n & 1
        for c in range(chunks):
            tma_box(sm, sV0 + s * tile_bytes + c * BN * 128, lambda r, col: V[n * BN + r][col], BN, kv_len - n * BN, c * 64)

    for wg in range(WG):  # warpgroups are independent: each owns 64 rows
        q_desc = smem_desc(sQ + wg * 64 * 128, 16, 1024)
        k_desc = smem_desc(sK0, 16, 1024)
        v_desc = smem_desc(sV0, BN * 128, 1024)
        o = [[0.0] * (D // 2) for _ in range(128)]
        row_max = [[-math.inf, -math.inf] for _ in range(128)]
        row_sum = [[0.0, 0.0] for _ in range(128)]

        def issue_s(n):  # S(n) = Q K(n)^T from stage n & 1 (the stage holds K(n) once kfull says so)
            load_k(n)
            s = n & 1
            sacc = [[0.0] * (BN // 2) for _ in range(128)]
            for kk in range(D // 16):
                qa = (kk // 4) * BM * 128 + (kk % 4) * 32
                kb = s * tile_bytes + (kk // 4) * BN * 128 + (kk % 4) * 32
                wgmma_ss(sm, sacc, desc_plus(q_desc, qa), desc_plus(k_desc, kb), BN, 1 if kk > 0 else 0)
            return sacc

        def issue_pv(pf, n):  # O += P V(n) from stage n & 1 (pv_product)
            load_v(n)
            for kk in range(BN // 16):
                d = desc_plus(v_desc, (n & 1) * tile_bytes + kk * 16 * 128)
                a = [pf[T][kk] for T in range(128)]
                if not pv64:
                    wgmma_rs_tb(sm, o, a, d, D)
                else:  # MHACFG_HOPPER_DIAG=pv64: one N = 64 product per 64-column block (pv_block64)
                    for c in range(D // 64):
                        sub = [o[T][32 * c:32 * c + 32] for T in range(128)]
                        wgmma_rs_tb(sm, sub, a, desc_plus(d, c * BN * 128), 64)
                        for T in range(128):
                            o[T][32 * c:32 * c + 32] = sub[T]

        if not specialised:  # hopper_prefill_kernel: S, softmax, rescale, P V per tile
            for n in range(num_tiles):
                sacc = issue_s(n)
                mask_tile(sacc, BN, n, kv_len, causal, offset, m0, wg)
                alpha = softmax_tile(sacc, BN, row_max, row_sum, scale_log2)
                rescale_o(o, D, alpha)
                issue_pv(pack_p(sacc, BN), n)
        else:  # hopper_ws_prefill_kernel: P(n-1) V(n-1) runs while the softmax of S(n) does; O rescaled after
            sacc = issue_s(0)
            mask_tile(sacc, BN, 0, kv_len, causal, offset, m0, wg)
            softmax_tile(sacc, BN, row_max, row_sum, scale_log2)
            pf = pack_p(sacc, BN)
            for n in range(1, num_tiles):
                sacc = issue_s(n)
                issue_pv(pf, n - 1)  # asynchronous in the kernel: its result is only read after wait_group 0
                mask_tile(sacc, BN, n, kv_len, causal, offset, m0, wg)
                alpha = softmax_tile(sacc, BN, row_max, row_sum, scale_log2)
                rescale_o(o, D, alpha)  # after the wait: O = (O + P(n-1) V(n-1)) * alpha(n)
                pf = pack_p(sacc, BN)
            issue_pv(pf, num_tiles - 1)
        for r in range(2):
            sums = quad_reduce([row_sum[T][r] for T in range(128)], operator.add)
            for T in range(128):
                w, l = T // 32, T % 32
                g, t = l // 4, l % 4
                row = m0 + wg * 64 + w * 16 + g + 8 * r
                if row >= q_len: continue
                inv = 1.0 / sums[T] if sums[T] > 0 else 0.0
                for i in range(D // 8):
                    for e in range(2):
                        col = i * 8 + 2 * t + e
                        assert out[row][col] is None, "element written twice"
                        out[row][col] = o[T][4 * i + 2 * r + e] * inv
    return num_tiles

def direct(Q, K, V, q_len, kv_len, D, causal, scale):
    out = []
    offset = kv_len - q_len
    for i in range(q_len):
        keys = range(min(kv_len, offset + i + 1)) if causal else range(kv_len)
        sc = [scale * sum(map(operator.mul, Q[i], K[j])) for j in keys]
        m = max(sc)
        p = [math.exp(x - m) for x in sc]
        z = sum(p)
        out.append([sum(p[jj] * V[j][c] for jj, j in enumerate(keys)) / z for c in range(D)])
    return out

def check_attention(D, q_len, kv_len, causal, seed, specialised=False, pv64=False):
    rnd = random.Random(seed)
    Q = [[rnd.uniform(-1.5, 1.5) for _ in range(D)] for _ in range(q_len)]
    K = [[rnd.uniform(-1, 1) for _ in range(D)] for _ in range(kv_len)]
    V = [[rnd.uniform(-1, 1) for _ in range(D)] for _ in range(kv_len)]
    scale = 1 / math.sqrt(D)
    BN, WG, BM, _, _ = smem_layout(D)
    out = [[None] * D for _ in range(q_len)]
    tiles = []
    for m_block in range((q_len + BM - 1) // BM):
        tiles.append(run_block(Q, K, V, q_len, kv_len, D, causal, m_block, out, scale, specialised, pv64))
    ref = direct(Q, K, V, q_len, kv_len, D, causal, scale)
    worst = 0.0
    for i in range(q_len):
        for c in range(D):
            assert out[i][c] is not None, "element (%d, %d) never written" % (i, c)
            worst = max(worst, abs(out[i][c] - ref[i][c]))
    assert worst < 1e-9, "D %d q %d kv %d causal %s: max error %g" % (D, q_len, kv_len, causal, worst)
    print("attention ok: %s%s d%d q_len %d kv_len %d %s, tiles per block %s" % (
        "hopper_ws" if specialised else "hopper", " (pv64)" if pv64 else "", D, q_len, kv_len,
        "causal" if causal else "non-causal", tiles))

def check_parities():
    # The kernel: tile n sits in stage n & 1 and its full barriers complete their (n >> 1)-th phase;
    # thread 0 refills stage (n + 1) & 1 at the top of tile n after waiting for that stage's empty
    # barrier's ((n - 1) >> 1)-th phase (the completion by tile n - 1). Replay the ring: each wait
    # must name the parity of the phase that the awaited event completes, and no load may overwrite
    # a stage some thread has not finished.
    for num_tiles in range(1, 12):
        full_phases = [0, 0]
        empty_phases = [0, 0]
        contents = [None, None]
        contents[0] = 0
        full_phases[0] += 1  # load_kv(0) in the prologue completes phase 0 of stage 0
        for n in range(num_tiles):
            s = n & 1
            if n + 1 < num_tiles:
                s1 = (n + 1) & 1
                if n >= 1:
                    # the wait returns once phase ((n-1)>>1) of empty[s1] completed: tile n-1 released it
                    assert empty_phases[s1] - 1 == (n - 1) >> 1
                    assert contents[s1] == n - 1
                else:
                    assert contents[s1] is None
                contents[s1] = n + 1
                assert full_phases[s1] == (n + 1) >> 1
                full_phases[s1] += 1
            # wait(full[s], (n >> 1) & 1): the latest completed phase of full[s] is n >> 1
            assert full_phases[s] - 1 == n >> 1 and contents[s] == n
            empty_phases[s] += 1  # every thread arrives after its P V of tile n
    print("mbarrier parities ok (1-11 tiles)")

def check_parities_ws():
    # hopper_ws: the producer loads K(n) then V(n) into stage n & 1, first waiting (n >= 2) for the
    # stage's K-empty / V-empty phase ((n - 2) >> 1) (the release by tile n - 2). Consumers wait
    # K-full(n & 1) with parity (n >> 1) & 1 and release K(n) after S(n); they wait V-full((n-1) & 1)
    # with parity ((n - 1) >> 1) & 1 for P(n-1) V(n-1) and release V(n-1) after it. Replay with the
    # consumer one event behind at every step in every interleaving the barriers allow.
    for num_tiles in range(1, 12):
        kfull, vfull, kempty, vempty = [0, 0], [0, 0], [0, 0], [0, 0]  # completed phases per stage
        kstage, vstage = [None, None], [None, None]
        produced = 0
        consumed_s = 0  # S products done
        consumed_v = 0  # P V products done
        steps = 0
        while consumed_v < num_tiles:
            steps += 1
            assert steps < 1000, "deadlock"
            progressed = False
            # producer: next load if its empty waits are satisfied
            if produced < num_tiles:
                n, st = produced, produced & 1
                ok = n < 2 or (kempty[st] - 1 >= (n - 2) >> 1 and vempty[st] - 1 >= (n - 2) >> 1)
                if ok:
                    if n >= 2:
                        assert kstage[st] == n - 2 and vstage[st] == n - 2
                        # the parity the kernel waits for is that of the phase the release completed
                        assert ((kempty[st] - 1) & 1) == (((n - 2) >> 1) & 1)
                    kstage[st] = n; vstage[st] = n
                    kfull[st] += 1; vfull[st] += 1
                    assert kfull[st] - 1 == n >> 1
                    produced += 1
                    progressed = True
            # consumer: S(consumed_s) then P V(consumed_s - 1) in the kernel's order
            if consumed_s < num_tiles:
                n, st = consumed_s, consumed_s & 1
                if kfull[st] - 1 >= n >> 1 and ((kfull[st] - 1) & 1) == ((n >> 1) & 1) and kstage[st] == n:
                    if n >= 1:
                        sp = (n - 1) & 1
                        if not (vfull[sp] - 1 >= (n - 1) >> 1 and vstage[sp] == n - 1):
                            continue
                        consumed_s += 1
                        kempty[st] += 1
                        consumed_v += 1
                        vempty[sp] += 1
                    else:
                        consumed_s += 1
                        kempty[st] += 1
                    progressed = True
            elif consumed_v < num_tiles:
                n, st = num_tiles - 1, (num_tiles - 1) & 1
                if vfull[st] - 1 >= n >> 1 and vstage[st] == n:
                    consumed_v += 1
                    vempty[st] += 1
                    progressed = True
            assert progressed or produced < num_tiles, "deadlock"
    print("mbarrier parities ok, specialised ring (1-11 tiles)")

def check_pingpong():
    # hopper_pingpong's named barriers (256 threads = both consumer warpgroups, counted here as two
    # arrivals): warpgroup 1 first arrives on barrier 1; per GEMM turn (tile 0's S, each later tile's
    # S + P V, the last P V) warpgroup w syncs on 1 + w and then arrives on the other's; warpgroup 0
    # ends with one more sync on barrier 1. Every phase must complete, nobody may be left waiting,
    # and the turns must alternate 0, 1, 0, 1, ...
    for T in range(1, 12):
        ops = {0: [], 1: [("arrive", 1)]}
        for _ in range(T + 1):
            ops[0] += [("sync", 1), ("turn", 0), ("arrive", 2)]
            ops[1] += [("sync", 2), ("turn", 1), ("arrive", 1)]
        ops[0].append(("sync", 1))
        count = {1: 0, 2: 0}
        phase = {1: 0, 2: 0}
        waiting = {}  # wg -> (barrier, phase it waits to complete)
        pc = {0: 0, 1: 0}
        turns = []
        for _ in range(10000):
            progressed = False
            for w in (0, 1):
                if w in waiting:
                    b, ph = waiting[w]
                    if phase[b] > ph:
                        del waiting[w]
                        progressed = True
                    continue
                if pc[w] == len(ops[w]):
                    continue
                op, b = ops[w][pc[w]]
                pc[w] += 1
                progressed = True
                if op == "turn":
                    turns.append(b)
                    continue
                count[b] += 1
                joined = phase[b]
                if count[b] == 2:
                    count[b] = 0
                    phase[b] += 1
                if op == "sync" and phase[b] == joined:
                    waiting[w] = (b, joined)
            if not progressed:
                break
        assert pc[0] == len(ops[0]) and pc[1] == len(ops[1]) and not waiting, "ping-pong deadlock at %d tiles" % T
        assert count == {1: 0, 2: 0}, "a named barrier phase left incomplete"
        assert turns == [0, 1] * (T + 1), "turns do not alternate"
    print("ping-pong named barriers ok (1-11 tiles)")

def check_descriptors():
    for D in (64, 128, 256):
        BN, WG, BM, q_bytes, tile_bytes = smem_layout(D)
        top = 1023 + q_bytes + 4 * tile_bytes + 64  # worst-case aligned base in a 228 KiB window
        for base in (0, 1024, 227 * 1024 - (q_bytes + 4 * tile_bytes) & ~1023):
            d = smem_desc(base, BN * 128, 1024)
            for extra in range(0, q_bytes + 4 * tile_bytes, 16 * 97):
                start, lbo, sbo = decode(desc_plus(d, extra))
                assert start == base + extra and lbo == BN * 128 and sbo == 1024, "descriptor carry"
        assert BN * 128 < (1 << 18), "LBO must fit the 14-bit field"
        assert top < (1 << 18)
    print("descriptors ok")

if __name__ == "__main__":
    check_layouts()
    print("fragment layouts ok (accumulators, A registers, P as A without shuffles)")
    check_descriptors()
    check_parities()
    check_parities_ws()
    check_pingpong()
    # Lengths that are not multiples of the tiles, q_len < kv_len (queries at the end), one and several
    # tiles, both warpgroups with and without rows.
    check_attention(64, 70, 135, True, 1)
    check_attention(64, 70, 135, False, 2)
    check_attention(64, 130, 300, True, 3)
    check_attention(128, 33, 200, True, 4)
    check_attention(128, 100, 100, False, 5)
    check_attention(256, 20, 130, True, 6)
    # The specialised kernel's order (P V of tile n-1 beside the softmax of tile n, O rescaled after).
    check_attention(64, 70, 300, True, 7, specialised=True)
    check_attention(128, 100, 300, False, 8, specialised=True)
    check_attention(256, 20, 200, True, 9, specialised=True)
    # The diagnostic P V of N = 64 blocks (MHACFG_HOPPER_DIAG=pv64).
    check_attention(128, 40, 150, True, 10, pv64=True)
    check_attention(256, 20, 130, False, 11, specialised=True, pv64=True)
    print("hopper_sim: all checks passed")
