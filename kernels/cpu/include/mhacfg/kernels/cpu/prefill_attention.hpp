// Prefill attention on the CPU: fp32, tiled with an online softmax (the q_len x kv_len score matrix
// is never materialised), causal or not, an optional causal sliding window or chunks, MHA/GQA/MQA.
// Queries are the last q_len positions of kv_len tokens (as in mhacfg/costmodel/ops.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg::kernels::cpu {

struct PrefillAttentionParams {
  AttentionShape shape;      // kv_lora_rank must be 0 (MLA is decode-only on the CPU)
  const float* q = nullptr;  // [batch, q_len, num_q_heads, head_dim]
  const float* k = nullptr;  // [batch, kv_len, num_kv_heads, head_dim]
  const float* v = nullptr;  // [batch, kv_len, num_kv_heads, v_head_dim]
  float* o = nullptr;        // [batch, q_len, num_q_heads, v_head_dim], overwritten
  float softmax_scale = 0;   // 0: 1 / sqrt(head_dim)
  int threads = 1;
};

namespace prefill_attention {

// Empty when the shape is supported; otherwise one line naming the field and value.
std::string unsupported_reason(const AttentionShape& s);
inline bool supports(const AttentionShape& s) {
  return unsupported_reason(s).empty();
}

// Throws InputError for an unsupported shape. Sets Eigen's (process-wide) thread count to p.threads.
void run(const PrefillAttentionParams& p);

}  // namespace prefill_attention

}  // namespace mhacfg::kernels::cpu
