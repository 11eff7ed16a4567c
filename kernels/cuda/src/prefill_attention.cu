// Prefill flash attention, version 1: FlashAttention-2 on mma.sync (sm_80-style tensor cores).
//
// What this version is. One block computes O for a tile of BM query rows of one (sequence, query
// head); each warp owns 16 (rows16) or 32 (rows32) of those rows end to end, so the online softmax
// needs no exchange between warps. Q is staged once in shared memory; K and V tiles of BN = 64 keys
// (32 for rows32 at head_dim 128) stream through one K and one V buffer (cp.async, 16-byte copies,
// XOR-swizzled) in FA2's order: V(n) is fetched while S = Q K(n)^T runs, K(n+1) while the softmax
// and O += P V(n) run. S and O stay in registers (the S accumulators, packed to bf16, are the A
// operand of P V); ldmatrix (.trans for V) feeds m16n8k16 mma.sync. Causal blocks stop at the
// diagonal and mask only the tiles that cross it (or the ragged end of kv_len); blocks are issued
// longest first so the causal tail is short. Queries are the last q_len of kv_len positions (query i
// sits at kv_len - q_len + i). GQA/MQA: a block reads the K/V of its query head's group; the group's
// blocks run side by side and share them through L2.
//
// The layouts (Variant): rows32 (4 warps x 32 rows, FA2's layout for head_dim 128: each K/V fragment
// feeds two m-tiles; Q re-read from shared memory; 2 blocks per SM) with 32- or 64-key tiles, and
// rows16 (8 warps x 16 rows, Q in registers, one block per SM). Measured on the H200 (2026-11-30,
// causal 32q/8kv d128, batch 4, 4096 tokens, 550 GFLOP): rows32 with 64-key tiles 349-357 TFLOP/s
// (the default at head_dim 128; acceptance 330, PyTorch FA2 329), with 32-key tiles 318-332, rows16
// 304-311. Reaching cuDNN's ~600 needs wgmma + TMA with warp specialisation (FA3): the next version.
#include <cmath>
#include <string>
#include <type_traits>

#include "check.hpp"
#include "device_utils.cuh"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/prefill_attention.hpp"
#include "prefill_hopper.hpp"

