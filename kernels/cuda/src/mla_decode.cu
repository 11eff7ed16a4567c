// MLA absorbed decode, version 1: split-KV over a 576-wide shared latent on mma.sync tensor cores.
//
// What this version is. One block of 4 warps handles 16 query heads of one sequence against a
// contiguous range of tokens (one split); more heads are more blocks (head groups), placed next to
// each other in the grid so the groups of one split read the same latent tiles at about the same
// time and all but the first read hit L2. Latent tiles of 32 tokens x 576 values (36 KiB) stream
// through a 2-stage cp.async pipeline into XOR-swizzled shared memory; every token's latent is read
// once from HBM per head group. The work is cut across the warps twice:
//   S = Q K^T: warp w owns 9 of the 36 16-dim k-steps of the latent (every fourth), keeps its Q
//     fragments for them in registers (36 registers) and computes a partial S[16 heads, 32 tokens]. The four
//     partials meet in shared memory (in fragment order, conflict-free float4s) and every warp sums
//     them in the same order, so all warps hold the same S, max and sum without another exchange.
//   O += P V: warp w owns output dims [128 w, 128 w + 128) (V is the latent's first 512 dims), so
//     its accumulator is 64 registers and P comes straight from its S registers.
// The split, the log-sum-exp partials and the combine are decode's (combine.cu).
//
// Why this cut. A warp that owned all 576 dims would need 144 registers of Q and a 256-register
// accumulator; splitting rows instead would reread K once per warp. Here K and V are each read
// exactly once from shared memory per block; the price is the 8 KiB partial-S exchange per tile.
//
// Resources (ptxas, sm_90a, nvcc 13.0.88): 247 registers, no spills, 98 KiB of shared memory: 2 blocks
// of 4 warps per SM.
//
// Measured on the H200 (2026-11-30, L2 flushed, median of 3 allocations x 20 calls; NOTES.md). 16
// heads do 4 * 16 * 544 FLOPs per 1152-byte token, 30 FLOP/byte: memory-bound (ridge ~190).
// - 16 heads, batch 64, kv_len 32768: 2.4 GB of latent, 4 splits (256 blocks, 2 per SM):
//   4.34-4.44 TB/s (acceptance 3.5; the two cuBLAS bmm route measured 1.78). 2 splits (one block per
//   SM) reached only 3.6: one block streams ~28 GB/s (split_kv.cpp).
// - 128 heads: 8 head-group blocks per split; 241 FLOP/byte, compute-bound, bounded by shared-memory
//   traffic (~146 KiB per 32-token tile per group, ldmatrix-fed mma.sync): 154-156 TFLOP/s (the
//   design expected 200-300), far from the 790 TFLOP/s GEMM ceiling; a wgmma version with Q in shared
//   memory is the next step.
#include <cmath>
#include <string>

#include "check.hpp"
#include "combine.hpp"
#include "device_utils.cuh"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/mla_decode.hpp"
#include "mla_decode_hopper.hpp"
#include "split_kv.hpp"

