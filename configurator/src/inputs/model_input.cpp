#include "mhacfg/configurator/inputs/model_input.hpp"

#include <algorithm>

#include "mhacfg/configurator/inputs/model_source.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

std::int64_t default_ffn_dim(std::int64_t d_model, FfnKind kind) {
  const std::int64_t raw = kind == FfnKind::gated ? (8 * d_model + 2) / 3 : 4 * d_model;
  return (raw + 255) / 256 * 256;
}

namespace {

std::string text(std::int64_t v) { return std::to_string(v); }

ModelSpec custom_base(const ModelFlags& f) {
  if (!f.d_model) throw InputError("--d-model", "(missing)", "required when neither --model nor --hf-config is given");
  if (!f.layers) throw InputError("--layers", "(missing)", "required when neither --model nor --hf-config is given");
  if (!f.heads) throw InputError("--heads", "(missing)", "required when neither --model nor --hf-config is given");
  ModelSpec m;
  m.name = "custom";
  m.family = "custom";
  m.d_model = *f.d_model;
  m.vocab_size = CustomDefaults::vocab_size;
  m.layers.assign(static_cast<std::size_t>(checked_layer_count(*f.layers, "--layers")), LayerSpec{});
  m.attention.num_q_heads = m.attention.num_kv_heads = *f.heads;
  m.ffn.kind = FfnKind::gated;
  m.norm = NormSpec{NormKind::rmsnorm, 2, true};
  return m;
}

void apply_attention_flags(const ModelFlags& f, ModelSpec& m, bool custom) {
  AttentionSpec& a = m.attention;
  const std::int64_t old_heads = a.num_q_heads;
  if (f.heads) a.num_q_heads = *f.heads;
  // --kv-heads or --variant give every layer the same KV heads (Llama-Nemotron's layers had their own).
  if (f.kv_heads || f.variant)
    for (LayerSpec& l : m.layers) l.kv_heads = 0;
  const AttentionVariant variant = f.variant ? parse_variant(*f.variant, "--variant") : a.variant;
  const bool mla = variant == AttentionVariant::mla;
  if (mla) {
    MlaSpec& l = a.mla;
    if (a.variant != AttentionVariant::mla) {  // switching to MLA: DeepSeek-V2/V3 per-head widths
      l.rope_head_dim = CustomDefaults::mla_rope_head_dim;
      a.head_dim = CustomDefaults::mla_head_dim;
      a.v_head_dim = CustomDefaults::mla_v_head_dim;
      a.q_bias = a.k_bias = a.v_bias = a.qk_norm = false;
    }
    if (f.rope_head_dim) l.rope_head_dim = *f.rope_head_dim;
    if (f.head_dim) a.head_dim = *f.head_dim;  // the Q/K width: qk_nope_head_dim + rope_head_dim
    if (f.v_head_dim) a.v_head_dim = *f.v_head_dim;
    if (f.kv_lora_rank) l.kv_lora_rank = *f.kv_lora_rank;
    if (f.q_lora_rank) l.q_lora_rank = *f.q_lora_rank;
    if (l.kv_lora_rank <= 0) throw InputError("--kv-lora-rank", "(missing)", "required with --variant mla");
    if (a.head_dim <= l.rope_head_dim)
      throw InputError("--head-dim", text(a.head_dim),
                       "must exceed --rope-head-dim = " + text(l.rope_head_dim) + " for MLA (it is nope + rope)");
    l.qk_nope_head_dim = a.head_dim - l.rope_head_dim;
    if (f.kv_heads && *f.kv_heads != a.num_q_heads)
      throw InputError("--kv-heads", text(*f.kv_heads), "MLA has one latent shared by all heads; omit --kv-heads");
    a.num_kv_heads = a.num_q_heads;
    a.variant = AttentionVariant::mla;
    return;
  }
  for (const auto& [given, name] : {std::pair{f.kv_lora_rank.has_value(), "--kv-lora-rank"},
                                    std::pair{f.q_lora_rank.has_value(), "--q-lora-rank"},
                                    std::pair{f.rope_head_dim.has_value(), "--rope-head-dim"}})
    if (given) throw InputError(name, "(given)", "only valid with --variant mla");
  if (a.variant == AttentionVariant::mla) {  // switching away from MLA: plain per-head widths
    a.mla = MlaSpec{};
    a.v_head_dim = a.head_dim = a.mla.qk_nope_head_dim > 0 ? a.mla.qk_nope_head_dim : a.head_dim;
  }
  if (f.head_dim) {
    a.head_dim = *f.head_dim;
    if (!f.v_head_dim) a.v_head_dim = a.head_dim;
  } else if (custom || (f.heads && !f.head_dim && m.d_model % a.num_q_heads == 0 &&
                        a.head_dim * old_heads == m.d_model)) {
    // Custom models, and presets whose head_dim was d_model / heads, keep that rule.
    if (m.d_model % a.num_q_heads != 0)
      throw InputError("--heads", text(a.num_q_heads),
                       "must divide --d-model = " + text(m.d_model) + " unless --head-dim is given");
    a.head_dim = m.d_model / a.num_q_heads;
    if (!f.v_head_dim) a.v_head_dim = a.head_dim;
  }
  if (f.v_head_dim) a.v_head_dim = *f.v_head_dim;
  if (f.kv_heads) {
    a.num_kv_heads = *f.kv_heads;
  } else if (f.variant) {
    if (variant == AttentionVariant::mha) a.num_kv_heads = a.num_q_heads;
    else if (variant == AttentionVariant::mqa) a.num_kv_heads = 1;
    else if (f.heads || custom)
      throw InputError("--kv-heads", "(missing)", "required with --variant gqa");
  } else if (f.heads && a.num_kv_heads == old_heads) {
    a.num_kv_heads = a.num_q_heads;  // MHA stays MHA when the head count changes
  }
  if (a.num_kv_heads <= 0 || a.num_q_heads % a.num_kv_heads != 0)
    throw InputError(f.kv_heads ? "--kv-heads" : "--heads", text(f.kv_heads ? a.num_kv_heads : a.num_q_heads),
                     "KV heads (" + text(a.num_kv_heads) + ") must divide query heads (" + text(a.num_q_heads) + ")");
  a.variant = variant_for_heads(a.num_q_heads, a.num_kv_heads);
  if (f.variant && a.variant != variant)
    throw InputError("--variant", *f.variant,
                     text(a.num_q_heads) + " query heads with " + text(a.num_kv_heads) + " KV heads is " +
                         std::string(to_string(a.variant)));
}

}  // namespace

