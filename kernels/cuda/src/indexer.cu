// The lightning indexer on the GPU (indexer.hpp). Two launches per pass over (sequences, queries):
//
// 1. Scores, on fp8 tensor cores (mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, PTX ISA 8.x's
//    "alternate floating point" mma, Ada/Hopper). A block of 4 warps owns a query tile (the heads of
//    QPB consecutive queries as rows) and a chunk of keys, streamed in 64-key tiles through a 4-stage
//    cp.async pipeline (fp8 codes and their scales). The queries' fp8 codes live in registers as mma A
//    fragments for the whole chunk (loaded once per block). Each warp holds 16 x MT rows (whole queries:
//    MPQ = num_heads / 16 m-tiles per query) and multiplies them against 16-key slabs of the tile: in
//    the decode layout (RG = 1) the four warps take the four slabs of one query's rows; in the prefill
//    layout (RG = 4) each warp holds its own 64 rows and walks all four slabs, so one key tile in shared
//    memory feeds 256 rows (the CPU kernel's indexer_tile_rows). The products' epilogue applies the
//    scales to the fp32 accumulators (q_scale per row, k_scale per key), then ReLU and w_h, sums the
//    rows of each query in registers and across the warp's 8 row groups by shuffles, and writes one
//    fp32 score per (query, visible key) to the workspace. Nothing is dequantised: the per-128 scales
//    multiply the products (head_dim <= 128, one scale per row), as DeepSeek-V3.2's fp8_index does
//    with its per-token key scale.
//    K-permutation: the mma's k index only pairs A's and B's bytes, so both are fed the same
//    permutation of the head dims: a thread's 16-byte load of bytes [16t, 16t + 16) of a 64-byte
//    k-pair supplies both k-steps (words 0, 1 -> step 0's {a0 | b0, a2 | b1}, words 2, 3 -> step 1's),
//    one LDS.128 per (8-key n-tile, 64 dims) instead of four LDS.32. Key rows of 128 bytes are
//    XOR-swizzled in 16-byte chunks by the row's parity (chunk c ^ 4 (row & 1)), so the 8 lanes of
//    each 128-bit shared-load phase (2 key rows x 4 chunks) hit 8 distinct bank groups; 64-byte rows
//    need no swizzle.
// 2. Selection, one block of 256 threads per query: the scores' fp32 bits mapped to order-preserving
//    uint32 keys (NaN as -inf, -0 as +0, so equal keys are exactly the CPU kernel's ties), a radix
//    select of the topk-th best key in 3 histogram passes (11, 11, 10 bits; 2048 bins in shared
//    memory; lanes of a warp that hit one bin add once, __match_any_sync), then an ordered compaction: each warp owns a contiguous segment of positions, counts
//    the keys above the threshold and the ties (ballots), one block scan of the 8 warps' counts, and
//    a second walk writes position j to slot (above before j) + min(ties before j, ties to keep).
//    The output is in increasing position order and keeps the lowest tied positions: the contract.
//    The query's keys are cached in shared memory when they fit (up to ~50k keys), else re-read from
//    the workspace (L2) on each pass.
//
// Expected speed (kernels/cuda/NOTES.md, session 22): decode is a stream of the fp8 keys (132 bytes a
// key at head_dim 128), prefill is tensor-core bound. Not yet run on a device.
#include "mhacfg/kernels/cuda/indexer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "check.hpp"
#include "device_utils.cuh"
#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cuda::indexer {

