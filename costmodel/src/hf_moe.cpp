// HF import of the mixture-of-experts families (Mixtral, Qwen MoE, GPT-OSS, DeepSeek and Kimi K2 with MLA,
// GLM-4.5, GLM-4.7-Flash, Llama 4, OLMoE and FlexOlmo, ERNIE 4.5, MiniMax-M2). Each follows its transformers Config
// class and modeling code.
#include "hf_config_families.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

void parse_mixtral(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {0, false, 8});  // MixtralConfig: 8 KV heads
  set_all_windows(m, window_key(f, "sliding_window", 0));
  // Every layer is sparse: num_local_experts FFNs of intermediate_size, top num_experts_per_tok.
  m.moe.num_routed_experts = f.optional_int("num_local_experts").value_or(8);
  m.moe.top_k = f.optional_int("num_experts_per_tok").value_or(2);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
}

// Qwen2-MoE's and Qwen3-MoE's experts: num_experts (or v5's num_local_experts) of
// moe_intermediate_size, top num_experts_per_tok, a router without bias; layer i is sparse unless it
// is in mlp_only_layers or (i + 1) is not a multiple of decoder_sparse_step.
void qwen_moe_layers(const JsonFields& f, ModelSpec& m, std::int64_t experts, std::int64_t width, std::int64_t top_k) {
  m.moe.num_routed_experts = experts_key(f, "num_experts", "num_local_experts", experts);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", width);
  m.moe.top_k = int_or(f, "num_experts_per_tok", top_k);
  const std::int64_t step = int_or(f, "decoder_sparse_step", 1);
  const std::vector<bool> dense_only =
      f.has("mlp_only_layers") ? layer_set(f, "mlp_only_layers", m) : std::vector<bool>(m.layers.size(), false);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    m.layers[i].ffn = moe_if(!dense_only[i] && static_cast<std::int64_t>(i + 1) % step == 0);
}

// Qwen3MoeConfig: Qwen3's attention (q/k norms) but no head_dim default (the model falls back to
// hidden_size / heads; the checkpoints state 128), 4 KV heads, untied; 128 experts of 768, top 8, no
// shared expert; dense layers use intermediate_size. A window, with use_sliding_window, applies to
// every layer (no max_window_layers here).
void parse_qwen3_moe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 4};
  d.hidden = 2048, d.layers = 24, d.heads = 32, d.ffn = 6144, d.vocab = 151936;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = true;
  const bool use = f.optional_bool("use_sliding_window", false);
  const std::int64_t window = use ? window_key(f, "sliding_window", 4096) : 0;
  if (!apply_layer_types(f, m, window)) set_all_windows(m, window);
  qwen_moe_layers(f, m, 128, 768, 8);
}

// Qwen2MoeConfig: Qwen2's q/k/v biases (qkv_bias), 16 heads and KV heads, untied; 60 experts of 1408,
// top 4, and one shared FFN of shared_expert_intermediate_size behind a sigmoid gate (d_model
// weights); Qwen2's windows.
void parse_qwen2_moe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 16};
  d.hidden = 2048, d.layers = 24, d.heads = 16, d.ffn = 5632, d.vocab = 151936;
  parse_llama_like(f, m, d);
  m.attention.q_bias = m.attention.k_bias = m.attention.v_bias = f.optional_bool("qkv_bias", true);
  qwen_windows(f, m);
  qwen_moe_layers(f, m, 60, 1408, 4);
  const std::int64_t shared = int_or(f, "shared_expert_intermediate_size", 5632);
  m.moe.num_shared_experts = 1;
  m.moe.shared_ffn_dim = shared;
  m.moe.shared_gate = true;
}

