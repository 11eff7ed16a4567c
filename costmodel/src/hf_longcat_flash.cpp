// HF import of LongCat-Flash (longcat_flash: Meituan's LongCat-Flash-Chat and -Thinking), following
// transformers' LongcatFlashConfig and modeling_longcat_flash.py, and the checkpoint's MTP layer as vLLM's
// longcat_flash_mtp.py loads it.
#include "hf_config_families.hpp"

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

// LongcatFlashConfig. Each of the num_layers (28) decoder layers is two sublayers, as transformers builds
// it (LongcatFlashDecoderLayer; the cache holds 2 x num_layers layers, so a num_hidden_layers key, which the
// model sets to that, is not read): each sublayer is an input RMSNorm, DeepSeek-V3's MLA (q_a, q_a_layernorm,
// q_b, kv_a with the RoPE key, kv_a_layernorm, kv_b, o; biases with attention_bias), a post-attention RMSNorm
// and a gated MLP of ffn_hidden_size (12288); the first sublayer's normed input also feeds the layer's MoE,
// whose output joins the residual after the second ("shortcut-connected MoE"). mhacfg reads the pair as two
// layers, the first a MoE layer whose MLP is its shared expert (the same weights and FLOPs on the same input):
// 2 x num_layers MLA layers and caches. The MoE: n_routed_experts (512) gated experts of
// expert_ffn_hidden_size (2048) beside zero_expert_num (256) identity experts, top moe_topk (12) of both;
// the router (`classifier`, a bias with router_bias) scores them all, its e_score_correction_bias is a
// buffer. Defaults (LongCat-Flash-Chat's sizes): 64 heads, q_lora_rank 1536, kv_lora_rank 512, heads of
// 128 + 64, values of 128, vocab 131072, untied. The checkpoints ship one MTP layer (model.mtp: its own
// embedding, enorm, hnorm, eh_proj, one sublayer with its dense MLP, a norm), which transformers skips;
// params.mtp counts it as mhacfg's MTP module (without the embedding copy), num_nextn_predict_layers when given.
void parse_longcat_flash(const JsonFields& f, ModelSpec& m) {
  m.d_model = int_or(f, "hidden_size", 6144);
  const std::int64_t layers = layer_count(f, "num_layers", 28);
  if (layers > kMaxLayers / 2)
    throw InputError(f.name("num_layers"), int_text(layers), "must be at most " + int_text(kMaxLayers / 2) + " (two layers each)");
  m.layers.assign(static_cast<std::size_t>(2 * layers), LayerSpec{});
  m.attention.num_q_heads = int_or(f, "num_attention_heads", 64);
  read_mla(f, m.attention, {1536, 512, 128, 64, 128});
  m.vocab_size = int_or(f, "vocab_size", 131072);
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", false);
  m.norm = NormSpec{NormKind::rmsnorm, 2, true};
  m.ffn = FfnSpec{FfnKind::gated, experts_key(f, "ffn_hidden_size", "intermediate_size", 12288), false, 0};
  MoeSpec& moe = m.moe;
  moe.num_routed_experts = experts_key(f, "n_routed_experts", "num_local_experts", 512);
  moe.zero_experts = f.present("zero_expert_num") ? f.optional_int("zero_expert_num", false).value_or(0) : 256;
  moe.top_k = experts_key(f, "moe_topk", "num_experts_per_tok", 12);
  moe.expert_ffn_dim = int_or(f, "expert_ffn_hidden_size", 2048);
  moe.num_shared_experts = 1;  // the first sublayer's MLP
  moe.shared_ffn_dim = m.ffn.ffn_dim;
  moe.router_bias = f.optional_bool("router_bias", false);
  if (moe.zero_experts > 0 && f.has("zero_expert_type") && f.require_string("zero_expert_type") != "identity")
    throw InputError(f.name("zero_expert_type"), json_value_text(f.at("zero_expert_type")),
                     "only identity zero-computation experts are modelled");
  for (std::size_t i = 0; i < m.layers.size(); i += 2) m.layers[i].ffn = LayerFfn::moe;
  m.extra.mtp_modules = f.present("num_nextn_predict_layers") ? mtp_layers(f, m) : 1;
  if (moe.zero_experts > 0)
    m.notes.push_back("LongCat-Flash routes each token to its top " + int_text(moe.top_k) + " of " +
                      int_text(moe.num_routed_experts) + " experts and " + int_text(moe.zero_experts) +
                      " zero-computation (identity) experts, so its active parameters vary per token: params.active "
                      "is the expectation with the picks spread evenly over all experts, params.active_min and "
                      "active_max the bounds (LongCat-Flash-Chat's card: 18.6B to 31.3B, about 27B on average).");
  m.notes.push_back("Each LongCat-Flash layer is read as two layers (two MLA blocks, each with its MLP); the MoE runs "
                    "beside the first one's MLP, whose weights count as its shared expert.");
  if (m.extra.mtp_modules > 0)
    m.notes.push_back("The checkpoint's MTP layer also stores its own copy of the embedding, which params.mtp leaves out.");
}

}  // namespace mhacfg::hf
