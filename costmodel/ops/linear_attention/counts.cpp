// The linear-attention op's counts: FLOPs, state and bytes of one call of the core.
#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/ops/linear_attention.hpp"

namespace mhacfg {

std::string_view to_string(LinearKind k) {
  switch (k) {
    case LinearKind::gated_deltanet: return "gated_deltanet";
    case LinearKind::mamba2: return "mamba2";
    case LinearKind::kda: return "kda";
    case LinearKind::short_conv: return "short_conv";
    case LinearKind::lightning: return "lightning";
  }
  return "?";
}

std::int64_t LinearAttentionShape::conv_dim() const {
  const char* what = "linear-attention conv width";
  return add(mul(mul(2, num_k_heads, what), head_k_dim, what), mul(num_v_heads, head_v_dim, what), what);
}

std::int64_t linear_recurrence_products(LinearKind k) {
  return k == LinearKind::mamba2 || k == LinearKind::lightning ? 2 : 3;
}

WideCount linear_attention_flops(const LinearAttentionShape& s) {
  const char* what = "linear-attention FLOPs";
  // Per token and value head, each state product (S^T k, k delta^T, S^T q; Mamba2: x B^T, h C):
  // 2 * head_k_dim * head_v_dim
  const std::int64_t recurrence =
      mul(mul(2 * linear_recurrence_products(s.kind), s.num_v_heads, what), mul(s.head_k_dim, s.head_v_dim, what), what);
  // The depthwise convolution, x[t] . w per channel: 2 * conv_kernel per channel and token
  const std::int64_t conv = mul(2, s.conv_dim(), s.conv_kernel, what);
  const WideCount per_token = wide_mul(mul(s.batch, s.q_len, what), add(recurrence, conv, what), what);
  if (s.kind != LinearKind::lightning || s.q_len == 1) return per_token;
  // Lightning prefill, per sequence and head, for each block of b tokens: Q K^T (b x b scores of
  // head_k_dim products each) and (Q K^T * decay) V (b x b weights times head_v_dim), 2 b^2 (dk + dv);
  // q_len / block_size whole blocks and one of q_len % block_size tokens.
  MHACFG_CHECK(s.block_size > 0, "lightning attention without a block size");
  const std::int64_t full = s.q_len / s.block_size, rest = s.q_len % s.block_size;
  const WideCount squares = wide_add(wide_mul(full, mul(s.block_size, s.block_size, what), what), mul(rest, rest, what), what);
  const std::int64_t per_square = mul(mul(2, s.num_v_heads, what), add(s.head_k_dim, s.head_v_dim, what), what);
  return wide_add(per_token, wide_mul(wide_mul(s.batch, per_square, what), squares, what), what);
}

std::int64_t linear_attention_state_elements(const LinearAttentionShape& s) {
  const char* what = "linear-attention state";
  const std::int64_t kept = s.conv_kernel > 0 ? s.conv_kernel - 1 : 0;  // lightning: no convolution
  const std::int64_t per_sequence = add(mul(s.num_v_heads, s.head_k_dim, s.head_v_dim, what),
                                        mul(s.conv_dim(), kept, what), what);
  return mul(s.batch, per_sequence, what);
}

std::int64_t linear_attention_input_elements_per_token(const LinearAttentionShape& s) {
  const char* what = "linear-attention inputs";
  const std::int64_t gates = s.kind == LinearKind::mamba2       ? 1
                             : s.kind == LinearKind::kda        ? add(1, s.head_k_dim, what)
                             : s.kind == LinearKind::short_conv ? 0
                             : s.kind == LinearKind::lightning  ? 0  // the decay is fixed per head: no inputs
                                                                : 2;
  return add(s.conv_dim(), mul(gates, s.num_v_heads, what), what);
}

std::int64_t linear_attention_bytes(const LinearAttentionShape& s, DType dtype) {
  const char* what = "linear-attention bytes";
  const std::int64_t per_token = add(linear_attention_input_elements_per_token(s), mul(s.num_v_heads, s.head_v_dim, what), what);
  const std::int64_t io = mul(mul(s.batch, s.q_len, what), per_token, what);
  return dtype_bytes(dtype, add(mul(2, linear_attention_state_elements(s), what), io, what), what);
}

}  // namespace mhacfg
