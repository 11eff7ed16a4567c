#include "shape_checks.hpp"

#include <cmath>

namespace mhacfg::kernels::cpu::detail {

std::string field_reason(const char* field, std::int64_t value, const std::string& why) {
  return std::string(field) + " = " + std::to_string(value) + ": " + why;
}

std::string common_attention_reason(const AttentionShape& s) {
  if (s.batch < 1) return field_reason("batch", s.batch, "must be at least 1");
  if (s.q_len < 1) return field_reason("q_len", s.q_len, "must be at least 1");
  if (s.kv_len < 1) return field_reason("kv_len", s.kv_len, "must be at least 1");
  if (s.q_len > s.kv_len)
    return field_reason("q_len", s.q_len,
                        "must not exceed kv_len = " + std::to_string(s.kv_len) +
                            " (queries are the last q_len positions)");
  if (s.num_q_heads < 1) return field_reason("num_q_heads", s.num_q_heads, "must be at least 1");
  if (s.window < 0) return field_reason("window", s.window, "must be 0 (none) or positive");
  if (s.window > 0 && !s.causal)
    return field_reason("window", s.window, "a sliding window needs causal = true (it looks back from each query)");
  if (s.chunk < 0) return field_reason("chunk", s.chunk, "must be 0 (none) or positive");
  if (s.chunk > 0 && !s.causal) return field_reason("chunk", s.chunk, "chunked attention needs causal = true");
  if (s.chunk > 0 && s.window > 0)
    return field_reason("chunk", s.chunk, "cannot be combined with window = " + std::to_string(s.window));
  if (s.is_mla()) {
    if (s.rope_head_dim < 0) return field_reason("rope_head_dim", s.rope_head_dim, "must not be negative");
    if (s.qk_dim() > kMaxMlaLatentDim)
      return field_reason("kv_lora_rank", s.kv_lora_rank,
                          "kv_lora_rank + rope_head_dim must be at most " + std::to_string(kMaxMlaLatentDim) +
                              " (tile buffers stay in L2)");
    return {};
  }
  if (s.num_kv_heads < 1) return field_reason("num_kv_heads", s.num_kv_heads, "must be at least 1");
  if (s.num_q_heads % s.num_kv_heads != 0)
    return field_reason("num_kv_heads", s.num_kv_heads,
                        "must divide num_q_heads = " + std::to_string(s.num_q_heads));
  if (s.head_dim < 1 || s.head_dim > kMaxHeadDim)
    return field_reason("head_dim", s.head_dim,
                        "must be in 1.." + std::to_string(kMaxHeadDim) + " (tile buffers stay in L2)");
  if (s.v_head_dim < 1 || s.v_head_dim > kMaxHeadDim)
    return field_reason("v_head_dim", s.v_head_dim,
                        "must be in 1.." + std::to_string(kMaxHeadDim) + " (tile buffers stay in L2)");
  return {};
}

float softmax_scale_or_default(float requested, std::int64_t qk_dim) {
  return requested != 0.0f ? requested : static_cast<float>(1.0 / std::sqrt(static_cast<double>(qk_dim)));
}

}  // namespace mhacfg::kernels::cpu::detail
