// Prefill flash attention for Hopper (sm_90a): wgmma (warpgroup MMA) fed by TMA. Variant::hopper;
// selected only when asked (tests, the speed tool's sweep) until a device run proves it correct and
// faster than rows32_keys64 (kernels/cuda/NOTES.md, "Prepared without a device (session 22)").
//
// Design (FlashAttention-3, Shah et al., arXiv 2407.08608, read for the design only; no code taken):
// one block computes O for BM = 64 * WG query rows of one (sequence, query head); each of its WG
// consumer warpgroups owns 64 rows end to end (its own online softmax: the row reductions stay inside
// a quad of 4 threads, as in FA2). Q is loaded once by TMA; K and V tiles of BN keys stream through
// two stages each, loaded by TMA into the 128-byte-swizzled layout wgmma reads directly, with
// mbarriers (expected transaction bytes) saying when a stage is full and an arrival count of every
// thread saying when it is free again. S = Q K^T is wgmma with both operands in shared memory
// (K-major); P = exp(S - max) is packed to bf16 in registers and is directly the A operand of
// O += P V (the accumulator layout of two n8 column blocks is the A fragment of one k16 step, so no
// shuffles), with V read N-major (imm-trans-b = 1). Causal blocks stop at the diagonal and mask only
// the tiles that cross it; blocks are issued longest first. GQA/MQA: the block reads its group's K/V
// head; the group's blocks run side by side and share the tiles through L2.
//
// Two kernels on the same tiles and index math:
//  - hopper_prefill_kernel (Variant::hopper), the simpler one: thread 0 of the block issues the TMA
//    for tile n + 1 at the top of tile n (double-buffered, one tile ahead); each warpgroup runs S,
//    softmax, P V in order, and the two warpgroups overlap each other only as the scheduler
//    interleaves them. The version most likely to be right on its first device run.
//  - hopper_ws_prefill_kernel (Variant::hopper_ws): FA3's warp specialisation (a producer warpgroup
//    that gives its registers to the consumers with setmaxnreg) and the softmax of tile n overlapped
//    with the P V product of tile n - 1 inside each consumer warpgroup (its own comment below);
//    Variant::hopper_pingpong adds FA3's ping-pong: the two consumer warpgroups take turns (named
//    barriers) to issue their GEMMs, so one's softmax runs under the other's products.
// Not here yet: a TMA store epilogue, a persistent grid, 3 K/V stages.
// ptxas (sm_90a, nvcc 13.0.88), no spills, no stack: hopper 127 / 158 / 187 registers at d64/128/256
// (256 threads, 1 block per SM at d128/d256; d64 fits 2); hopper_ws 168 at launch (384 threads),
// producer warpgroup 24 and consumer warpgroups 240 after setmaxnreg.
//
// Index math (fragments, descriptors, swizzle, masks, quad reductions) is simulated on the host by
// tools/hopper_sim.py against a direct attention (CTest cuda_host.hopper_sim).
#include <cuda.h>  // CUtensorMap and the cuTensorMapEncodeTiled types only: no libcuda link
#include <cudaTypedefs.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "check.hpp"
#include "device_utils.cuh"
#include "hopper_ptx.cuh"
#include "mhacfg/costmodel/errors.hpp"
#include "prefill_hopper.hpp"

