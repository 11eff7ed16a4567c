// Decode attention, version 1: GQA-packed split-KV (flash-decoding) on mma.sync tensor cores.
//
// What this version is. One block of 4 warps handles one (sequence, KV head, split): the KV head's
// whole query group (G = num_q_heads / num_kv_heads rows, padded to 16 * MT with MT = 1, 2 or 4
// m-tiles; padded rows are zero queries whose outputs are dropped) against a contiguous range of
// tokens. K and V tiles of 64 tokens stream through a 3-4 stage cp.async pipeline (16-byte copies,
// coalesced: one token's head row is 128-512 contiguous bytes) into XOR-swizzled shared memory and
// are read once from HBM. S = Q K^T and O += P V run as m16n8k16 mma.sync with ldmatrix operands;
// the softmax is online in registers (FlashAttention-2's register trick: the S accumulators are the P
// operand). Within a tile the 4 warps split the tokens (MT = 1: 16 each; MT = 2: two warps per m-tile,
// 32 tokens each; MT = 4: one m-tile each, all 64 tokens); the warps' (max, sum, O) are merged once at
// the end through shared memory. A sequence is cut into splits of whole tiles so that even batch 1
// fills the 132 SMs; each split writes fp32 partial O + log-sum-exp and combine.cu merges them.
//
// Why tensor cores for a memory-bound kernel: per KV head and token the group does 4 * G * head_dim
// FLOPs on 4 * head_dim bytes (G FLOP/byte). At 4.5 TB/s and G = 4 that is 18 TFLOP/s of FMA work plus
// bf16 conversions and shuffles on the CUDA cores (about a quarter of their fp32 peak, and MQA's G = 32
// would need more than all of it); on the tensor cores even G = 1 padded to 16 rows costs a small
// fraction of the SM. One kernel then serves MHA, GQA and MQA.
//
// Resources (ptxas, sm_90a, nvcc 13.0.88): 100/161/254 registers for head_dim 64/128/256 with one
// m-tile, 120-181 at head_dim 64/128 and 254 at 256 with two or four, no spills; 66/100/200 KiB of shared memory (+8 KiB per extra
// m-tile), so 3/2/1 blocks per SM.
//
// Measured on the H200 (2026-11-30, L2 flushed, median of 3 allocations x 20 calls; NOTES.md):
// - 32q/8kv d128, batch 64, kv_len 32768: 8.6 GB of K/V, 1 split, 2 blocks per SM: 4.46-4.57 TB/s
//   (acceptance 4.3; cuDNN 4.62, FA2 2.55).
// - same, batch 1: 32 splits of 1024 tokens (256 blocks, one wave): 2.76-2.78 TB/s (acceptance 2.7).
// - MQA 32q/1kv, batch 1: 16.8 MB, 128 splits of 256 tokens: 0.84-0.86 TB/s (acceptance 1.0, missed;
//   cuDNN 0.89): two kernels' fixed costs, ~10 us each, dominate a 3.7 us read.
#include <cmath>

#include <cooperative_groups.h>
#include <cuda_fp8.h>
#include <string>
#include <type_traits>

#include "check.hpp"
#include "combine.hpp"
#include "decode_args.cuh"
#include "decode_merge.cuh"
#include "device_utils.cuh"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/decode_attention.hpp"
#include "split_kv.hpp"

