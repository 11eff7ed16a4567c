// HF import of rednote's dots.llm1 (dots1): Qwen3's attention in DeepSeek-V3's MoE layers, following
// transformers' Dots1Config and modeling_dots1.py (generated from modular_dots1.py).
#include "hf_config_families.hpp"

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

// Dots1Config: Qwen3Attention (q/k/v/o with attention_bias, q_norm and k_norm over head_dim, head_dim from
// the file else hidden_size / heads; 32 heads and as many KV heads by default), untied. Layers from
// first_k_dense_replace (0) on are DeepseekV3MoE: n_routed_experts gated experts of moe_intermediate_size
// (1408), top num_experts_per_tok, shared experts as one MLP of n_shared_experts x moe_intermediate_size,
// a router whose per-expert e_score_correction_bias the checkpoint stores (the Hub's safetensors total
// counts it); the others a gated MLP of intermediate_size. n_routed_experts (or v5's num_local_experts),
// n_shared_experts and num_experts_per_tok have no usable class default (None): required. Windows:
// layer_types, else sliding_window (4096) on the layers from max_window_layers (62) on, as
// Dots1Config.__post_init__ writes layer_types; the file's use_sliding_window is not read.
void parse_dots1(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 32};
  d.hidden = 4608, d.layers = 62, d.heads = 32, d.ffn = 10944, d.vocab = 152064;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = true;
  m.moe.num_routed_experts = experts_key(f, "n_routed_experts", "num_local_experts", 0);
  m.moe.num_shared_experts = f.require_int("n_shared_experts", false);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 1408);
  m.moe.top_k = f.require_int("num_experts_per_tok");
  m.moe.router_bias = true;
  const std::int64_t first_dense = f.optional_int("first_k_dense_replace", false).value_or(0);
  for (std::int64_t i = 0; i < m.num_layers(); ++i)
    m.layers[static_cast<std::size_t>(i)].ffn = moe_if(i >= first_dense);
  const std::int64_t window = window_key(f, "sliding_window", 4096);
  if (apply_layer_types(f, m, window) || window == 0) return;
  const std::int64_t first_window = f.optional_int("max_window_layers", false).value_or(62);
  for (std::int64_t i = first_window; i < m.num_layers(); ++i)
    m.layers[static_cast<std::size_t>(i)].span = Span::window(window);
}

}  // namespace mhacfg::hf