namespace mhacfg::kernels::cuda::mla_decode {

namespace {

using detail::bf16;

constexpr int kThreads = 128;
constexpr int kWarps = 4;
constexpr int kHeads = 16;                        // query heads per block (one m-tile)
constexpr int kTile = 32;                         // tokens per pipeline stage
constexpr int kStages = 2;
constexpr int kRC = kLatentDim / 8;               // 72 chunks of 16 bytes per latent row
constexpr int kTileBytes = kTile * kLatentDim * 2;   // 36864
constexpr int kQBytes = kHeads * kLatentDim * 2;     // 18432
constexpr int kQkSteps = kLatentDim / 16 / kWarps;   // 9 of the 36 k-steps per warp
constexpr int kVDimsPerWarp = kKvLoraRank / kWarps;  // 128
constexpr int kNt = kTile / 8;                       // 4 token n-tiles
constexpr int kExchangeBytes = kWarps * kNt * 32 * 16;  // partial S in fragment order: 8 KiB
constexpr int kSmemBytes = kQBytes + kStages * kTileBytes + kExchangeBytes;
static_assert(kLatentDim % (16 * kWarps) == 0 && kVDimsPerWarp % 16 == 0, "warp slices must be whole k-steps");

struct Args {
  const bf16* q;
  const bf16* kv;
  bf16* o;
  const std::int32_t* kv_lens;
  int kv_len;
  std::int64_t q_batch_stride;
  std::int64_t kv_batch_stride;
  std::int64_t kv_token_stride;
  std::int64_t o_batch_stride;
  int num_heads;
  float scale_log2;
  int tokens_per_split;
  int num_splits;
  float* o_part;
  float* lse;
};

__global__ void __launch_bounds__(kThreads, 2) mla_decode_kernel(const Args a) {
  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t sQ = detail::smem_u32(smem);
  const std::uint32_t sKV = sQ + kQBytes;
  float* s_exchange = reinterpret_cast<float*>(smem + kQBytes + kStages * kTileBytes);

  const int hg = blockIdx.x, split = blockIdx.y, b = blockIdx.z;
  detail::grid_dependents_launch();  // the combine (if split) may be scheduled beside this grid
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int h0 = hg * kHeads;
  const int heads = min(kHeads, a.num_heads - h0);  // valid rows of this block
  const int len = a.kv_lens ? max(0, min(a.kv_lens[b], a.kv_len)) : a.kv_len;
  const int start = split * a.tokens_per_split;
  const int end = min(len, start + a.tokens_per_split);

  if (start >= end) {
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

  const bf16* q_base = a.q + b * a.q_batch_stride + static_cast<std::int64_t>(h0) * kLatentDim;
  const bf16* kv_seq = a.kv + b * a.kv_batch_stride;
  const int num_tiles = (end - start + kTile - 1) / kTile;

  auto load_kv = [&](int tile) {
    const int t0 = start + tile * kTile;
    detail::load_tile_async<kTile, kRC, kThreads>(sKV + (tile % kStages) * kTileBytes,
                                                  kv_seq + static_cast<std::int64_t>(t0) * a.kv_token_stride,
                                                  a.kv_token_stride, min(kTile, end - t0), kv_seq, tid);
  };

  detail::load_tile_async<kHeads, kRC, kThreads>(sQ, q_base, kLatentDim, heads, q_base, tid);
  detail::cp_async_commit();
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < num_tiles) load_kv(st);
    detail::cp_async_commit();
  }

  // S: warp w takes the k-steps w, w + 4, ..., w + 32 of the 36 (latent chunks 2w + 8i + {0, 1}), so
  // the swizzle term of its ldmatrix addresses is fixed and step i is an immediate i * 128 bytes.
  const int q_row = lane & 15, k_row = (lane & 7) + ((lane >> 4) << 3);
  const std::uint32_t q_off = q_row * (kRC * 16) + (((2 * warp + (lane >> 4)) ^ (q_row & 7)) << 4);
  const std::uint32_t k_off = k_row * (kRC * 16) + (((2 * warp + ((lane >> 3) & 1)) ^ (k_row & 7)) << 4);
  // O: warp w owns output dims [128 w, 128 w + 128) = latent chunks 16 w .. 16 w + 15.
  const detail::SwizzleCursor<kRC> v_cur(lane & 15, warp * (kVDimsPerWarp / 8), lane >> 4);
  std::uint32_t qf[kQkSteps][4];
  float acc[kVDimsPerWarp / 8][4];
#pragma unroll
  for (int i = 0; i < kVDimsPerWarp / 8; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};