// GptOssConfig: 64 heads of 64 (hidden_size / heads only when head_dim is null), 8 KV heads, biases on
// q/k/v/o, one sink logit per head; every layer sparse: num_local_experts gated experts of
// intermediate_size with biases (gate_up and down), top num_experts_per_tok (the file's
// experts_per_token is not read), a router with a bias; layers alternate sliding (even index,
// sliding_window 128) and full unless layer_types says otherwise.
void parse_gpt_oss(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{f.present("head_dim") ? 0 : 64, false, 8};
  d.hidden = 2880, d.layers = 36, d.heads = 64, d.ffn = 2880, d.vocab = 201088;
  parse_llama_like(f, m, d);
  attention_bias(f, m, true);
  m.attention.sinks = true;
  m.ffn.bias = true;  // the experts' gate_up_proj_bias and down_proj_bias
  m.moe.num_routed_experts = experts_key(f, "num_local_experts", "num_experts", 128);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  m.moe.top_k = int_or(f, "num_experts_per_tok", 4);
  m.moe.router_bias = true;
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
  const std::int64_t window = window_key(f, "sliding_window", 128);
  if (!apply_layer_types(f, m, window))
    for (std::size_t i = 0; i < m.layers.size(); i += 2) m.layers[i].span = Span::window(window);
}

std::int64_t mtp_layers(const JsonFields& f, const ModelSpec& m, const char* key) {
  const std::int64_t n = f.optional_int(key, false).value_or(0);
  if (n > m.num_layers())
    throw InputError(f.name(key), int_text(n), "more than the model's " + int_text(m.num_layers()) + " layers");
  return n;
}

// DeepseekV2Config / DeepseekV3Config. A missing key takes the class default (V3's are DeepSeek-V3's
// own: q_lora_rank 1536, 256 routed experts of 2048, 1 shared, top 8, the first 3 layers dense; V2's
// 64 of 1407, 2 shared, no default top-k); q_lora_rank null means no query compression and
// n_routed_experts null a dense model.
void parse_deepseek(const JsonFields& f, ModelSpec& m, bool v3) {
  parse_llama_like(f, m, {1, false, 0});  // head_dim placeholder; MLA sets it below
  AttentionSpec& a = m.attention;
  a.variant = AttentionVariant::mla;
  auto with_default = [&](const char* key, std::int64_t missing, std::int64_t null_value, bool positive) {
    if (!f.present(key)) return missing;
    return f.optional_int(key, positive).value_or(null_value);
  };
  a.mla.q_lora_rank = with_default("q_lora_rank", 1536, 0, true);
  // V3's MLA widths default as DeepseekV3Config.__init__ sets them (transformers,
  // src/transformers/models/deepseek_v3/configuration_deepseek_v3.py: kv_lora_rank 512,
  // qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128); V2 files always carry them.
  std::string defaulted;
  auto mla_width = [&](const char* key, std::int64_t v3_default) {
    if (!v3 || f.present(key)) return f.require_int(key);
    defaulted += (defaulted.empty() ? "" : ", ") + std::string(key) + " " + int_text(v3_default);
    return v3_default;
  };
  a.mla.kv_lora_rank = mla_width("kv_lora_rank", 512);
  a.mla.qk_nope_head_dim = mla_width("qk_nope_head_dim", 128);
  a.mla.rope_head_dim = mla_width("qk_rope_head_dim", 64);
  a.head_dim = a.mla.qk_nope_head_dim + a.mla.rope_head_dim;
  a.v_head_dim = mla_width("v_head_dim", 128);
  if (!defaulted.empty())
    m.notes.push_back("The config leaves out MLA widths; used transformers' DeepseekV3Config defaults: " + defaulted + ".");
  a.num_kv_heads = a.num_q_heads;
  // q_a_proj, kv_a_proj_with_mqa and o_proj; q_proj (no query compression) never has a bias.
  const bool bias = f.optional_bool("attention_bias", false);
  a.q_bias = a.k_bias = a.o_bias = bias;
  const std::int64_t routed = with_default("n_routed_experts", v3 ? 256 : 64, 0, true);
  if (routed > 0) {
    m.moe.num_routed_experts = routed;
    m.moe.num_shared_experts = with_default("n_shared_experts", v3 ? 1 : 2, 0, false);
    m.moe.expert_ffn_dim = with_default("moe_intermediate_size", v3 ? 2048 : 1407, 0, true);
    m.moe.top_k = v3 ? with_default("num_experts_per_tok", 8, 0, true) : f.require_int("num_experts_per_tok");
    if (m.moe.expert_ffn_dim <= 0 || m.moe.top_k <= 0)
      throw InputError(f.name(m.moe.top_k <= 0 ? "num_experts_per_tok" : "moe_intermediate_size"), "null",
                       "required with n_routed_experts = " + int_text(routed));
    // noaux_tc routing adds a learned per-expert bias (e_score_correction_bias); V3 always uses it.
    m.moe.router_bias = v3 || f.optional_string("topk_method").value_or("") == "noaux_tc";
    const std::int64_t first_dense = with_default("first_k_dense_replace", v3 ? 3 : 0, 0, false);
    const std::int64_t freq = f.optional_int("moe_layer_freq").value_or(1);
    for (std::int64_t i = 0; i < m.num_layers(); ++i)
      m.layers[static_cast<std::size_t>(i)].ffn = moe_if(i >= first_dense && i % freq == 0);
  }
  if (v3) m.extra.mtp_modules = mtp_layers(f, m);
}

