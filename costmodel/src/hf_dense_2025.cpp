// HF import of dense families released in 2025 that are variants of one mhacfg already reads
// (VaultGemma, Arcee's AFM, Jais 2, Meta's CWM). Each follows its transformers Config class and modeling code.
#include "hf_config_families.hpp"

namespace mhacfg::hf {

// VaultGemmaConfig (VaultGemma): Gemma2Config's keys and defaults (4 KV heads, head_dim 256, tied,
// layer_types or alternating windows), but VaultGemmaDecoderLayer deletes Gemma 2's post-attention and
// post-feedforward norms: two RMSNorms per layer.
void parse_vaultgemma(const JsonFields& f, ModelSpec& m) {
  parse_gemma2(f, m);
  m.norm.per_layer = 2;
}

namespace {

// The MLP ArceeMLP and Jais2MLP take from NemotronMLP: up_proj and down_proj, both biased with mlp_bias, and
// no gate (relu2 by default; the activation holds no parameters).
void ungated_mlp(const JsonFields& f, ModelSpec& m, bool bias_default) {
  m.ffn.kind = FfnKind::plain;
  m.ffn.bias = f.optional_bool("mlp_bias", bias_default);
}

}  // namespace

// ArceeConfig (AFM-4.5B): Llama's attention (biases on q/k/v/o with attention_bias, off by default; heads of
// hidden_size / heads when head_dim is missing or null; MHA when num_key_value_heads is missing or null) and
// its two RMSNorms per layer, with the ungated MLP; untied.
void parse_arcee(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 2560, d.layers = 32, d.heads = 32, d.ffn = 18432, d.vocab = 32000;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  ungated_mlp(f, m, false);
}

// Jais2Config (Jais 2): Arcee's layer with LayerNorms (weight and bias; nn.LayerNorm) in place of the
// RMSNorms, before attention and the MLP and at the end, and biases on by default: attention_bias on
// q/k/v/o, mlp_bias on up and down. MHA by default, heads of hidden_size / heads; untied.
void parse_jais2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 3328, d.layers = 32, d.heads = 26, d.ffn = 26624, d.vocab = 150272;
  parse_llama_like(f, m, d);
  attention_bias(f, m, true);
  ungated_mlp(f, m, true);
  m.norm.kind = NormKind::layernorm;
}

// CwmConfig (Code World Model): Llama's layer without any attention bias (CwmAttention rebuilds q/k/v
// without one and keeps Qwen2's unbiased o_proj; the file's attention_bias is not read), a gated MLP with
// mlp_bias, head_dim 128 (hidden_size / heads when null), 8 KV heads (MHA when null), untied. Layers as
// layer_types says, else full attention on every fourth from layer 0 and sliding_window (8192; null or 0:
// none, as CwmConfig.__post_init__ reads a false value) on the others, as __post_init__ writes them.
void parse_cwm(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{f.present("head_dim") ? 0 : 128, false, 8};
  d.hidden = 6144, d.layers = 64, d.heads = 48, d.ffn = 21504, d.vocab = 128256;
  parse_llama_like(f, m, d);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
  const bool zero = f.has("sliding_window") && f.at("sliding_window") == 0;
  const std::int64_t window = zero ? 0 : window_key(f, "sliding_window", 8192);
  if (apply_layer_types(f, m, window)) return;
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (i % 4 != 0) m.layers[i].span = Span::window(window);
}

}  // namespace mhacfg::hf
