// HF import of Tencent's Hunyuan decoders: hunyuan_v1_dense (Hunyuan-0.5B..7B, Hy-MT) and hunyuan_v1_moe
// (Hunyuan-A13B). Each follows transformers' HunYuanDenseV1Config / HunYuanMoEV1Config and modeling code,
// and the keys Tencent's files add (attention_head_dim, use_qk_norm, use_cla, moe_intermediate_size and
// num_shared_expert lists) as vLLM's hunyuan_v1.py reads them; the released files agree with both.
#include "hf_config_families.hpp"

#include <string>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

namespace {

// The block both share: Llama's layout, head_dim (else Tencent's attention_head_dim, else hidden_size /
// heads, as vLLM reads it; transformers skips attention_head_dim, which the released files set equal),
// biases on q/k/v/o with attention_bias and on the MLP with mlp_bias, RMSNorms over head_dim on queries
// and keys (query_layernorm, key_layernorm: transformers always builds them, vLLM with use_qk_norm, which
// the released files set). Untied unless the file ties. Cross-layer attention (use_cla with a
// cla_share_factor above 1: a layer reuses an earlier layer's K/V and has no k_proj or v_proj, as in
// Hunyuan-Large) is refused: mhacfg gives every attention layer its own cache.
void hunyuan_block(const JsonFields& f, ModelSpec& m, const FamilyDefaults& d) {
  parse_llama_like(f, m, d);
  AttentionSpec& a = m.attention;
  if (!f.has("head_dim") && f.has("attention_head_dim"))
    a.head_dim = a.v_head_dim = f.require_int("attention_head_dim");
  attention_bias(f, m, false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
  a.qk_norm = f.optional_bool("use_qk_norm", true);
  if (f.optional_bool("use_cla", false) && f.optional_int("cla_share_factor").value_or(1) > 1)
    throw InputError(f.name("use_cla"), "true",
                     "cross-layer attention (cla_share_factor = " + int_text(f.require_int("cla_share_factor")) +
                         ": layers reuse an earlier layer's K/V, Hunyuan-Large) is not modelled");
}

// A key given once or once per layer (HunYuanMoEV1Config's num_experts and moe_topk, Tencent's
// moe_intermediate_size and num_shared_expert); `fallback` when missing or null (0: required). A list whose
// entries differ is refused: mhacfg gives every sparse layer the same experts.
std::int64_t per_layer_key(const JsonFields& f, const char* key, const ModelSpec& m, std::int64_t fallback,
                           bool positive = true) {
  if (!f.has(key)) return fallback > 0 ? fallback : f.require_int(key, positive);  // null as missing (vLLM)
  if (!f.at(key).is_array()) return f.require_int(key, positive);
  const auto& list = f.at(key);
  if (static_cast<std::int64_t>(list.size()) != m.num_layers())
    throw InputError(f.name(key), json_value_text(list),
                     "must give one value per layer (" + int_text(m.num_layers()) + ")");
  std::int64_t first = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::int64_t v = json_to_int(list[i], f.name(key) + "[" + std::to_string(i) + "]", positive);
    if (i > 0 && v != first)
      throw InputError(
          f.name(key) + "[" + std::to_string(i) + "]", int_text(v),
          "differs from layer 0's " + int_text(first) + " (layers with different experts are not modelled)");
    first = v;
  }
  return first;
}

}  // namespace

// HunYuanDenseV1Config: 32 layers of 4096, 32 heads, 11008-wide gated MLP, 290943 tokens by default; KV
// heads as many as the heads when missing.
void parse_hunyuan_v1_dense(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 11008, d.vocab = 290943;
  hunyuan_block(f, m, d);
}

// HunYuanMoEV1Config (Hunyuan-A13B): the dense block's attention; every layer sparse (transformers builds
// HunYuanMoEV1Moe on each; vLLM when num_experts > 1): num_experts gated experts of
// moe_intermediate_size (missing: intermediate_size, the only width transformers reads; the released file
// sets both to 3072), top moe_topk, a router (gate.wg) without bias, and beside them a shared MLP of
// num_shared_expert x intermediate_size when use_mixed_mlp_moe (vLLM; transformers always builds one of
// intermediate_size, the same for the released file). moe_layer_num_skipped is read by neither.
void parse_hunyuan_v1_moe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 11008, d.vocab = 290943;
  hunyuan_block(f, m, d);
  const std::int64_t experts = per_layer_key(f, "num_experts", m, 1);
  if (experts < 2)
    throw InputError(f.name("num_experts"), int_text(experts),
                     "must be at least 2 for hunyuan_v1_moe (a dense model is hunyuan_v1_dense)");
  m.moe.num_routed_experts = experts;
  m.moe.top_k = per_layer_key(f, "moe_topk", m, 1);
  m.moe.expert_ffn_dim = per_layer_key(f, "moe_intermediate_size", m, m.ffn.ffn_dim);
  if (f.optional_bool("use_mixed_mlp_moe", false)) {
    const std::int64_t shared = per_layer_key(f, "num_shared_expert", m, 1, false);
    m.moe.num_shared_experts = shared;
    m.moe.shared_ffn_dim = mul(shared, m.ffn.ffn_dim, "the shared MLP's width (num_shared_expert x intermediate_size)");
  }
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
}

}  // namespace mhacfg::hf
