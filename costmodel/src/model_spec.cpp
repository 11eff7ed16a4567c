#include "mhacfg/costmodel/model_spec.hpp"

#include <algorithm>
#include <utility>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

std::string_view to_string(AttentionVariant v) {
  switch (v) {
    case AttentionVariant::mha: return "mha";
    case AttentionVariant::gqa: return "gqa";
    case AttentionVariant::mqa: return "mqa";
    case AttentionVariant::mla: return "mla";
  }
  MHACFG_CHECK(false, "unknown AttentionVariant");
}

std::string_view to_string(FfnKind k) { return k == FfnKind::gated ? "gated" : "plain"; }
std::string_view to_string(NormKind k) {
  switch (k) {
    case NormKind::rmsnorm: return "rmsnorm";
    case NormKind::layernorm: return "layernorm";
    case NormKind::layernorm_no_bias: return "layernorm_no_bias";
  }
  return "rmsnorm";
}
std::string_view to_string(VisionKind k) {
  switch (k) {
  case VisionKind::siglip: return "siglip";
  case VisionKind::llama4: return "llama4";
  case VisionKind::pixtral: return "pixtral";
  case VisionKind::qwen2_5_vl: return "qwen2_5_vl";
  case VisionKind::qwen3_vl: return "qwen3_vl";
  case VisionKind::glm4v: return "glm4v";
  case VisionKind::smolvlm: return "smolvlm";
  case VisionKind::internvl: return "internvl";
  case VisionKind::lfm2_vl: return "lfm2_vl";
  }
  return "siglip";
}

AttentionVariant parse_variant(std::string_view name, const std::string& field) {
  for (auto v : {AttentionVariant::mha, AttentionVariant::gqa, AttentionVariant::mqa, AttentionVariant::mla})
    if (to_string(v) == name) return v;
  throw InputError(field, std::string(name), "unknown attention variant (expected mha, gqa, mqa or mla)");
}

FfnKind parse_ffn_kind(std::string_view name, const std::string& field) {
  if (name == "gated") return FfnKind::gated;
  if (name == "plain") return FfnKind::plain;
  throw InputError(field, std::string(name), "unknown FFN kind (expected gated or plain)");
}

AttentionVariant variant_for_heads(std::int64_t num_q_heads, std::int64_t num_kv_heads) {
  if (num_kv_heads == num_q_heads) return AttentionVariant::mha;
  if (num_kv_heads == 1) return AttentionVariant::mqa;
  return AttentionVariant::gqa;
}

namespace {
void require_positive(std::int64_t v, const char* field) {
  if (v <= 0) throw InputError(field, std::to_string(v), "must be positive");
}
void require_non_negative(std::int64_t v, const char* field) {
  if (v < 0) throw InputError(field, std::to_string(v), "must not be negative");
}
}  // namespace

std::int64_t shared_ffn_width(const MoeSpec& moe) {
  if (moe.num_shared_experts <= 0) return 0;
  return moe.shared_ffn_dim > 0 ? moe.shared_ffn_dim : mul(moe.num_shared_experts, moe.expert_ffn_dim, "shared FFN width");
}

std::int64_t router_outputs(const MoeSpec& moe) {
  return add(add(moe.num_routed_experts, moe.zero_experts, "router outputs"), moe.shared_gate ? 1 : 0, "router outputs");
}

double expected_routed_experts(const MoeSpec& moe) {
  if (moe.zero_experts <= 0) return double(moe.top_k);
  return double(moe.top_k) * double(moe.num_routed_experts) / (double(moe.num_routed_experts) + double(moe.zero_experts));
}

std::int64_t fewest_routed_experts(const MoeSpec& moe) { return std::max<std::int64_t>(0, moe.top_k - std::max<std::int64_t>(moe.zero_experts, 0)); }
std::int64_t most_routed_experts(const MoeSpec& moe) { return std::min(moe.top_k, moe.num_routed_experts); }

std::int64_t checked_layer_count(std::int64_t layers, const std::string& field) {
  if (layers <= 0) throw InputError(field, std::to_string(layers), "must be positive");
  if (layers > kMaxLayers)
    throw InputError(field, std::to_string(layers), "must be at most " + std::to_string(kMaxLayers));
  return layers;
}

std::int64_t LinearAttentionSpec::key_dim() const { return mul(num_k_heads, head_k_dim, "linear-attention key width"); }
std::int64_t LinearAttentionSpec::value_dim() const { return mul(num_v_heads, head_v_dim, "linear-attention value width"); }
std::int64_t LinearAttentionSpec::conv_dim() const {
  return add(mul(2, key_dim(), "linear-attention conv width"), value_dim(), "linear-attention conv width");
}