namespace mhacfg::kernels::cuda::decode {

namespace {

// Pipeline stages of the bf16 (Traits) and fp8 (Traits8) variants.
template <int D, bool F8>
struct Pipe {
  static constexpr int kStages = Traits<D>::kStages;
};
template <int D>
struct Pipe<D, true> {
  static constexpr int kStages = Traits8<D>::kStages;
};

// Dynamic shared memory: Q, then bf16 K and V stages (bf16 KV) or one bf16 K and V tile each
// followed by the fp8 K and V stages (fp8 KV).
template <int D, int MT, bool F8>
constexpr int smem_bytes() {
  if constexpr (F8)
    return 16 * MT * D * 2 + 2 * Traits<D>::kTileBytes + 2 * Traits8<D>::kStages * Traits8<D>::kStageBytes;
  else
    return 16 * MT * D * 2 + 2 * Traits<D>::kStages * Traits<D>::kTileBytes;
}

// fp8 KV. Copies ROWS rows of C16 16-byte chunks (an e4m3 K or V tile, plain rows of D bytes) with
// THREADS threads; thread tid copies chunks tid, tid + THREADS, ... . Rows >= valid_rows are
// zero-filled from `safe`. convert_tile8 gives every thread the same chunks, so a thread converts only
// what its own cp.async wrote: cp.async.wait_group orders that, no barrier is needed between the two.
template <int ROWS, int C16, int THREADS>
__device__ __forceinline__ void load_tile8_async(std::uint32_t dst, const std::uint8_t* src, std::int64_t row_stride,
                                                 int valid_rows, const std::uint8_t* safe, int tid) {
  constexpr int kChunks = ROWS * C16;
  static_assert(kChunks % THREADS == 0, "tile chunks must divide evenly among the threads");
  const std::int64_t stride = detail::opaque(row_stride);
#pragma unroll
  for (int i = 0; i < kChunks / THREADS; ++i) {
    const int idx = tid + i * THREADS;
    const int r = idx / C16, c = idx % C16;
    const bool ok = r < valid_rows;
    detail::cp_async_16(dst + static_cast<std::uint32_t>(idx) * 16, ok ? src + r * stride + c * 16 : safe, ok);
  }
}

// Two e4m3 codes (low byte first) to a bf16 pair, exactly: e4m3 -> f16 with the hardware conversion
// (cvt.rn.f16x2.e4m3x2; every e4m3 value is an f16 normal or zero), f16 -> fp32, fp32 -> bf16 (an e4m3
// value has 4 significant bits and an exponent in [-9, 8]: bf16 holds it exactly). There is no direct
// e4m3 -> bf16 conversion on sm_90; vLLM converts through f16 and fp32 as well
// (csrc/quantization/fp8/nvidia/quant_utils.cuh). The scales are not applied here: K's is folded into
// the softmax scale and V's into the output rows' merge weights, so the conversion stays exact.
__device__ __forceinline__ std::uint32_t e4m3x2_to_bf16x2(std::uint32_t two) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two & 0xffffu), __NV_E4M3);
  const float2 f = __half22float2(__half2(h));
  return detail::pack_bf16x2(f.x, f.y);
}

// Converts this thread's chunks (load_tile8_async's) of an fp8 tile at byte offset `src` of shared
// memory into the bf16 tile at `dst` (Traits<D>'s swizzled rows): fp8 chunk c of row r (16 codes)
// becomes bf16 chunks 2c and 2c + 1 of row r.
template <int ROWS, int D, int THREADS>
__device__ __forceinline__ void convert_tile8(unsigned char* smem, std::uint32_t src, std::uint32_t dst, int tid) {
  constexpr int C16 = D / 16, RC = D / 8, kChunks = ROWS * C16;
#pragma unroll
  for (int i = 0; i < kChunks / THREADS; ++i) {
    const int idx = tid + i * THREADS;
    const int r = idx / C16, c = idx % C16;
    const uint4 in = *reinterpret_cast<const uint4*>(smem + src + idx * 16);
    uint4 lo, hi;
    lo.x = e4m3x2_to_bf16x2(in.x);
    lo.y = e4m3x2_to_bf16x2(in.x >> 16);
    lo.z = e4m3x2_to_bf16x2(in.y);
    lo.w = e4m3x2_to_bf16x2(in.y >> 16);
    hi.x = e4m3x2_to_bf16x2(in.z);
    hi.y = e4m3x2_to_bf16x2(in.z >> 16);
    hi.z = e4m3x2_to_bf16x2(in.w);
    hi.w = e4m3x2_to_bf16x2(in.w >> 16);
    *reinterpret_cast<uint4*>(smem + dst + detail::swz<RC>(r, 2 * c)) = lo;
    *reinterpret_cast<uint4*>(smem + dst + detail::swz<RC>(r, 2 * c + 1)) = hi;
  }
}

