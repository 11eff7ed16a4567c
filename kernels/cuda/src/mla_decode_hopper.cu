// MLA absorbed decode on Hopper (sm_90a): wgmma fed by TMA, 64 query heads per block.
// mla_decode::Variant::wgmma; opt-in (tests, the speed tool's sweep) until a device run shows it
// correct and faster than the mma.sync kernel for many heads (kernels/cuda/NOTES.md, "Prepared
// without a device (session 22): MLA decode on wgmma"). Issue 28, step 3.
//
// Why. 128 heads share one 576-wide latent per token: 241 FLOP a byte, compute-bound. The mma.sync
// kernel (mla_decode.cu) reaches 154 TFLOP/s there, 19 % of the GEMM ceiling, bounded by the
// shared-memory traffic of ldmatrix-fed m16 tiles (16 heads per block). Here a block holds 64 heads,
// the m64 of one wgmma, and both operands are read by the tensor cores from shared memory.
//
// Design after FlashMLA's (deepseek-ai/FlashMLA, docs/20250422-new-kernel-deep-dive.md, read for the
// design only, no code taken): 64 query heads against 64 x 576 KV blocks, each loaded as 9 TMA copies
// of 64 x 64; the 64 x 512 fp32 output (32,768 registers) split into two 64 x 256 halves held by two
// warpgroups; P computed by one warpgroup is multiplied by the other's half of V. FlashMLA's "seesaw"
// schedule (the two warpgroups compute S of alternate KV blocks, 660 TFLOP/s on an H800 per that
// write-up) is not here: warpgroup 0 computes every S, which is simpler and the likelier to be right on
// a first device run. One block per (head group of 64, split, sequence), two warpgroups (256 threads),
// 225 KiB of shared memory (1 block per SM):
//  - Q [64 heads x 576] is loaded once by TMA (9 boxes of 64 dims x 64 heads, 128-byte swizzle; heads
//    past num_heads read zeros). KV tiles [64 tokens x 576] stream through 2 stages by TMA (tokens
//    past kv_len read zeros; tokens past the split's end are masked), full barriers with transaction
//    bytes, empty barriers with one arrival per thread.
//  - Warpgroup 0: S[64 heads, 64 tokens] = Q K^T as 36 wgmma.m64n64k16 with both operands K-major in
//    shared memory (as the Hopper prefill's S), then the online softmax on the accumulators (row
//    reductions inside a quad), P packed to bf16 in the A-fragment layout, O[:, 0:256] += P V with
//    V = the tile's first 512 columns read N-major (imm-trans-b; the rs form, 4 wgmma.m64n256k16).
//  - Warpgroup 1 owns O[:, 256:512]: it takes P (16 registers a thread, as uint4s; the A fragment
//    depends only on the warp-in-warpgroup and lane, so thread i of warpgroup 1 reads what thread i
//    of warpgroup 0 wrote) and the rows' rescale factors from shared memory, then does the same rs
//    product on its 256 columns. Named barrier 1: "P(n) written" (warpgroup 0 arrives, 1 syncs);
//    barrier 2: "P(n) read" (1 arrives, 0 syncs before writing P(n + 1)). After the last tile the
//    same pair carries the row sums.
//  - Loads: thread 0 issues Q and tiles 0 and 1; thread 0 of warpgroup 1 (the warpgroup that finishes
//    a tile last) waits for tile n's stage to be released by all 256 threads and issues tile n + 2.
//  - Partials (O normalised by its own sum, lse in log2 units) go to decode's split workspace in the
//    mma.sync kernel's layout, and the same combine kernel merges them (combine.cu).
// Per tile the tensor cores do 64 x 64 x 576 (S) + 64 x 64 x 512 (P V) multiply-adds; warpgroup 1's
// P V of tile n overlaps warpgroup 0's S of tile n + 1. Not here (levers for a second version, read
// the device run first): a producer warpgroup with setmaxnreg, 3 stages (no shared memory left),
// S of tile n + 1 issued before the softmax of tile n.
//
// Index math (descriptors of the 576-wide K-major Q and K tiles, the N-major V over 512 columns, the
// accumulator and A-fragment layouts, the P hand-over, masking, softmax, partials) is simulated on the
// host by tools/mla_wgmma_sim.py against a direct float64 MLA attention (CTest cuda_host.mla_wgmma_sim).
#include <cuda.h>  // CUtensorMap only: no libcuda link

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "check.hpp"
#include "device_utils.cuh"
#include "hopper_ptx.cuh"
#include "mhacfg/costmodel/errors.hpp"
#include "mla_decode_hopper.hpp"
#include "prefill_hopper.hpp"