std::int64_t ModelSpec::num_attention_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.softmax(); });
}
std::int64_t ModelSpec::num_indexer_layers() const {
  if (!attention.sparse()) return 0;
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.softmax() && !l.shared_topk; });
}
std::int64_t ModelSpec::num_kv_cache_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.softmax() && !l.shared_kv; });
}
std::int64_t ModelSpec::num_linear_layers() const {
  return std::count_if(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.has_linear(); });
}

void remove_indexer(ModelSpec& m) {
  m.attention.indexer = IndexerSpec{};
  for (LayerSpec& l : m.layers) l.shared_topk = false;
}

namespace {

// MLA's ranks, and the head widths and counts they fix.
void validate_mla(const AttentionSpec& a) {
  require_positive(a.mla.kv_lora_rank, "kv_lora_rank");
  require_non_negative(a.mla.q_lora_rank, "q_lora_rank");
  require_non_negative(a.mla.rope_head_dim, "rope_head_dim");
  require_positive(a.mla.qk_nope_head_dim, "qk_nope_head_dim");
  if (a.head_dim != a.mla.qk_nope_head_dim + a.mla.rope_head_dim)
    throw InputError("head_dim", std::to_string(a.head_dim),
                     "must equal qk_nope_head_dim + rope_head_dim = " +
                         std::to_string(a.mla.qk_nope_head_dim + a.mla.rope_head_dim) + " for MLA");
  if (a.num_kv_heads != a.num_q_heads)
    throw InputError("num_kv_heads", std::to_string(a.num_kv_heads),
                     "must equal num_q_heads = " + std::to_string(a.num_q_heads) + " for MLA");
}

// Heads and widths, and the variant the head counts imply.
void validate_attention(const AttentionSpec& a) {
  require_positive(a.num_q_heads, "num_q_heads");
  require_positive(a.num_kv_heads, "num_kv_heads");
  require_positive(a.head_dim, "head_dim");
  require_positive(a.v_head_dim, "v_head_dim");
  if (a.variant == AttentionVariant::mla) {
    validate_mla(a);
    return;
  }
  if (a.num_q_heads % a.num_kv_heads != 0)
    throw InputError("num_kv_heads", std::to_string(a.num_kv_heads),
                     "must divide num_q_heads = " + std::to_string(a.num_q_heads));
  if (a.mla.kv_lora_rank != 0 || a.mla.q_lora_rank != 0)
    throw InputError("kv_lora_rank", std::to_string(a.mla.kv_lora_rank),
                     "MLA ranks are only valid with variant mla (got " + std::string(to_string(a.variant)) + ")");
  const AttentionVariant implied = variant_for_heads(a.num_q_heads, a.num_kv_heads);
  // GQA with a group of one or with all heads sharing one KV head is named by what it is.
  if (a.variant != implied)
    throw InputError("variant", std::string(to_string(a.variant)),
                     std::to_string(a.num_q_heads) + " query heads with " + std::to_string(a.num_kv_heads) +
                         " KV heads is " + std::string(to_string(implied)));
}

// What each layer's enums allow but the counts do not model.
void validate_layers(const std::vector<LayerSpec>& layers) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    const std::string at = "layers[" + std::to_string(i) + "]";
    const std::string span_field = at + (l.span.kind == Span::Kind::chunk ? ".chunk" : ".window");
    if (l.span.tokens < 0) throw InputError(span_field, std::to_string(l.span.tokens), "must not be negative");
    if (l.mixer == Mixer::none && l.span.local())
      throw InputError(span_field, std::to_string(l.span.tokens), "an FFN-only layer has no window or chunk");
    if (l.mixer == Mixer::linear_map && l.span.local())
      throw InputError(span_field, std::to_string(l.span.tokens), "a linear layer in place of attention has no window or chunk");
    if (l.ffn_dim < 0) throw InputError(at + ".ffn_dim", std::to_string(l.ffn_dim), "must not be negative");
    if (l.ffn_dim > 0 && l.ffn != LayerFfn::dense)
      throw InputError(at + ".ffn_dim", std::to_string(l.ffn_dim), "only a dense FFN has a width of its own");
    if (l.mixer == Mixer::linear && l.span.local())
      throw InputError(span_field, std::to_string(l.span.tokens), "a linear-attention layer has no window or chunk");
  }
  // A layer that reads another's K/V needs an earlier softmax layer of the same span that caches its own.
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (!layers[i].shared_kv) continue;
    const auto producer = [&](const LayerSpec& l) { return l.softmax() && !l.shared_kv && l.span == layers[i].span; };
    if (!layers[i].softmax() || std::none_of(layers.begin(), layers.begin() + static_cast<std::ptrdiff_t>(i), producer))
      throw InputError("layers[" + std::to_string(i) + "].shared_kv", "true",
                       "reads the K/V of an earlier softmax layer of the same span that caches its own, and none comes before it");
  }
}