template <int D, int MT, bool F8>
__global__ void __launch_bounds__(kThreads, 2) decode_kernel(const Args a) {
  using Tr = Traits<D>;
  constexpr int kStages = Pipe<D, F8>::kStages;
  constexpr int RC = Tr::kRowChunks;
  constexpr int kRows = 16 * MT;             // padded query rows of the group
  constexpr int kGroups = kWarps / MT;       // warps that share one m-tile
  constexpr int kWarpTokens = kTile / kGroups;  // = 16 * MT tokens per warp per tile
  constexpr int kSteps = D / 16;             // k-steps of S = Q K^T
  constexpr int kDt = D / 8;                 // 8-wide output n-tiles

  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ float s_max[kWarps][16];
  __shared__ float s_sum[kWarps][16];
  // Byte offsets in `smem`. bf16 KV: the K and V stages. fp8 KV: one bf16 K and V tile each (what the
  // matrix products read), then the fp8 K and V stages.
  constexpr std::uint32_t kOffK = kRows * D * 2;
  constexpr std::uint32_t kOffV = kOffK + (F8 ? 1 : kStages) * Tr::kTileBytes;
  constexpr std::uint32_t kStage8 = F8 ? kTile * D : 0;  // bytes of one fp8 stage of K or V
  constexpr std::uint32_t kOff8K = kOffV + Tr::kTileBytes;
  constexpr std::uint32_t kOff8V = kOff8K + kStages * kStage8;
  const std::uint32_t sQ = detail::smem_u32(smem);
  const std::uint32_t sK = sQ + kRows * D * 2;
  const std::uint32_t sV = sK + (F8 ? 1 : kStages) * Tr::kTileBytes;

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  detail::grid_dependents_launch();  // the combine (if split) may be scheduled beside this grid
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int G = a.group_size;
  const int h0 = kvh * G;
  const int len = a.kv_lens ? max(0, min(a.kv_lens[b], a.kv_len)) : a.kv_len;  // clamp: splits cover kv_len
  const int start = split * a.tokens_per_split;
  const int end = min(len, start + a.tokens_per_split);

  if (start >= end) {  // an empty split (variable lengths) or an empty sequence
    for (int e = tid; e < G * D; e += kThreads) {
      const int r = e / D, d = e % D;
      if (a.num_splits > 1) {
        if (d == 0) a.lse[(static_cast<std::int64_t>(b) * a.num_q_heads + h0 + r) * a.num_splits + split] = -INFINITY;
      } else {
        a.o[b * a.o_batch_stride + static_cast<std::int64_t>(h0 + r) * D + d] = __float2bfloat16_rn(0.f);
      }
    }
    if (a.fused) {  // every block of a cooperative grid reaches the barrier
      cooperative_groups::this_grid().sync();
      merge_in_grid<D>(a);
    }
    return;
  }

  const bf16* q_base = a.q + b * a.q_batch_stride + static_cast<std::int64_t>(h0) * D;
  const bf16* k_seq = F8 ? nullptr : a.k + b * a.kv_batch_stride + static_cast<std::int64_t>(kvh) * D;
  const bf16* v_seq = F8 ? nullptr : a.v + b * a.kv_batch_stride + static_cast<std::int64_t>(kvh) * D;
  const std::uint8_t* k8_seq = F8 ? a.k8 + b * a.kv_batch_stride + static_cast<std::int64_t>(kvh) * D : nullptr;
  const std::uint8_t* v8_seq = F8 ? a.v8 + b * a.kv_batch_stride + static_cast<std::int64_t>(kvh) * D : nullptr;
  const int num_tiles = (end - start + kTile - 1) / kTile;

  auto load_kv = [&](int tile) {
    const int t0 = start + tile * kTile;
    const int valid = min(kTile, end - t0);
    const int stage = tile % kStages;
    const std::int64_t off = static_cast<std::int64_t>(t0) * a.kv_token_stride;
    if constexpr (F8) {
      load_tile8_async<kTile, D / 16, kThreads>(sQ + kOff8K + stage * kStage8, k8_seq + off, a.kv_token_stride, valid,
                                                k8_seq, tid);
      load_tile8_async<kTile, D / 16, kThreads>(sQ + kOff8V + stage * kStage8, v8_seq + off, a.kv_token_stride, valid,
                                                v8_seq, tid);
    } else {
      detail::load_tile_async<kTile, RC, kThreads>(sK + stage * Tr::kTileBytes, k_seq + off, a.kv_token_stride, valid,
                                                   k_seq, tid);
      detail::load_tile_async<kTile, RC, kThreads>(sV + stage * Tr::kTileBytes, v_seq + off, a.kv_token_stride, valid,
                                                   v_seq, tid);
    }
  };

  // Group 0: Q (rows >= G zero-filled). Groups 1..kStages-1: the first tiles (empty groups past the end
  // keep the wait_group arithmetic uniform).
  detail::load_tile_async<kRows, RC, kThreads>(sQ, q_base, D, G, q_base, tid);
  detail::cp_async_commit();
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < num_tiles) load_kv(st);
    detail::cp_async_commit();
  }

  const int mt = warp % MT;  // this warp's m-tile
  const int tg = warp / MT;  // and its token group within a tile
  const detail::SwizzleCursor<RC> q_cur(mt * 16 + (lane & 15), 0, lane >> 4);  // A of Q K^T
  const detail::SwizzleCursor<RC> k_cur(tg * kWarpTokens + (lane & 7) + ((lane >> 4) << 3), 0, (lane >> 3) & 1);
  const detail::SwizzleCursor<RC> v_cur(tg * kWarpTokens + (lane & 15), 0, lane >> 4);  // B of P V
  std::uint32_t qf[Tr::kQInRegs ? kSteps : 1][4];
  float acc[kDt][4];
