// Prefill (and multi-token) flash attention on tensor cores: causal or not, GQA/MQA, head_dim
// 64/128/256. Queries are the last q_len of kv_len positions. Design and expected speed:
// src/prefill_attention.cu's header.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::prefill {

// How a block's warps split its query rows (the two FlashAttention-2 layouts).
enum class Variant {
  automatic,  // the default for the head_dim (rows32 for 64 and 128, rows16 for 256)
  rows16,     // each warp owns 16 query rows; Q fragments stay in registers (head_dim <= 128)
  rows32,     // each warp owns 32 rows: K/V fragments reused by two m-tiles (head_dim <= 128)
  rows32_keys64,  // rows32 with 64-key tiles at head_dim 128 (half the barriers per key; the
                  // compiler spills a few registers); the same as rows32 at head_dim 64

  // sm_90 only (src/prefill_hopper.cu): wgmma + TMA, two 64-row consumer warpgroups per block. Never
  // chosen by `automatic` until a device run shows them correct and faster (NOTES.md, session 22).
  // hopper: thread 0 issues the loads. hopper_ws: FA3's producer warpgroup (setmaxnreg) and the
  // softmax of one tile overlapped with the previous tile's P V. hopper_pingpong: hopper_ws with the
  // two consumer warpgroups taking turns at the tensor cores.
  hopper,
  hopper_ws,
  hopper_pingpong,
};

struct Params {
  int batch = 1;
  int q_len = 1;
  int kv_len = 1;
  int num_q_heads = 1;
  int num_kv_heads = 1;
  int head_dim = 128;  // = v_head_dim
  bool causal = true;
  float softmax_scale = 0;

  const Bf16* q = nullptr;  // [batch, q_len, num_q_heads, head_dim]
  std::int64_t q_batch_stride = 0;
  std::int64_t q_token_stride = 0;
  const Bf16* k = nullptr;  // [batch, kv_len, num_kv_heads, head_dim]
  const Bf16* v = nullptr;  // same layout and strides as k
  std::int64_t kv_batch_stride = 0;
  std::int64_t kv_token_stride = 0;
  Bf16* o = nullptr;  // [batch, q_len, num_q_heads, head_dim]
  std::int64_t o_batch_stride = 0;
  std::int64_t o_token_stride = 0;

  Variant variant = Variant::automatic;
};

std::string unsupported_reason(const AttentionShape& shape);
// The same for one variant on the current device: the hopper variants also need an sm_90 GPU.
std::string unsupported_reason(const AttentionShape& shape, Variant v);
std::string to_string(Variant v);
// The variant `automatic` resolves to for a head_dim (rows16 where rows32 does not exist); the
// hopper variants stay what they are at every head_dim.
Variant resolve(Variant v, int head_dim);

void run(const Params& p, Stream stream);

}  // namespace mhacfg::kernels::cuda::prefill
