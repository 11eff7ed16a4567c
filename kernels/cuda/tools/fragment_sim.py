#!/usr/bin/env python3
# Host check of the CUDA kernels' index math, no GPU needed: simulates the XOR-swizzled shared-memory
# tiles, ldmatrix (x4, .trans), mma.m16n8k16 fragment layouts and the exact address formulas of
# src/decode_attention.cu, src/prefill_attention.cu and src/mla_decode.cu (SwizzleCursor, the MLA
# interleaved k-steps, the decode merge index, the cp.async loaders) against plain matrix products.
# Keep it in step with the kernels when their tiling changes.  Run: python3 kernels/cuda/tools/fragment_sim.py
import random

def swz(RC, row, chunk):
    assert 0 <= chunk < RC
    return row * (RC * 16) + ((chunk ^ (row & 7)) << 4)

class Cursor:  # SwizzleCursor<RC>(row, c0, c)
    def __init__(self, RC, row, c0, c):
        self.RC = RC
        self.base = [row * (RC * 16) + ((c0 + ((2 * j + c) ^ (row & 7))) << 4) for j in range(4)]
    def at(self, kk, row8):
        return self.base[kk & 3] + (kk >> 2) * 128 + row8 * 8 * self.RC * 16

class Smem:
    def __init__(self): self.mem = {}
    def store_tile(self, base, tile, RC):  # tile[r][col], col < RC*8, written as load_tile_async does
        for r, row in enumerate(tile):
            for col, x in enumerate(row):
                addr = base + swz(RC, r, col // 8) + (col % 8) * 2
                assert addr not in self.mem, "overlap"
                self.mem[addr] = x
    def read8(self, addr):
        assert addr % 16 == 0, "ldmatrix row address must be 16-byte aligned"
        return [self.mem[addr + 2 * i] for i in range(8)]

def ldmatrix_x4(sm, addrs, trans=False):
    mats = [[sm.read8(addrs[i * 8 + j]) for j in range(8)] for i in range(4)]
    regs = []
    for l in range(32):
        g, t = l // 4, l % 4
        if not trans: regs.append([(mats[i][g][2 * t], mats[i][g][2 * t + 1]) for i in range(4)])
        else: regs.append([(mats[i][2 * t][g], mats[i][2 * t + 1][g]) for i in range(4)])
    return regs  # regs[lane][i] = (lo, hi)

def mma(C, A, B):
    # C[lane] = [c0..c3]; A[lane] = [a0..a3] pairs; B[lane] = [b0, b1] pairs
    Am = [[None] * 16 for _ in range(16)]; Bm = [[None] * 8 for _ in range(16)]
    for l in range(32):
        g, t = l // 4, l % 4
        for e in range(2):
            Am[g][2 * t + e] = A[l][0][e]; Am[g + 8][2 * t + e] = A[l][1][e]
            Am[g][8 + 2 * t + e] = A[l][2][e]; Am[g + 8][8 + 2 * t + e] = A[l][3][e]
            Bm[2 * t + e][g] = B[l][0][e]; Bm[8 + 2 * t + e][g] = B[l][1][e]
    for l in range(32):
        g, t = l // 4, l % 4
        for e in range(2):
            C[l][e] += sum(Am[g][k] * Bm[k][2 * t + e] for k in range(16))
            C[l][2 + e] += sum(Am[g + 8][k] * Bm[k][2 * t + e] for k in range(16))

def c_to_matrix(Cs, rows=16):  # list of n-tiles of C frags -> matrix [16][8*len]
    M = [[None] * (8 * len(Cs)) for _ in range(16)]
    for nt, C in enumerate(Cs):
        for l in range(32):
            g, t = l // 4, l % 4
            M[g][nt * 8 + 2 * t] = C[l][0]; M[g][nt * 8 + 2 * t + 1] = C[l][1]
            M[g + 8][nt * 8 + 2 * t] = C[l][2]; M[g + 8][nt * 8 + 2 * t + 1] = C[l][3]
    return M

def p_frag(s0, s1):  # pf from two adjacent C n-tiles, as pack_bf16x2 in the kernels
    return [[(s0[l][0], s0[l][1]), (s0[l][2], s0[l][3]), (s1[l][0], s1[l][1]), (s1[l][2], s1[l][3])] for l in range(32)]

def zeros_c(): return [[0, 0, 0, 0] for _ in range(32)]
def rnd(): return random.randint(-3, 3)
def close(a, b): return all(abs(x - y) < 1e-9 for ra, rb in zip(a, b) for x, y in zip(ra, rb))

# ---------------- prefill: one warp's S = Q K^T and O = P V -----------------------------------------
def check_prefill(D, WARPS, MW, BN, warp):
    RC = D // 8; BM = WARPS * 16 * MW
    Q = [[rnd() for _ in range(D)] for _ in range(BM)]
    K = [[rnd() for _ in range(D)] for _ in range(BN)]
    V = [[rnd() for _ in range(D)] for _ in range(BN)]
    sm = Smem(); sQ = 0; sK = BM * D * 2; sV = sK + BN * D * 2
    sm.store_tile(sQ, Q, RC); sm.store_tile(sK, K, RC); sm.store_tile(sV, V, RC)
    warp_row0 = warp * 16 * MW
    q_cur = [Cursor(RC, warp_row0 + (l & 15), 0, l >> 4) for l in range(32)]
    k_cur = [Cursor(RC, (l & 7) + ((l >> 4) << 3), 0, (l >> 3) & 1) for l in range(32)]
    v_cur = [Cursor(RC, l & 15, 0, l >> 4) for l in range(32)]
    s = [[zeros_c() for _ in range(BN // 8)] for _ in range(MW)]
    for kk in range(D // 16):
        af = [ldmatrix_x4(sm, [sQ + q_cur[l].at(kk, 2 * mw) for l in range(32)]) for mw in range(MW)]
        for np_ in range(BN // 16):
            kb = ldmatrix_x4(sm, [sK + k_cur[l].at(kk, 2 * np_) for l in range(32)])
            for mw in range(MW):
                mma(s[mw][2 * np_], af[mw], [[kb[l][0], kb[l][1]] for l in range(32)])
                mma(s[mw][2 * np_ + 1], af[mw], [[kb[l][2], kb[l][3]] for l in range(32)])
    for mw in range(MW):
        got = c_to_matrix(s[mw]); r0 = warp_row0 + mw * 16
        want = [[sum(Q[r0 + i][d] * K[j][d] for d in range(D)) for j in range(BN)] for i in range(16)]
        assert close(got, want), f"prefill S D{D} MW{MW} warp{warp} mw{mw}"
    # P V with P := S (values irrelevant to the index check)
    acc = [[zeros_c() for _ in range(D // 8)] for _ in range(MW)]
    for kk in range(BN // 16):
        pf = [p_frag(s[mw][2 * kk], s[mw][2 * kk + 1]) for mw in range(MW)]
        for dp in range(D // 16):
            vb = ldmatrix_x4(sm, [sV + v_cur[l].at(dp, 2 * kk) for l in range(32)], trans=True)
            for mw in range(MW):
                mma(acc[mw][2 * dp], pf[mw], [[vb[l][0], vb[l][1]] for l in range(32)])
                mma(acc[mw][2 * dp + 1], pf[mw], [[vb[l][2], vb[l][3]] for l in range(32)])
    for mw in range(MW):
        S = c_to_matrix(s[mw]); got = c_to_matrix(acc[mw])
        want = [[sum(S[i][j] * V[j][d] for j in range(BN)) for d in range(D)] for i in range(16)]
        assert close(got, want), f"prefill PV D{D} MW{MW} warp{warp} mw{mw}"

# ---------------- decode: warp (mt, tg), sub-step u ---------------------------------------------------
def check_decode(D, MT, warp):
    RC = D // 8; T = 64; NTG = 4 // MT; TW = T // NTG; ROWS = 16 * MT
    Q = [[rnd() for _ in range(D)] for _ in range(ROWS)]
    K = [[rnd() for _ in range(D)] for _ in range(T)]
    V = [[rnd() for _ in range(D)] for _ in range(T)]
    sm = Smem(); sQ = 0; kS = ROWS * D * 2 + 3 * T * D * 2 * 0 + 4096 * 16; vS = kS + T * D * 2
    sm.store_tile(sQ, Q, RC); sm.store_tile(kS, K, RC); sm.store_tile(vS, V, RC)
    mt = warp % MT; tg = warp // MT
    q_cur = [Cursor(RC, mt * 16 + (l & 15), 0, l >> 4) for l in range(32)]
    k_cur = [Cursor(RC, tg * TW + (l & 7) + ((l >> 4) << 3), 0, (l >> 3) & 1) for l in range(32)]
    v_cur = [Cursor(RC, tg * TW + (l & 15), 0, l >> 4) for l in range(32)]
    for u in range(MT):
        t0 = tg * TW + u * 16
        s = [zeros_c(), zeros_c()]
        for kk in range(D // 16):
            af = ldmatrix_x4(sm, [sQ + q_cur[l].at(kk, 0) for l in range(32)])
            kb = ldmatrix_x4(sm, [kS + k_cur[l].at(kk, 2 * u) for l in range(32)])
            mma(s[0], af, [[kb[l][0], kb[l][1]] for l in range(32)])
            mma(s[1], af, [[kb[l][2], kb[l][3]] for l in range(32)])
        got = c_to_matrix(s)
        want = [[sum(Q[mt * 16 + i][d] * K[t0 + j][d] for d in range(D)) for j in range(16)] for i in range(16)]
        assert close(got, want), f"decode S D{D} MT{MT} warp{warp} u{u}"
        acc = [zeros_c() for _ in range(D // 8)]
        pf = p_frag(s[0], s[1])
        for dp in range(D // 16):
            vb = ldmatrix_x4(sm, [vS + v_cur[l].at(dp, 2 * u) for l in range(32)], trans=True)
            mma(acc[2 * dp], pf, [[vb[l][0], vb[l][1]] for l in range(32)])
            mma(acc[2 * dp + 1], pf, [[vb[l][2], vb[l][3]] for l in range(32)])
        got = c_to_matrix(acc)
        want = [[sum(got_s * V[t0 + j][d] for j, got_s in enumerate(c_to_matrix(s)[i])) for d in range(D)] for i in range(16)]
        assert close(got, want), f"decode PV D{D} MT{MT} warp{warp} u{u}"
        # merge scratch index (epilogue): element (rr, d) of warp's acc at [dt][frag_lane][frag_reg]
        for rr in range(16):
            for d in range(D):
                fl = ((rr & 7) << 2) | ((d & 7) >> 1); fr = ((rr >> 3) << 1) | (d & 1)
                assert acc[d >> 3][fl][fr] == got[rr][d], "merge index"

# ---------------- MLA: interleaved k-steps for S, v cursor for O ----------------------------------------
def check_mla():
    L = 576; RC = 72; T = 32
    Q = [[rnd() for _ in range(L)] for _ in range(16)]
    KV = [[rnd() for _ in range(L)] for _ in range(T)]
    sm = Smem(); sQ = 0; kvS = 16 * L * 2
    sm.store_tile(sQ, Q, RC); sm.store_tile(kvS, KV, RC)
    partial = []
    for warp in range(4):
        q_off = []; k_off = []
        for l in range(32):
            q_row = l & 15; k_row = (l & 7) + ((l >> 4) << 3)
            q_off.append(q_row * (RC * 16) + (((2 * warp + (l >> 4)) ^ (q_row & 7)) << 4))
            k_off.append(k_row * (RC * 16) + (((2 * warp + ((l >> 3) & 1)) ^ (k_row & 7)) << 4))
        qf = [ldmatrix_x4(sm, [sQ + q_off[l] + kk * 128 for l in range(32)]) for kk in range(9)]
        s = [zeros_c() for _ in range(4)]
        for kk in range(9):
            for np_ in range(2):
                kb = ldmatrix_x4(sm, [kvS + k_off[l] + kk * 128 + np_ * 16 * (RC * 16) for l in range(32)])
                mma(s[2 * np_], qf[kk], [[kb[l][0], kb[l][1]] for l in range(32)])
                mma(s[2 * np_ + 1], qf[kk], [[kb[l][2], kb[l][3]] for l in range(32)])
        partial.append(c_to_matrix(s))
    got = [[sum(partial[w][i][j] for w in range(4)) for j in range(T)] for i in range(16)]
    want = [[sum(Q[i][d] * KV[j][d] for d in range(L)) for j in range(T)] for i in range(16)]
    assert close(got, want), "MLA S"
    for warp in range(4):
        v_cur = [Cursor(RC, l & 15, warp * 16, l >> 4) for l in range(32)]
        s_frag = [[[0] * 4 for _ in range(32)] for _ in range(4)]
        for nt in range(4):
            for l in range(32):
                g, t = l // 4, l % 4
                s_frag[nt][l] = [got[g][nt * 8 + 2 * t], got[g][nt * 8 + 2 * t + 1], got[g + 8][nt * 8 + 2 * t], got[g + 8][nt * 8 + 2 * t + 1]]
        acc = [zeros_c() for _ in range(16)]
        for kk in range(2):
            pf = p_frag(s_frag[2 * kk], s_frag[2 * kk + 1])
            for dp in range(8):
                vb = ldmatrix_x4(sm, [kvS + v_cur[l].at(dp, 2 * kk) for l in range(32)], trans=True)
                mma(acc[2 * dp], pf, [[vb[l][0], vb[l][1]] for l in range(32)])
                mma(acc[2 * dp + 1], pf, [[vb[l][2], vb[l][3]] for l in range(32)])
        o = c_to_matrix(acc)
        want = [[sum(got[i][j] * KV[j][warp * 128 + d] for j in range(T)) for d in range(128)] for i in range(16)]
        assert close(o, want), f"MLA PV warp {warp}"

# ---------------- loaders: every chunk written once, swizzle matches swz ------------------------------
def check_loader(ROWS, RC, THREADS):
    seen = set()
    if THREADS % RC == 0:
        step = THREADS // RC
        for tid in range(THREADS):
            r0, c = tid // RC, tid % RC
            for i in range(ROWS * RC // THREADS):
                r = r0 + i * step
                seen.add((r, c))
    else:
        for tid in range(THREADS):
            for i in range(ROWS * RC // THREADS):
                idx = tid + i * THREADS; seen.add((idx // RC, idx % RC))
    assert seen == {(r, c) for r in range(ROWS) for c in range(RC)}, f"loader {ROWS}x{RC}/{THREADS}"

def check_banks(RC):
    # 8 rows (r..r+7, r % 8 == 0) at the same logical chunk: 8 distinct 16-byte bank groups
    for r0 in range(0, 64, 8):
        for c in range(RC):
            groups = {(swz(RC, r0 + j, c) // 16) % 8 for j in range(8)}
            assert len(groups) == 8, "bank conflict"

random.seed(1)
for RC in (8, 16, 32, 72): check_banks(RC)
for (rows, RC, th) in [(64, 8, 128), (64, 16, 128), (64, 32, 128), (16, 8, 128), (32, 16, 128), (64, 16, 128),
                       (128, 8, 256), (128, 16, 256), (64, 32, 128), (128, 8, 128), (128, 16, 128), (32, 16, 128),
                       (64, 8, 256), (32, 72, 128), (16, 72, 128)]:
    check_loader(rows, RC, th)
for D, W, MW, BN in [(64, 8, 1, 64), (64, 4, 2, 64), (128, 8, 1, 64), (128, 4, 2, 32), (256, 4, 1, 64)]:
    for warp in (0, W - 1):
        check_prefill(D, W, MW, BN, warp)
    print("prefill ok", D, W, MW, BN)
for D in (64, 128, 256):
    for MT in (1, 2, 4):
        for warp in range(4):
            check_decode(D, MT, warp)
    print("decode ok", D)
check_mla(); print("mla ok")