#pragma unroll
  for (int i = 0; i < kDt; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};  // this thread's columns only; quad-reduced at the end

  for (int tile = 0; tile < num_tiles; ++tile) {
    detail::cp_async_wait<kStages - 2>();
    if constexpr (F8) {
      // This thread's chunks of tile `tile` have landed. The stage the next load refills held tile - 1,
      // whose chunks this thread converted before the two barriers of the last iteration.
      if (tile + kStages - 1 < num_tiles) load_kv(tile + kStages - 1);
      detail::cp_async_commit();
      const std::uint32_t st8 = (tile % kStages) * kStage8;
      convert_tile8<kTile, D, kThreads>(smem, kOff8K + st8, kOffK, tid);
      convert_tile8<kTile, D, kThreads>(smem, kOff8V + st8, kOffV, tid);
      __syncthreads();  // the bf16 tiles (and, at tile 0, Q) are visible to every warp
    } else {
      __syncthreads();  // tile `tile` is visible to all; every warp is done with tile - 1's stage
      if (tile + kStages - 1 < num_tiles) load_kv(tile + kStages - 1);
      detail::cp_async_commit();
    }

    if constexpr (Tr::kQInRegs) {
      if (tile == 0) {
#pragma unroll
        for (int kk = 0; kk < kSteps; ++kk)
          detail::ldmatrix_x4(qf[kk], sQ + q_cur.at(kk, 0));
      }
    }

    const int stage = F8 ? 0 : tile % kStages;  // fp8 KV: the one converted tile
    const std::uint32_t kS = sK + stage * Tr::kTileBytes;
    const std::uint32_t vS = sV + stage * Tr::kTileBytes;
    const int tile_start = start + tile * kTile;

#pragma unroll
    for (int u = 0; u < MT; ++u) {  // 16-token steps of this warp
      const int t0 = tg * kWarpTokens + u * 16;
      const int valid = end - (tile_start + t0);  // warp-uniform
      if (valid <= 0) break;

      // S[16 rows, 16 tokens] = Q K^T over D.
      float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
        std::uint32_t af[4];
        if constexpr (Tr::kQInRegs) {
          af[0] = qf[kk][0];
          af[1] = qf[kk][1];
          af[2] = qf[kk][2];
          af[3] = qf[kk][3];
        } else {
          detail::ldmatrix_x4(af, sQ + q_cur.at(kk, 0));
        }
        std::uint32_t kb[4];  // B fragments of tokens t0..t0+7 (kb0, kb1) and t0+8..t0+15 (kb2, kb3)
        detail::ldmatrix_x4(kb, kS + k_cur.at(kk, 2 * u));
        detail::mma_16816(s[0], af, kb[0], kb[1]);
        detail::mma_16816(s[1], af, kb[2], kb[3]);
      }

      // Online softmax in log2 units; tokens past the split's end are masked.
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = nt * 8 + 2 * (lane & 3) + (e & 1);
          s[nt][e] = col < valid ? s[nt][e] * a.scale_log2 : -INFINITY;
        }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float tile_max = detail::quad_max(fmaxf(fmaxf(s[0][2 * r], s[0][2 * r + 1]), fmaxf(s[1][2 * r], s[1][2 * r + 1])));
        const float new_max = fmaxf(row_max[r], tile_max);
        const float ref = new_max == -INFINITY ? 0.f : new_max;  // all masked so far: keep exp2 finite
        const float alpha = detail::fast_exp2(row_max[r] - ref);
        row_max[r] = new_max;
        row_sum[r] *= alpha;