namespace mhacfg::kernels::cuda::prefill {

namespace {

using detail::bf16;

// One row of the trait table: head_dim, warps, m-tiles (of 16 rows) per warp, keys per tile,
// whether a warp keeps its Q fragments in registers, and the blocks per SM asked of the compiler.
template <int D_, int WARPS, int MW_, int BN_, bool QREGS, int MIN_BLOCKS>
struct Config {
  static constexpr int D = D_;
  static constexpr int MW = MW_;
  static constexpr int BN = BN_;
  static constexpr int BM = WARPS * 16 * MW_;
  static constexpr bool kQInRegs = QREGS;
  static constexpr int kThreads = WARPS * 32;
  static constexpr int kMinBlocks = MIN_BLOCKS;
  static constexpr int RC = D_ / 8;
  static constexpr int kQBytes = BM * D_ * 2;
  static constexpr int kKvBytes = BN_ * D_ * 2;
  static constexpr int kSmemBytes = kQBytes + 2 * kKvBytes;
};

// Chosen for zero spills under -Xptxas -v (sm_90a, nvcc 13.0.88): rows32 at head_dim 128 with 64-key
// tiles needed 255 registers plus 48 bytes of spills, so it uses 32-key tiles; rows16 at 128 keeps Q
// in registers and runs one 8-warp block per SM rather than spill under the 128-register cap of two.
using Rows16D64 = Config<64, 8, 1, 64, true, 2>;    // BM 128, 128 registers, 32 KiB
using Rows32D64 = Config<64, 4, 2, 64, true, 2>;    // BM 128, 234 registers, 32 KiB
using Rows16D128 = Config<128, 8, 1, 64, true, 1>;  // BM 128, 207 registers, 64 KiB, 1 block per SM
using Rows32D128 = Config<128, 4, 2, 32, false, 2>; // BM 128, 247 registers, 48 KiB, 2 blocks per SM
using Rows32D128K64 = Config<128, 4, 2, 64, false, 2>;  // BM 128, 255 registers + spills, 64 KiB
using Rows16D256 = Config<256, 4, 1, 64, false, 2>; // BM 64, 255 registers, 96 KiB, 2 blocks per SM

struct Args {
  const bf16* q;
  const bf16* k;
  const bf16* v;
  bf16* o;
  int q_len;
  int kv_len;
  int group_size;
  bool causal;
  float scale_log2;
  std::int64_t q_batch_stride, q_token_stride;
  std::int64_t kv_batch_stride, kv_token_stride;
  std::int64_t o_batch_stride, o_token_stride;
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks) prefill_kernel(const Args a) {
  constexpr int D = C::D, BM = C::BM, BN = C::BN, MW = C::MW, RC = C::RC;
  constexpr int kSteps = D / 16;  // k-steps of S = Q K^T
  constexpr int kNt = BN / 8;     // key n-tiles of S
  constexpr int kDt = D / 8;      // dim n-tiles of O

  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t sQ = detail::smem_u32(smem);
  const std::uint32_t sK = sQ + C::kQBytes;
  const std::uint32_t sV = sK + C::kKvBytes;

  // Blocks are dispatched x fastest, z slowest: with the query tile in z, every (head, sequence) of one
  // tile is issued before any of the next, so causal blocks go out longest first across the whole grid
  // (not only within a head), and a KV group's query heads read the same K/V tiles side by side.
  const int m_block = a.causal ? static_cast<int>(gridDim.z - 1 - blockIdx.z) : static_cast<int>(blockIdx.z);
  const int h = blockIdx.x, b = blockIdx.y;
  const int kvh = h / a.group_size;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int m0 = m_block * BM;
  const int q_rows = min(BM, a.q_len - m0);
  const int offset = a.kv_len - a.q_len;  // position of query 0
  // Keys this block needs: all, or (causal) up to its last query's position.
  const int n_end = a.causal ? min(a.kv_len, offset + m0 + q_rows) : a.kv_len;
  const int num_tiles = (n_end + BN - 1) / BN;

  const bf16* q_blk = a.q + b * a.q_batch_stride + static_cast<std::int64_t>(m0) * a.q_token_stride +
                      static_cast<std::int64_t>(h) * D;
  const bf16* k_seq = a.k + b * a.kv_batch_stride + static_cast<std::int64_t>(kvh) * D;
  const bf16* v_seq = a.v + b * a.kv_batch_stride + static_cast<std::int64_t>(kvh) * D;
  auto load_k = [&](int n) {
    detail::load_tile_async<BN, RC, C::kThreads>(sK, k_seq + static_cast<std::int64_t>(n) * BN * a.kv_token_stride,
                                                 a.kv_token_stride, min(BN, a.kv_len - n * BN), k_seq, tid);
  };
  auto load_v = [&](int n) {
    detail::load_tile_async<BN, RC, C::kThreads>(sV, v_seq + static_cast<std::int64_t>(n) * BN * a.kv_token_stride,
                                                 a.kv_token_stride, min(BN, a.kv_len - n * BN), v_seq, tid);
  };

  detail::load_tile_async<BM, RC, C::kThreads>(sQ, q_blk, a.q_token_stride, q_rows, q_blk, tid);
  load_k(0);
  detail::cp_async_commit();

  const int warp_row0 = warp * 16 * MW;  // first row of this warp within the block
  const detail::SwizzleCursor<RC> q_cur(warp_row0 + (lane & 15), 0, lane >> 4);          // A of Q K^T
  const detail::SwizzleCursor<RC> k_cur((lane & 7) + ((lane >> 4) << 3), 0, (lane >> 3) & 1);  // B of Q K^T
  const detail::SwizzleCursor<RC> v_cur(lane & 15, 0, lane >> 4);                         // B of P V
  std::uint32_t qf[C::kQInRegs ? MW : 1][C::kQInRegs ? kSteps : 1][4];
  float acc[MW][kDt][4];
#pragma unroll
  for (int mw = 0; mw < MW; ++mw)
#pragma unroll
    for (int i = 0; i < kDt; ++i) acc[mw][i][0] = acc[mw][i][1] = acc[mw][i][2] = acc[mw][i][3] = 0.f;
  float row_max[MW][2], row_sum[MW][2];
#pragma unroll
  for (int mw = 0; mw < MW; ++mw) {
    row_max[mw][0] = row_max[mw][1] = -INFINITY;
    row_sum[mw][0] = row_sum[mw][1] = 0.f;
  }

  for (int n = 0; n < num_tiles; ++n) {
    detail::cp_async_wait<0>();
    __syncthreads();  // K(n) (and Q) landed; every warp is done with V(n-1)
    load_v(n);
    detail::cp_async_commit();
    if constexpr (C::kQInRegs) {
      if (n == 0) {
#pragma unroll
        for (int mw = 0; mw < MW; ++mw)
#pragma unroll
          for (int kk = 0; kk < kSteps; ++kk)
            detail::ldmatrix_x4(qf[mw][kk], sQ + q_cur.at(kk, 2 * mw));
      }
    }

    // S[rows, BN keys] = Q K(n)^T.
    float s[MW][kNt][4];
#pragma unroll
    for (int mw = 0; mw < MW; ++mw)
#pragma unroll
      for (int nt = 0; nt < kNt; ++nt) s[mw][nt][0] = s[mw][nt][1] = s[mw][nt][2] = s[mw][nt][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      std::uint32_t af[MW][4];
#pragma unroll
      for (int mw = 0; mw < MW; ++mw) {
        if constexpr (C::kQInRegs) {
          af[mw][0] = qf[mw][kk][0];
          af[mw][1] = qf[mw][kk][1];
          af[mw][2] = qf[mw][kk][2];
          af[mw][3] = qf[mw][kk][3];
        } else {
          detail::ldmatrix_x4(af[mw], sQ + q_cur.at(kk, 2 * mw));
        }
      }
#pragma unroll
      for (int np = 0; np < kNt / 2; ++np) {
        std::uint32_t kb[4];
        detail::ldmatrix_x4(kb, sK + k_cur.at(kk, 2 * np));
#pragma unroll
        for (int mw = 0; mw < MW; ++mw) {
          detail::mma_16816(s[mw][2 * np], af[mw], kb[0], kb[1]);
          detail::mma_16816(s[mw][2 * np + 1], af[mw], kb[2], kb[3]);
        }
      }
    }

    detail::cp_async_wait<0>();
    __syncthreads();  // V(n) landed; every warp is done with K(n)
    if (n + 1 < num_tiles) {
      load_k(n + 1);
      detail::cp_async_commit();
    }

    // Mask (ragged kv end; causal diagonal) only where some key of the tile may be invisible to the
    // block's first row. Scores stay raw; the scale is folded into the exp2's FMA.
    const int key0 = n * BN;
    if (key0 + BN > a.kv_len || (a.causal && key0 + BN - 1 > offset + m0)) {
#pragma unroll
      for (int mw = 0; mw < MW; ++mw)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int pos = offset + m0 + warp_row0 + mw * 16 + (lane >> 2) + 8 * r;  // this row's position
          const int last = (a.causal ? min(pos, a.kv_len - 1) : a.kv_len - 1) - key0 - 2 * (lane & 3);
#pragma unroll
          for (int nt = 0; nt < kNt; ++nt) {
            if (nt * 8 > last) s[mw][nt][2 * r] = -INFINITY;
            if (nt * 8 + 1 > last) s[mw][nt][2 * r + 1] = -INFINITY;
          }
        }
    }
#pragma unroll
    for (int mw = 0; mw < MW; ++mw) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kNt; ++nt) tile_max = fmaxf(tile_max, fmaxf(s[mw][nt][2 * r], s[mw][nt][2 * r + 1]));
        tile_max = detail::quad_max(tile_max);
        const float new_max = fmaxf(row_max[mw][r], tile_max);  // raw score units
        const float ref = new_max == -INFINITY ? 0.f : new_max * a.scale_log2;
        const float alpha = detail::fast_exp2(row_max[mw][r] * a.scale_log2 - ref);
        row_max[mw][r] = new_max;
        row_sum[mw][r] *= alpha;
#pragma unroll
        for (int dt = 0; dt < kDt; ++dt) {
          acc[mw][dt][2 * r] *= alpha;
          acc[mw][dt][2 * r + 1] *= alpha;
        }
#pragma unroll
        for (int nt = 0; nt < kNt; ++nt) {
          s[mw][nt][2 * r] = detail::fast_exp2(fmaf(s[mw][nt][2 * r], a.scale_log2, -ref));
          s[mw][nt][2 * r + 1] = detail::fast_exp2(fmaf(s[mw][nt][2 * r + 1], a.scale_log2, -ref));
          row_sum[mw][r] += s[mw][nt][2 * r] + s[mw][nt][2 * r + 1];
        }
      }
    }

    // O[rows, D] += P[rows, BN] V(n)[BN, D]. P is packed first so the fp32 S registers die early.
    std::uint32_t pf[MW][BN / 16][4];