namespace {

using detail::cp_async_16;
using detail::cp_async_commit;
using detail::cp_async_wait;
using detail::smem_u32;

constexpr int kThreads = 128;  // scores: 4 warps
constexpr int kKeyTile = 64;   // keys per pipeline stage: 4 slabs of 16
constexpr int kStages = 4;  // 3 tiles (24 KiB at head_dim 128) in flight per block
constexpr int kMinChunk = kKeyTile;
constexpr int kMaxChunk = 1024;

constexpr int kSelectThreads = 256;
constexpr int kSelectWarps = kSelectThreads / 32;
constexpr int kBins = 2048;  // 11-bit digits

// Scores of one pass: queries [t0, t_end) of sequences [b0, b0 + gridDim.z).
struct ScoreArgs {
  const std::uint8_t* q;
  const float* q_scale;
  const float* w;
  const std::uint8_t* k;
  const float* k_scale;
  float* ws;           // [gridDim.z, pass_q, kv_len]
  std::int64_t q_len, kv_len;
  std::int64_t b0, t0, t_end, pass_q;
  std::int64_t chunk;  // keys per block
};

__device__ __forceinline__ void cp_async_4(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
}

// d += a * b for one m16n8k32 tile: fp8 E4M3 inputs (4 per register), fp32 accumulators.
__device__ __forceinline__ void mma_e4m3(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Byte offset of 16-byte chunk c of key row r in a stage (rows of D bytes).
template <int D>
__device__ __forceinline__ int key_chunk_offset(int r, int c) {
  return r * D + ((D == 128 ? (c ^ ((r & 1) << 2)) : c) << 4);
}

// D: head_dim (64 or 128). MT: m-tiles (16 rows) per warp. MPQ: m-tiles per query (num_heads / 16).
// RG: row groups per block (1: decode layout, 4: prefill layout).
template <int D, int MT, int MPQ, int RG>
__global__ void __launch_bounds__(kThreads) score_kernel(ScoreArgs a) {
  static_assert(D == 64 || D == 128, "head_dim 64 or 128");
  static_assert(MT % MPQ == 0 && (RG == 1 || RG == 4), "whole queries per warp");
  constexpr int KP = D / 64;         // 64-dim k-pairs
  constexpr int KS = 2 * KP;         // mma k-steps (32 dims)
  constexpr int QPW = MT / MPQ;      // queries per warp
  constexpr int QPB = RG * QPW;      // queries per block
  constexpr int H = 16 * MPQ;
  constexpr int kChunksPerRow = D / 16;
  constexpr int kTileBytes = kKeyTile * D;
  constexpr int kSlabStep = 4 / RG;  // warps per row group: each takes every kSlabStep-th slab
  static_assert(kSlabStep * RG == kThreads / 32, "4 warps");

  __shared__ __align__(128) std::uint8_t keys[kStages][kTileBytes];
  __shared__ float kscale[kStages][kKeyTile];
  __shared__ float2 row_factors[RG * MT * 16];  // (q_scale, w_h) of the block's rows, as the warps hold them

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const std::int64_t b = a.b0 + blockIdx.z;
  const std::int64_t tq0 = a.t0 + static_cast<std::int64_t>(blockIdx.y) * QPB;  // the block's first query
  const std::int64_t tq_last = min(tq0 + QPB, a.t_end) - 1;
  const std::int64_t offset = a.kv_len - a.q_len;  // query t sees keys [0, offset + t + 1)
  const std::int64_t k_begin = static_cast<std::int64_t>(blockIdx.x) * a.chunk;
  const std::int64_t k_end = min(k_begin + a.chunk, offset + tq_last + 1);
  if (k_begin >= k_end) return;  // causal: every query of the tile ends before this chunk

  const std::uint8_t* kbase = a.k + b * a.kv_len * D;
  const float* ksbase = a.k_scale + b * a.kv_len;
  const int tiles = static_cast<int>((k_end - k_begin + kKeyTile - 1) / kKeyTile);
  auto issue = [&](int tile) {
    if (tile < tiles) {
      const int stage = tile % kStages;
      const std::int64_t key0 = k_begin + static_cast<std::int64_t>(tile) * kKeyTile;
      const std::uint32_t dst = smem_u32(keys[stage]);
#pragma unroll
      for (int i = 0; i < kKeyTile * kChunksPerRow / kThreads; ++i) {
        const int id = tid + i * kThreads, r = id / kChunksPerRow, c = id % kChunksPerRow;
        const bool ok = key0 + r < k_end;
        cp_async_16(dst + key_chunk_offset<D>(r, c), ok ? kbase + (key0 + r) * D + c * 16 : kbase, ok);
      }
      if (tid < kKeyTile) {
        const bool ok = key0 + tid < k_end;
        cp_async_4(smem_u32(&kscale[stage][tid]), ok ? ksbase + key0 + tid : ksbase, ok);
      }
    }
    cp_async_commit();  // an empty group past the last tile keeps the wait counts uniform
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(s);

  // The warp's rows: m-tile i holds query tw + i / MPQ, heads (i % MPQ) * 16 + [0, 16).
  const int rg = warp % RG;
  const std::int64_t tw = tq0 + rg * QPW;
  std::uint32_t af[MT][KS][4];
  float2* factors = row_factors + rg * MT * 16;  // row 16 i + r of the warp's m-tile i
#pragma unroll
  for (int i = 0; i < MT; ++i) {
    const std::int64_t tq = tw + i / MPQ;
    const bool ok = tq < a.t_end;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t row = (b * a.q_len + tq) * H + (i % MPQ) * 16 + g + 8 * half;
      if (t == 0 && warp < RG) factors[16 * i + g + 8 * half] = ok ? make_float2(a.q_scale[row], a.w[row]) : make_float2(0.f, 0.f);
#pragma unroll
      for (int kp = 0; kp < KP; ++kp) {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (ok) v = *reinterpret_cast<const uint4*>(a.q + row * D + kp * 64 + t * 16);
        af[i][2 * kp][half] = v.x;
        af[i][2 * kp][2 + half] = v.y;
        af[i][2 * kp + 1][half] = v.z;
        af[i][2 * kp + 1][2 + half] = v.w;
      }
    }
  }
  // The key bound of each of the warp's queries, relative to k_begin (keys at or past it are not written).
  int vis[QPW];
#pragma unroll
  for (int qi = 0; qi < QPW; ++qi)
    vis[qi] = tw + qi < a.t_end ? static_cast<int>(min(offset + tw + qi + 1, k_end) - k_begin) : 0;
  float* ws_row = a.ws + (static_cast<std::int64_t>(blockIdx.z) * a.pass_q + (tw - a.t0)) * a.kv_len + k_begin;

  for (int tile = 0; tile < tiles; ++tile) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // tile `tile` landed for every thread; the stage refilled next was read last iteration
    issue(tile + kStages - 1);
    const int stage = tile % kStages;
    const std::uint8_t* kt = keys[stage];
    const int key0 = tile * kKeyTile;  // relative to k_begin
#pragma unroll 1
    for (int slab = warp / RG; slab < 4; slab += kSlabStep) {
      std::uint32_t bf[2][KS][2];
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int kp = 0; kp < KP; ++kp) {
          const int r = slab * 16 + j * 8 + g;
          const uint4 v = *reinterpret_cast<const uint4*>(kt + key_chunk_offset<D>(r, kp * 4 + t));
          bf[j][2 * kp][0] = v.x;
          bf[j][2 * kp][1] = v.y;
          bf[j][2 * kp + 1][0] = v.z;
          bf[j][2 * kp + 1][1] = v.w;
        }
      float part[QPW][2][2];
#pragma unroll
      for (int qi = 0; qi < QPW; ++qi)
#pragma unroll
        for (int j = 0; j < 2; ++j) part[qi][j][0] = part[qi][j][1] = 0.f;
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        float acc[2][4] = {};
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int s = 0; s < KS; ++s) mma_e4m3(acc[j], af[i][s], bf[j][s][0], bf[j][s][1]);
        // Scales, ReLU, head weights; rows g (c0, c1) and g + 8 (c2, c3), keys 8j + 2t + e.
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float ks = kscale[stage][slab * 16 + j * 8 + 2 * t + e];
            const float2 f0 = factors[16 * i + g], f1 = factors[16 * i + g + 8];
            const float v0 = acc[j][e] * f0.x * ks, v1 = acc[j][2 + e] * f1.x * ks;
            part[i / MPQ][j][e] += f0.y * fmaxf(v0, 0.f) + f1.y * fmaxf(v1, 0.f);
          }
      }
      // Sum over the 8 row groups (lanes of equal t), then lanes 0-3 write their keys.