#pragma unroll
        for (int dt = 0; dt < kDt; ++dt) {
          acc[dt][2 * r] *= alpha;
          acc[dt][2 * r + 1] *= alpha;
        }
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          s[nt][2 * r] = detail::fast_exp2(s[nt][2 * r] - ref);
          s[nt][2 * r + 1] = detail::fast_exp2(s[nt][2 * r + 1] - ref);
          row_sum[r] += s[nt][2 * r] + s[nt][2 * r + 1];
        }
      }

      // O[16 rows, D] += P[16, 16 tokens] V[16 tokens, D].
      std::uint32_t pf[4];
      pf[0] = detail::pack_bf16x2(s[0][0], s[0][1]);
      pf[1] = detail::pack_bf16x2(s[0][2], s[0][3]);
      pf[2] = detail::pack_bf16x2(s[1][0], s[1][1]);
      pf[3] = detail::pack_bf16x2(s[1][2], s[1][3]);
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        std::uint32_t vb[4];  // B fragments of dims dp*16..+7 (vb0, vb1) and dp*16+8..+15 (vb2, vb3)
        detail::ldmatrix_x4_trans(vb, vS + v_cur.at(dp, 2 * u));
        detail::mma_16816(acc[2 * dp], pf, vb[0], vb[1]);
        detail::mma_16816(acc[2 * dp + 1], pf, vb[2], vb[3]);
      }
    }
    if constexpr (F8) __syncthreads();  // every warp is done with the bf16 tiles before the next conversion
  }

  // Merge the warps that share an m-tile. The stage buffers are reused: drain and sync first.
  detail::cp_async_wait<0>();
  __syncthreads();
  float* s_acc = reinterpret_cast<float*>(smem + kRows * D * 2);  // [warp][dt][lane][4], 256 * D bytes
  static_assert(kWarps * D * 16 * 4 <= smem_bytes<D, MT, F8>() - kRows * D * 2, "merge scratch must fit the stages");
#pragma unroll
  for (int r = 0; r < 2; ++r) row_sum[r] = detail::quad_sum(row_sum[r]);
#pragma unroll
  for (int dt = 0; dt < kDt; ++dt)
    *reinterpret_cast<float4*>(s_acc + ((warp * kDt + dt) * 32 + lane) * 4) =
        make_float4(acc[dt][0], acc[dt][1], acc[dt][2], acc[dt][3]);
  if ((lane & 3) == 0) {
    s_max[warp][lane >> 2] = row_max[0];
    s_max[warp][(lane >> 2) + 8] = row_max[1];
    s_sum[warp][lane >> 2] = row_sum[0];
    s_sum[warp][(lane >> 2) + 8] = row_sum[1];
  }
  __syncthreads();

  // Per row of the group: the merge weights of its warps, 2^(max_w - max) / sum, written over s_sum, and
  // the row's log-sum-exp over s_max[m][rr] (thread r alone reads and writes row r's entries). The
  // element loop below then does two multiply-adds per output instead of the exponentials and the
  // division per element that the first version spent (G * D / 128 of them per thread: 32 for MQA).
  if (tid < G) {
    const int m = tid >> 4, rr = tid & 15;
    float mx = -INFINITY;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) mx = fmaxf(mx, s_max[g * MT + m][rr]);
    float f[kGroups];
    float sum = 0.f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      f[g] = mx == -INFINITY ? 0.f : exp2f(s_max[g * MT + m][rr] - mx);
      sum += f[g] * s_sum[g * MT + m][rr];
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      if constexpr (F8)
        s_sum[g * MT + m][rr] = f[g] * inv * a.v_scale;  // fp8 KV: V's scale (the lse stays unscaled)
      else
        s_sum[g * MT + m][rr] = f[g] * inv;
    }
    s_max[m][rr] = sum > 0.f ? mx + log2f(sum) : -INFINITY;
  }
  __syncthreads();

  // Two adjacent dims per step: they are adjacent in a lane's accumulator fragment (c0, c1 / c2, c3).
  for (int e = tid; e < G * (D / 2); e += kThreads) {
    const int r = e / (D / 2), d = 2 * (e % (D / 2));
    const int m = r >> 4, rr = r & 15;
    const int frag_lane = ((rr & 7) << 2) | ((d & 7) >> 1);
    const int frag_reg = (rr >> 3) << 1;
    float2 out = make_float2(0.f, 0.f);
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const int w = g * MT + m;
      const float wgt = s_sum[w][rr];
      const float2 v = *reinterpret_cast<const float2*>(s_acc + ((w * kDt + (d >> 3)) * 32 + frag_lane) * 4 + frag_reg);
      out.x += wgt * v.x;
      out.y += wgt * v.y;
    }
    const std::int64_t head = h0 + r;
    if (a.num_splits == 1) {
      *reinterpret_cast<std::uint32_t*>(a.o + b * a.o_batch_stride + head * D + d) = detail::pack_bf16x2(out.x, out.y);
    } else {
      const std::int64_t row = (static_cast<std::int64_t>(b) * a.num_q_heads + head) * a.num_splits + split;
      *reinterpret_cast<float2*>(a.o_part + row * D + d) = out;
      if (d == 0) a.lse[row] = s_max[m][rr];
    }
  }
  if (a.fused) {
    cooperative_groups::this_grid().sync();  // every split's partial and lse written and visible
    merge_in_grid<D>(a);
  }
}