namespace mhacfg::kernels::cuda::prefill::hopper_detail {

namespace {

using detail::bf16;

// head_dim D, keys per tile BN, consumer warpgroups WG (64 query rows each). (The compute_90 PTX
// pass compiles the kernel body away, so some members go unreferenced there: warning 177 is off.)
#pragma nv_diag_suppress 177
template <int D_, int BN_, int WG_>
struct Config {
  static constexpr int D = D_;
  static constexpr int BN = BN_;
  static constexpr int BM = 64 * WG_;
  static constexpr int kThreads = 128 * WG_;
  static constexpr int kChunks = D_ / 64;  // 64-column (128-byte) TMA boxes per row
  static constexpr int kQBytes = BM * D_ * 2;
  static constexpr int kTileBytes = BN_ * D_ * 2;                     // one K or one V tile
  static constexpr int kSmemBytes = kQBytes + 4 * kTileBytes + 1024;  // + alignment slack
  static_assert(D_ % 64 == 0 && BN_ % 64 == 0, "tiles are whole 128-byte swizzle atoms");
};
#pragma nv_diag_default 177

// Shared memory per block: Q 32 KiB + 2 x (K + V) 128 KiB = 161 KiB at d128 (1 block per SM);
// d64 81 KiB; d256 BN 64: 64 + 128 = 193 KiB.
using H64 = Config<64, 128, 2>;
using H128 = Config<128, 128, 2>;
using H256 = Config<256, 64, 2>;

struct Args {
  bf16* o;
  int q_len;
  int kv_len;
  int group_size;
  bool causal;
  float scale_log2;
  std::int64_t o_batch_stride, o_token_stride;
};

enum Barrier { kQFull = 0, kKFull = 1, kVFull = 3, kEmpty = 5, kNumBarriers = 7 };

// Barrier waits that gave up (a pipeline that never delivers: a faulted TMA, a wrong byte count, a
// wrong parity). Tests read it through barrier_timeouts(); a nonzero value names the failure mode.
__device__ unsigned int g_barrier_timeouts = 0;

#if defined(MHACFG_HOPPER_DEVICE)
// Waits for the phase of `parity` on `bar`. A phase that has not completed after 2 s is counted in
// g_barrier_timeouts and the wait returns (the kernel then finishes with wrong numbers instead of
// hanging the device run); once any wait has given up, waits longer than 1 ms give up at once, so a
// broken grid ends in seconds. (A __trap() here made ptxas ignore setmaxnreg's register budget and
// spill the specialised kernel; a plain return does not.) -DMHACFG_HOPPER_DEBUG also prints which.
__device__ __forceinline__ void wait_barrier(std::uint32_t bar, unsigned parity, int which, int tile) {
  if (hopper::mbar_try_wait(bar, parity)) return;
  const std::uint64_t t0 = hopper::global_timer_ns();
  while (!hopper::mbar_try_wait(bar, parity)) {
    const std::uint64_t waited = hopper::global_timer_ns() - t0;
    if (waited > 1000000ull && *static_cast<volatile unsigned int*>(&g_barrier_timeouts) != 0) return;
    if (waited > 2000000000ull) {
      atomicAdd(&g_barrier_timeouts, 1u);
#if defined(MHACFG_HOPPER_DEBUG)
      printf("hopper prefill: barrier %d of tile %d gave up, block (%d,%d,%d) thread %d\n", which, tile, blockIdx.x,
             blockIdx.y, blockIdx.z, threadIdx.x);
#else
      (void)which;
      (void)tile;
#endif
      return;
    }
  }
}

// Masks the S accumulators of key tile key0 for this thread's two rows (positions pos0, pos0 + 8):
// keys past kv_len and, causal, keys after the row's position. Accumulator j holds
// (row g + 8 ((j >> 1) & 1), key 8 (j >> 2) + 2t + (j & 1)).
template <int BN>
__device__ __forceinline__ void mask_tile(float (&sacc)[BN / 2], int pos0, int key0, int kv_len, bool causal, int t) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int pos = pos0 + 8 * r;
    const int last = (causal ? min(pos, kv_len - 1) : kv_len - 1) - key0 - 2 * t;
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      if (i * 8 > last) sacc[4 * i + 2 * r] = -INFINITY;
      if (i * 8 + 1 > last) sacc[4 * i + 2 * r + 1] = -INFINITY;
    }
  }
}

// Online softmax of one tile (raw scores; the scale is folded into exp2's FMA; row max and, at the
// end, row sums across the quad): S becomes P = 2^(S scale - max), the running max and sum move to
// the tile, and alpha[r] is the factor O's row r must be multiplied by (before P V of this tile).
template <int BN>
__device__ __forceinline__ void softmax_tile(float (&sacc)[BN / 2], float (&row_max)[2], float (&row_sum)[2],
                                             float (&alpha)[2], float scale_log2) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float tile_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) tile_max = fmaxf(tile_max, fmaxf(sacc[4 * i + 2 * r], sacc[4 * i + 2 * r + 1]));
    tile_max = detail::quad_max(tile_max);
    const float new_max = fmaxf(row_max[r], tile_max);
    const float ref = new_max == -INFINITY ? 0.f : new_max * scale_log2;
    alpha[r] = detail::fast_exp2(row_max[r] * scale_log2 - ref);
    row_max[r] = new_max;
    row_sum[r] *= alpha[r];
#pragma unroll
    for (int i = 0; i < BN / 8; ++i) {
      sacc[4 * i + 2 * r] = detail::fast_exp2(fmaf(sacc[4 * i + 2 * r], scale_log2, -ref));
      sacc[4 * i + 2 * r + 1] = detail::fast_exp2(fmaf(sacc[4 * i + 2 * r + 1], scale_log2, -ref));
      row_sum[r] += sacc[4 * i + 2 * r] + sacc[4 * i + 2 * r + 1];
    }
  }
}

template <int D>
__device__ __forceinline__ void rescale_o(float (&o)[D / 2], const float (&alpha)[2]) {
#pragma unroll
  for (int i = 0; i < D / 8; ++i) {
    o[4 * i] *= alpha[0];
    o[4 * i + 1] *= alpha[0];
    o[4 * i + 2] *= alpha[1];
    o[4 * i + 3] *= alpha[1];
  }
}

// P as the A operand of k16 step kk: n8 blocks 2kk and 2kk + 1 of S, packed (no shuffles).
template <int BN>
__device__ __forceinline__ void pack_p(const float (&sacc)[BN / 2], std::uint32_t (&pf)[BN / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) {
    pf[kk][0] = detail::pack_bf16x2(sacc[8 * kk + 0], sacc[8 * kk + 1]);
    pf[kk][1] = detail::pack_bf16x2(sacc[8 * kk + 2], sacc[8 * kk + 3]);
    pf[kk][2] = detail::pack_bf16x2(sacc[8 * kk + 4], sacc[8 * kk + 5]);
    pf[kk][3] = detail::pack_bf16x2(sacc[8 * kk + 6], sacc[8 * kk + 7]);
  }
}