#pragma unroll
      for (int qi = 0; qi < QPW; ++qi)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            float x = part[qi][j][e];
            x += __shfl_xor_sync(0xffffffffu, x, 4);
            x += __shfl_xor_sync(0xffffffffu, x, 8);
            x += __shfl_xor_sync(0xffffffffu, x, 16);
            const int key = key0 + slab * 16 + j * 8 + 2 * t + e;
            if (g == 0 && key < vis[qi]) ws_row[qi * a.kv_len + key] = x;
          }
    }
  }
  cp_async_wait<0>();  // no copy outlives the block
}

// Order-preserving key of a score: larger score, larger key; NaN as -inf; -0 as +0.
__device__ __forceinline__ std::uint32_t order_key(float f) {
  if (f != f) f = -INFINITY;
  if (f == 0.f) f = 0.f;
  const std::uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

struct SelectArgs {
  const float* ws;  // [gridDim.y, pass_q, kv_len]
  std::int32_t* indices;
  float* scores;    // or null
  std::int64_t q_len, kv_len, topk;
  std::int64_t b0, t0, pass_q;
};

// Exclusive prefix sum of one value per warp (every thread passes its warp's value; lane 0's counts).
// `scratch` holds kSelectWarps ints. Returns the sum over the warps before this one.
__device__ __forceinline__ int warps_exclusive(int v, int* scratch) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  int before = 0;
  for (int w = 0; w < warp; ++w) before += scratch[w];
  __syncthreads();
  return before;
}