// Launches the split kernel; with a.fused set, cooperatively (every block resident at once, which
// the grid barrier needs). Returns false, with nothing launched and no error left behind, when the
// cooperative launch is refused; the caller then launches unfused with the combine kernel.
template <int D, int MT, bool F8>
bool launch(const Args& a, dim3 grid, Stream stream) {
  constexpr int bytes = smem_bytes<D, MT, F8>();
  // Per launch, not once: the attribute belongs to the current device.
  MHACFG_CUDA_CHECK(cudaFuncSetAttribute(decode_kernel<D, MT, F8>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  if (a.fused) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = bytes;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cudaLaunchKernelEx(&cfg, decode_kernel<D, MT, F8>, a) != cudaSuccess) {
      (void)cudaGetLastError();  // e.g. cudaErrorCooperativeLaunchTooLarge: not sticky
      return false;
    }
    MHACFG_CUDA_CHECK_LAUNCH("decode_kernel (cooperative)");
    return true;
  }
  decode_kernel<D, MT, F8><<<grid, kThreads, bytes, stream>>>(a);
  MHACFG_CUDA_CHECK_LAUNCH("decode_kernel");
  return true;
}

template <int D, int MT, bool F8>
int blocks_per_sm() {
  constexpr int bytes = smem_bytes<D, MT, F8>();
  static const int n = [] {
    MHACFG_CUDA_CHECK(cudaFuncSetAttribute(decode_kernel<D, MT, F8>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    int blocks = 0;
    MHACFG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, decode_kernel<D, MT, F8>, kThreads, bytes));
    return blocks;
  }();
  return n;
}

// Compile-time (head_dim, m-tiles, fp8 KV) table; `fn` is called with the instantiation's tags. fp8 KV
// has head_dims 64 and 128 only.
template <class Fn>
void dispatch(int head_dim, int m_tiles, bool fp8, Fn&& fn) {
  auto by_mt = [&](auto d_tag, auto f8_tag) {
    constexpr int D = decltype(d_tag)::value;
    switch (m_tiles) {
      case 1: fn(std::integral_constant<int, D>{}, std::integral_constant<int, 1>{}, f8_tag); return;
      case 2: fn(std::integral_constant<int, D>{}, std::integral_constant<int, 2>{}, f8_tag); return;
      case 4: fn(std::integral_constant<int, D>{}, std::integral_constant<int, 4>{}, f8_tag); return;
    }
    MHACFG_CHECK(false, "decode: m-tile count must be 1, 2 or 4");
  };
  if (fp8) {
    switch (head_dim) {
      case 64: by_mt(std::integral_constant<int, 64>{}, std::true_type{}); return;
      case 128: by_mt(std::integral_constant<int, 128>{}, std::true_type{}); return;
    }
    MHACFG_CHECK(false, "decode: fp8 KV head_dim must be 64 or 128");
  }
  switch (head_dim) {
    case 64: by_mt(std::integral_constant<int, 64>{}, std::false_type{}); return;
    case 128: by_mt(std::integral_constant<int, 128>{}, std::false_type{}); return;
    case 256: by_mt(std::integral_constant<int, 256>{}, std::false_type{}); return;
  }
  MHACFG_CHECK(false, "decode: head_dim must be 64, 128 or 256");
}

int m_tiles_for(int group_size) { return group_size <= 16 ? 1 : (group_size <= 32 ? 2 : 4); }