#pragma unroll
    for (int mw = 0; mw < MW; ++mw)
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        pf[mw][kk][0] = detail::pack_bf16x2(s[mw][2 * kk][0], s[mw][2 * kk][1]);
        pf[mw][kk][1] = detail::pack_bf16x2(s[mw][2 * kk][2], s[mw][2 * kk][3]);
        pf[mw][kk][2] = detail::pack_bf16x2(s[mw][2 * kk + 1][0], s[mw][2 * kk + 1][1]);
        pf[mw][kk][3] = detail::pack_bf16x2(s[mw][2 * kk + 1][2], s[mw][2 * kk + 1][3]);
      }
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        std::uint32_t vb[4];
        detail::ldmatrix_x4_trans(vb, sV + v_cur.at(dp, 2 * kk));
#pragma unroll
        for (int mw = 0; mw < MW; ++mw) {
          detail::mma_16816(acc[mw][2 * dp], pf[mw][kk], vb[0], vb[1]);
          detail::mma_16816(acc[mw][2 * dp + 1], pf[mw][kk], vb[2], vb[3]);
        }
      }
  }

  // Normalise and store (4-byte bf16 pairs; rows past q_len are padding and are dropped).
  bf16* o_blk = a.o + b * a.o_batch_stride + static_cast<std::int64_t>(h) * D;