  for (int tile = 0; tile < num_tiles; ++tile) {
    detail::cp_async_wait<kStages - 2>();
    __syncthreads();  // tile visible; all warps done with the previous tile and its exchange buffer
    if (tile + kStages - 1 < num_tiles) load_kv(tile + kStages - 1);
    detail::cp_async_commit();
    if (tile == 0) {
#pragma unroll
      for (int kk = 0; kk < kQkSteps; ++kk)
        detail::ldmatrix_x4(qf[kk], sQ + q_off + kk * 128);
    }
    const std::uint32_t kvS = sKV + (tile % kStages) * kTileBytes;

    // Partial S[16 heads, 32 tokens] over this warp's 144 latent dims.
    float s[kNt][4];
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kQkSteps; ++kk)
#pragma unroll
      for (int np = 0; np < kNt / 2; ++np) {
        std::uint32_t kb[4];
        detail::ldmatrix_x4(kb, kvS + k_off + kk * 128 + np * 16 * (kRC * 16));
        detail::mma_16816(s[2 * np], qf[kk], kb[0], kb[1]);
        detail::mma_16816(s[2 * np + 1], qf[kk], kb[2], kb[3]);
      }
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt)
      *reinterpret_cast<float4*>(s_exchange + ((warp * kNt + nt) * 32 + lane) * 4) =
          make_float4(s[nt][0], s[nt][1], s[nt][2], s[nt][3]);
    __syncthreads();
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt) {
      float4 t = *reinterpret_cast<const float4*>(s_exchange + ((0 * kNt + nt) * 32 + lane) * 4);
#pragma unroll
      for (int w = 1; w < kWarps; ++w) {  // the same order in every warp: identical sums everywhere
        const float4 u = *reinterpret_cast<const float4*>(s_exchange + ((w * kNt + nt) * 32 + lane) * 4);
        t.x += u.x;
        t.y += u.y;
        t.z += u.z;
        t.w += u.w;
      }
      s[nt][0] = t.x;
      s[nt][1] = t.y;
      s[nt][2] = t.z;
      s[nt][3] = t.w;
    }

    // Online softmax in log2 units; tokens past the split's end are masked.
    const int valid = end - (start + tile * kTile);
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = nt * 8 + 2 * (lane & 3) + (e & 1);
        s[nt][e] = col < valid ? s[nt][e] * a.scale_log2 : -INFINITY;
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < kNt; ++nt) tile_max = fmaxf(tile_max, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      tile_max = detail::quad_max(tile_max);
      const float new_max = fmaxf(row_max[r], tile_max);
      const float ref = new_max == -INFINITY ? 0.f : new_max;
      const float alpha = detail::fast_exp2(row_max[r] - ref);
      row_max[r] = new_max;
      row_sum[r] *= alpha;
#pragma unroll
      for (int dt = 0; dt < kVDimsPerWarp / 8; ++dt) {
        acc[dt][2 * r] *= alpha;
        acc[dt][2 * r + 1] *= alpha;
      }
#pragma unroll
      for (int nt = 0; nt < kNt; ++nt) {
        s[nt][2 * r] = detail::fast_exp2(s[nt][2 * r] - ref);
        s[nt][2 * r + 1] = detail::fast_exp2(s[nt][2 * r + 1] - ref);
        row_sum[r] += s[nt][2 * r] + s[nt][2 * r + 1];
      }
    }

    // O[16 heads, this warp's 128 dims] += P[16, 32 tokens] V[32 tokens, 128 dims].
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      std::uint32_t pf[4];
      pf[0] = detail::pack_bf16x2(s[2 * kk][0], s[2 * kk][1]);
      pf[1] = detail::pack_bf16x2(s[2 * kk][2], s[2 * kk][3]);
      pf[2] = detail::pack_bf16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pf[3] = detail::pack_bf16x2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
      for (int dp = 0; dp < kVDimsPerWarp / 16; ++dp) {
        std::uint32_t vb[4];
        detail::ldmatrix_x4_trans(vb, kvS + v_cur.at(dp, 2 * kk));
        detail::mma_16816(acc[2 * dp], pf, vb[0], vb[1]);
        detail::mma_16816(acc[2 * dp + 1], pf, vb[2], vb[3]);
      }
    }
  }
  detail::cp_async_wait<0>();  // nothing is pending (the last groups were empty); keeps the invariant explicit

  // Every warp holds the same max and sum (same S); each writes its own 128 output dims.
#pragma unroll
  for (int r = 0; r < 2; ++r) row_sum[r] = detail::quad_sum(row_sum[r]);
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = g + 8 * r;
    if (row >= heads) continue;
    const std::int64_t head = h0 + row;
    const float inv = row_sum[r] > 0.f ? 1.f / row_sum[r] : 0.f;
    if (a.num_splits == 1) {
      bf16* out = a.o + b * a.o_batch_stride + head * kKvLoraRank + warp * kVDimsPerWarp;
#pragma unroll
      for (int dt = 0; dt < kVDimsPerWarp / 8; ++dt)
        *reinterpret_cast<std::uint32_t*>(out + dt * 8 + 2 * t) =
            detail::pack_bf16x2(acc[dt][2 * r] * inv, acc[dt][2 * r + 1] * inv);
    } else {
      const std::int64_t prow = (static_cast<std::int64_t>(b) * a.num_heads + head) * a.num_splits + split;
      float* out = a.o_part + prow * kKvLoraRank + warp * kVDimsPerWarp;
#pragma unroll
      for (int dt = 0; dt < kVDimsPerWarp / 8; ++dt)
        *reinterpret_cast<float2*>(out + dt * 8 + 2 * t) = make_float2(acc[dt][2 * r] * inv, acc[dt][2 * r + 1] * inv);
      if (warp == 0 && t == 0) a.lse[prow] = row_sum[r] > 0.f ? row_max[r] + log2f(row_sum[r]) : -INFINITY;
    }
  }
}

