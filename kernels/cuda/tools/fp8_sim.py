#!/usr/bin/env python3
# Host check of the fp8 KV decode variant (src/decode_attention.cu, decode_kernel<D, MT, true>), no GPU
# needed:
#  1. the e4m3 -> f16 -> fp32 -> bf16 conversion (e4m3x2_to_bf16x2) is exact for every finite code, so
#     folding the scales into the softmax scale and the output weights loses nothing;
#  2. load_tile8_async and convert_tile8 give each thread the same chunks (the copy and the conversion
#     need no barrier between them), cover every chunk of a tile once, and the converted tile holds
#     element (token, dim) where load_tile_async's swizzled bf16 tile holds it (what ldmatrix reads);
#  3. the shared-memory layout (Q, the bf16 K and V tiles, the fp8 stages) does not overlap, matches
#     smem_bytes<D, MT, true>, keeps 2 blocks per SM at d128 and 3 at d64, and the warps' merge scratch
#     fits behind Q.
# Keep it in step with the kernel. Run: python3 kernels/cuda/tools/fp8_sim.py
import math
import struct

K_TILE, K_THREADS, K_WARPS = 64, 128, 4
STAGES8 = {64: 6, 128: 4}
STAGES16 = {64: 4, 128: 3}


def e4m3_value(code):  # OCP E4M3 (float8_e4m3fn): bias 7, subnormals, 0x7f/0xff NaN, no infinities
    s, e, m = code >> 7, (code >> 3) & 0xF, code & 7
    if e == 0xF and m == 7:
        return math.nan
    mag = m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -mag if s else mag


def to_f16(x):
    return struct.unpack('<e', struct.pack('<e', x))[0]


def to_bf16(x):  # round to nearest even, via the fp32 bits
    (u,) = struct.unpack('<I', struct.pack('<f', x))
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return struct.unpack('<f', struct.pack('<I', u << 16))[0]


def check_conversion():
    finite = 0
    for code in range(256):
        v = e4m3_value(code)
        if math.isnan(v):
            continue
        finite += 1
        h = to_f16(v)
        assert h == v, f"code {code:#x}: f16 {h} != {v}"
        assert h == 0 or abs(h) >= 2.0 ** -14, f"code {code:#x}: not an f16 normal"
        b = to_bf16(float(h))
        assert b == v, f"code {code:#x}: bf16 {b} != {v}"
    assert finite == 254
    # The largest finite code is 448, the smallest subnormal 2^-9.
    assert e4m3_value(0x7E) == 448 and e4m3_value(0x01) == 2.0 ** -9


def swz(rc, row, chunk):
    return row * (rc * 16) + ((chunk ^ (row & 7)) << 4)


def check_tiles(d):
    c16, rc = d // 16, d // 8
    chunks = K_TILE * c16
    assert chunks % K_THREADS == 0
    loaded, converted = {}, {}
    for tid in range(K_THREADS):
        for i in range(chunks // K_THREADS):
            idx = tid + i * K_THREADS
            r, c = idx // c16, idx % c16
            dst = idx * 16  # load_tile8_async: plain rows of d bytes
            assert dst == r * d + c * 16
            assert dst not in loaded
            loaded[dst] = tid
            src = idx * 16  # convert_tile8 reads the same chunk...
            assert loaded[src] == tid, "a thread converts a chunk another thread copied"
            for half in range(2):  # ...and writes bf16 chunks 2c, 2c + 1 of row r
                out = swz(rc, r, 2 * c + half)
                for e in range(8):
                    dim = 16 * c + 8 * half + e
                    addr = out + 2 * e
                    assert addr not in converted, "overlap"
                    converted[addr] = (r, dim)
    assert len(loaded) == chunks
    # load_tile_async's layout: element (r, col) at swz(RC, r, col // 8) + (col % 8) * 2.
    for r in range(K_TILE):
        for col in range(d):
            assert converted[swz(rc, r, col // 8) + (col % 8) * 2] == (r, col)


def check_smem(d):
    for mt in (1, 2, 4):
        rows = 16 * mt
        tile16 = K_TILE * d * 2
        stage8 = K_TILE * d
        off_k = rows * d * 2
        off_v = off_k + tile16
        off_8k = off_v + tile16
        off_8v = off_8k + STAGES8[d] * stage8
        end = off_8v + STAGES8[d] * stage8
        total = rows * d * 2 + 2 * tile16 + 2 * STAGES8[d] * stage8  # smem_bytes<D, MT, true>
        assert end == total
        bf16_total = rows * d * 2 + 2 * STAGES16[d] * tile16  # smem_bytes<D, MT, false>
        assert total == bf16_total, (d, mt, total, bf16_total)  # same size, same blocks per SM
        assert K_WARPS * d * 16 * 4 <= total - off_k, "merge scratch"
        per_block = total + 512 + 1024  # static s_max/s_sum and the driver's reserve
        blocks = (228 * 1024) // per_block
        assert blocks >= (3 if d == 64 else 2), (d, mt, blocks)


if __name__ == '__main__':
    check_conversion()
    for d in (64, 128):
        check_tiles(d)
        check_smem(d)
    print("fp8_sim: e4m3 -> bf16 exact for all 254 finite codes; d64 and d128 tiles and shared memory consistent")