#pragma unroll
  for (int mw = 0; mw < MW; ++mw)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float sum = detail::quad_sum(row_sum[mw][r]);
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const int row = m0 + warp_row0 + mw * 16 + (lane >> 2) + 8 * r;
      if (row >= a.q_len) continue;
      bf16* out = o_blk + static_cast<std::int64_t>(row) * a.o_token_stride + 2 * (lane & 3);
#pragma unroll
      for (int dt = 0; dt < kDt; ++dt)
        *reinterpret_cast<std::uint32_t*>(out + dt * 8) =
            detail::pack_bf16x2(acc[mw][dt][2 * r] * inv, acc[mw][dt][2 * r + 1] * inv);
    }
}

template <class C>
void launch(const Args& a, int batch, int num_q_heads, Stream stream) {
  // Per launch, not once: the attribute belongs to the current device.
  MHACFG_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
  const dim3 grid(static_cast<unsigned>(num_q_heads), static_cast<unsigned>(batch),
                  static_cast<unsigned>((a.q_len + C::BM - 1) / C::BM));
  prefill_kernel<C><<<grid, C::kThreads, C::kSmemBytes, stream>>>(a);
  MHACFG_CUDA_CHECK_LAUNCH("prefill_kernel");
}

AttentionShape shape_of(const Params& p) {
  AttentionShape s;
  s.batch = p.batch;
  s.q_len = p.q_len;
  s.kv_len = p.kv_len;
  s.num_q_heads = p.num_q_heads;
  s.num_kv_heads = p.num_kv_heads;
  s.head_dim = p.head_dim;
  s.v_head_dim = p.head_dim;
  s.causal = p.causal;
  return s;
}

}  // namespace

std::string to_string(Variant v) {
  switch (v) {
    case Variant::automatic: return "automatic";
    case Variant::rows16: return "rows16";
    case Variant::rows32: return "rows32";
    case Variant::rows32_keys64: return "rows32_keys64";
    case Variant::hopper: return "hopper";
    case Variant::hopper_ws: return "hopper_ws";
    case Variant::hopper_pingpong: return "hopper_pingpong";
  }
  return "unknown";
}

namespace {
bool is_hopper(Variant v) { return v == Variant::hopper || v == Variant::hopper_ws || v == Variant::hopper_pingpong; }
}  // namespace

Variant resolve(Variant v, int head_dim) {
  // `automatic` never picks hopper: it stays opt-in until a device run shows it correct and faster
  // than rows32_keys64 (kernels/cuda/NOTES.md, session 22).
  if (is_hopper(v)) return v;
  if (head_dim == 256) return Variant::rows16;  // a 32-row warp would need 256 accumulator registers
  if (v != Variant::automatic) return v;
  // H200 (2026-11-30, causal B4 N4096 32q/8kv): rows32 with 64-key tiles 349 TFLOP/s, with 32-key
  // tiles 332, rows16 311; at head_dim 64 rows32 already uses 64-key tiles.
  return head_dim == 128 ? Variant::rows32_keys64 : Variant::rows32;
}