namespace {

// DeepSeek Sparse Attention's indexer (DeepseekV32Config, GlmMoeDsaConfig): index_n_heads heads
// (`default_heads` when the key is missing) of index_head_dim (128), the top index_topk (2048) keys.
void sparse_attention(const JsonFields& f, ModelSpec& m, std::int64_t default_heads) {
  IndexerSpec& x = m.attention.indexer;
  x.num_heads = int_or(f, "index_n_heads", default_heads);
  x.head_dim = int_or(f, "index_head_dim", 128);
  x.topk = int_or(f, "index_topk", 2048);
}

// GlmMoeDsaConfig's per-layer indexer modes (transformers' __post_init__; GLM-5.2's IndexShare): a
// "full" layer runs its indexer, a "shared" one has none and attends to the top-k of the last full
// layer before it. indexer_types lists them; else index_topk_pattern ("F" / "S" per layer); else
// layer i is full when max(i - index_skip_topk_offset + 1, 0) is a multiple of index_topk_freq
// (defaults 2 and 1: every layer full).
void shared_indexer_layers(const JsonFields& f, ModelSpec& m) {
  const std::size_t layers = m.layers.size();
  std::vector<bool> shared(layers, false);
  const auto per_layer = [&](const std::string& key, std::size_t n) {
    if (n != layers)
      throw InputError(f.name(key.c_str()), "(" + std::to_string(n) + " entries)",
                       "must name every layer's indexer mode (num_hidden_layers = " + std::to_string(layers) + ")");
  };
  if (f.has("indexer_types")) {
    const auto& types = f.at("indexer_types");
    if (!types.is_array()) throw InputError(f.name("indexer_types"), json_value_text(types), "must be a list of \"full\" or \"shared\"");
    per_layer("indexer_types", types.size());
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (types[i] != "full" && types[i] != "shared")
        throw InputError(f.name("indexer_types") + "[" + std::to_string(i) + "]", json_value_text(types[i]),
                         "unknown indexer type (expected \"full\" or \"shared\")");
      shared[i] = types[i] == "shared";
    }
  } else if (f.has("index_topk_pattern") && !f.at("index_topk_pattern").is_null()) {
    const std::string pattern = f.require_string("index_topk_pattern");
    per_layer("index_topk_pattern", pattern.size());
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != 'F' && pattern[i] != 'S')
        throw InputError(f.name("index_topk_pattern"), "\"" + pattern + "\"", "must be a string of F (full) and S (shared), one per layer");
      shared[i] = pattern[i] == 'S';
    }
  } else {
    const std::int64_t freq = std::max<std::int64_t>(int_or(f, "index_topk_freq", 1), 1);
    // Not negative (require_int), so i - offset + 1 cannot overflow.
    const std::int64_t offset = f.has("index_skip_topk_offset") ? f.require_int("index_skip_topk_offset", false) : 2;
    for (std::size_t i = 0; i < layers; ++i) shared[i] = std::max<std::int64_t>(std::int64_t(i) - offset + 1, 0) % freq != 0;
  }
  for (std::size_t i = 0; i < layers; ++i) m.layers[i].shared_topk = shared[i];
}

// A DeepseekV32Config gives every layer its own indexer; keys that would share one layer's top-k with
// others (vLLM's IndexCache override sets index_topk_freq on V3.2, a serving option that changes the
// model's outputs, not its checkpoint) are refused rather than read as GLM's schedule.
void refuse_shared_indexer(const JsonFields& f) {
  const std::string why = "layers that share another layer's top-k are read from GlmMoeDsaConfig (glm_moe_dsa) only";
  if (f.has("index_topk_freq") && f.require_int("index_topk_freq") != 1)
    throw InputError(f.name("index_topk_freq"), json_value_text(f.at("index_topk_freq")), why);
  if (f.has("index_topk_pattern") || f.has("indexer_types")) {
    const char* key = f.has("indexer_types") ? "indexer_types" : "index_topk_pattern";
    throw InputError(f.name(key), json_value_text(f.at(key)), why);
  }
}

}  // namespace