// Normalises and stores this thread's two rows (bf16 pairs; rows past q_len are padding, dropped).
template <int D>
__device__ __forceinline__ void store_o(const float (&o)[D / 2], const float (&row_sum)[2], bf16* o_blk, int row,
                                        int q_len, std::int64_t token_stride, int t) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float sum = detail::quad_sum(row_sum[r]);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    if (row + 8 * r >= q_len) continue;
    bf16* out = o_blk + static_cast<std::int64_t>(row + 8 * r) * token_stride + 2 * t;
#pragma unroll
    for (int i = 0; i < D / 8; ++i)
      *reinterpret_cast<std::uint32_t*>(out + i * 8) =
          detail::pack_bf16x2(o[4 * i + 2 * r] * inv, o[4 * i + 2 * r + 1] * inv);
  }
}
// O[64 rows, D] += P[64, BN] V[BN, D] from the V stage at v_desc. PV64 (diagnostic) issues one N = 64
// product per 64-column block of O instead of one N = D product, so the N-major descriptor's leading
// offset (LBO, the stride between 64-column blocks) is never used.
template <int OFF, class C>
__device__ __forceinline__ void pv_block64(float (&o)[C::D / 2], const std::uint32_t (&a)[4], std::uint64_t d) {
  hopper::wgmma_rs_tb64_at<OFF>(o, a, d + (((OFF / 32) * C::BN * 128) >> 4), 1);
  if constexpr (OFF + 32 < C::D / 2) pv_block64<OFF + 32, C>(o, a, d);
}
template <class C, bool PV64>
__device__ __forceinline__ void pv_product(float (&o)[C::D / 2], const std::uint32_t (&pf)[C::BN / 16][4],
                                           std::uint64_t v_desc_stage) {
#pragma unroll
  for (int kk = 0; kk < C::BN / 16; ++kk) {
    const std::uint64_t d = v_desc_stage + ((kk * 16 * 128) >> 4);
    if constexpr (PV64) pv_block64<0, C>(o, pf[kk], d);
    else hopper::wgmma_rs_tb<C::D>(o, pf[kk], d, 1);
  }
}
#endif