AttentionShape shape_of(const Params& p) {
  AttentionShape s;
  s.batch = p.batch;
  s.q_len = 1;
  s.kv_len = p.kv_len;
  s.num_q_heads = p.num_q_heads;
  s.num_kv_heads = p.num_kv_heads;
  s.head_dim = p.head_dim;
  s.v_head_dim = p.head_dim;
  s.causal = false;
  return s;
}

void check_args(const Params& p) {
  const std::string why = p.fp8_kv ? unsupported_reason_fp8(shape_of(p)) : unsupported_reason(shape_of(p));
  if (!why.empty()) throw InputError("decode attention: " + why);
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  const void* k = p.fp8_kv ? static_cast<const void*>(p.k8) : static_cast<const void*>(p.k);
  const void* v = p.fp8_kv ? static_cast<const void*>(p.v8) : static_cast<const void*>(p.v);
  if (!p.q || !k || !v || !p.o)
    throw InputError("decode attention", "null pointer", p.fp8_kv ? "q, k8, v8 and o are required (fp8_kv)" : "q, k, v and o are required");
  if (p.fp8_kv ? (p.k || p.v) : (p.k8 || p.v8))
    throw InputError("decode attention", "pointer", p.fp8_kv ? "fp8_kv takes k8 and v8, not k and v" : "k8 and v8 need fp8_kv");
  if (!aligned(p.q) || !aligned(k) || !aligned(v) || !aligned(p.o))
    throw InputError("decode attention", "pointer", "q, k, v and o must be 16-byte aligned");
  if (p.q_batch_stride % 8 || p.kv_batch_stride % 8 || p.kv_token_stride % 8 || p.o_batch_stride % 8)
    throw InputError("decode attention", "stride", "strides must be multiples of 8 elements (16 bytes)");
  if (p.fp8_kv && (p.kv_batch_stride % 16 || p.kv_token_stride % 16))
    throw InputError("decode attention", "stride", "fp8 KV strides must be multiples of 16 elements (16 bytes)");
  if (p.fp8_kv && !(std::isfinite(p.k_scale) && p.k_scale > 0.f && std::isfinite(p.v_scale) && p.v_scale > 0.f))
    throw InputError("decode attention", std::to_string(p.k_scale) + ", " + std::to_string(p.v_scale),
                     "k_scale and v_scale must be positive and finite");
  if (p.kv_token_stride < static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim)
    throw InputError("decode attention", std::to_string(p.kv_token_stride), "kv_token_stride smaller than a token's heads");
  if (!(p.softmax_scale > 0.f)) throw InputError("decode attention", std::to_string(p.softmax_scale), "softmax_scale must be positive");
}

}  // namespace

std::string unsupported_reason(const AttentionShape& s) {
  if (s.is_mla()) return "MLA shapes run on the MLA decode kernel";
  if (s.q_len != 1) return "q_len " + std::to_string(s.q_len) + ": the decode kernel takes one query per sequence";
  if (s.head_dim != 64 && s.head_dim != 128 && s.head_dim != 256)
    return "head_dim " + std::to_string(s.head_dim) + ": supported head_dims are 64, 128 and 256";
  if (s.v_head_dim != s.head_dim) return "v_head_dim must equal head_dim";
  if (s.window > 0) return "sliding windows are not implemented";
  if (s.chunk > 0) return "chunked attention is not implemented";
  if (s.batch < 1 || s.batch > 65535) return "batch must be in [1, 65535]";
  if (s.kv_len < 1 || s.kv_len > (1 << 30)) return "kv_len must be in [1, 2^30]";
  if (s.num_kv_heads < 1 || s.num_kv_heads > 65535 || s.num_q_heads % s.num_kv_heads != 0)
    return "num_kv_heads must divide num_q_heads (and be at most 65535)";
  if (s.num_q_heads / s.num_kv_heads > 64)
    return "group size " + std::to_string(s.num_q_heads / s.num_kv_heads) + " > 64 query heads per KV head";
  return "";
}

std::string unsupported_reason_fp8(const AttentionShape& s) {
  const std::string why = unsupported_reason(s);
  if (!why.empty()) return why;
  if (s.head_dim != 64 && s.head_dim != 128)
    return "head_dim " + std::to_string(s.head_dim) + ": fp8 KV decode runs head_dim 64 and 128";
  return "";
}