// --sliding-window or --attention-chunk make every layer local (each replaces the other kind);
// --global-every N then makes every N-th layer global and the others local with the model's local span.
// A hybrid model's linear-attention layers stay as they are: only softmax layers are local or global, and
// N counts softmax layers.
void apply_layer_pattern(const LayerPatternFlags& f, ModelSpec& m) {
  if (f.sliding_window.value_or(0) > 0 && f.attention_chunk.value_or(0) > 0)
    throw InputError("--attention-chunk", std::to_string(*f.attention_chunk), "cannot be combined with --sliding-window");
  auto set_all = [&](Span span) {
    for (auto& l : m.layers)
      if (l.softmax()) l.span = span;
  };
  if (f.sliding_window && !f.attention_chunk.value_or(0)) set_all(Span::window(*f.sliding_window));
  if (f.attention_chunk && !f.sliding_window.value_or(0)) set_all(Span::chunk(*f.attention_chunk));
  if (!f.global_every) return;
  const std::int64_t every = *f.global_every;
  const auto local = std::find_if(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) { return l.local_span() > 0; });
  if (local == m.layers.end())
    throw InputError("--global-every", std::to_string(every),
                     m.num_attention_layers() == 0 ? "the model has no softmax-attention layer to make global"
                                                   : "no layer is local to make global (add --sliding-window or --attention-chunk)");
  const std::int64_t softmax = m.num_attention_layers();
  if (every > softmax)
    throw InputError("--global-every", std::to_string(every),
                     "must not exceed the " + std::to_string(softmax) +
                         (softmax < m.num_layers() ? " softmax-attention layers" : " layers"));
  set_all(local->span);
  std::int64_t k = 0;
  for (auto& l : m.layers) {
    if (!l.softmax()) continue;
    if (++k % every == 0) l.span = Span::full();
  }
}

