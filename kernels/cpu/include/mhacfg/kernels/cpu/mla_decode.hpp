// MLA decode in the absorbed form on the CPU: every query head attends over one shared latent of
// kv_lora_rank + rope_head_dim per token (K = the whole latent, V = its first kv_lora_rank dims), read
// once for all heads. Latent storage fp32 or bf16; the KV length is split across threads and the
// partial softmaxes combined (flash-decoding). Queries are the last q_len positions of kv_len tokens.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cpu/bf16.hpp"

namespace mhacfg::kernels::cpu {

inline constexpr std::int64_t kMaxMlaDecodeQLen = 8;

// LatentT: float, or bf16_bits for a bf16 latent cache.
template <class LatentT>
struct MlaDecodeParams {
  AttentionShape shape;           // kv_lora_rank > 0; head_dim, v_head_dim, num_kv_heads ignored
  const float* q = nullptr;       // [batch, q_len, num_q_heads, kv_lora_rank + rope_head_dim]
  const LatentT* latent = nullptr;  // [batch, kv_len, kv_lora_rank + rope_head_dim]
  float* o = nullptr;             // [batch, q_len, num_q_heads, kv_lora_rank], overwritten
  // 0: 1 / sqrt(kv_lora_rank + rope_head_dim). Models set their own (DeepSeek: 1/sqrt(192)).
  float softmax_scale = 0;
  int threads = 1;
};

namespace mla_decode {

// Empty when the shape and latent storage type (fp32 or bf16) are supported; otherwise one line
// naming the field and value.
std::string unsupported_reason(const AttentionShape& s, DType latent_dtype);
inline bool supports(const AttentionShape& s, DType latent_dtype) {
  return unsupported_reason(s, latent_dtype).empty();
}

// Throw InputError for an unsupported shape. Set Eigen's (process-wide) thread count to p.threads.
void run(const MlaDecodeParams<float>& p);
void run(const MlaDecodeParams<bf16_bits>& p);

}  // namespace mla_decode

}  // namespace mhacfg::kernels::cpu
