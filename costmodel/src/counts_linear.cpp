// Counts of a hybrid model's linear-attention layers (Gated DeltaNet, Mamba2, KDA, short convolutions,
// lightning attention):
// their parameters, one GPU's share under tensor parallelism, the core's FLOPs and state. Part of the
// one place counts are computed (counts.cpp has the rest).
#include "mhacfg/costmodel/counts.hpp"

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {
constexpr const char* kParams = "parameter count";
}  // namespace

std::int64_t linear_in_projection_outputs(const LinearAttentionSpec& la, const LinearShard& s) {
  if (la.kind == LinearKind::short_conv) return mul(3, mul(s.v_heads, la.head_v_dim, kParams), kParams);  // B, C, x
  if (la.kind == LinearKind::lightning)  // qkv_proj (q, k, v) and output_gate (value_dim)
    return add(mul(mul(2, s.k_heads, kParams), la.head_k_dim, kParams), mul(mul(2, s.v_heads, kParams), la.head_v_dim, kParams), kParams);
  if (la.kind == LinearKind::kda)  // q, k, v, beta, and the decay's and the output gate's low-rank halves
    return add(add(mul(mul(2, s.k_heads, kParams), la.head_k_dim, kParams), mul(s.v_heads, la.head_v_dim, kParams), kParams),
               add(s.v_heads, mul(2, la.head_v_dim, kParams), kParams), kParams);
  const std::int64_t per_head = la.kind == LinearKind::mamba2 ? 1 : 2;
  return add(add(mul(mul(2, s.k_heads, kParams), la.head_k_dim, kParams),
                 mul(mul(2, s.v_heads, kParams), la.head_v_dim, kParams), kParams),
             mul(per_head, s.v_heads, kParams), kParams);
}

std::int64_t kda_gate_up_outputs(const LinearAttentionSpec& la, const LinearShard& s) {
  return la.kind == LinearKind::kda ? mul(mul(2, s.v_heads, kParams), la.head_v_dim, kParams) : 0;
}

namespace {
std::int64_t linear_in_outputs(const LinearAttentionSpec& la) {
  return linear_in_projection_outputs(la, LinearShard{la.num_k_heads, la.num_v_heads});
}
}  // namespace

std::int64_t linear_attention_matmul_weights(const ModelSpec& m) {
  const LinearAttentionSpec& la = m.linear;
  if (la.num_v_heads == 0) return 0;
  const std::int64_t in_out = mul(add(linear_in_outputs(la), la.value_dim(), kParams), m.d_model, kParams);
  // KDA: the decay's and the output gate's up-projections from their low rank (head_v_dim).
  const std::int64_t up = mul(kda_gate_up_outputs(la, LinearShard{la.num_k_heads, la.num_v_heads}), la.head_v_dim, kParams);
  return add(in_out, up, kParams);
}

std::int64_t linear_attention_params_per_layer(const ModelSpec& m) {
  const LinearAttentionSpec& la = m.linear;
  if (la.num_v_heads == 0) return 0;
  const std::int64_t conv = add(mul(la.conv_dim(), la.conv_kernel, kParams), la.conv_bias ? la.conv_dim() : 0, kParams);
  // dt_bias and A_log (Mamba2: and D) per head; the gated RMSNorm: head_v_dim weights shared by the
  // heads (Gated DeltaNet) or value_dim (Mamba2).
  // KDA: A_log per head and dt_bias per value channel. Lightning: an RMSNorm over value_dim; its decays
  // (slope_rate and the factors from it) are buffers.
  const bool mamba = la.kind == LinearKind::mamba2, kda = la.kind == LinearKind::kda;
  const bool lightning = la.kind == LinearKind::lightning;
  const std::int64_t norm = !la.gated_norm ? 0 : mamba || lightning ? la.value_dim() : la.head_v_dim;
  const std::int64_t per_head = la.kind == LinearKind::short_conv || lightning ? 0
                                : kda ? add(la.num_v_heads, la.value_dim(), kParams)
                                      : mul(mamba ? 3 : 2, la.num_v_heads, kParams);
  const std::int64_t small = add(per_head, norm, kParams);
  const std::int64_t bias = add(la.in_bias ? linear_in_outputs(la) : 0, la.out_bias ? m.d_model : 0, kParams);
  return add(add(linear_attention_matmul_weights(m), add(conv, small, kParams), kParams), bias, kParams);
}

WideCount linear_attention_core_flops(const ModelSpec& m, std::int64_t batch, std::int64_t q_len) {
  return linear_attention_flops(layer_linear_attention_shape(m, batch, q_len));
}

std::int64_t linear_attention_state_elements(const ModelSpec& m) {
  if (m.linear.num_v_heads == 0) return 0;
  return linear_attention_state_elements(layer_linear_attention_shape(m, 1, 1));
}

LinearShard linear_shard(const ModelSpec& m, std::int64_t tp) {
  const LinearAttentionSpec& la = m.linear;
  const bool mamba = la.kind == LinearKind::mamba2;
  if (la.num_v_heads % tp != 0)
    throw InputError("tp", std::to_string(tp),
                     mamba ? "must divide the " + std::to_string(la.num_v_heads) + " Mamba2 heads"
                           : "must divide linear_num_value_heads = " + std::to_string(la.num_v_heads));
  LinearShard s;
  s.v_heads = la.num_v_heads / tp;
  if (la.num_k_heads % tp == 0) s.k_heads = la.num_k_heads / tp;
  else if (tp % la.num_k_heads == 0) s.k_heads = 1;
  else
    throw InputError("tp", std::to_string(tp),
                     mamba ? "must divide the " + std::to_string(la.num_k_heads) + " Mamba2 groups or be a multiple of them"
                           : "must divide linear_num_key_heads = " + std::to_string(la.num_k_heads) + " or be a multiple of it");
  return s;
}

std::int64_t linear_attention_state_elements_per_gpu(const ModelSpec& m, std::int64_t tp) {
  if (m.linear.num_v_heads == 0) return 0;
  return linear_attention_state_elements(layer_linear_attention_shape(m, 1, 1, tp));
}

LinearAttentionShape layer_linear_attention_shape(const ModelSpec& m, std::int64_t batch, std::int64_t q_len,
                                                  std::int64_t tp) {
  const LinearAttentionSpec& la = m.linear;
  const LinearShard sh = tp == 1 ? LinearShard{la.num_k_heads, la.num_v_heads} : linear_shard(m, tp);
  return LinearAttentionShape{batch, q_len, sh.k_heads, sh.v_heads, la.head_k_dim, la.head_v_dim, la.conv_kernel, la.kind, la.block_size};
}

}  // namespace mhacfg