template <class C, bool PV64>
__global__ void __launch_bounds__(C::kThreads, 1)
    hopper_prefill_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                          const __grid_constant__ CUtensorMap tv, const Args a) {
#if defined(MHACFG_HOPPER_DEVICE)
  constexpr int D = C::D, BN = C::BN, BM = C::BM;
  constexpr int kSacc = BN / 2;  // S accumulators per thread (m64 x BN over 128 threads)
  constexpr int kOacc = D / 2;   // O accumulators per thread

  __shared__ __align__(8) std::uint64_t bars[kNumBarriers];
  extern __shared__ unsigned char smem_raw[];
  // TMA's 128-byte swizzle repeats every 1024 bytes and the descriptors assume base offset 0: every
  // tile starts on a 1024-byte boundary.
  const std::uint32_t s_base = (detail::smem_u32(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t sQ = s_base;
  const std::uint32_t sK0 = sQ + C::kQBytes;          // stage s at sK0 + s * kTileBytes
  const std::uint32_t sV0 = sK0 + 2 * C::kTileBytes;  // stage s at sV0 + s * kTileBytes
  const std::uint32_t bar0 = detail::smem_u32(bars);
  auto bar = [&](int i) { return bar0 + 8u * static_cast<std::uint32_t>(i); };

  const int m_block = a.causal ? static_cast<int>(gridDim.z - 1 - blockIdx.z) : static_cast<int>(blockIdx.z);
  const int h = blockIdx.x, b = blockIdx.y;
  const int kvh = h / a.group_size;
  const int tid = threadIdx.x;
  const int wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const int m0 = m_block * BM;
  const int q_rows = min(BM, a.q_len - m0);
  const int offset = a.kv_len - a.q_len;  // position of query 0
  const int n_end = a.causal ? min(a.kv_len, offset + m0 + q_rows) : a.kv_len;
  const int num_tiles = (n_end + BN - 1) / BN;

  auto load_kv = [&](int n) {  // thread 0 only
    const int s = n & 1;
    hopper::mbar_arrive_expect_tx(bar(kKFull + s), C::kTileBytes);
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c)
      hopper::tma_load_4d(sK0 + s * C::kTileBytes + c * BN * 128, &tk, bar(kKFull + s), c * 64, kvh, n * BN, b);
    hopper::mbar_arrive_expect_tx(bar(kVFull + s), C::kTileBytes);
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c)
      hopper::tma_load_4d(sV0 + s * C::kTileBytes + c * BN * 128, &tv, bar(kVFull + s), c * 64, kvh, n * BN, b);
  };

  if (tid == 0) {
    hopper::mbar_init(bar(kQFull), 1);
    for (int s = 0; s < 2; ++s) {
      hopper::mbar_init(bar(kKFull + s), 1);
      hopper::mbar_init(bar(kVFull + s), 1);
      hopper::mbar_init(bar(kEmpty + s), C::kThreads);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0) {
    hopper::mbar_arrive_expect_tx(bar(kQFull), C::kQBytes);
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c) hopper::tma_load_4d(sQ + c * BM * 128, &tq, bar(kQFull), c * 64, h, m0, b);
    load_kv(0);
  }

  // Descriptors (hopper_ptx.cuh): Q and K are K-major (rows of 64 dims = 128 bytes, 8-row groups
  // 1024 bytes apart: SBO 1024; a k16 step inside a 64-dim box moves the start 32 bytes, the next box
  // is BM (Q) or BN (K) rows further). V is N-major: a k16 step is 16 key rows = 2048 bytes, the
  // next 64 dims are the next box BN * 128 bytes further (LBO), the next 8 keys 1024 bytes (SBO).
  const std::uint64_t q_desc = hopper::smem_desc(sQ + wg * 64 * 128, 16, 1024);
  const std::uint64_t k_desc = hopper::smem_desc(sK0, 16, 1024);
  const std::uint64_t v_desc = hopper::smem_desc(sV0, BN * 128, 1024);
  auto desc_plus = [](std::uint64_t d, std::uint32_t bytes) { return d + (bytes >> 4); };  // no carry: smem < 256 KiB

  float o[kOacc];
#pragma unroll
  for (int i = 0; i < kOacc; ++i) o[i] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
  // This thread's two rows (block-relative) and their positions in the sequence.
  const int row0 = wg * 64 + warp * 16 + g;
  const int pos0 = offset + m0 + row0;

  for (int n = 0; n < num_tiles; ++n) {
    const int s = n & 1;
    const unsigned parity = static_cast<unsigned>(n >> 1) & 1u;
    if (tid == 0 && n + 1 < num_tiles) {
      // Tile n + 1 goes to the other stage once every thread is done with tile n - 1 there.
      if (n >= 1)
        wait_barrier(bar(kEmpty + ((n + 1) & 1)), static_cast<unsigned>((n - 1) >> 1) & 1u, kEmpty + ((n + 1) & 1),
                     n - 1);
      load_kv(n + 1);
    }
    __syncwarp();
    if (n == 0) wait_barrier(bar(kQFull), 0, kQFull, 0);
    wait_barrier(bar(kKFull + s), parity, kKFull + s, n);

    // S[64 rows of this warpgroup, BN keys] = Q K(n)^T.
    float sacc[kSacc];
    hopper::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const std::uint32_t qa = (kk / 4) * BM * 128 + (kk % 4) * 32;
      const std::uint32_t kb = s * C::kTileBytes + (kk / 4) * BN * 128 + (kk % 4) * 32;
      hopper::wgmma_ss<BN>(sacc, desc_plus(q_desc, qa), desc_plus(k_desc, kb), kk > 0 ? 1 : 0);
    }
    hopper::wgmma_commit();
    hopper::wgmma_wait<0>();
    hopper::fence_operands<kSacc>(sacc);

    // Mask where some key of the tile may be invisible to this warpgroup's first row.
    const int key0 = n * BN;
    if (key0 + BN > a.kv_len || (a.causal && key0 + BN - 1 > offset + m0 + wg * 64))
      mask_tile<BN>(sacc, pos0, key0, a.kv_len, a.causal, t);
    float alpha[2];
    softmax_tile<BN>(sacc, row_max, row_sum, alpha, a.scale_log2);
    rescale_o<D>(o, alpha);
    std::uint32_t pf[BN / 16][4];
    pack_p<BN>(sacc, pf);

    // O[64 rows, D] += P[64, BN] V(n)[BN, D].
    wait_barrier(bar(kVFull + s), parity, kVFull + s, n);
    hopper::fence_operands<kOacc>(o);
    hopper::wgmma_fence();
    pv_product<C, PV64>(o, pf, desc_plus(v_desc, s * C::kTileBytes));
    hopper::wgmma_commit();
    hopper::wgmma_wait<0>();
    hopper::fence_operands<kOacc>(o);
    hopper::mbar_arrive(bar(kEmpty + s));  // this thread is done reading stage s
  }

  store_o<D>(o, row_sum, a.o + b * a.o_batch_stride + static_cast<std::int64_t>(h) * D, m0 + row0, a.q_len,
             a.o_token_stride, t);
#else
  // Built for another architecture than sm_90a: run() refuses before launching.
  (void)tq;
  (void)tk;
  (void)tv;
  (void)a;
  __trap();
#endif
}

