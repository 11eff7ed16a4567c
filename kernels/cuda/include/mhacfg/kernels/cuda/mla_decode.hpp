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
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

std::string unsupported_reason(const AttentionShape& shape);

struct Plan {
  int num_splits = 1;
  int tokens_per_split = 0;  // multiple of 32
  std::size_t workspace_bytes = 0;
};
Plan plan(const Params& p);

void run(const Params& p, Stream stream);

}  // namespace mhacfg::kernels::cuda::mla_decode