// One block per query (x: query of the pass, y: sequence of the pass).
template <bool kCache>
__global__ void __launch_bounds__(kSelectThreads) select_kernel(SelectArgs a) {
  extern __shared__ __align__(16) std::uint32_t smem[];
  std::uint32_t* hist = smem;                             // kBins
  int* scratch = reinterpret_cast<int*>(smem + kBins);    // 4 * kSelectWarps + 4
  std::uint32_t* cache = smem + kBins + 4 * kSelectWarps + 4;  // n keys (kCache)

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const std::int64_t t = a.t0 + blockIdx.x, b = a.b0 + blockIdx.y;
  const std::int64_t n = a.kv_len - a.q_len + t + 1;
  const std::int64_t k = min(a.topk, n);
  const float* sc = a.ws + (static_cast<std::int64_t>(blockIdx.y) * a.pass_q + blockIdx.x) * a.kv_len;
  std::int32_t* out = a.indices + (b * a.q_len + t) * a.topk;
  float* kept = a.scores ? a.scores + (b * a.q_len + t) * a.topk : nullptr;

  if (k < n) {
    if (kCache) {
      for (std::int64_t j = tid; j < n; j += kSelectThreads) cache[j] = order_key(sc[j]);
    }
    auto key_at = [&](std::int64_t j) -> std::uint32_t { return kCache ? cache[j] : order_key(sc[j]); };
    // Radix select: the k-th largest key, digit by digit from the top.
    std::uint32_t prefix = 0, mask = 0;
    int remaining = static_cast<int>(k);  // keys still to take among those matching `prefix`
    constexpr int kShift[3] = {21, 10, 0}, kBits[3] = {11, 11, 10};
#pragma unroll
    for (int pass = 0; pass < 3; ++pass) {
      const int shift = kShift[pass];
      const std::uint32_t bin_mask = (1u << kBits[pass]) - 1u;
      for (int i = tid; i < kBins; i += kSelectThreads) hist[i] = 0;
      __syncthreads();  // (also: the cache is complete)
      // Scores cluster in few bins (similar magnitudes share the top bits): lanes of a warp that hit
      // the same bin add once, their count (no serialised same-address atomics).
      for (std::int64_t j0 = 0; j0 < n; j0 += kSelectThreads) {
        const std::int64_t j = j0 + tid;
        const std::uint32_t key = j < n ? key_at(j) : 0u;
        const bool candidate = j < n && (key & mask) == prefix;
        const unsigned active = __ballot_sync(0xffffffffu, candidate);
        if (candidate) {
          const std::uint32_t bin = (key >> shift) & bin_mask;
          const unsigned peers = __match_any_sync(active, bin);
          if (lane == __ffs(peers) - 1) atomicAdd(&hist[bin], static_cast<std::uint32_t>(__popc(peers)));
        }
      }
      __syncthreads();
      // Thread i owns bins [8i, 8i + 8); the count above its bins is the total minus its prefix.
      constexpr int kPer = kBins / kSelectThreads;
      int mine = 0;
#pragma unroll
      for (int i = 0; i < kPer; ++i) mine += static_cast<int>(hist[tid * kPer + i]);
      int incl = mine;  // inclusive scan within the warp
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += y;
      }
      const int warp_total = __shfl_sync(0xffffffffu, incl, 31);
      const int warp_before = warps_exclusive(warp_total, scratch);
      int total = 0;
      for (int w = 0; w < kSelectWarps; ++w) total += scratch[w];  // still valid: written before the barrier
      int above = total - (warp_before + incl);  // candidates in bins above this thread's
      if (above < remaining && above + mine >= remaining) {
        for (int i = kPer - 1; i >= 0; --i) {
          const int c = static_cast<int>(hist[tid * kPer + i]);
          if (above + c >= remaining) {
            scratch[kSelectWarps] = tid * kPer + i;
            scratch[kSelectWarps + 1] = above;
            break;
          }
          above += c;
        }
      }
      __syncthreads();
      const std::uint32_t digit = static_cast<std::uint32_t>(scratch[kSelectWarps]);
      remaining -= scratch[kSelectWarps + 1];
      prefix |= digit << shift;
      mask |= bin_mask << shift;
      __syncthreads();  // scratch and hist are reused
    }
    const std::uint32_t threshold = prefix;
    const int ties_kept = remaining;  // keys equal to the threshold to keep: the lowest positions

    // Ordered compaction: warp w walks positions [w * seg, (w + 1) * seg) 32 at a time.
    const std::int64_t seg = (n + kSelectWarps - 1) / kSelectWarps;
    const std::int64_t lo = warp * seg, hi = min(n, lo + seg);
    int above_n = 0, ties_n = 0;
    for (std::int64_t j0 = lo; j0 < hi; j0 += 32) {
      const std::int64_t j = j0 + lane;
      const std::uint32_t key = j < hi ? key_at(j) : 0u;
      above_n += __popc(__ballot_sync(0xffffffffu, j < hi && key > threshold));
      ties_n += __popc(__ballot_sync(0xffffffffu, j < hi && key == threshold));
    }
    int above_before = warps_exclusive(above_n, scratch);
    int ties_before = warps_exclusive(ties_n, scratch + kSelectWarps);
    const unsigned below_lane = (1u << lane) - 1u;
    for (std::int64_t j0 = lo; j0 < hi; j0 += 32) {
      const std::int64_t j = j0 + lane;
      const std::uint32_t key = j < hi ? key_at(j) : 0u;
      const unsigned gt = __ballot_sync(0xffffffffu, j < hi && key > threshold);
      const unsigned eq = __ballot_sync(0xffffffffu, j < hi && key == threshold);
      const int a_before = above_before + __popc(gt & below_lane), e_before = ties_before + __popc(eq & below_lane);
      const bool keep = ((gt >> lane) & 1u) || (((eq >> lane) & 1u) && e_before < ties_kept);
      if (keep) {
        const int slot = a_before + min(e_before, ties_kept);
        out[slot] = static_cast<std::int32_t>(j);
        if (kept) kept[slot] = sc[j];
      }
      above_before += __popc(gt);
      ties_before += __popc(eq);
    }
  } else {  // every visible key, in order
    for (std::int64_t j = tid; j < n; j += kSelectThreads) {
      out[j] = static_cast<std::int32_t>(j);
      if (kept) kept[j] = sc[j];
    }
  }
  for (std::int64_t j = k + tid; j < a.topk; j += kSelectThreads) {
    out[j] = -1;
    if (kept) kept[j] = -INFINITY;
  }
}