// Variant::hopper_ws: FA3's warp specialisation and intra-warpgroup overlap on the same tiles and
// index math. Warpgroup 0 is the producer: it gives registers back (setmaxnreg.dec to 24) and one
// thread issues every TMA load, K(n) and V(n) into stage n % 2 as soon as the consumers have released
// that stage (separate K and V "empty" barriers, so K(n + 2) may come while V(n) is still read).
// Warpgroups 1..WG consume (setmaxnreg.inc to 240), each with this order per tile n >= 1:
//   issue S(n) = Q K(n)^T; issue O += P(n-1) V(n-1); wait for S(n) only (wgmma.wait_group 1);
//   release K(n); mask + softmax of S(n) while P V runs; wait for P V; release V(n-1);
//   O *= alpha(n) (O then holds tile n-1's contribution at tile n's max); P(n) = packed S(n).
// So the softmax of one tile overlaps the P V product of the previous one inside each warpgroup,
// and the producer keeps loads off the consumers' instruction stream.
enum WsBarrier { kWsQFull = 0, kWsKFull = 1, kWsVFull = 3, kWsKEmpty = 5, kWsVEmpty = 7, kWsNumBarriers = 9 };

template <class C, bool PV64, bool PINGPONG>
__global__ void __launch_bounds__(C::kThreads + 128, 1)
    hopper_ws_prefill_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                             const __grid_constant__ CUtensorMap tv, const Args a) {
#if defined(MHACFG_HOPPER_DEVICE)
  constexpr int D = C::D, BN = C::BN, BM = C::BM;
  constexpr int kSacc = BN / 2;
  constexpr int kOacc = D / 2;
  // 128 x 24 + 256 x 240 = 64512 registers = 384 x 168, the launch's count (launch bounds 384, 1):
  // the block's pool must cover the consumers' request or setmaxnreg.inc waits forever.
  constexpr int kProducerRegs = 24;
  constexpr int kConsumerRegs = 240;
  static_assert(128 * kProducerRegs + C::kThreads * kConsumerRegs <= (C::kThreads + 128) * 168, "register pool");

  __shared__ __align__(8) std::uint64_t bars[kWsNumBarriers];
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t s_base = (detail::smem_u32(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t sQ = s_base;
  const std::uint32_t sK0 = sQ + C::kQBytes;
  const std::uint32_t sV0 = sK0 + 2 * C::kTileBytes;
  const std::uint32_t bar0 = detail::smem_u32(bars);
  auto bar = [&](int i) { return bar0 + 8u * static_cast<std::uint32_t>(i); };

  const int m_block = a.causal ? static_cast<int>(gridDim.z - 1 - blockIdx.z) : static_cast<int>(blockIdx.z);
  const int h = blockIdx.x, b = blockIdx.y;
  const int kvh = h / a.group_size;
  const int m0 = m_block * BM;
  const int q_rows = min(BM, a.q_len - m0);
  const int offset = a.kv_len - a.q_len;
  const int n_end = a.causal ? min(a.kv_len, offset + m0 + q_rows) : a.kv_len;
  const int num_tiles = (n_end + BN - 1) / BN;

  if (threadIdx.x == 0) {
    hopper::mbar_init(bar(kWsQFull), 1);
    for (int s = 0; s < 2; ++s) {
      hopper::mbar_init(bar(kWsKFull + s), 1);
      hopper::mbar_init(bar(kWsVFull + s), 1);
      hopper::mbar_init(bar(kWsKEmpty + s), C::kThreads);  // every consumer thread arrives
      hopper::mbar_init(bar(kWsVEmpty + s), C::kThreads);
    }
    hopper::fence_barrier_init();
  }
  __syncthreads();

  if (threadIdx.x < 128) {  // producer warpgroup
    hopper::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      hopper::mbar_arrive_expect_tx(bar(kWsQFull), C::kQBytes);
#pragma unroll
      for (int c = 0; c < C::kChunks; ++c) hopper::tma_load_4d(sQ + c * BM * 128, &tq, bar(kWsQFull), c * 64, h, m0, b);
      for (int n = 0; n < num_tiles; ++n) {
        const int s = n & 1;
        const unsigned parity = static_cast<unsigned>((n - 2) >> 1) & 1u;  // tile n - 2's release
        if (n >= 2) wait_barrier(bar(kWsKEmpty + s), parity, kWsKEmpty + s, n - 2);
        hopper::mbar_arrive_expect_tx(bar(kWsKFull + s), C::kTileBytes);
#pragma unroll
        for (int c = 0; c < C::kChunks; ++c)
          hopper::tma_load_4d(sK0 + s * C::kTileBytes + c * BN * 128, &tk, bar(kWsKFull + s), c * 64, kvh, n * BN, b);
        if (n >= 2) wait_barrier(bar(kWsVEmpty + s), parity, kWsVEmpty + s, n - 2);
        hopper::mbar_arrive_expect_tx(bar(kWsVFull + s), C::kTileBytes);
#pragma unroll
        for (int c = 0; c < C::kChunks; ++c)
          hopper::tma_load_4d(sV0 + s * C::kTileBytes + c * BN * 128, &tv, bar(kWsVFull + s), c * 64, kvh, n * BN, b);
      }
    }
    return;
  }

  hopper::setmaxnreg_inc<kConsumerRegs>();
  const int tid = threadIdx.x - 128;
  const int wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
  const int t = lane & 3;
  const int row0 = wg * 64 + warp * 16 + (lane >> 2);
  const int pos0 = offset + m0 + row0;
  // A tile needs the mask when it runs past kv_len or (causal) past this warpgroup's first row.
  const int first_pos = offset + m0 + wg * 64;
  auto needs_mask = [&](int key0) { return key0 + BN > a.kv_len || (a.causal && key0 + BN - 1 > first_pos); };

  const std::uint64_t q_desc = hopper::smem_desc(sQ + wg * 64 * 128, 16, 1024);
  const std::uint64_t k_desc = hopper::smem_desc(sK0, 16, 1024);
  const std::uint64_t v_desc = hopper::smem_desc(sV0, BN * 128, 1024);
  auto desc_plus = [](std::uint64_t d, std::uint32_t bytes) { return d + (bytes >> 4); };
  auto issue_s = [&](float(&sacc)[kSacc], int s) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const std::uint32_t qa = (kk / 4) * BM * 128 + (kk % 4) * 32;
      const std::uint32_t kb = s * C::kTileBytes + (kk / 4) * BN * 128 + (kk % 4) * 32;
      hopper::wgmma_ss<BN>(sacc, desc_plus(q_desc, qa), desc_plus(k_desc, kb), kk > 0 ? 1 : 0);
    }
    hopper::wgmma_commit();
  };
  auto issue_pv = [&](float(&o)[kOacc], const std::uint32_t(&pf)[BN / 16][4], int s) {
    pv_product<C, PV64>(o, pf, desc_plus(v_desc, s * C::kTileBytes));
    hopper::wgmma_commit();
  };

  float o[kOacc];