// DeepseekV32Config (DeepSeek-V3.2, V3.2-Exp): DeepSeek-V3's layout and defaults with the indexer on
// every layer (64 heads by default), and the checkpoint's MTP layer (with an indexer too).
void parse_deepseek_v32(const JsonFields& f, ModelSpec& m) {
  parse_deepseek(f, m, true);
  sparse_attention(f, m, 64);
  refuse_shared_indexer(f);
}

// GlmMoeDsaConfig (GLM-5, GLM-5.1): DeepSeek-V3's MLA and MoE layout (the router's
// e_score_correction_bias is a parameter here: the checkpoints store it) with GLM's sizes, q_lora_rank
// 2048 by default, and the indexer on every layer (32 heads by default); the MTP layer shares the
// embedding and the LM head.
void parse_glm_moe_dsa(const JsonFields& f, ModelSpec& m) {
  parse_deepseek(f, m, true);
  if (!f.present("q_lora_rank")) m.attention.mla.q_lora_rank = 2048;
  sparse_attention(f, m, 32);
  shared_indexer_layers(f, m);
}

void read_mla(const JsonFields& f, AttentionSpec& a, const MlaDefaults& d) {
  a.variant = AttentionVariant::mla;
  a.mla.q_lora_rank = f.present("q_lora_rank") ? f.optional_int("q_lora_rank").value_or(0) : d.q_lora_rank;
  a.mla.kv_lora_rank = int_or(f, "kv_lora_rank", d.kv_lora_rank);
  a.mla.qk_nope_head_dim = int_or(f, "qk_nope_head_dim", d.qk_nope_head_dim);
  a.mla.rope_head_dim = int_or(f, "qk_rope_head_dim", d.qk_rope_head_dim);
  a.head_dim = add(a.mla.qk_nope_head_dim, a.mla.rope_head_dim, "qk_nope_head_dim + qk_rope_head_dim");
  a.v_head_dim = int_or(f, "v_head_dim", d.v_head_dim);
  a.num_kv_heads = a.num_q_heads;
  a.q_bias = a.k_bias = a.o_bias = f.optional_bool("attention_bias", false);
}

// Glm4MoeLiteConfig (GLM-4.7-Flash): DeepSeek-V3's MLA (q_a/q_b, kv_a with the RoPE key, kv_b, o; biases on
// the down projections and o with attention_bias) in GLM-4.5's MoE layers (Glm4MoeMoE: one shared expert
// of moe_intermediate_size beside the routed ones, a router whose e_score_correction_bias is a buffer,
// not a parameter). A missing key takes the class default (GLM-4.7-Flash's own sizes: 47 layers of
// 2048, 20 heads, q_lora_rank 768, kv_lora_rank 512, heads of 192 + 64 and values of 256, 64 experts of
// 1536, top 4, a dense FFN of 10240). Layer i is sparse as mlp_layer_types says; without it, from
// first_k_dense_replace on (the serving engines' key), and transformers' default is the same: layer 0
// dense. The checkpoint's num_nextn_predict_layers MTP layers (transformers skips them) are params.mtp.
void parse_glm4_moe_lite(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{1, false, 20};  // head_dim placeholder; MLA sets it below
  d.hidden = 2048, d.layers = 47, d.heads = 20, d.ffn = 10240, d.vocab = 154880;
  parse_llama_like(f, m, d);
  read_mla(f, m.attention, {768, 512, 192, 64, 256});
  m.moe.num_routed_experts = experts_key(f, "n_routed_experts", "num_local_experts", 64);
  m.moe.num_shared_experts = f.optional_int("n_shared_experts", false).value_or(1);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 1536);
  m.moe.top_k = int_or(f, "num_experts_per_tok", 4);
  if (f.has("mlp_layer_types")) {
    const auto& types = f.at("mlp_layer_types");
    if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
      throw InputError(f.name("mlp_layer_types"), json_value_text(types),
                       "must be a list of " + int_text(m.num_layers()) + " \"dense\" or \"sparse\"");
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (types[i] != "dense" && types[i] != "sparse")
        throw InputError(f.name("mlp_layer_types") + "[" + std::to_string(i) + "]", json_value_text(types[i]),
                         "unknown MLP type (expected \"dense\" or \"sparse\")");
      m.layers[i].ffn = moe_if(types[i] == "sparse");
    }
  } else {
    const std::int64_t first_dense = f.optional_int("first_k_dense_replace", false).value_or(1);
    for (std::int64_t i = 0; i < m.num_layers(); ++i) m.layers[static_cast<std::size_t>(i)].ffn = moe_if(i >= first_dense);
  }
  m.extra.mtp_modules = mtp_layers(f, m);
}