namespace mhacfg::kernels::cuda::mla_decode::hopper_detail {

namespace {

using detail::bf16;

#pragma nv_diag_suppress 177
constexpr int kThreads = 256;                         // two warpgroups
constexpr int kBoxes = kLatentDim / 64;               // 9 boxes of 64 dims (128 bytes) per row
constexpr int kVCols = kKvLoraRank / 2;               // 256 output columns per warpgroup
constexpr int kQBytes = kHeads * kLatentDim * 2;      // 73728
constexpr int kTileBytes = kTile * kLatentDim * 2;    // 73728
constexpr int kPBytes = 128 * (kTile / 16) * 16;      // 8192: 4 uint4 per thread of warpgroup 0
constexpr int kRowBytes = 128 * 8;                    // one float2 per thread of warpgroup 0
constexpr int kSmemBytes = kQBytes + 2 * kTileBytes + kPBytes + kRowBytes + 1024;  // + alignment slack
constexpr int kSacc = kTile / 2;                      // S accumulators per thread (m64 x n64)
constexpr int kOacc = kVCols / 2;                     // O accumulators per thread (m64 x n256)
static_assert(kSmemBytes + 64 <= 227 * 1024, "one block per SM within the opt-in shared memory");
#pragma nv_diag_default 177

enum Barrier { kQFull = 0, kFull = 1, kEmpty = 3, kNumBarriers = 5 };

struct Args {
  bf16* o;
  float* o_part;
  float* lse;
  const std::int32_t* kv_lens;
  int kv_len;
  int num_heads;
  int tokens_per_split;
  int num_splits;
  float scale_log2;
  std::int64_t o_batch_stride;
};

// Barrier waits that gave up (read by mla_decode::wgmma_barrier_timeouts).
__device__ unsigned int g_mla_barrier_timeouts = 0;

#if defined(MHACFG_HOPPER_DEVICE)
// As the Hopper prefill's wait: a phase not completed after 2 s is counted and the wait returns (wrong
// numbers instead of a hung device run); after one gave up, waits over 1 ms give up at once.
__device__ __forceinline__ void wait_barrier(std::uint32_t bar, unsigned parity) {
  if (hopper::mbar_try_wait(bar, parity)) return;
  const std::uint64_t t0 = hopper::global_timer_ns();
  while (!hopper::mbar_try_wait(bar, parity)) {
    const std::uint64_t waited = hopper::global_timer_ns() - t0;
    if (waited > 1000000ull && *static_cast<volatile unsigned int*>(&g_mla_barrier_timeouts) != 0) return;
    if (waited > 2000000000ull) {
      atomicAdd(&g_mla_barrier_timeouts, 1u);
      return;
    }
  }
}

// PV64 (diagnostic, MHACFG_HOPPER_DIAG=pv64 as for the prefill): one N = 64 product per 64-column box
// of this warpgroup's 256 columns, which never reads the N-major descriptor's LBO.
template <int OFF>
__device__ __forceinline__ void pv_block64(float (&o)[kOacc], const std::uint32_t (&a)[4], std::uint64_t d) {
  hopper::wgmma_rs_tb64_at<OFF>(o, a, d + (((OFF / 32) * kTile * 128) >> 4), 1);
  if constexpr (OFF + 32 < kOacc) pv_block64<OFF + 32>(o, a, d);
}

// O[64 heads, 256 columns] += P[64, 64 tokens] V[64 tokens, 256 columns]; v_desc: this warpgroup's
// first V box in the stage (N-major: a k16 step is 16 token rows = 2048 bytes further).
template <bool PV64>
__device__ __forceinline__ void pv_product(float (&o)[kOacc], const std::uint32_t (&pf)[kTile / 16][4],
                                           std::uint64_t v_desc) {
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) {
    const std::uint64_t d = v_desc + ((kk * 16 * 128) >> 4);
    if constexpr (PV64) pv_block64<0>(o, pf[kk], d);
    else hopper::wgmma_rs_tb<kVCols>(o, pf[kk], d, 1);
  }
}

__device__ __forceinline__ void rescale(float (&o)[kOacc], float a0, float a1) {
#pragma unroll
  for (int i = 0; i < kOacc / 4; ++i) {
    o[4 * i] *= a0;
    o[4 * i + 1] *= a0;
    o[4 * i + 2] *= a1;
    o[4 * i + 3] *= a1;
  }
}
#endif

template <bool PV64>
__global__ void __launch_bounds__(kThreads, 1)
    mla_wgmma_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tkv, const Args a) {
#if defined(MHACFG_HOPPER_DEVICE)
  __shared__ __align__(8) std::uint64_t bars[kNumBarriers];
  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes and the descriptors assume base offset 0.
  const std::uint32_t raw = detail::smem_u32(smem_raw);
  const std::uint32_t s_base = (raw + 1023u) & ~1023u;
  const std::uint32_t sQ = s_base;
  const std::uint32_t sKV0 = sQ + kQBytes;  // stage s at sKV0 + s * kTileBytes
  unsigned char* const p_base = smem_raw + (s_base - raw);
  uint4* const sP = reinterpret_cast<uint4*>(p_base + kQBytes + 2 * kTileBytes);
  float2* const sRow = reinterpret_cast<float2*>(p_base + kQBytes + 2 * kTileBytes + kPBytes);
  const std::uint32_t bar0 = detail::smem_u32(bars);
  auto bar = [&](int i) { return bar0 + 8u * static_cast<std::uint32_t>(i); };

  const int hg = blockIdx.x, split = blockIdx.y, b = blockIdx.z;
  detail::grid_dependents_launch();  // the combine (if split) may be scheduled beside this grid
  const int tid = threadIdx.x, wg = tid >> 7, ltid = tid & 127;
  const int warp = ltid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int h0 = hg * kHeads;
  const int heads = min(kHeads, a.num_heads - h0);
  const int len = a.kv_lens ? max(0, min(a.kv_lens[b], a.kv_len)) : a.kv_len;
  const int start = split * a.tokens_per_split;
  const int end = min(len, start + a.tokens_per_split);

  if (start >= end) {  // an empty split (or sequence): the mma.sync kernel's conventions
    for (int e = tid; e < heads * kKvLoraRank; e += kThreads) {
      const int r = e / kKvLoraRank, d = e % kKvLoraRank;
      if (a.num_splits > 1) {
        if (d == 0) a.lse[(static_cast<std::int64_t>(b) * a.num_heads + h0 + r) * a.num_splits + split] = -INFINITY;
      } else {
        a.o[b * a.o_batch_stride + static_cast<std::int64_t>(h0 + r) * kKvLoraRank + d] = __float2bfloat16_rn(0.f);
      }
    }
    return;
  }
  const int num_tiles = (end - start + kTile - 1) / kTile;

  auto load_tile = [&](int n) {  // one thread
    const int s = n & 1;
    hopper::mbar_arrive_expect_tx(bar(kFull + s), kTileBytes);
#pragma unroll
    for (int c = 0; c < kBoxes; ++c)
      hopper::tma_load_4d(sKV0 + s * kTileBytes + c * kTile * 128, &tkv, bar(kFull + s), c * 64, 0, start + n * kTile,
                          b);
  };

  if (tid == 0) {
    hopper::mbar_init(bar(kQFull), 1);
    for (int s = 0; s < 2; ++s) {
      hopper::mbar_init(bar(kFull + s), 1);
      hopper::mbar_init(bar(kEmpty + s), kThreads);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0) {
    hopper::mbar_arrive_expect_tx(bar(kQFull), kQBytes);
#pragma unroll
    for (int c = 0; c < kBoxes; ++c) hopper::tma_load_4d(sQ + c * kHeads * 128, &tq, bar(kQFull), c * 64, 0, h0, b);
    load_tile(0);
    if (num_tiles > 1) load_tile(1);
  }

  // Descriptors (hopper_ptx.cuh). Q and K: K-major, rows of one 64-dim box are 128 bytes, 8-row groups
  // 1024 bytes apart (SBO); a k16 step inside a box moves the start 32 bytes, the next box is 64 rows
  // (8 KiB) further. V: N-major over this warpgroup's 4 boxes (columns 256 wg ..): the next 64 columns
  // are the next box (LBO 8 KiB), the next 8 tokens 1024 bytes (SBO).
  const std::uint64_t q_desc = hopper::smem_desc(sQ, 16, 1024);
  const std::uint64_t k_desc = hopper::smem_desc(sKV0, 16, 1024);
  const std::uint64_t v_desc = hopper::smem_desc(sKV0 + wg * (kVCols / 64) * kTile * 128, kTile * 128, 1024);
  auto desc_plus = [](std::uint64_t d, std::uint32_t bytes) { return d + (bytes >> 4); };  // no carry: smem < 256 KiB

  float o[kOacc];
#pragma unroll
  for (int i = 0; i < kOacc; ++i) o[i] = 0.f;
  std::uint32_t pf[kTile / 16][4];
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};

  if (wg == 0) {
    wait_barrier(bar(kQFull), 0);
    for (int n = 0; n < num_tiles; ++n) {
      const int s = n & 1;
      const unsigned parity = static_cast<unsigned>(n >> 1) & 1u;
      wait_barrier(bar(kFull + s), parity);

      // S[64 heads, 64 tokens] = Q K(n)^T over the 576 latent dims.
      float sacc[kSacc];
      hopper::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kLatentDim / 16; ++kk) {
        const std::uint32_t qa = (kk / 4) * kHeads * 128 + (kk % 4) * 32;
        const std::uint32_t kb = s * kTileBytes + (kk / 4) * kTile * 128 + (kk % 4) * 32;
        hopper::wgmma_ss<kTile>(sacc, desc_plus(q_desc, qa), desc_plus(k_desc, kb), kk > 0 ? 1 : 0);
      }
      hopper::wgmma_commit();
      hopper::wgmma_wait<0>();
      hopper::fence_operands<kSacc>(sacc);

      // Online softmax in log2 units; accumulator 4i + j is (head 16 warp + g + 8 (j >> 1), token
      // 8i + 2t + (j & 1)); tokens at or past the split's end are masked.
      const int valid = end - (start + n * kTile);
#pragma unroll
      for (int i = 0; i < kTile / 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          sacc[4 * i + j] = 8 * i + 2 * t + (j & 1) < valid ? sacc[4 * i + j] * a.scale_log2 : -INFINITY;
      float alpha[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int i = 0; i < kTile / 8; ++i) tile_max = fmaxf(tile_max, fmaxf(sacc[4 * i + 2 * r], sacc[4 * i + 2 * r + 1]));
        tile_max = detail::quad_max(tile_max);
        const float new_max = fmaxf(row_max[r], tile_max);
        const float ref = new_max == -INFINITY ? 0.f : new_max;
        alpha[r] = detail::fast_exp2(row_max[r] - ref);
        row_max[r] = new_max;
        row_sum[r] *= alpha[r];
#pragma unroll
        for (int i = 0; i < kTile / 8; ++i) {
          sacc[4 * i + 2 * r] = detail::fast_exp2(sacc[4 * i + 2 * r] - ref);
          sacc[4 * i + 2 * r + 1] = detail::fast_exp2(sacc[4 * i + 2 * r + 1] - ref);
          row_sum[r] += sacc[4 * i + 2 * r] + sacc[4 * i + 2 * r + 1];
        }
      }
      // P as the A operand of k16 step kk: n8 blocks 2kk and 2kk + 1 of S (no shuffles).
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        pf[kk][0] = detail::pack_bf16x2(sacc[8 * kk + 0], sacc[8 * kk + 1]);
        pf[kk][1] = detail::pack_bf16x2(sacc[8 * kk + 2], sacc[8 * kk + 3]);
        pf[kk][2] = detail::pack_bf16x2(sacc[8 * kk + 4], sacc[8 * kk + 5]);
        pf[kk][3] = detail::pack_bf16x2(sacc[8 * kk + 6], sacc[8 * kk + 7]);
      }
      // Hand P(n) and the rescale factors to warpgroup 1 once it has read P(n - 1).
      if (n > 0) hopper::named_sync<2, kThreads>();
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) sP[kk * 128 + ltid] = make_uint4(pf[kk][0], pf[kk][1], pf[kk][2], pf[kk][3]);
      sRow[ltid] = make_float2(alpha[0], alpha[1]);
      hopper::named_arrive<1, kThreads>();

      rescale(o, alpha[0], alpha[1]);
      hopper::fence_operands<kOacc>(o);
      hopper::wgmma_fence();
      pv_product<PV64>(o, pf, desc_plus(v_desc, s * kTileBytes));
      hopper::wgmma_commit();
      hopper::wgmma_wait<0>();
      hopper::fence_operands<kOacc>(o);
      hopper::mbar_arrive(bar(kEmpty + s));  // this thread is done reading stage s
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) row_sum[r] = detail::quad_sum(row_sum[r]);
    hopper::named_sync<2, kThreads>();  // warpgroup 1 has read P(last) and its factors
    sRow[ltid] = make_float2(row_sum[0], row_sum[1]);
    hopper::named_arrive<1, kThreads>();
  } else {
    for (int n = 0; n < num_tiles; ++n) {
      const int s = n & 1;
      const unsigned parity = static_cast<unsigned>(n >> 1) & 1u;
      hopper::named_sync<1, kThreads>();  // P(n) written
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
        const uint4 v = sP[kk * 128 + ltid];
        pf[kk][0] = v.x;
        pf[kk][1] = v.y;
        pf[kk][2] = v.z;
        pf[kk][3] = v.w;
      }
      const float2 alpha = sRow[ltid];
      hopper::named_arrive<2, kThreads>();  // P(n) read

      rescale(o, alpha.x, alpha.y);
      wait_barrier(bar(kFull + s), parity);  // (complete already: warpgroup 0 read K(n)) for the TMA writes' visibility
      hopper::fence_operands<kOacc>(o);
      hopper::wgmma_fence();
      pv_product<PV64>(o, pf, desc_plus(v_desc, s * kTileBytes));
      hopper::wgmma_commit();
      hopper::wgmma_wait<0>();
      hopper::fence_operands<kOacc>(o);
      hopper::mbar_arrive(bar(kEmpty + s));
      if (ltid == 0 && n + 2 < num_tiles) {  // refill stage s with tile n + 2 once all 256 threads released it
        wait_barrier(bar(kEmpty + s), parity);
        load_tile(n + 2);
      }
      __syncwarp();
    }
    hopper::named_sync<1, kThreads>();  // the row sums
    const float2 sums = sRow[ltid];
    row_sum[0] = sums.x;
    row_sum[1] = sums.y;
  }

  // This warpgroup's 256 columns of its rows (head 16 warp + g + 8r): accumulator 4i + 2r + e is
  // column 256 wg + 8i + 2t + e.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = warp * 16 + g + 8 * r;
    if (row >= heads) continue;
    const std::int64_t head = h0 + row;
    const float inv = row_sum[r] > 0.f ? 1.f / row_sum[r] : 0.f;
    if (a.num_splits == 1) {
      bf16* out = a.o + b * a.o_batch_stride + head * kKvLoraRank + wg * kVCols + 2 * t;
#pragma unroll
      for (int i = 0; i < kOacc / 4; ++i)
        *reinterpret_cast<std::uint32_t*>(out + 8 * i) = detail::pack_bf16x2(o[4 * i + 2 * r] * inv, o[4 * i + 2 * r + 1] * inv);
    } else {
      const std::int64_t prow = (static_cast<std::int64_t>(b) * a.num_heads + head) * a.num_splits + split;
      float* out = a.o_part + prow * kKvLoraRank + wg * kVCols + 2 * t;
#pragma unroll
      for (int i = 0; i < kOacc / 4; ++i)
        *reinterpret_cast<float2*>(out + 8 * i) = make_float2(o[4 * i + 2 * r] * inv, o[4 * i + 2 * r + 1] * inv);
      if (wg == 0 && t == 0) a.lse[prow] = row_sum[r] > 0.f ? row_max[r] + log2f(row_sum[r]) : -INFINITY;
    }
  }