#pragma unroll
  for (int i = 0; i < kOacc; ++i) o[i] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.f, 0.f};
  float alpha[2];
  float sacc[kSacc];
  std::uint32_t pf[BN / 16][4];

  // PINGPONG (Variant::hopper_pingpong): the two consumer warpgroups take turns to issue their
  // GEMMs, so one's softmax runs while the other's products occupy the tensor cores (FA3's
  // inter-warpgroup schedule). Warpgroup w waits on named barrier 1 + w before issuing and arrives
  // on the other's after; warpgroup 1 lets warpgroup 0 go first, and warpgroup 0 consumes that
  // extra arrival at the end, so every barrier phase completes.
  auto my_turn = [&] {
    if constexpr (PINGPONG) wg == 0 ? hopper::named_sync<1, 256>() : hopper::named_sync<2, 256>();
  };
  auto your_turn = [&] {
    if constexpr (PINGPONG) wg == 0 ? hopper::named_arrive<2, 256>() : hopper::named_arrive<1, 256>();
  };
  static_assert(!PINGPONG || C::kThreads == 256, "ping-pong is written for two consumer warpgroups");
  if constexpr (PINGPONG) {
    if (wg == 1) hopper::named_arrive<1, 256>();
  }

  // Tile 0: S, softmax, P (O is still zero: no rescale).
  wait_barrier(bar(kWsQFull), 0, kWsQFull, 0);
  wait_barrier(bar(kWsKFull), 0, kWsKFull, 0);
  my_turn();
  hopper::wgmma_fence();
  issue_s(sacc, 0);
  your_turn();
  hopper::wgmma_wait<0>();
  hopper::fence_operands<kSacc>(sacc);
  hopper::mbar_arrive(bar(kWsKEmpty));
  if (needs_mask(0)) mask_tile<BN>(sacc, pos0, 0, a.kv_len, a.causal, t);
  softmax_tile<BN>(sacc, row_max, row_sum, alpha, a.scale_log2);
  pack_p<BN>(sacc, pf);

  for (int n = 1; n < num_tiles; ++n) {
    const int s = n & 1, sp = (n - 1) & 1;
    wait_barrier(bar(kWsKFull + s), static_cast<unsigned>(n >> 1) & 1u, kWsKFull + s, n);
    my_turn();
    hopper::fence_operands<kOacc>(o);
    hopper::wgmma_fence();
    issue_s(sacc, s);
    wait_barrier(bar(kWsVFull + sp), static_cast<unsigned>((n - 1) >> 1) & 1u, kWsVFull + sp, n - 1);
    issue_pv(o, pf, sp);
    your_turn();
    hopper::wgmma_wait<1>();  // S(n) done; P(n-1) V(n-1) may still run
    hopper::fence_operands<kSacc>(sacc);
    hopper::mbar_arrive(bar(kWsKEmpty + s));
    if (needs_mask(n * BN)) mask_tile<BN>(sacc, pos0, n * BN, a.kv_len, a.causal, t);
    softmax_tile<BN>(sacc, row_max, row_sum, alpha, a.scale_log2);
    hopper::wgmma_wait<0>();
    hopper::fence_operands<kOacc>(o);
    hopper::mbar_arrive(bar(kWsVEmpty + sp));
    rescale_o<D>(o, alpha);
    pack_p<BN>(sacc, pf);
  }
  const int sl = (num_tiles - 1) & 1;
  wait_barrier(bar(kWsVFull + sl), static_cast<unsigned>((num_tiles - 1) >> 1) & 1u, kWsVFull + sl, num_tiles - 1);
  my_turn();
  hopper::fence_operands<kOacc>(o);
  hopper::wgmma_fence();
  issue_pv(o, pf, sl);
  your_turn();
  if constexpr (PINGPONG) {
    if (wg == 0) hopper::named_sync<1, 256>();  // warpgroup 1's last arrival on barrier 1
  }
  hopper::wgmma_wait<0>();
  hopper::fence_operands<kOacc>(o);
  hopper::mbar_arrive(bar(kWsVEmpty + sl));

  store_o<D>(o, row_sum, a.o + b * a.o_batch_stride + static_cast<std::int64_t>(h) * D, m0 + row0, a.q_len,
             a.o_token_stride, t);