namespace {

void apply_layer_pattern_flags(const ModelFlags& f, ModelSpec& m) {
  apply_layer_pattern({f.sliding_window, f.attention_chunk, f.global_every}, m);
}

// --index-topk K gives any model an indexer choosing each query's top K keys (DeepSeek Sparse Attention,
// with the model's indexer widths or DeepSeek-V3.2's), or with 0 takes a sparse model's away.
void apply_indexer_flags(const ModelFlags& f, ModelSpec& m) {
  IndexerSpec& x = m.attention.indexer;
  const auto refuse_widths = [&](const std::string& why) {
    for (const auto& [given, name] : {std::pair{f.index_heads.has_value(), "--index-heads"},
                                      std::pair{f.index_head_dim.has_value(), "--index-head-dim"}})
      if (given) throw InputError(name, "(given)", why);
  };
  if (f.index_topk && *f.index_topk == 0) {
    refuse_widths("not valid with --index-topk 0 (dense attention has no indexer)");
    remove_indexer(m);
    return;
  }
  if (!m.attention.sparse() && !f.index_topk) {
    refuse_widths("the model has dense attention: add --index-topk K to give it an indexer");
    return;
  }
  if (!m.attention.sparse()) x = IndexerSpec{CustomDefaults::indexer_heads, CustomDefaults::indexer_head_dim, 0};
  if (f.index_topk) x.topk = *f.index_topk;
  if (f.index_heads) x.num_heads = *f.index_heads;
  if (f.index_head_dim) x.head_dim = *f.index_head_dim;
}

}  // namespace

ModelSpec resolve_model(const ModelFlags& f) {
  if (!f.hf_config.empty() && !f.model.empty())
    throw InputError("--model", f.model, "cannot be combined with --hf-config");
  if (!f.config.is_null() && (!f.hf_config.empty() || !f.model.empty()))
    throw InputError(f.model.empty() ? "--hf-config" : "--model", f.model.empty() ? f.hf_config : f.model,
                     "cannot be combined with a model's config.json content");
  const bool custom = f.hf_config.empty() && f.model.empty() && f.config.is_null();
  ModelSpec m = !f.config.is_null()    ? model_from_config_json(f.config)
                : !f.hf_config.empty() ? load_hf_config_arg(f.hf_config)
                : !f.model.empty()     ? load_model_preset(f.model)
                                       : custom_base(f);
  if (!custom && (f.d_model || f.layers || f.heads || f.kv_heads || f.head_dim || f.v_head_dim || f.variant ||
                  f.kv_lora_rank || f.q_lora_rank || f.rope_head_dim || f.ffn_dim || f.ffn || f.vocab ||
                  f.sliding_window || f.attention_chunk || f.global_every || f.tie_embeddings || f.index_topk ||
                  f.index_heads || f.index_head_dim))
    m.name += " (modified)";
  if (f.d_model) m.d_model = *f.d_model;
  if (f.layers) {
    const std::size_t n = static_cast<std::size_t>(checked_layer_count(*f.layers, "--layers"));
    const bool hybrid = std::any_of(m.layers.begin(), m.layers.end(),
                                    [](const LayerSpec& l) { return !l.softmax() || l.ffn == LayerFfn::none; });
    const std::size_t had = m.layers.size();
    m.layers.resize(n, m.layers.empty() ? LayerSpec{} : m.layers.back());
    // A hybrid model's pattern repeats: more layers continue it from its first layer, fewer keep its first ones.
    if (hybrid)
      for (std::size_t i = had; i < n; ++i) m.layers[i] = m.layers[i % had];
  }
  apply_attention_flags(f, m, custom);
  if (f.ffn) m.ffn.kind = parse_ffn_kind(*f.ffn, "--ffn");
  if (f.ffn_dim &&
      std::none_of(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) { return l.ffn == LayerFfn::dense; }))
    throw InputError("--ffn-dim", std::to_string(*f.ffn_dim), "the model has no dense FFN layer to widen (only experts or none)");
  if (f.ffn_dim) m.ffn.ffn_dim = *f.ffn_dim;
  else if (custom || f.d_model || f.ffn) m.ffn.ffn_dim = default_ffn_dim(m.d_model, m.ffn.kind);
  if (f.vocab) m.vocab_size = *f.vocab;
  if (f.tie_embeddings) m.tie_embeddings = *f.tie_embeddings;
  apply_layer_pattern_flags(f, m);
  apply_indexer_flags(f, m);
  validate(m);
  return m;
}

}  // namespace mhacfg
