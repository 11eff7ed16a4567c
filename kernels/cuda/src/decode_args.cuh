// Decode attention's constants, tile traits and kernel arguments (decode_attention.cu's design notes).
// Included only by decode_attention.cu and decode_merge.cuh: its names live in that file's unnamed namespace.
#pragma once

#include <cstdint>

#include "device_utils.cuh"

namespace mhacfg::kernels::cuda::decode {
namespace {

using detail::bf16;

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kTile = 64;  // tokens per pipeline stage

template <int D>
struct Traits {
  static constexpr int kRowChunks = D / 8;                   // 16-byte chunks per K/V/Q row
  static constexpr int kStages = D == 64 ? 4 : 3;            // 64/96/192 KiB of K+V stages
  static constexpr bool kQInRegs = D <= 128;                 // D/4 registers of Q fragments
  static constexpr int kTileBytes = kTile * D * 2;           // one of K or V, one stage
};

// The fp8 KV variant (head_dim 64 and 128): e4m3 K and V tiles of kTile tokens stream through kStages
// stages of plain rows (D bytes a token) and are converted into one bf16 tile each (Traits<D>'s
// swizzled layout) that the bf16 path's ldmatrix/mma code then reads. Shared memory: Q, the two bf16
// tiles and the stages = 66 KiB at d64 (6 stages) and 100 KiB at d128 (4 stages) with one m-tile, the
// bf16 kernel's sizes, so the same blocks per SM (3 and 2); 5 and 3 stages in flight (40 and 48 KiB of
// fp8 per block against the bf16 kernel's 48 and 64 KiB).
template <int D>
struct Traits8 {
  static_assert(D == 64 || D == 128, "fp8 KV decode runs head_dim 64 and 128");
  static constexpr int kRowChunks = D / 16;             // 16-byte chunks per fp8 K/V row
  static constexpr int kStages = D == 64 ? 6 : 4;
  static constexpr int kStageBytes = kTile * D;         // one of K or V, one stage
};

// The kernel's arguments with the split plan resolved.
struct Args {
  const bf16* q;
  const bf16* k;
  const bf16* v;
  bf16* o;
  const std::int32_t* kv_lens;
  int kv_len;
  std::int64_t q_batch_stride;
  std::int64_t kv_batch_stride;
  std::int64_t kv_token_stride;
  std::int64_t o_batch_stride;
  int num_q_heads;
  int group_size;
  float scale_log2;  // softmax_scale * log2(e): scores live in log2 units
  int tokens_per_split;
  int num_splits;
  float* o_part;
  float* lse;
  int fused;  // 1: launched cooperatively; the blocks merge the splits after a grid barrier
  const std::uint8_t* k8;  // fp8 KV (e4m3) in place of k and v; k's scale is folded into scale_log2
  const std::uint8_t* v8;
  float v_scale;           // fp8 KV: V's scale, applied to the output rows' merge weights
};

}  // namespace
}  // namespace mhacfg::kernels::cuda::decode
