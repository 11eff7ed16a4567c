// The linear-attention op's time-model features: (sequence, value head) recurrences as units, the
// state elements mhacfg's CPU kernel walks and widens.
#include <algorithm>
#include <cmath>

#include "mhacfg/costmodel/ops/linear_attention.hpp"

namespace mhacfg {

OpFeatures op_features(const LinearAttentionShape& s, DType dtype, const CpuKernelFacts& facts) {
  OpFeatures f;
  f.flop = static_cast<double>(linear_attention_flops(s));
  f.bytes = static_cast<double>(linear_attention_bytes(s, dtype));
  f.streams = static_cast<double>(s.batch) * static_cast<double>(s.num_v_heads);
  f.rows = static_cast<double>(s.q_len);
  f.unit_flop = f.flop / std::max(1.0, f.streams);
  const double cells = f.streams * static_cast<double>(s.head_k_dim) * static_cast<double>(s.head_v_dim);
  f.elements = cells * static_cast<double>(s.q_len) * static_cast<double>(cpu_linear_state_passes(s.kind));
  const double blocks = std::ceil(static_cast<double>(s.q_len) / static_cast<double>(facts.linear_token_block));
  f.widened = dtype == DType::fp32 ? 0.0 : 2.0 * cells * blocks;
  return with_kernel_facts(f, facts);
}

}  // namespace mhacfg