#else
  (void)tq;
  (void)tk;
  (void)tv;
  (void)a;
  __trap();
#endif
}

// cuTensorMapEncodeTiled through the runtime's driver entry point (no -lcuda at link time).
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    MHACFG_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr)
      throw RuntimeFailure("prefill attention (hopper): the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A [batch, len, heads, D] bf16 tensor as a 4-d TMA map (map_geometry), 128-byte swizzle, zeros
// outside the tensor (a ragged last tile reads zeros, never the next sequence).
CUtensorMap make_map(const void* base, int d, int heads, int len, int batch, std::int64_t token_stride,
                     std::int64_t batch_stride, int rows) {
  const MapGeometry g = map_geometry(d, heads, len, batch, token_stride, batch_stride, rows);
  const std::string why = map_geometry_problem(g);
  if (!why.empty())
    throw InputError("prefill attention (hopper)",
                     "d " + std::to_string(d) + ", heads " + std::to_string(heads) + ", len " + std::to_string(len) +
                         ", token stride " + std::to_string(token_stride) + ", batch stride " +
                         std::to_string(batch_stride),
                     "no TMA map for this layout: " + why);
  CUtensorMap m;
  cuuint64_t dims[4], strides[3];
  cuuint32_t box[4];
  for (int i = 0; i < 4; ++i) dims[i] = g.dims[i], box[i] = g.box[i];
  for (int i = 0; i < 3; ++i) strides[i] = g.strides[i];
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = encode_tiled()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void*>(base), dims, strides,
                                    box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw RuntimeFailure("prefill attention (hopper): cuTensorMapEncodeTiled failed with CUresult " +
                         std::to_string(static_cast<int>(r)) + " (d " + std::to_string(d) + ", heads " +
                         std::to_string(heads) + ", len " + std::to_string(len) + ", token stride " +
                         std::to_string(token_stride) + ", batch stride " + std::to_string(batch_stride) + ")");
  return m;
}

// MHACFG_HOPPER_DIAG=pv64 (read once): a diagnostic for the first device runs, not a tuning knob.
// P V then runs as N = 64 products per 64-column block of O, which never reads the N-major
// descriptor's LBO: if d128/d256 fail without it and pass with it, the LBO reading is what is wrong
// (NOTES.md, session 22).
bool diag_pv64() {
  static const bool on = [] {
    const char* v = std::getenv("MHACFG_HOPPER_DIAG");
    return v != nullptr && std::string(v) == "pv64";
  }();
  return on;
}

template <class C>
void launch(const Params& p, Variant v, Stream stream) {
  Args a{};
  a.o = reinterpret_cast<bf16*>(p.o);
  a.q_len = p.q_len;
  a.kv_len = p.kv_len;
  a.group_size = p.num_q_heads / p.num_kv_heads;
  a.causal = p.causal;
  a.scale_log2 = p.softmax_scale * detail::kLog2e;
  a.o_batch_stride = p.o_batch_stride;
  a.o_token_stride = p.o_token_stride;
  const CUtensorMap tq =
      make_map(p.q, p.head_dim, p.num_q_heads, p.q_len, p.batch, p.q_token_stride, p.q_batch_stride, C::BM);
  const CUtensorMap tk =
      make_map(p.k, p.head_dim, p.num_kv_heads, p.kv_len, p.batch, p.kv_token_stride, p.kv_batch_stride, C::BN);
  const CUtensorMap tv =
      make_map(p.v, p.head_dim, p.num_kv_heads, p.kv_len, p.batch, p.kv_token_stride, p.kv_batch_stride, C::BN);
  const dim3 grid(static_cast<unsigned>(p.num_q_heads), static_cast<unsigned>(p.batch),
                  static_cast<unsigned>((p.q_len + C::BM - 1) / C::BM));
  auto go = [&](auto kernel, int threads, const char* name) {
    MHACFG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
    kernel<<<grid, threads, C::kSmemBytes, stream>>>(tq, tk, tv, a);
    MHACFG_CUDA_CHECK_LAUNCH(name);
  };
  const bool pv64 = diag_pv64();
  if (v == Variant::hopper_pingpong)
    pv64 ? go(hopper_ws_prefill_kernel<C, true, true>, C::kThreads + 128, "hopper_ws_prefill_kernel (ping-pong, pv64)")
         : go(hopper_ws_prefill_kernel<C, false, true>, C::kThreads + 128, "hopper_ws_prefill_kernel (ping-pong)");
  else if (v == Variant::hopper_ws)
    pv64 ? go(hopper_ws_prefill_kernel<C, true, false>, C::kThreads + 128, "hopper_ws_prefill_kernel (pv64)")
         : go(hopper_ws_prefill_kernel<C, false, false>, C::kThreads + 128, "hopper_ws_prefill_kernel");
  else
    pv64 ? go(hopper_prefill_kernel<C, true>, C::kThreads, "hopper_prefill_kernel (pv64)")
         : go(hopper_prefill_kernel<C, false>, C::kThreads, "hopper_prefill_kernel");
}

}  // namespace