constexpr std::size_t kSelectFixedSmem = (kBins + 4 * kSelectWarps + 4) * sizeof(std::uint32_t);

struct Config {
  int mt = 4, mpq = 4, rg = 1;
  int qpb() const { return rg * mt / mpq; }
};

Config config_for(const IndexerShape& s) {
  Config c;
  c.mpq = static_cast<int>(s.num_heads / 16);
  if (s.q_len * s.num_heads >= 256) {  // enough queries for 4 row groups of 64 rows
    c.mt = 4;
    c.rg = 4;
  } else {
    c.mt = c.mpq;
    c.rg = 1;
  }
  return c;
}

struct Passes {
  std::int64_t batch = 1, queries = 1;  // sequences and queries per pass
};

Passes passes_for(const IndexerShape& s, std::size_t pass_budget) {
  const std::int64_t per_query = s.kv_len * static_cast<std::int64_t>(sizeof(float));
  const std::int64_t budget = static_cast<std::int64_t>(pass_budget == 0 ? kMaxWorkspaceBytes : pass_budget);
  const std::int64_t qpb = config_for(s).qpb();
  Passes p;
  if (s.q_len * per_query <= budget) {
    p.queries = s.q_len;
    p.batch = std::clamp<std::int64_t>(budget / (s.q_len * per_query), 1, s.batch);
  } else {
    p.queries = std::min(s.q_len, std::max<std::int64_t>(qpb, budget / per_query / qpb * qpb));
    p.batch = 1;
  }
  return p;
}