int blocks_per_sm() {
  static const int n = [] {
    MHACFG_CUDA_CHECK(cudaFuncSetAttribute(mla_decode_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    int blocks = 0;
    MHACFG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, mla_decode_kernel, kThreads, kSmemBytes));
    return blocks;
  }();
  return n;
}

AttentionShape shape_of(const Params& p) {
  AttentionShape s;
  s.batch = p.batch;
  s.q_len = 1;
  s.kv_len = p.kv_len;
  s.num_q_heads = p.num_heads;
  s.num_kv_heads = 1;
  s.kv_lora_rank = kKvLoraRank;
  s.rope_head_dim = kRopeHeadDim;
  s.head_dim = kLatentDim;
  s.v_head_dim = kKvLoraRank;
  s.causal = false;
  return s;
}

}  // namespace

std::string unsupported_reason(const AttentionShape& s) {
  if (!s.is_mla()) return "not an MLA shape (kv_lora_rank = 0)";
  if (s.kv_lora_rank != kKvLoraRank || s.rope_head_dim != kRopeHeadDim)
    return "kv_lora_rank " + std::to_string(s.kv_lora_rank) + " + rope_head_dim " + std::to_string(s.rope_head_dim) +
           ": the MLA kernel is built for 512 + 64";
  if (s.q_len != 1) return "q_len " + std::to_string(s.q_len) + ": MLA absorbed decode takes one query per sequence";
  if (s.window > 0) return "sliding windows are not implemented";
  if (s.chunk > 0) return "chunked attention is not implemented";
  if (s.batch < 1 || s.batch > 65535) return "batch must be in [1, 65535]";
  if (s.kv_len < 1 || s.kv_len > (1 << 30)) return "kv_len must be in [1, 2^30]";
  if (s.num_q_heads < 1 || s.num_q_heads > 16 * 65535) return "num_q_heads must be in [1, 1048560]";
  return "";
}

const char* to_string(Variant v) {
  switch (v) {
    case Variant::automatic: return "automatic";
    case Variant::mma_sync: return "mma_sync";
    case Variant::wgmma: return "wgmma";
  }
  return "?";
}

// Today's kernel for every shape: the wgmma variant is opt-in until a device run shows it correct and
// faster for 64-128 heads (kernels/cuda/NOTES.md, "Prepared without a device (session 22): MLA decode
// on wgmma"). Even then 16 heads stay on mma_sync (4.34 TB/s, memory-bound: a 64-head block would
// leave 48 rows of every wgmma empty).
Variant resolve(const Params& p) { return p.variant == Variant::automatic ? Variant::mma_sync : p.variant; }

std::string unsupported_on_device(const Params& p, Variant v) {
  std::string why = unsupported_reason(shape_of(p));
  if (!why.empty() || v != Variant::wgmma) return why;
  const DeviceInfo& dev = device_info(current_device());
  if (dev.compute_capability_major != 9 || dev.compute_capability_minor != 0)
    return "the wgmma variant needs an sm_90 device (wgmma, TMA); this one is sm_" +
           std::to_string(dev.compute_capability_major) + std::to_string(dev.compute_capability_minor);
  return "";
}

unsigned wgmma_barrier_timeouts(bool reset) { return hopper_detail::barrier_timeouts(reset); }