#else
  // Built for another architecture than sm_90a: run() refuses before launching.
  (void)tq;
  (void)tkv;
  (void)a;
  __trap();
#endif
}

// MHACFG_HOPPER_DIAG=pv64 (read once), the Hopper prefill's diagnostic switch (NOTES.md, session 22).
bool diag_pv64() {
  static const bool on = [] {
    const char* v = std::getenv("MHACFG_HOPPER_DIAG");
    return v != nullptr && std::string(v) == "pv64";
  }();
  return on;
}

}  // namespace

int blocks_per_sm() {
  static const int n = [] {
    MHACFG_CUDA_CHECK(
        cudaFuncSetAttribute(mla_wgmma_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    int blocks = 0;
    MHACFG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, mla_wgmma_kernel<false>, kThreads, kSmemBytes));
    return blocks;
  }();
  return n;
}

void launch(const Params& p, int num_splits, int tokens_per_split, const detail::SplitWorkspace& ws, Stream stream) {
  // Q as (576 dims, 1, heads as the "token" dimension, batch): boxes of 64 dims x 64 heads, heads past
  // num_heads read as zeros. KV as (576, 1, tokens, batch): boxes of 64 dims x 64 tokens.
  CUtensorMap tq, tkv;
  prefill::hopper_detail::tensor_map(&tq, p.q, kLatentDim, 1, p.num_heads, p.batch, kLatentDim, p.q_batch_stride, kHeads);
  prefill::hopper_detail::tensor_map(&tkv, p.kv, kLatentDim, 1, p.kv_len, p.batch, p.kv_token_stride, p.kv_batch_stride,
                                     kTile);
  Args a{};
  a.o = reinterpret_cast<bf16*>(p.o);
  a.o_part = ws.o_part;
  a.lse = ws.lse;
  a.kv_lens = p.kv_lens;
  a.kv_len = p.kv_len;
  a.num_heads = p.num_heads;
  a.tokens_per_split = tokens_per_split;
  a.num_splits = num_splits;
  a.scale_log2 = p.softmax_scale * detail::kLog2e;
  a.o_batch_stride = p.o_batch_stride;
  const dim3 grid(static_cast<unsigned>((p.num_heads + kHeads - 1) / kHeads), static_cast<unsigned>(num_splits),
                  static_cast<unsigned>(p.batch));
  auto go = [&](auto kernel, const char* name) {
    MHACFG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    kernel<<<grid, kThreads, kSmemBytes, stream>>>(tq, tkv, a);
    MHACFG_CUDA_CHECK_LAUNCH(name);
  };
  if (diag_pv64()) go(mla_wgmma_kernel<true>, "mla_wgmma_kernel (pv64)");
  else go(mla_wgmma_kernel<false>, "mla_wgmma_kernel");
}

unsigned barrier_timeouts(bool reset) {
  unsigned n = 0;
  MHACFG_CUDA_CHECK(cudaMemcpyFromSymbol(&n, g_mla_barrier_timeouts, sizeof n));
  if (reset) {
    const unsigned zero = 0;
    MHACFG_CUDA_CHECK(cudaMemcpyToSymbol(g_mla_barrier_timeouts, &zero, sizeof zero));
  }
  return n;
}

}  // namespace mhacfg::kernels::cuda::mla_decode::hopper_detail
