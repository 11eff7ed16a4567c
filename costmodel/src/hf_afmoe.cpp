// HF import of Arcee's AFMoE (Trinity Nano, Mini and Large): its transformers AfmoeConfig class and
// modeling code (modeling_afmoe.py).
#include "hf_config_families.hpp"

#include <cstdint>

#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

// AfmoeConfig: Llama's attention without biases, q/k RMSNorms over head_dim and a sigmoid gate on the
// output (gate_proj: hidden_size -> heads x head_dim, no bias); RMSNorms before and after attention and
// the FFN (four per layer); head_dim 128, MHA when num_key_value_heads is missing; untied. The first
// num_dense_layers (1) layers hold a gated MLP of intermediate_size; the others num_experts (64) gated
// experts of moe_intermediate_size (1408), top num_experts_per_tok (6), a router without bias, the
// per-expert expert_bias (a parameter, not trained) and num_shared_experts (2) shared experts as one MLP.
// Layers follow layer_types, else every global_attn_every_n_layers-th (4) is global and the others slide
// sliding_window (1024) tokens. muP scaling, route_scale and the expert-group keys hold no parameters.
void parse_afmoe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{128, false, 0};
  d.hidden = 2048, d.layers = 32, d.heads = 16, d.ffn = 6144, d.vocab = 200192;
  parse_llama_like(f, m, d);
  m.attention.qk_norm = true;
  m.attention.output_gate = true;
  m.norm.per_layer = 4;
  m.moe.num_routed_experts = int_or(f, "num_experts", 64);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 1408);
  m.moe.top_k = int_or(f, "num_experts_per_tok", 6);
  m.moe.num_shared_experts = f.optional_int("num_shared_experts", false).value_or(2);
  m.moe.router_bias = true;
  const std::int64_t dense = f.optional_int("num_dense_layers", false).value_or(1);
  for (std::int64_t i = 0; i < m.num_layers(); ++i) m.layers[static_cast<std::size_t>(i)].ffn = moe_if(i >= dense);
  const std::int64_t window = window_key(f, "sliding_window", 1024);
  if (apply_layer_types(f, m, window)) return;
  const std::int64_t every = int_or(f, "global_attn_every_n_layers", 4);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (static_cast<std::int64_t>(i + 1) % every != 0) m.layers[i].span = Span::window(window);
}

}  // namespace mhacfg::hf
