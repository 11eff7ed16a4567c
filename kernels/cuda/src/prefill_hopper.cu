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
// What this version is not (yet): FA3's warp-specialised producer warpgroup (setmaxnreg register
// split) and the softmax of one tile overlapped with the next tile's S product inside a warpgroup.
// Here thread 0 of the block issues the TMA for tile n + 1 at the top of tile n (one tile ahead,
// double-buffered) and the two consumer warpgroups overlap each other only as the scheduler
// interleaves them. It is the version most likely to be right on its first device run; the
// specialised one is the next step once this one is measured (NOTES.md has the order).
//
// Index math (fragments, descriptors, swizzle, masks, quad reductions) is simulated on the host by
// tools/hopper_sim.py against a direct attention (CTest cuda_host.hopper_sim).
#include <cuda.h>  // CUtensorMap and the cuTensorMapEncodeTiled types only: no libcuda link
#include <cudaTypedefs.h>

#include <cmath>
#include <cstdint>
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
  static constexpr int kTileBytes = BN_ * D_ * 2;  // one K or one V tile
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

#if defined(MHACFG_HOPPER_DEVICE)
// Waits for the phase of `parity` on `bar`; a phase that never completes (a TMA that faulted, a
// wrong byte count) traps after 4 s instead of hanging the device run. With -DMHACFG_HOPPER_DEBUG it
// also prints which barrier (printf costs a stack frame, so it is off in the shipped build).
__device__ __forceinline__ void wait_barrier(std::uint32_t bar, unsigned parity, int which, int tile) {
  if (hopper::mbar_try_wait(bar, parity)) return;
  const std::uint64_t t0 = hopper::global_timer_ns();
  while (!hopper::mbar_try_wait(bar, parity)) {
    if (hopper::global_timer_ns() - t0 > 4000000000ull) {
#if defined(MHACFG_HOPPER_DEBUG)
      printf("hopper prefill: barrier %d (0 Q, 1-2 K, 3-4 V, 5-6 empty) of tile %d timed out, block (%d,%d,%d) thread %d\n",
             which, tile, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
#else
      (void)which;
      (void)tile;
#endif
      __trap();
    }
  }
}
#endif

template <class C>
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
  const std::uint32_t sK0 = sQ + C::kQBytes;                // stage s at sK0 + s * kTileBytes
  const std::uint32_t sV0 = sK0 + 2 * C::kTileBytes;        // stage s at sV0 + s * kTileBytes
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
      if (n >= 1) wait_barrier(bar(kEmpty + ((n + 1) & 1)), static_cast<unsigned>((n - 1) >> 1) & 1u, kEmpty + ((n + 1) & 1), n - 1);
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

    // Mask where some key of the tile may be invisible to this warpgroup's first row. Accumulator j
    // holds (row g + 8 ((j >> 1) & 1), key 8 (j >> 2) + 2t + (j & 1)).
    const int key0 = n * BN;
    if (key0 + BN > a.kv_len || (a.causal && key0 + BN - 1 > offset + m0 + wg * 64)) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int pos = pos0 + 8 * r;
        const int last = (a.causal ? min(pos, a.kv_len - 1) : a.kv_len - 1) - key0 - 2 * t;
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
          if (i * 8 > last) sacc[4 * i + 2 * r] = -INFINITY;
          if (i * 8 + 1 > last) sacc[4 * i + 2 * r + 1] = -INFINITY;
        }
      }
    }
    // Online softmax (raw scores; the scale is folded into exp2's FMA); row max across the quad.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int i = 0; i < BN / 8; ++i) tile_max = fmaxf(tile_max, fmaxf(sacc[4 * i + 2 * r], sacc[4 * i + 2 * r + 1]));
      tile_max = detail::quad_max(tile_max);
      const float new_max = fmaxf(row_max[r], tile_max);
      const float ref = new_max == -INFINITY ? 0.f : new_max * a.scale_log2;
      const float alpha = detail::fast_exp2(row_max[r] * a.scale_log2 - ref);
      row_max[r] = new_max;
      row_sum[r] *= alpha;
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
        o[4 * i + 2 * r] *= alpha;
        o[4 * i + 2 * r + 1] *= alpha;
      }