// A layer's own KV heads (LayerSpec::kv_heads): a softmax MHA/GQA layer's, dividing the query heads.
void validate_kv_heads(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const LayerSpec& l = m.layers[i];
    if (l.kv_heads == 0) continue;
    const std::string field = "layers[" + std::to_string(i) + "].kv_heads", value = std::to_string(l.kv_heads);
    if (l.kv_heads < 0) throw InputError(field, value, "must not be negative");
    if (!l.softmax()) throw InputError(field, value, "only a softmax-attention layer has KV heads of its own");
    if (a.variant == AttentionVariant::mla) throw InputError(field, value, "MLA has one latent shared by all heads");
    if (l.shared_kv) throw InputError(field, value, "a layer reading an earlier layer's K/V has that layer's KV heads");
    if (a.num_q_heads % l.kv_heads != 0)
      throw InputError(field, value, "must divide num_q_heads = " + std::to_string(a.num_q_heads));
  }
}

// DeepSeek Sparse Attention's indexer, and the layers that share an earlier one's top-k.
void validate_indexer(const AttentionSpec& a, const std::vector<LayerSpec>& layers) {
  if (a.sparse()) {
    require_positive(a.indexer.head_dim, "index_head_dim");
    require_positive(a.indexer.topk, "index_topk");
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (layers[i].local_span() > 0)
        throw InputError("layers[" + std::to_string(i) + "]." + (layers[i].window() > 0 ? "window" : "chunk"),
                         std::to_string(layers[i].local_span()),
                         "sparse attention (an indexer's top-k) beside windows or chunks is not modelled");
  }
  bool indexer_before = false;  // a layer that shares the top-k needs an earlier one that chose it
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    if (!l.softmax()) continue;
    if (l.shared_topk && !a.sparse())
      throw InputError("layers[" + std::to_string(i) + "].shared_topk", "true", "dense attention has no top-k to share");
    if (l.shared_topk && !indexer_before)
      throw InputError("layers[" + std::to_string(i) + "].shared_topk", "true",
                       "shares the top-k of an earlier layer with an indexer, and none comes before it");
    indexer_before = indexer_before || !l.shared_topk;
  }
  if (!a.sparse() && (a.indexer.head_dim != 0 || a.indexer.topk != 0)) require_positive(a.indexer.num_heads, "index_n_heads");
}

// The linear mixer's widths, named by each kind's config keys.
void validate_linear(const LinearAttentionSpec& la) {
  const bool mamba = la.kind == LinearKind::mamba2;
  require_positive(la.num_k_heads, mamba ? "mamba_n_groups" : "linear_num_key_heads");
  require_positive(la.num_v_heads, mamba ? "mamba_n_heads" : "linear_num_value_heads");
  if (la.kind != LinearKind::short_conv)
    require_positive(la.head_k_dim, mamba ? "mamba_d_state" : "linear_key_head_dim");
  require_positive(la.head_v_dim, mamba ? "mamba_d_head" : "linear_value_head_dim");
  if (la.kind == LinearKind::lightning) require_positive(la.block_size, "block_size");  // no convolution
  else require_positive(la.conv_kernel, mamba ? "mamba_d_conv" : "linear_conv_kernel_dim");
  if (la.num_v_heads % la.num_k_heads != 0)
    throw InputError(mamba ? "mamba_n_groups" : "linear_num_key_heads", std::to_string(la.num_k_heads),
                     std::string("must divide ") + (mamba ? "mamba_n_heads" : "linear_num_value_heads") + " = " +
                         std::to_string(la.num_v_heads));
}