Plan plan(const Params& p) {
  const Variant v = resolve(p);
  const bool wg = v == Variant::wgmma;
  if (wg) {  // before the occupancy query: another architecture has no sm_90a image of the kernel
    const std::string why = unsupported_on_device(p, v);
    if (!why.empty()) throw InputError("MLA decode variant", "wgmma", why);
  }
  const int heads_per_block = wg ? hopper_detail::kHeads : kHeads;
  detail::SplitProblem sp;
  sp.independent_blocks = static_cast<std::int64_t>(p.batch) * ((p.num_heads + heads_per_block - 1) / heads_per_block);
  sp.kv_len = p.kv_len;
  sp.tile_tokens = wg ? hopper_detail::kTile : kTile;
  sp.bytes_per_token = kLatentDim * 2;
  sp.partial_bytes_per_split = static_cast<std::int64_t>(heads_per_block) * (kKvLoraRank + 1) * 4 * 2;
  sp.v_dim = kKvLoraRank;
  sp.sm_count = device_info(current_device()).sm_count;
  sp.blocks_per_sm = wg ? hopper_detail::blocks_per_sm() : blocks_per_sm();
  const detail::SplitChoice c = detail::choose_splits(sp, p.num_splits);
  Plan out;
  out.variant = v;
  out.num_splits = c.num_splits;
  out.tokens_per_split = c.tokens_per_split;
  out.workspace_bytes =
      c.num_splits > 1 ? detail::split_workspace_bytes(p.batch, p.num_heads, c.num_splits, kKvLoraRank) : 0;
  return out;
}

void run(const Params& p, Stream stream) {
  const std::string why = unsupported_reason(shape_of(p));
  if (!why.empty()) throw InputError("MLA decode: " + why);
  auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  if (!p.q || !p.kv || !p.o) throw InputError("MLA decode", "null pointer", "q, kv and o are required");
  if (!aligned(p.q) || !aligned(p.kv) || !aligned(p.o))
    throw InputError("MLA decode", "pointer", "q, kv and o must be 16-byte aligned");
  if (p.q_batch_stride % 8 || p.kv_batch_stride % 8 || p.kv_token_stride % 8 || p.o_batch_stride % 8)
    throw InputError("MLA decode", "stride", "strides must be multiples of 8 elements (16 bytes)");
  if (!(p.softmax_scale > 0.f)) throw InputError("MLA decode", std::to_string(p.softmax_scale), "softmax_scale must be positive");
  const Plan pl = plan(p);  // refuses the wgmma variant off sm_90 (InputError)
  detail::require_workspace(p.workspace, p.workspace_bytes, pl.workspace_bytes, "MLA decode workspace");
  if (pl.variant == Variant::wgmma) {
    detail::SplitWorkspace ws;
    if (pl.num_splits > 1) ws = detail::split_workspace(p.workspace, p.batch, p.num_heads, pl.num_splits, kKvLoraRank);
    hopper_detail::launch(p, pl.num_splits, pl.tokens_per_split, ws, stream);
    if (pl.num_splits > 1)
      detail::launch_combine(ws, p.o, p.o_batch_stride, p.batch, p.num_heads, pl.num_splits, kKvLoraRank, stream);
    return;
  }

  Args a{};
  a.q = reinterpret_cast<const bf16*>(p.q);
  a.kv = reinterpret_cast<const bf16*>(p.kv);
  a.o = reinterpret_cast<bf16*>(p.o);
  a.kv_lens = p.kv_lens;
  a.kv_len = p.kv_len;
  a.q_batch_stride = p.q_batch_stride;
  a.kv_batch_stride = p.kv_batch_stride;
  a.kv_token_stride = p.kv_token_stride;
  a.o_batch_stride = p.o_batch_stride;
  a.num_heads = p.num_heads;
  a.scale_log2 = p.softmax_scale * detail::kLog2e;
  a.tokens_per_split = pl.tokens_per_split;
  a.num_splits = pl.num_splits;
  detail::SplitWorkspace ws;
  if (pl.num_splits > 1) ws = detail::split_workspace(p.workspace, p.batch, p.num_heads, pl.num_splits, kKvLoraRank);
  a.o_part = ws.o_part;
  a.lse = ws.lse;

  MHACFG_CUDA_CHECK(cudaFuncSetAttribute(mla_decode_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>((p.num_heads + kHeads - 1) / kHeads), static_cast<unsigned>(pl.num_splits),
                  static_cast<unsigned>(p.batch));
  mla_decode_kernel<<<grid, kThreads, kSmemBytes, stream>>>(a);
  MHACFG_CUDA_CHECK_LAUNCH("mla_decode_kernel");
  if (pl.num_splits > 1)
    detail::launch_combine(ws, p.o, p.o_batch_stride, p.batch, p.num_heads, pl.num_splits, kKvLoraRank, stream);
}

}  // namespace mhacfg::kernels::cuda::mla_decode