#pragma unroll
      for (int i = 0; i < BN / 8; ++i) {
        sacc[4 * i + 2 * r] = detail::fast_exp2(fmaf(sacc[4 * i + 2 * r], a.scale_log2, -ref));
        sacc[4 * i + 2 * r + 1] = detail::fast_exp2(fmaf(sacc[4 * i + 2 * r + 1], a.scale_log2, -ref));
        row_sum[r] += sacc[4 * i + 2 * r] + sacc[4 * i + 2 * r + 1];
      }
    }
    // P as the A operand of k16 step kk: n8 blocks 2kk and 2kk + 1 of S, packed (no shuffles).
    std::uint32_t pf[BN / 16][4];
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      pf[kk][0] = detail::pack_bf16x2(sacc[8 * kk + 0], sacc[8 * kk + 1]);
      pf[kk][1] = detail::pack_bf16x2(sacc[8 * kk + 2], sacc[8 * kk + 3]);
      pf[kk][2] = detail::pack_bf16x2(sacc[8 * kk + 4], sacc[8 * kk + 5]);
      pf[kk][3] = detail::pack_bf16x2(sacc[8 * kk + 6], sacc[8 * kk + 7]);
    }

    // O[64 rows, D] += P[64, BN] V(n)[BN, D].
    wait_barrier(bar(kVFull + s), parity, kVFull + s, n);
    hopper::fence_operands<kOacc>(o);
    hopper::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
      hopper::wgmma_rs_tb<D>(o, pf[kk], desc_plus(v_desc, s * C::kTileBytes + kk * 16 * 128), 1);
    hopper::wgmma_commit();
    hopper::wgmma_wait<0>();
    hopper::fence_operands<kOacc>(o);
    hopper::mbar_arrive(bar(kEmpty + s));  // this thread is done reading stage s
  }

  // Normalise and store (bf16 pairs; rows past q_len are padding and are dropped).
  bf16* o_blk = a.o + b * a.o_batch_stride + static_cast<std::int64_t>(h) * D;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float sum = detail::quad_sum(row_sum[r]);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    const int row = m0 + row0 + 8 * r;
    if (row >= a.q_len) continue;
    bf16* out = o_blk + static_cast<std::int64_t>(row) * a.o_token_stride + 2 * t;
#pragma unroll
    for (int i = 0; i < D / 8; ++i)
      *reinterpret_cast<std::uint32_t*>(out + i * 8) = detail::pack_bf16x2(o[4 * i + 2 * r] * inv, o[4 * i + 2 * r + 1] * inv);
  }
#else
  // Built for another architecture than sm_90a: run() refuses before launching.
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

// A [batch, len, heads, D] bf16 tensor (token and batch strides in elements, heads D apart) as a
// 4-d TMA map ordered (D, heads, tokens, batch), boxes of 64 dims x 1 head x `rows` tokens, 128-byte
// swizzle, zeros outside the tensor (a ragged last tile reads zeros, never the next sequence).
CUtensorMap make_map(const void* base, int d, int heads, int len, int batch, std::int64_t token_stride,
                     std::int64_t batch_stride, int rows) {
  CUtensorMap m;
  const std::int64_t batch_bytes = batch > 1 ? batch_stride * 2 : token_stride * 2 * len;  // unused when batch == 1
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(len),
                              static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(d) * 2, static_cast<cuuint64_t>(token_stride) * 2,
                                 static_cast<cuuint64_t>(batch_bytes)};
  const cuuint32_t box[4] = {64, 1, static_cast<cuuint32_t>(rows), 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = encode_tiled()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void*>(base), dims, strides, box,
                                    elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw RuntimeFailure("prefill attention (hopper): cuTensorMapEncodeTiled failed with CUresult " + std::to_string(static_cast<int>(r)) +
                         " (d " + std::to_string(d) + ", heads " + std::to_string(heads) + ", len " + std::to_string(len) +
                         ", token stride " + std::to_string(token_stride) + ", batch stride " + std::to_string(batch_stride) + ")");
  return m;
}

template <class C>
void launch(const Params& p, Stream stream) {
  Args a{};
  a.o = reinterpret_cast<bf16*>(p.o);
  a.q_len = p.q_len;
  a.kv_len = p.kv_len;
  a.group_size = p.num_q_heads / p.num_kv_heads;
  a.causal = p.causal;
  a.scale_log2 = p.softmax_scale * detail::kLog2e;
  a.o_batch_stride = p.o_batch_stride;
  a.o_token_stride = p.o_token_stride;
  const CUtensorMap tq = make_map(p.q, p.head_dim, p.num_q_heads, p.q_len, p.batch, p.q_token_stride, p.q_batch_stride, C::BM);
  const CUtensorMap tk = make_map(p.k, p.head_dim, p.num_kv_heads, p.kv_len, p.batch, p.kv_token_stride, p.kv_batch_stride, C::BN);
  const CUtensorMap tv = make_map(p.v, p.head_dim, p.num_kv_heads, p.kv_len, p.batch, p.kv_token_stride, p.kv_batch_stride, C::BN);
  MHACFG_CUDA_CHECK(cudaFuncSetAttribute(hopper_prefill_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
  const dim3 grid(static_cast<unsigned>(p.num_q_heads), static_cast<unsigned>(p.batch),
                  static_cast<unsigned>((p.q_len + C::BM - 1) / C::BM));
  hopper_prefill_kernel<C><<<grid, C::kThreads, C::kSmemBytes, stream>>>(tq, tk, tv, a);
  MHACFG_CUDA_CHECK_LAUNCH("hopper_prefill_kernel");
}

}  // namespace

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
    case 64: launch<H64>(p, stream); return;
    case 128: launch<H128>(p, stream); return;
    case 256: launch<H256>(p, stream); return;
  }
  throw InputError("prefill attention", std::to_string(p.head_dim), "the hopper variant runs head_dim 64, 128 or 256");
}

}  // namespace mhacfg::kernels::cuda::prefill::hopper_detail