Plan plan(const Params& p) {
  const int G = p.num_q_heads / p.num_kv_heads;
  int per_sm = 1;
  dispatch(p.head_dim, m_tiles_for(G), p.fp8_kv, [&](auto d, auto mt, auto f8) {
    per_sm = blocks_per_sm<decltype(d)::value, decltype(mt)::value, decltype(f8)::value>();
  });
  detail::SplitProblem sp;
  sp.independent_blocks = static_cast<std::int64_t>(p.batch) * p.num_kv_heads;
  sp.kv_len = p.kv_len;
  sp.tile_tokens = kTile;
  sp.bytes_per_token = 2LL * p.head_dim * (p.fp8_kv ? 1 : 2);  // K and V rows of one head
  sp.partial_bytes_per_split = static_cast<std::int64_t>(G) * (p.head_dim + 1) * 4 * 2;
  sp.v_dim = p.head_dim;
  sp.sm_count = device_info(current_device()).sm_count;
  sp.blocks_per_sm = per_sm;
  const detail::SplitChoice c = detail::choose_splits(sp, p.num_splits);
  Plan out;
  out.num_splits = c.num_splits;
  out.tokens_per_split = c.tokens_per_split;
  out.fused = c.num_splits > 1 && p.fused_merge && device_info(current_device()).cooperative_launch &&
              sp.independent_blocks * c.num_splits <= static_cast<std::int64_t>(sp.sm_count) * sp.blocks_per_sm;
  out.workspace_bytes = c.num_splits > 1 ? detail::split_workspace_bytes(p.batch, p.num_q_heads, c.num_splits, p.head_dim) : 0;
  return out;
}

void run(const Params& p, Stream stream) {
  check_args(p);
  const Plan pl = plan(p);
  detail::require_workspace(p.workspace, p.workspace_bytes, pl.workspace_bytes, "decode attention workspace");
  Args a{};
  a.q = reinterpret_cast<const bf16*>(p.q);
  a.k = reinterpret_cast<const bf16*>(p.k);
  a.v = reinterpret_cast<const bf16*>(p.v);
  a.k8 = p.k8;
  a.v8 = p.v8;
  a.v_scale = p.fp8_kv ? p.v_scale : 1.f;
  a.o = reinterpret_cast<bf16*>(p.o);
  a.kv_lens = p.kv_lens;
  a.kv_len = p.kv_len;
  a.q_batch_stride = p.q_batch_stride;
  a.kv_batch_stride = p.kv_batch_stride;
  a.kv_token_stride = p.kv_token_stride;
  a.o_batch_stride = p.o_batch_stride;
  a.num_q_heads = p.num_q_heads;
  a.group_size = p.num_q_heads / p.num_kv_heads;
  a.scale_log2 = p.softmax_scale * (p.fp8_kv ? p.k_scale : 1.f) * detail::kLog2e;  // fp8 KV: K's scale folded in
  a.tokens_per_split = pl.tokens_per_split;
  a.num_splits = pl.num_splits;
  detail::SplitWorkspace ws;
  if (pl.num_splits > 1) ws = detail::split_workspace(p.workspace, p.batch, p.num_q_heads, pl.num_splits, p.head_dim);
  a.o_part = ws.o_part;
  a.lse = ws.lse;

  const dim3 grid(static_cast<unsigned>(pl.num_splits), static_cast<unsigned>(p.num_kv_heads),
                  static_cast<unsigned>(p.batch));
  // Merge inside the grid when it runs in one wave (a cooperative launch needs every block resident).
  a.fused = pl.num_splits > 1 && pl.fused ? 1 : 0;
  bool launched = false;
  dispatch(p.head_dim, m_tiles_for(a.group_size), p.fp8_kv, [&](auto d, auto mt, auto f8) {
    launched = launch<decltype(d)::value, decltype(mt)::value, decltype(f8)::value>(a, grid, stream);
  });
  if (!launched) {  // cooperative launch refused
    a.fused = 0;
    dispatch(p.head_dim, m_tiles_for(a.group_size), p.fp8_kv, [&](auto d, auto mt, auto f8) {
      launch<decltype(d)::value, decltype(mt)::value, decltype(f8)::value>(a, grid, stream);
    });
  }
  if (pl.num_splits > 1 && !a.fused)
    detail::launch_combine(ws, p.o, p.o_batch_stride, p.batch, p.num_q_heads, pl.num_splits, p.head_dim, stream);
}

}  // namespace mhacfg::kernels::cuda::decode
