// MLA absorbed decode (DeepSeek-V2/V3 style): every query head attends over one shared latent per
// token of kv_lora_rank (512) + rope_head_dim (64) values; the first 512 values of the latent are
// also the values. Split-KV with the same log-sum-exp combine as decode. Design and expected speed:
// src/mla_decode.cu's header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::mla_decode {

constexpr int kKvLoraRank = 512;
constexpr int kRopeHeadDim = 64;
constexpr int kLatentDim = kKvLoraRank + kRopeHeadDim;  // 576

// Which kernel runs (issue 28 step 3). automatic is mma_sync, today's kernel (16 heads per block),
// until a device run shows wgmma correct and faster for many heads (kernels/cuda/NOTES.md, "Prepared
// without a device (session 22): MLA decode on wgmma"); 16 heads stay on mma_sync either way.
// wgmma: sm_90a only, 64 heads per block, TMA + wgmma (src/mla_decode_hopper.cu); refused elsewhere.
enum class Variant { automatic, mma_sync, wgmma };
const char* to_string(Variant v);

struct Params {
  int batch = 1;
  int num_heads = 16;
  int kv_len = 1;                         // every sequence's length, or the longest with kv_lens
  const std::int32_t* kv_lens = nullptr;  // device [batch] lengths in [0, kv_len], or null
  float softmax_scale = 0;                // the model's, e.g. 1 / sqrt(192) for DeepSeek-V3

  const Bf16* q = nullptr;  // [batch, num_heads, 576]: absorbed q_nope (512) then q_rope (64)
  std::int64_t q_batch_stride = 0;
  const Bf16* kv = nullptr;  // [batch, kv_capacity, 576]: latent (512) then k_rope (64)
  std::int64_t kv_batch_stride = 0;
  std::int64_t kv_token_stride = 0;
  Bf16* o = nullptr;  // [batch, num_heads, 512]
  std::int64_t o_batch_stride = 0;

  int num_splits = 0;  // 0: chosen for the device
  Variant variant = Variant::automatic;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

std::string unsupported_reason(const AttentionShape& shape);
// The variant automatic runs (today: mma_sync for every shape).
Variant resolve(const Params& p);
// Why `v` cannot run p's shape on the current device ("" when it can); wgmma needs an sm_90 device.
std::string unsupported_on_device(const Params& p, Variant v);
// Barrier waits of the wgmma kernel that gave up after 2 s since the last reset (0 on a healthy
// device; a nonzero count names a pipeline that never delivered). Synchronous.
unsigned wgmma_barrier_timeouts(bool reset);

struct Plan {
  Variant variant = Variant::mma_sync;  // resolved
  int num_splits = 1;
  int tokens_per_split = 0;  // multiple of the variant's tile (32 tokens; wgmma 64)
  std::size_t workspace_bytes = 0;
};
Plan plan(const Params& p);

void run(const Params& p, Stream stream);

}  // namespace mhacfg::kernels::cuda::mla_decode