template <int D, int MT, int MPQ, int RG>
void launch_scores(const ScoreArgs& a, dim3 grid, cudaStream_t stream) {
  score_kernel<D, MT, MPQ, RG><<<grid, kThreads, 0, stream>>>(a);
}

template <int D>
void launch_scores_d(const Config& c, const ScoreArgs& a, dim3 grid, cudaStream_t stream) {
  if (c.rg == 4) {
    if (c.mpq == 1) launch_scores<D, 4, 1, 4>(a, grid, stream);
    else if (c.mpq == 2) launch_scores<D, 4, 2, 4>(a, grid, stream);
    else launch_scores<D, 4, 4, 4>(a, grid, stream);
  } else {
    if (c.mpq == 1) launch_scores<D, 1, 1, 1>(a, grid, stream);
    else if (c.mpq == 2) launch_scores<D, 2, 2, 1>(a, grid, stream);
    else launch_scores<D, 4, 4, 1>(a, grid, stream);
  }
}

std::string field(const char* name, std::int64_t value, const std::string& why) {
  return std::string(name) + " = " + std::to_string(value) + ": " + why;
}

// splitmix64 (the same counter-based hash as runtime.cu's fill).
__device__ __forceinline__ std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fill_fp8_kernel(std::uint8_t* codes, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    // Magnitude codes 0..0x37 are the values [0, 1) (0x38 is 1.0); any sign. Never 0x7f (NaN).
    const std::uint64_t h = mix(seed ^ mix(i));
    codes[i] = static_cast<std::uint8_t>(((h >> 8) & 0x80u) | ((h & 0xffu) % 0x38u));
  }
}

__global__ void fill_f32_kernel(float* data, std::size_t n, std::uint64_t seed, float lo, float span) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t h = mix(seed ^ mix(i));
    data[i] = lo + span * static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  }
}

int fill_blocks(std::size_t n) {
  const std::size_t want = (n + 255) / 256;
  return static_cast<int>(want < 65536 ? want : 65536);
}

}  // namespace

std::string unsupported_reason(const IndexerShape& s) {
  if (s.batch < 1 || s.batch > 65535) return field("batch", s.batch, "must be in 1..65535 (the grid's z dimension)");
  if (s.q_len < 1) return field("q_len", s.q_len, "must be at least 1");
  if (s.kv_len < 1) return field("kv_len", s.kv_len, "must be at least 1");
  if (s.q_len > s.kv_len)
    return field("q_len", s.q_len, "must not exceed kv_len = " + std::to_string(s.kv_len) + " (queries are the last q_len positions)");
  if (s.kv_len > std::numeric_limits<std::int32_t>::max())
    return field("kv_len", s.kv_len, "key positions are int32 (at most 2147483647)");
  if (s.num_heads != 16 && s.num_heads != 32 && s.num_heads != 64)
    return field("num_heads", s.num_heads,
                 "the CUDA indexer takes 16, 32 or 64 heads (a query's heads fill whole 16-row mma tiles; DeepSeek-V3.2 has "
                 "64, GLM-5 32)");
  if (s.head_dim != 64 && s.head_dim != 128)
    return field("head_dim", s.head_dim, "the CUDA indexer takes 64 or 128 (one fp8 scale per row, 32-dim mma steps)");
  if (s.topk < 1) return field("topk", s.topk, "must be at least 1");
  if (s.topk > std::numeric_limits<std::int32_t>::max()) return field("topk", s.topk, "must be at most 2147483647");
  const char* what = "indexer buffers";
  mul(mul(s.batch, s.kv_len, what), s.head_dim, what);  // overflow-checked
  mul(mul(s.batch, s.q_len, what), std::max(s.topk, mul(s.num_heads, s.head_dim, what)), what);
  return {};
}

std::size_t workspace_bytes(const IndexerShape& s, std::size_t pass_budget) {
  if (!supports(s)) return 0;
  const Passes p = passes_for(s, pass_budget);
  return static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(p.queries) * static_cast<std::size_t>(s.kv_len) *
         sizeof(float);
}