// Glm4MoeConfig (GLM-4.5, GLM-4.5-Air): q/k/v biases with attention_bias (o_proj has none), per-head
// q/k norms with use_qk_norm, 96 heads, 8 KV heads, head_dim from the file (else hidden_size /
// heads), untied. Layers from first_k_dense_replace on are sparse: n_routed_experts of
// moe_intermediate_size, top num_experts_per_tok, n_shared_experts as one FFN, and a router whose
// e_score_correction_bias is a buffer in transformers, not a parameter. The checkpoint's
// num_nextn_predict_layers MTP layers (which transformers does not build) are reported as params.mtp.
void parse_glm4_moe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 8};
  d.hidden = 4096, d.layers = 46, d.heads = 96, d.ffn = 10944, d.vocab = 151552;
  parse_llama_like(f, m, d);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = f.optional_bool("attention_bias", false);
  a.qk_norm = f.optional_bool("use_qk_norm", false);
  m.moe.num_routed_experts = int_or(f, "n_routed_experts", 128);
  m.moe.num_shared_experts = f.optional_int("n_shared_experts", false).value_or(1);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 1408);
  m.moe.top_k = int_or(f, "num_experts_per_tok", 8);
  const std::int64_t first_dense = f.optional_int("first_k_dense_replace", false).value_or(1);
  for (std::int64_t i = 0; i < m.num_layers(); ++i)
    m.layers[static_cast<std::size_t>(i)].ffn = moe_if(i >= first_dense);
  m.extra.mtp_modules = mtp_layers(f, m);
}

// Llama4TextConfig: 40 heads of 128 (hidden_size / heads only when head_dim is null), 8 KV heads,
// biases on q/k/v/o with attention_bias, untied; its q/k norm is an L2 norm without weights. Layers
// in moe_layers (default every interleave_moe_layer_step-th) are sparse: num_local_experts gated
// experts of intermediate_size, top num_experts_per_tok, a router without bias and one shared expert
// of intermediate_size; dense layers use intermediate_size_mlp. RoPE layers attend in chunks of
// attention_chunk_size (null: everything); every no_rope_layer_interval-th layer (or those
// no_rope_layers marks 0, or layer_types' full_attention ones) uses no RoPE and attends to everything.
void parse_llama4_text(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{f.present("head_dim") ? 0 : 128, false, 8};
  d.hidden = 5120, d.layers = 48, d.heads = 40, d.ffn = 8192, d.vocab = 202048;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.moe.num_routed_experts = int_or(f, "num_local_experts", 16);
  m.moe.num_shared_experts = 1;
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  m.moe.top_k = int_or(f, "num_experts_per_tok", 1);
  m.ffn.ffn_dim = int_or(f, "intermediate_size_mlp", 16384);
  if (f.has("moe_layers")) {  // a list, even an empty one, replaces the interleave
    const std::vector<bool> sparse = layer_set(f, "moe_layers", m);
    for (std::size_t i = 0; i < m.layers.size(); ++i) m.layers[i].ffn = moe_if(sparse[i]);
  } else {
    const std::int64_t step = int_or(f, "interleave_moe_layer_step", 1);
    for (std::size_t i = 0; i < m.layers.size(); ++i)
      m.layers[i].ffn = moe_if(static_cast<std::int64_t>(i + 1) % step == 0);
  }
  const std::int64_t chunk = window_key(f, "attention_chunk_size", 8192);
  if (apply_layer_types(f, m, 0, chunk)) return;
  const auto* rope = f.has("no_rope_layers") ? &f.at("no_rope_layers") : nullptr;
  if (rope && !rope->is_array())
    throw InputError(f.name("no_rope_layers"), json_value_text(*rope), "must be a list of 0 or 1 per layer");
  if (rope && !rope->empty()) {  // an empty list takes the interval, as in transformers
    if (static_cast<std::int64_t>(rope->size()) < m.num_layers())  // longer lists are read up to the layers
      throw InputError(f.name("no_rope_layers"), json_value_text(*rope), "must list 0 or 1 for each of " +
                                                                             int_text(m.num_layers()) + " layers");
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      const std::string field = f.name("no_rope_layers") + "[" + std::to_string(i) + "]";
      // 0: no RoPE, global; anything else RoPE, chunked (transformers tests it for truth).
      m.layers[i].span = Span::chunk(json_to_int((*rope)[i], field, false) != 0 ? chunk : 0);
    }
    return;
  }
  const std::int64_t interval = int_or(f, "no_rope_layer_interval", 4);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    m.layers[i].span = Span::chunk(static_cast<std::int64_t>(i + 1) % interval != 0 ? chunk : 0);
}