std::string unsupported_reason(const AttentionShape& s) {
  if (s.is_mla()) return "MLA prefill is not implemented (MLA runs as absorbed decode only)";
  if (s.head_dim != 64 && s.head_dim != 128 && s.head_dim != 256)
    return "head_dim " + std::to_string(s.head_dim) + ": supported head_dims are 64, 128 and 256";
  if (s.v_head_dim != s.head_dim) return "v_head_dim must equal head_dim";
  if (s.window > 0) return "sliding windows are not implemented";
  if (s.chunk > 0) return "chunked attention is not implemented";
  if (s.q_len < 1 || s.q_len > s.kv_len) return "q_len must be in [1, kv_len]";
  if (s.kv_len > (1 << 30)) return "kv_len must be at most 2^30";
  if (s.q_len > 65535LL * 64) return "q_len must be at most 65535 * 64 (query tiles are the grid's z)";
  if (s.batch < 1 || s.batch > 65535) return "batch must be in [1, 65535]";
  if (s.num_q_heads < 1 || s.num_q_heads > 65535) return "num_q_heads must be in [1, 65535]";
  if (s.num_kv_heads < 1 || s.num_q_heads % s.num_kv_heads != 0) return "num_kv_heads must divide num_q_heads";
  return "";
}

std::string unsupported_reason(const AttentionShape& s, Variant v) {
  return is_hopper(v) ? hopper_detail::unsupported_on_device(s) : unsupported_reason(s);
}

void run(const Params& p, Stream stream) {
  const std::string why = unsupported_reason(shape_of(p), p.variant);
  if (!why.empty()) throw InputError("prefill attention: " + why);
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  if (!p.q || !p.k || !p.v || !p.o) throw InputError("prefill attention", "null pointer", "q, k, v and o are required");
  if (!aligned(p.q) || !aligned(p.k) || !aligned(p.v) || !aligned(p.o))
    throw InputError("prefill attention", "pointer", "q, k, v and o must be 16-byte aligned");
  if (p.q_batch_stride % 8 || p.q_token_stride % 8 || p.kv_batch_stride % 8 || p.kv_token_stride % 8 ||
      p.o_batch_stride % 8 || p.o_token_stride % 8)
    throw InputError("prefill attention", "stride", "strides must be multiples of 8 elements (16 bytes)");
  if (!(p.softmax_scale > 0.f)) throw InputError("prefill attention", std::to_string(p.softmax_scale), "softmax_scale must be positive");

  Args a{};
  a.q = reinterpret_cast<const bf16*>(p.q);
  a.k = reinterpret_cast<const bf16*>(p.k);
  a.v = reinterpret_cast<const bf16*>(p.v);
  a.o = reinterpret_cast<bf16*>(p.o);
  a.q_len = p.q_len;
  a.kv_len = p.kv_len;
  a.group_size = p.num_q_heads / p.num_kv_heads;
  a.causal = p.causal;
  a.scale_log2 = p.softmax_scale * detail::kLog2e;
  a.q_batch_stride = p.q_batch_stride;
  a.q_token_stride = p.q_token_stride;
  a.kv_batch_stride = p.kv_batch_stride;
  a.kv_token_stride = p.kv_token_stride;
  a.o_batch_stride = p.o_batch_stride;
  a.o_token_stride = p.o_token_stride;

  const Variant v = resolve(p.variant, p.head_dim);
  if (is_hopper(v)) {
    hopper_detail::run(p, stream);
    return;
  }
  switch (p.head_dim) {
    case 64:
      v == Variant::rows16 ? launch<Rows16D64>(a, p.batch, p.num_q_heads, stream)
                           : launch<Rows32D64>(a, p.batch, p.num_q_heads, stream);  // rows32 tiles are 64 keys here
      return;
    case 128:
      v == Variant::rows16          ? launch<Rows16D128>(a, p.batch, p.num_q_heads, stream)
      : v == Variant::rows32_keys64 ? launch<Rows32D128K64>(a, p.batch, p.num_q_heads, stream)
                                    : launch<Rows32D128>(a, p.batch, p.num_q_heads, stream);
      return;
    case 256: launch<Rows16D256>(a, p.batch, p.num_q_heads, stream); return;
  }
  MHACFG_CHECK(false, "prefill: head_dim must be 64, 128 or 256");
}

}  // namespace mhacfg::kernels::cuda::prefill