void run(const Params& p, Stream stream) {
  const IndexerShape& s = p.shape;
  if (std::string why = unsupported_reason(s); !why.empty()) throw InputError("indexer: " + why);
  const std::size_t budget = p.pass_budget == 0 ? kMaxWorkspaceBytes : p.pass_budget;
  if (p.workspace_bytes < workspace_bytes(s, budget))
    throw InputError("indexer: workspace_bytes = " + std::to_string(p.workspace_bytes) + ": needs " +
                     std::to_string(workspace_bytes(s, budget)));
  MHACFG_CHECK(p.q && p.q_scale && p.weights && p.k && p.k_scale && p.indices && p.workspace, "indexer: null tensor");
  auto* cs = static_cast<cudaStream_t>(stream);
  const Config c = config_for(s);
  const Passes ps = passes_for(s, budget);
  const DeviceInfo& dev = device_info(current_device());
  // Keys a select block caches in shared memory (the rest of the opt-in after the histogram).
  const std::int64_t cache_cap = std::max<std::int64_t>(
      0, (dev.smem_per_block_optin_bytes - static_cast<std::int64_t>(kSelectFixedSmem)) / 4 / 1024 * 1024);
  MHACFG_CUDA_CHECK(cudaFuncSetAttribute(select_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(dev.smem_per_block_optin_bytes)));
  float* ws = static_cast<float*>(p.workspace);
  for (std::int64_t b0 = 0; b0 < s.batch; b0 += ps.batch) {
    const std::int64_t nb = std::min(ps.batch, s.batch - b0);
    for (std::int64_t t0 = 0; t0 < s.q_len; t0 += ps.queries) {
      const std::int64_t nq = std::min(ps.queries, s.q_len - t0);
      const std::int64_t tiles = (nq + c.qpb() - 1) / c.qpb();
      // Keys per block: the largest power of two (64..1024) that still gives >= 3 blocks per SM.
      std::int64_t chunk = kMaxChunk;
      while (chunk > kMinChunk && ((s.kv_len + chunk - 1) / chunk) * tiles * nb < 3 * dev.sm_count) chunk /= 2;
      ScoreArgs sa{p.q, p.q_scale, p.weights, p.k, p.k_scale, ws, s.q_len, s.kv_len, b0, t0, t0 + nq, nq, chunk};
      const dim3 grid(static_cast<unsigned>((s.kv_len + chunk - 1) / chunk), static_cast<unsigned>(tiles),
                      static_cast<unsigned>(nb));
      if (s.head_dim == 128) launch_scores_d<128>(c, sa, grid, cs);
      else launch_scores_d<64>(c, sa, grid, cs);
      MHACFG_CUDA_CHECK_LAUNCH("indexer scores");

      SelectArgs sel{ws, p.indices, p.scores, s.q_len, s.kv_len, s.topk, b0, t0, nq};
      const std::int64_t most_keys = s.kv_len - s.q_len + t0 + nq;  // the pass's last query sees these
      const dim3 sgrid(static_cast<unsigned>(nq), static_cast<unsigned>(nb));
      if (most_keys <= cache_cap) {
        const std::size_t smem = kSelectFixedSmem + static_cast<std::size_t>(most_keys) * sizeof(std::uint32_t);
        select_kernel<true><<<sgrid, kSelectThreads, smem, cs>>>(sel);
      } else {
        select_kernel<false><<<sgrid, kSelectThreads, kSelectFixedSmem, cs>>>(sel);
      }
      MHACFG_CUDA_CHECK_LAUNCH("indexer top-k");
    }
  }
}

void fill_random_fp8(std::uint8_t* codes, std::size_t n, std::uint64_t seed, Stream stream) {
  if (n == 0) return;
  fill_fp8_kernel<<<fill_blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(codes, n, seed);
  MHACFG_CUDA_CHECK_LAUNCH("indexer fill_random_fp8");
}

void fill_random_f32(float* data, std::size_t n, std::uint64_t seed, float lo, float hi, Stream stream) {
  if (n == 0) return;
  fill_f32_kernel<<<fill_blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(data, n, seed, lo, hi - lo);
  MHACFG_CUDA_CHECK_LAUNCH("indexer fill_random_f32");
}

}  // namespace mhacfg::kernels::cuda::indexer