// Llama4Config (multimodal): text_config's language model (Llama4TextConfig defaults for what it
// leaves out) and vision_config's encoder, adapter and projector (Llama4VisionConfig defaults),
// reported beside the total.
void parse_llama4(const JsonFields& f, ModelSpec& m) {
  parse_llama4_text(sub_config(f, "text_config"), m);
  const JsonFields v = sub_config(f, "vision_config");
  VisionSpec& vs = m.extra.vision;  // Llama4VisionConfig's defaults
  vit_sizes(v, vs, {VisionKind::llama4, 768, 5632, 34, 3, 448, 14});
  vs.projector_input_dim = int_or(v, "projector_input_dim", 4096);
  vs.projector_output_dim = int_or(v, "projector_output_dim", 4096);
  vs.output_dim = int_or(v, "vision_output_dim", 7680);
}

void olmoe_layers(const JsonFields& f, ModelSpec& m, const FamilyDefaults& d, std::int64_t experts,
                  std::int64_t top_k) {
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = m.attention.qk_norm_full_width = true;
  m.moe.num_routed_experts = experts_key(f, "num_experts", "num_local_experts", experts);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  m.moe.top_k = int_or(f, "num_experts_per_tok", top_k);
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
}

// OlmoeConfig: OLMoE's layers (olmoe_layers) with Llama's pre-norms, 64 experts, top 8. clip_qkv clamps
// and adds nothing.
void parse_olmoe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 2048, d.layers = 16, d.heads = 16, d.ffn = 2048, d.vocab = 50304;
  olmoe_layers(f, m, d, 64, 8);
}

// FlexOlmoConfig (FlexOlmo-7x7B-1T, the Flex-*-2x7B-1T pairs): OlmoeDecoderLayer with Olmo2Attention and
// OLMo 2's two RMSNorms after, not before, attention and the experts (the same count as OLMoE's pre-norms),
// so olmoe_layers with OLMo 2 7B's sizes (4096 wide, 32 layers of 32 heads, experts of 11008, 100352
// tokens), 7 experts and top 5 when the keys are missing (the released files state both: 7 and 7).
// norm_topk_prob and the router's loss settings hold no parameters.
void parse_flex_olmo(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 11008, d.vocab = 100352;
  olmoe_layers(f, m, d, 7, 5);
}

// Ernie4_5Config (ERNIE-4.5-0.3B): Llama's layout with head_dim 128 when the key is missing (hidden_size
// / heads when null), 2 KV heads, biases on q/k/v/o and the MLP with use_bias, tied by default.
void parse_ernie4_5(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{f.present("head_dim") ? 0 : 128, true, 2};
  d.hidden = 1024, d.layers = 18, d.heads = 16, d.ffn = 3072, d.vocab = 103424;
  parse_llama_like(f, m, d);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = a.o_bias = m.ffn.bias = f.optional_bool("use_bias", false);
}