MapGeometry map_geometry(int d, int heads, int len, int batch, std::int64_t token_stride, std::int64_t batch_stride,
                         int rows) {
  MapGeometry g{};
  g.dims[0] = static_cast<std::uint64_t>(d);
  g.dims[1] = static_cast<std::uint64_t>(heads);
  g.dims[2] = static_cast<std::uint64_t>(len);
  g.dims[3] = static_cast<std::uint64_t>(batch);
  g.strides[0] = static_cast<std::uint64_t>(d) * 2;  // heads are D apart
  g.strides[1] = static_cast<std::uint64_t>(token_stride) * 2;
  // With one sequence the batch stride is never used; callers may pass anything there.
  g.strides[2] = batch > 1 ? static_cast<std::uint64_t>(batch_stride) * 2 : g.strides[1] * g.dims[2];
  g.box[0] = 64;
  g.box[1] = 1;
  g.box[2] = static_cast<std::uint32_t>(rows);
  g.box[3] = 1;
  return g;
}

std::string map_geometry_problem(const MapGeometry& g) {
  for (int i = 0; i < 4; ++i)
    if (g.dims[i] < 1 || g.dims[i] > (1ull << 32)) return "dimension " + std::to_string(i) + " outside [1, 2^32]";
  std::uint64_t extent = g.dims[0] * 2;  // bytes spanned by the dimensions below
  for (int i = 0; i < 3; ++i) {
    if (g.strides[i] % 16 != 0 || g.strides[i] >= (1ull << 40))
      return "stride " + std::to_string(g.strides[i]) + " bytes is not a multiple of 16 below 2^40";
    if (g.strides[i] < extent) return "strides overlap (dimension " + std::to_string(i + 1) + ")";
    extent = g.strides[i] * g.dims[i + 1];
  }
  for (int i = 0; i < 4; ++i) {
    if (g.box[i] < 1 || g.box[i] > 256) return "box " + std::to_string(i) + " outside [1, 256]";
    // Token boxes may run past the tensor (TMA writes zeros there); the others must fit in it.
    if (i != 2 && g.box[i] > g.dims[i]) return "box " + std::to_string(i) + " larger than the tensor";
  }
  if (g.box[0] * 2 != 128) return "the inner box must be 128 bytes (128-byte swizzle)";
  return "";
}

void tensor_map(CUtensorMap_st* out, const void* base, int d, int heads, int len, int batch,
                std::int64_t token_stride, std::int64_t batch_stride, int rows) {
  *out = make_map(base, d, heads, len, batch, token_stride, batch_stride, rows);
}

unsigned barrier_timeouts(bool reset) {
  unsigned n = 0;
  MHACFG_CUDA_CHECK(cudaMemcpyFromSymbol(&n, g_barrier_timeouts, sizeof n));
  if (reset) {
    const unsigned zero = 0;
    MHACFG_CUDA_CHECK(cudaMemcpyToSymbol(g_barrier_timeouts, &zero, sizeof zero));
  }
  return n;
}

std::string unsupported_on_device(const AttentionShape& s) {
  std::string why = unsupported_reason(s);
  if (!why.empty()) return why;
  const DeviceInfo& dev = device_info(current_device());
  if (dev.compute_capability_major != 9 || dev.compute_capability_minor != 0)
    return "the hopper variant needs an sm_90 device (wgmma, TMA); this one is sm_" +
           std::to_string(dev.compute_capability_major) + std::to_string(dev.compute_capability_minor);
  return "";
}

void run(const Params& p, Stream stream) {
  switch (p.head_dim) {
    case 64: launch<H64>(p, p.variant, stream); return;
    case 128: launch<H128>(p, p.variant, stream); return;
    case 256: launch<H256>(p, p.variant, stream); return;
  }
  throw InputError("prefill attention", std::to_string(p.head_dim), "the hopper variant runs head_dim 64, 128 or 256");
}

}  // namespace mhacfg::kernels::cuda::prefill::hopper_detail
