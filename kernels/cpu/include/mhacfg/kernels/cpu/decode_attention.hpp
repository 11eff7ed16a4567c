// Decode attention on the CPU: a few queries (q_len <= kMaxDecodeQLen) against a long K/V cache
// stored in fp32 or bf16, MHA/GQA/MQA. GQA-packed: each KV head is read once for its whole group of
// query heads. The KV length is split across threads (flash-decoding) and the partial softmaxes are
// combined, so batch 1 uses every thread. Queries are the last q_len positions of kv_len tokens.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cpu/bf16.hpp"

namespace mhacfg::kernels::cpu {

inline constexpr std::int64_t kMaxDecodeQLen = 8;

// KvT: float, or bf16_bits for a bf16 cache.
template <class KvT>
struct DecodeAttentionParams {
  AttentionShape shape;      // kv_lora_rank must be 0 (see mla_decode.hpp)
  const float* q = nullptr;  // [batch, q_len, num_q_heads, head_dim]
  const KvT* k = nullptr;    // [batch, kv_len, num_kv_heads, head_dim]
  const KvT* v = nullptr;    // [batch, kv_len, num_kv_heads, v_head_dim]
  float* o = nullptr;        // [batch, q_len, num_q_heads, v_head_dim], overwritten
  float softmax_scale = 0;   // 0: 1 / sqrt(head_dim)
  int threads = 1;
};

namespace decode_attention {

// Empty when the shape and K/V storage type (fp32 or bf16) are supported; otherwise one line naming
// the field and value.
std::string unsupported_reason(const AttentionShape& s, DType kv_dtype);
inline bool supports(const AttentionShape& s, DType kv_dtype) {
  return unsupported_reason(s, kv_dtype).empty();
}

// Throw InputError for an unsupported shape. Set Eigen's (process-wide) thread count to p.threads.
void run(const DecodeAttentionParams<float>& p);
void run(const DecodeAttentionParams<bf16_bits>& p);

}  // namespace decode_attention

}  // namespace mhacfg::kernels::cpu