// Ernie4_5_MoeConfig (ERNIE-4.5-21B-A3B, -300B-A47B): head_dim from the file (else hidden_size / heads),
// 4 KV heads, tied by default; use_bias puts biases on q/k/v/o, the MLPs and the LM head. Layer i is
// sparse when (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i <= moe_layer_end_index
// (1, every layer, -1: the last): moe_num_experts (64) gated experts of moe_intermediate_size (1536),
// top moe_k (6), one shared MLP moe_num_shared_experts (2) x moe_intermediate_size wide, a router without
// bias beside moe_statics' e_score_correction_bias (a parameter, counted as the router's bias). Dense
// layers use intermediate_size. The checkpoints' MTP weights (num_nextn_predict_layers), which
// transformers does not build, are not counted: their block's layout is not in the config.
void parse_ernie4_5_moe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 4};
  d.hidden = 2560, d.layers = 28, d.heads = 20, d.ffn = 12288, d.vocab = 103424;
  parse_llama_like(f, m, d);
  const bool bias = f.optional_bool("use_bias", false);
  m.attention.q_bias = m.attention.k_bias = m.attention.v_bias = m.attention.o_bias = bias;
  m.ffn.bias = m.lm_head_bias = bias;
  m.moe.num_routed_experts = int_or(f, "moe_num_experts", 64);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 1536);
  m.moe.top_k = int_or(f, "moe_k", 6);
  m.moe.num_shared_experts = f.optional_int("moe_num_shared_experts", false).value_or(2);
  m.moe.router_bias = true;
  const std::int64_t start = f.optional_int("moe_layer_start_index", false).value_or(1);
  std::int64_t end = m.num_layers() - 1;  // -1, the class default: the last layer
  if (f.has("moe_layer_end_index")) {
    const auto& v = f.at("moe_layer_end_index");
    if (v.is_number_integer() && v.get<std::int64_t>() < -1)
      throw InputError(f.name("moe_layer_end_index"), json_value_text(v), "must be a layer index or -1 (the last layer)");
    if (!(v.is_number_integer() && v.get<std::int64_t>() == -1)) end = json_to_int(v, f.name("moe_layer_end_index"), false);
  }
  const std::int64_t interval = int_or(f, "moe_layer_interval", 1);
  for (std::int64_t i = 0; i < m.num_layers(); ++i)
    m.layers[static_cast<std::size_t>(i)].ffn = moe_if((i + 1) % interval == 0 && i >= start && i <= end);
}

// MiniMaxM2Config (MiniMax-M2, M2.1, M2.5, M2.7): 48 heads of head_dim 128 (not hidden_size / heads),
// 8 KV heads, no biases, q/k norms over every head's width (qk_norm_type "per_layer"; partial RoPE adds
// nothing), untied. Every layer sparse: num_local_experts (num_experts; 256) gated experts of
// intermediate_size (1536), top num_experts_per_tok (8), no shared expert, a router whose
// e_score_correction_bias is a buffer in transformers (llama.cpp counts its 256 per layer). The legacy
// mlp_intermediate_size has no weights. attn_type_list must be softmax (1) throughout: lightning-attention
// layers (0) are MiniMax-Text-01's and MiniMax-M1's (minimax, parse_minimax), not M2's. The MTP keys (use_mtp, num_mtp_modules) describe
// modules the released checkpoints do not ship; they are not counted.
void parse_minimax_m2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{128, false, 8};
  d.hidden = 3072, d.layers = 62, d.heads = 48, d.ffn = 1536, d.vocab = 200064;
  parse_llama_like(f, m, d);
  m.attention.qk_norm = m.attention.qk_norm_full_width = true;
  m.moe.num_routed_experts = experts_key(f, "num_local_experts", "num_experts", 256);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  m.moe.top_k = int_or(f, "num_experts_per_tok", 8);
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
  if (!f.has("attn_type_list")) return;
  const auto& types = f.at("attn_type_list");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
    throw InputError(f.name("attn_type_list"), json_value_text(types), "must be a list of " + int_text(m.num_layers()) + " layer types");
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i] != 1)
      throw InputError(f.name("attn_type_list") + "[" + std::to_string(i) + "]", json_value_text(types[i]),
                       "MiniMax-M2's layers are softmax attention (1); lightning attention (0) is MiniMax-Text-01's "
                       "and MiniMax-M1's (model_type minimax)");
}

}  // namespace mhacfg::hf