// The dense FFN's width when a layer has one; the experts' when a layer routes to them.
void validate_ffn(const ModelSpec& m) {
  bool any_moe = false;
  bool any_dense = false;
  for (const auto& l : m.layers) {
    any_moe = any_moe || l.ffn == LayerFfn::moe;
    any_dense = any_dense || (l.ffn == LayerFfn::dense && l.ffn_dim == 0);  // one without a width of its own
  }
  if (any_dense) require_positive(m.ffn.ffn_dim, "ffn_dim");
  if (!any_moe) return;
  require_positive(m.moe.num_routed_experts, "num_routed_experts");
  require_positive(m.moe.expert_ffn_dim, "expert_ffn_dim");
  require_positive(m.moe.top_k, "top_k");
  require_non_negative(m.moe.num_shared_experts, "num_shared_experts");
  require_non_negative(m.moe.shared_ffn_dim, "shared_ffn_dim");
  require_non_negative(m.moe.zero_experts, "zero_experts");
  if (m.moe.top_k - m.moe.num_routed_experts > m.moe.zero_experts)  // top_k <= routed + zero, without overflow
    throw InputError("top_k", std::to_string(m.moe.top_k),
                     "must not exceed num_routed_experts = " + std::to_string(m.moe.num_routed_experts) +
                         (m.moe.zero_experts > 0 ? " + zero_experts = " + std::to_string(m.moe.zero_experts) : ""));
}

void validate_vision(const VisionSpec& v) {
  if (v.hidden == 0) return;
  require_positive(v.hidden, "vision_config.hidden_size");
  require_positive(v.intermediate, "vision_config.intermediate_size");
  require_positive(v.layers, "vision_config.num_hidden_layers");
  require_positive(v.channels, "vision_config.num_channels");
  const bool qwen = v.kind == VisionKind::qwen2_5_vl || v.kind == VisionKind::qwen3_vl;
  const bool lfm2 = v.kind == VisionKind::lfm2_vl;
  if (!qwen && !lfm2) require_positive(v.image_size, "vision_config.image_size");  // Qwen's, LFM2-VL's have none
  require_positive(v.patch_size, "vision_config.patch_size");
  if (v.kind == VisionKind::llama4) {
    require_positive(v.projector_input_dim, "vision_config.projector_input_dim");
    require_positive(v.projector_output_dim, "vision_config.projector_output_dim");
    require_positive(v.output_dim, "vision_config.vision_output_dim");
  }
  const bool glm = v.kind == VisionKind::glm4v;
  // Mistral 3 names it at the top level, Qwen and GLM in vision_config.
  if (v.kind == VisionKind::pixtral || qwen || glm)
    require_positive(v.merge, qwen || glm ? "vision_config.spatial_merge_size" : "spatial_merge_size");
  if (v.kind == VisionKind::smolvlm) require_positive(v.merge, "scale_factor");
  if (v.kind == VisionKind::internvl) require_positive(v.merge, "downsample_ratio");
  if (lfm2) {
    require_positive(v.positions, "vision_config.num_patches");
    require_positive(v.merge, "downsample_factor");
    require_positive(v.out_hidden, "projector_hidden_size");
  }
  if (v.kind == VisionKind::pixtral) require_positive(v.feature_layers, "vision_feature_layer");
  if (qwen || glm) {
    require_positive(v.temporal_patch, "vision_config.temporal_patch_size");
    require_positive(v.out_hidden, "vision_config.out_hidden_size");
  }
  if (v.kind == VisionKind::qwen3_vl) {
    require_positive(v.positions, "vision_config.num_position_embeddings");
    require_non_negative(v.deepstack, "vision_config.deepstack_visual_indexes");
  }
  if (!qwen && !lfm2 && v.patch_size > v.image_size)
    throw InputError("vision_config.patch_size", std::to_string(v.patch_size),
                     "must not exceed image_size = " + std::to_string(v.image_size));
}

}  // namespace

// The checks run in this order so that the first invalid field named stays the same.
void validate(const ModelSpec& m) {
  require_positive(m.d_model, "d_model");
  require_positive(m.vocab_size, "vocab_size");
  require_positive(m.num_layers(), "num_layers");
  require_non_negative(m.learned_positions, "learned_positions");
  validate_attention(m.attention);
  validate_layers(m.layers);
  validate_kv_heads(m);
  if (m.attention.output_gate && m.attention.variant == AttentionVariant::mla)
    throw InputError("output_gate", "true", "a gate on the attention output is not modelled for MLA");
  validate_indexer(m.attention, m.layers);
  if (m.num_linear_layers() > 0) validate_linear(m.linear);
  validate_ffn(m);
  require_non_negative(m.norm.per_layer, "norms_per_layer");
  require_non_negative(m.extra.mtp_modules, "mtp_modules");
  validate_vision(m.extra.vision);
  for (const auto& [v, field] : {std::pair{m.aux.layer_matmul, "aux.layer_matmul"}, {m.aux.layer_other, "aux.layer_other"},
                                 {m.aux.model_matmul, "aux.model_matmul"}, {m.aux.model_other, "aux.model_other"},
                                 {m.aux.table_rows, "aux.table_rows"}, {m.aux.table_width, "aux.table_width"}})
    require_non_negative(v, field);
}

}  // namespace mhacfg
