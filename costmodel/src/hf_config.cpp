// Each family's keys and defaults follow its transformers Config class and modeling code:
// a key missing from config.json takes the class default, which differs between families
// (e.g. tie_word_embeddings: llama false, gemma true; head_dim: gemma 256, qwen3 128).
#include "mhacfg/costmodel/hf_config.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include <sys/stat.h>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

namespace {

using Parser = std::function<void(const JsonFields&, ModelSpec&)>;

std::string int_text(std::int64_t v) { return std::to_string(v); }

// Layers whose pattern is given as "layer_types" (newer transformers), if present. Only the families
// whose Config classes read it call this (Qwen2/Qwen3/Qwen3-MoE, Gemma 2/3, GPT-OSS, Llama 4); Mistral's, Mixtral's and Phi-3's ignore
// the key and window every layer. A sliding layer without a window (sliding_window null, or Qwen's
// use_sliding_window false) attends to everything, as in transformers. Llama 4, the only family given
// a `chunk`, has "chunked_attention" layers instead of sliding ones: chunks of `chunk` tokens (0: none).
bool apply_layer_types(const JsonFields& f, ModelSpec& m, std::int64_t window,
                       std::optional<std::int64_t> chunk = std::nullopt) {
  if (!f.has("layer_types")) return false;
  const auto& types = f.at("layer_types");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
    throw InputError(f.name("layer_types"), json_value_text(types),
                     "must be a list of " + int_text(m.num_layers()) + " layer types");
  for (std::size_t i = 0; i < types.size(); ++i) {
    const auto& t = types[i];
    if (t == "full_attention") {
      m.layers[i].window = 0;
    } else if (t == "sliding_attention" && !chunk) {
      m.layers[i].window = std::max<std::int64_t>(window, 0);  // no window set: full attention, as in transformers
    } else if (t == "chunked_attention" && chunk) {
      m.layers[i].chunk = *chunk;
    } else {
      throw InputError(f.name("layer_types") + "[" + std::to_string(i) + "]", json_value_text(t),
                       std::string("unknown layer type (expected full_attention or ") +
                           (chunk ? "chunked_attention)" : "sliding_attention)"));
    }
  }
  return true;
}


// The family defaults that differ between Config classes.
struct FamilyDefaults {
  std::int64_t head_dim = 0;  // 0: hidden_size / num_attention_heads
  bool tie = false;           // tie_word_embeddings
  std::int64_t kv_heads = 0;  // num_key_value_heads when the key is missing; 0: num_attention_heads
  // The sizes when their keys are missing; 0: required (most families' configs always carry them;
  // Gemma 3's multimodal checkpoints leave some to Gemma3TextConfig's defaults).
  std::int64_t hidden = 0, layers = 0, heads = 0, ffn = 0, vocab = 0;
};

// key's positive integer, or `fallback` when the key is missing (0: the key is required).
std::int64_t int_or(const JsonFields& f, const char* key, std::int64_t fallback) {
  if (fallback > 0 && !f.present(key)) return fallback;
  return f.require_int(key);
}

// num_hidden_layers (or the family's key) within kMaxLayers, before a LayerSpec per layer exists.
std::int64_t layer_count(const JsonFields& f, const char* key, std::int64_t fallback = 0) {
  return checked_layer_count(int_or(f, key, fallback), f.name(key));
}

// The common decoder layout: hidden_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads (missing: the class default, e.g. MistralConfig's 8; null: MHA, as the
// "backward compatibility" branches of the Llama, Mistral, Mixtral, Qwen and Phi-3 classes do; Gemma2's
// class has no such branch and mhacfg reads null as MHA there too), head_dim (default hidden_size /
// heads), intermediate_size,
// RMSNorm twice per layer and a final norm, gated FFN.
void parse_llama_like(const JsonFields& f, ModelSpec& m, FamilyDefaults d) {
  m.d_model = int_or(f, "hidden_size", d.hidden);
  m.layers.assign(static_cast<std::size_t>(layer_count(f, "num_hidden_layers", d.layers)), LayerSpec{});
  AttentionSpec& a = m.attention;
  a.num_q_heads = int_or(f, "num_attention_heads", d.heads);
  const bool kv_missing = !f.present("num_key_value_heads");
  a.num_kv_heads = f.optional_int("num_key_value_heads").value_or(kv_missing && d.kv_heads > 0 ? d.kv_heads : a.num_q_heads);
  if (auto head_dim = f.optional_int("head_dim")) {
    a.head_dim = *head_dim;
  } else if (d.head_dim > 0) {
    a.head_dim = d.head_dim;
  } else {
    if (m.d_model % a.num_q_heads != 0)
      throw InputError(f.name("num_attention_heads"), int_text(a.num_q_heads),
                       "must divide hidden_size = " + int_text(m.d_model) + " when head_dim is not given");
    a.head_dim = m.d_model / a.num_q_heads;
  }
  a.v_head_dim = a.head_dim;
  m.vocab_size = int_or(f, "vocab_size", d.vocab);
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", d.tie);
  m.ffn.kind = FfnKind::gated;
  m.ffn.ffn_dim = int_or(f, "intermediate_size", d.ffn);
  m.norm = NormSpec{NormKind::rmsnorm, 2, true};
}

void set_variant_from_heads(ModelSpec& m) {
  m.attention.variant = variant_for_heads(m.attention.num_q_heads, m.attention.num_kv_heads);
}

// `attention_bias`: biases on q, k, v and o alike (`fallback` when the key is missing).
void attention_bias(const JsonFields& f, ModelSpec& m, bool fallback) {
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = a.o_bias = f.optional_bool("attention_bias", fallback);
}

void parse_llama(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {});
  attention_bias(f, m, false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
}

// A window key that is absent takes the family default; an explicit null disables the window.
std::int64_t window_key(const JsonFields& f, const char* key, std::int64_t family_default) {
  if (!f.present(key)) return family_default;
  return f.has(key) ? f.require_int(key) : 0;
}

void set_all_windows(ModelSpec& m, std::int64_t window) {
  for (auto& l : m.layers) l.window = window;
}

void parse_mistral(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {0, false, 8});  // MistralConfig: 8 KV heads
  set_all_windows(m, window_key(f, "sliding_window", 4096));  // MistralConfig default; layer_types ignored
}

void parse_mixtral(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {0, false, 8});  // MixtralConfig: 8 KV heads
  set_all_windows(m, window_key(f, "sliding_window", 0));
  // Every layer is sparse: num_local_experts FFNs of intermediate_size, top num_experts_per_tok.
  m.moe.num_routed_experts = f.optional_int("num_local_experts").value_or(8);
  m.moe.top_k = f.optional_int("num_experts_per_tok").value_or(2);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  for (auto& l : m.layers) l.moe = true;
}

// Qwen2/Qwen3: windows only when use_sliding_window, and then on layers >= max_window_layers.
void qwen_windows(const JsonFields& f, ModelSpec& m) {
  const bool use = f.optional_bool("use_sliding_window", false);
  const std::int64_t window = use ? window_key(f, "sliding_window", 4096) : 0;
  if (apply_layer_types(f, m, window)) return;
  if (window > 0) {
    const std::int64_t first = f.optional_int("max_window_layers", false).value_or(28);
    for (std::int64_t i = first; i < m.num_layers(); ++i) m.layers[static_cast<std::size_t>(i)].window = window;
  }
}

void parse_qwen2(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {0, false, 32});  // Qwen2Config: 32 KV heads
  // Qwen2 always has q/k/v biases and no output bias (not configurable).
  m.attention.q_bias = m.attention.k_bias = m.attention.v_bias = true;
  qwen_windows(f, m);
}

void parse_qwen3(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {128, false, 32});  // Qwen3Config: head_dim 128, 32 KV heads
  attention_bias(f, m, false);
  m.attention.qk_norm = true;  // q_norm and k_norm: RMSNorm over head_dim
  qwen_windows(f, m);
}

// The experts' count under the key transformers v4 reads (`num_experts`) or the one v5 writes back
// (`num_local_experts`, its attribute_map target).
std::int64_t experts_key(const JsonFields& f, const char* first, const char* second, std::int64_t fallback) {
  return int_or(f, f.present(first) || !f.present(second) ? first : second, fallback);
}

// A list of layer indices under `key`, each below the layer count; the layers it names are true.
std::vector<bool> layer_set(const JsonFields& f, const char* key, const ModelSpec& m) {
  const auto& list = f.at(key);
  if (!list.is_array()) throw InputError(f.name(key), json_value_text(list), "must be a list of layer indices");
  std::vector<bool> in(m.layers.size(), false);
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string field = f.name(key) + "[" + std::to_string(k) + "]";
    const std::int64_t i = json_to_int(list[k], field, false);
    if (i >= m.num_layers())
      throw InputError(field, json_value_text(list[k]), "must be a layer index below " + int_text(m.num_layers()));
    in[static_cast<std::size_t>(i)] = true;
  }
  return in;
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
    m.layers[i].moe = !dense_only[i] && static_cast<std::int64_t>(i + 1) % step == 0;
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

void gemma_attention(const JsonFields& f, ModelSpec& m, std::int64_t default_kv_heads) {
  parse_llama_like(f, m, {256, true, default_kv_heads});  // head_dim 256, tied embeddings
  attention_bias(f, m, false);
}

void parse_gemma(const JsonFields& f, ModelSpec& m) { gemma_attention(f, m, 16); }  // GemmaConfig: 16 KV heads

void parse_gemma2(const JsonFields& f, ModelSpec& m) {
  gemma_attention(f, m, 4);  // Gemma2Config: 4 KV heads
  m.norm.per_layer = 4;  // input, post-attention, pre-FFN and post-FFN norms
  // Layers alternate sliding (even index) and global (odd index).
  const std::int64_t window = window_key(f, "sliding_window", 4096);
  if (!apply_layer_types(f, m, window))
    for (std::size_t i = 0; i < m.layers.size(); i += 2) m.layers[i].window = window;
}

// Gemma 3's and Command R7B's pattern: sliding_window on every layer but each
// sliding_window_pattern-th, which is global, unless layer_types spells the layers out.
void windows_but_every(const JsonFields& f, ModelSpec& m, std::int64_t default_window, std::int64_t default_pattern) {
  const std::int64_t window = window_key(f, "sliding_window", default_window);
  if (apply_layer_types(f, m, window)) return;
  const std::int64_t pattern = int_or(f, "sliding_window_pattern", default_pattern);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (static_cast<std::int64_t>(i + 1) % pattern != 0) m.layers[i].window = window;
}

// Gemma3TextConfig: Gemma 2's four norms per layer and head_dim 256, plus q/k norms over head_dim;
// layers slide except every sliding_window_pattern-th (6; newer files spell the pattern out as
// layer_types). Every size has a class default, which the multimodal checkpoints' text_config relies on
// (vocab_size 262208; the 4B also leaves out the heads).
void parse_gemma3_text(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{256, true, 4};
  d.hidden = 2304, d.layers = 26, d.heads = 8, d.ffn = 9216, d.vocab = 262208;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = true;
  m.norm.per_layer = 4;
  if (f.optional_bool("use_bidirectional_attention", false))
    throw InputError(f.name("use_bidirectional_attention"), "true",
                     "a bidirectional encoder (EmbeddingGemma); mhacfg analyses causal decoders");
  windows_but_every(f, m, 4096, 6);
}

// A multimodal config's text_config or vision_config; missing, every size takes its class default.
JsonFields sub_config(const JsonFields& f, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  return JsonFields(f.has(key) ? f.at(key) : empty, f.name(key));
}

// The ViT sizes every vision config names alike, with the class defaults in `d`.
void vit_sizes(const JsonFields& v, VisionSpec& vs, const VisionSpec& d) {
  vs.kind = d.kind;
  vs.hidden = int_or(v, "hidden_size", d.hidden);
  vs.intermediate = int_or(v, "intermediate_size", d.intermediate);
  vs.layers = int_or(v, "num_hidden_layers", d.layers);
  vs.channels = int_or(v, "num_channels", d.channels);
  vs.image_size = int_or(v, "image_size", d.image_size);
  vs.patch_size = int_or(v, "patch_size", d.patch_size);
}

// Gemma3Config (multimodal): the language model is text_config's (Gemma3TextConfig defaults for what
// it leaves out); vision_config's SigLIP encoder and the projector are reported beside the total, as
// DeepSeek's MTP module is.
void parse_gemma3(const JsonFields& f, ModelSpec& m) {
  parse_gemma3_text(sub_config(f, "text_config"), m);
  const JsonFields v = sub_config(f, "vision_config");
  VisionSpec& vs = m.extra.vision;  // SiglipVisionConfig's defaults
  vit_sizes(v, vs, {VisionKind::siglip, 768, 3072, 12, 3, 224, 16});
  vs.pooling_head = v.optional_bool("vision_use_head", true);
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
  for (auto& l : m.layers) l.moe = true;
  const std::int64_t window = window_key(f, "sliding_window", 128);
  if (!apply_layer_types(f, m, window))
    for (std::size_t i = 0; i < m.layers.size(); i += 2) m.layers[i].window = window;
}

void parse_phi3(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {});  // fused qkv_proj and gate_up_proj: same counts, no biases
  set_all_windows(m, window_key(f, "sliding_window", 0));  // layer_types ignored, as by Phi3Config
}

void parse_gpt2(const JsonFields& f, ModelSpec& m) {
  m.d_model = f.require_int("n_embd");
  m.layers.assign(static_cast<std::size_t>(layer_count(f, "n_layer")), LayerSpec{});
  AttentionSpec& a = m.attention;
  a.num_q_heads = a.num_kv_heads = f.require_int("n_head");
  if (m.d_model % a.num_q_heads != 0)
    throw InputError(f.name("n_head"), int_text(a.num_q_heads), "must divide n_embd = " + int_text(m.d_model));
  a.head_dim = a.v_head_dim = m.d_model / a.num_q_heads;
  a.q_bias = a.k_bias = a.v_bias = a.o_bias = true;  // Conv1D c_attn and c_proj carry biases
  m.vocab_size = f.require_int("vocab_size");
  m.learned_positions = f.require_int("n_positions");
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", true);
  m.ffn = FfnSpec{FfnKind::plain, f.optional_int("n_inner").value_or(4 * m.d_model), true};
  m.norm = NormSpec{NormKind::layernorm, 2, true};
}

// Falcon: the HF "falcon" keys and the older RefinedWeb ones (n_head, n_layer, n_head_kv).
void parse_falcon(const JsonFields& f, ModelSpec& m) {
  m.d_model = f.require_int("hidden_size");
  const char* layers_key = f.present("num_hidden_layers") ? "num_hidden_layers" : "n_layer";
  const char* heads_key = f.present("num_attention_heads") ? "num_attention_heads" : "n_head";
  m.layers.assign(static_cast<std::size_t>(layer_count(f, layers_key)), LayerSpec{});
  AttentionSpec& a = m.attention;
  a.num_q_heads = f.require_int(heads_key);
  if (m.d_model % a.num_q_heads != 0)
    throw InputError(f.name(heads_key), int_text(a.num_q_heads), "must divide hidden_size = " + int_text(m.d_model));
  a.head_dim = a.v_head_dim = m.d_model / a.num_q_heads;
  const std::string type = f.optional_string("model_type").value_or("");
  const bool new_arch = f.optional_bool("new_decoder_architecture", type == "RefinedWeb");
  const bool parallel = f.optional_bool("parallel_attn", true);
  if (new_arch) {
    const char* kv_key = f.present("num_kv_heads") ? "num_kv_heads" : "n_head_kv";
    a.num_kv_heads = f.optional_int(kv_key).value_or(a.num_q_heads);
    // ln_attn and ln_mlp, unless num_ln_in_parallel_attn says one shared norm.
    m.norm = NormSpec{NormKind::layernorm, f.optional_int("num_ln_in_parallel_attn").value_or(2), true};
  } else {
    a.num_kv_heads = f.optional_bool("multi_query", true) ? 1 : a.num_q_heads;
    // Parallel attention shares one input_layernorm; sequential adds post_attention_layernorm.
    m.norm = NormSpec{NormKind::layernorm, parallel ? 1 : 2, true};
  }
  const bool bias = f.optional_bool("bias", false);
  a.q_bias = a.k_bias = a.v_bias = a.o_bias = bias;
  m.vocab_size = f.require_int("vocab_size");
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", true);
  m.ffn = FfnSpec{FfnKind::plain, f.optional_int("ffn_hidden_size").value_or(4 * m.d_model), bias};
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
  a.mla.kv_lora_rank = f.require_int("kv_lora_rank");
  a.mla.qk_nope_head_dim = f.require_int("qk_nope_head_dim");
  a.mla.rope_head_dim = f.require_int("qk_rope_head_dim");
  a.head_dim = a.mla.qk_nope_head_dim + a.mla.rope_head_dim;
  a.v_head_dim = f.require_int("v_head_dim");
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
      m.layers[static_cast<std::size_t>(i)].moe = i >= first_dense && i % freq == 0;
  }
  if (v3) m.extra.mtp_modules = f.optional_int("num_nextn_predict_layers", false).value_or(0);
}

// Glm4Config (GLM-4-0414, GLM-Z1): q/k/v biases with attention_bias (default true; o_proj has none),
// 2 KV heads and head_dim 128 by default, four RMSNorms per layer (before and after attention and the
// MLP), a fused gate_up MLP (the same count), untied. Partial rotary adds nothing.
void parse_glm4(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{128, false, 2};
  d.hidden = 4096, d.layers = 40, d.heads = 32, d.ffn = 13696, d.vocab = 151552;
  parse_llama_like(f, m, d);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = f.optional_bool("attention_bias", true);
  m.norm.per_layer = 4;
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
  for (std::int64_t i = 0; i < m.num_layers(); ++i) m.layers[static_cast<std::size_t>(i)].moe = i >= first_dense;
  m.extra.mtp_modules = f.optional_int("num_nextn_predict_layers", false).value_or(0);
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
    for (std::size_t i = 0; i < m.layers.size(); ++i) m.layers[i].moe = sparse[i];
  } else {
    const std::int64_t step = int_or(f, "interleave_moe_layer_step", 1);
    for (std::size_t i = 0; i < m.layers.size(); ++i) m.layers[i].moe = static_cast<std::int64_t>(i + 1) % step == 0;
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
      m.layers[i].chunk = json_to_int((*rope)[i], field, false) != 0 ? chunk : 0;
    }
    return;
  }
  const std::int64_t interval = int_or(f, "no_rope_layer_interval", 4);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    m.layers[i].chunk = static_cast<std::int64_t>(i + 1) % interval != 0 ? chunk : 0;
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

// Olmo2Config: Llama's layout with q/k norms over every head's width (q_norm num_heads x head_dim,
// k_norm num_key_value_heads x head_dim) and its two RMSNorms after, not before, attention and the
// FFN (the same count); biases with attention_bias; untied; head_dim is hidden_size / heads.
void parse_olmo2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 11008, d.vocab = 50304;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = m.attention.qk_norm_full_width = true;
}

// Exaone4Config: OLMo 2's two norms after attention and the FFN (no input norm; the same count) with
// Qwen3's q/k norms over head_dim; no biases; untied by default. Windows from layer_types, else every
// layer slides but each sliding_window_pattern-th (4; the released files also spell it "LLLG": L local,
// G global, repeated); a null window makes every layer global.
void parse_exaone4(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 16384, d.vocab = 102400;
  parse_llama_like(f, m, d);
  m.attention.qk_norm = true;
  const std::int64_t window = window_key(f, "sliding_window", 4096);
  if (apply_layer_types(f, m, window) || window == 0) return;
  if (f.has("sliding_window_pattern") && f.at("sliding_window_pattern").is_string()) {
    const std::string pattern = f.require_string("sliding_window_pattern");
    if (pattern.empty() || pattern.find_first_not_of("LG") != std::string::npos)
      throw InputError(f.name("sliding_window_pattern"), json_value_text(f.at("sliding_window_pattern")),
                       "must be a layer count or a string of L (local) and G (global)");
    for (std::size_t i = 0; i < m.layers.size(); ++i)
      if (pattern[i % pattern.size()] == 'L') m.layers[i].window = window;
    return;
  }
  windows_but_every(f, m, window, 4);
}

// Olmo3Config: OLMo 2's layer with windows: layer_types, else three sliding layers (sliding_window,
// 4096) to one global, every fourth (the class's fixed pattern; a null window: every layer global).
void parse_olmo3(const JsonFields& f, ModelSpec& m) {
  parse_olmo2(f, m);
  const std::int64_t window = window_key(f, "sliding_window", 4096);
  if (apply_layer_types(f, m, window)) return;
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (static_cast<std::int64_t>(i + 1) % 4 != 0) m.layers[i].window = window;
}

// OlmoeConfig: OLMo 2's full-width q/k norms with Llama's pre-norms; every layer sparse:
// num_experts (or num_local_experts) gated experts of intermediate_size, top num_experts_per_tok, a
// router without bias, no shared expert; untied. clip_qkv clamps and adds nothing.
void parse_olmoe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 2048, d.layers = 16, d.heads = 16, d.ffn = 2048, d.vocab = 50304;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = m.attention.qk_norm_full_width = true;
  m.moe.num_routed_experts = experts_key(f, "num_experts", "num_local_experts", 64);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  m.moe.top_k = int_or(f, "num_experts_per_tok", 8);
  for (auto& l : m.layers) l.moe = true;
}

// Head widths fixed at hidden_size / heads, whatever the file says (GPT-NeoX, Phi, Cohere2 compute it).
void head_dim_from_hidden(const JsonFields& f, ModelSpec& m) {
  AttentionSpec& a = m.attention;
  if (m.d_model % a.num_q_heads != 0)
    throw InputError(f.name("num_attention_heads"), int_text(a.num_q_heads), "must divide hidden_size = " + int_text(m.d_model));
  a.head_dim = a.v_head_dim = m.d_model / a.num_q_heads;
}

// GPTNeoXConfig (Pythia, GPT-NeoX-20B): MHA through a fused query_key_value, biases on it and on the
// output with attention_bias (default true, which the released files leave out), a plain MLP of
// intermediate_size with biases, two LayerNorms per layer and a final one, untied embed_in/embed_out.
// Rotary and parallel-residual settings add nothing.
void parse_gpt_neox(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 6144, d.layers = 44, d.heads = 64, d.ffn = 24576, d.vocab = 50432;
  parse_llama_like(f, m, d);
  m.attention.num_kv_heads = m.attention.num_q_heads;  // no num_key_value_heads or head_dim in this family
  head_dim_from_hidden(f, m);
  attention_bias(f, m, true);
  m.ffn = FfnSpec{FfnKind::plain, m.ffn.ffn_dim, true};
  m.norm = NormSpec{NormKind::layernorm, 2, true};
}

// Starcoder2Config: GQA (2 KV heads by default), biases on q/k/v/o and on a plain c_fc/c_proj MLP
// with use_bias, LayerNorms with biases, tied unless the file says otherwise; sliding_window on every
// layer (none by default).
void parse_starcoder2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 2};
  d.hidden = 3072, d.layers = 30, d.heads = 24, d.ffn = 12288, d.vocab = 49152;
  parse_llama_like(f, m, d);
  const bool bias = f.optional_bool("use_bias", true);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = a.o_bias = bias;
  m.ffn = FfnSpec{FfnKind::plain, m.ffn.ffn_dim, bias};
  m.norm = NormSpec{NormKind::layernorm, 2, true};
  set_all_windows(m, window_key(f, "sliding_window", 0));
}

// SmolLM3Config: Llama's layout, tied; RoPE off on every no_rope_layer_interval-th layer (no
// parameters). With use_sliding_window, transformers slides only the layers without RoPE.
void parse_smollm3(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 4};
  d.hidden = 2048, d.layers = 36, d.heads = 16, d.ffn = 11008, d.vocab = 128256;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
  const std::int64_t window = f.optional_bool("use_sliding_window", false) ? window_key(f, "sliding_window", 0) : 0;
  if (apply_layer_types(f, m, window) || window == 0) return;
  const auto* rope = f.has("no_rope_layers") ? &f.at("no_rope_layers") : nullptr;
  const bool listed = rope && rope->is_array() && static_cast<std::int64_t>(rope->size()) >= m.num_layers();
  const std::int64_t interval = int_or(f, "no_rope_layer_interval", 4);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const bool no_rope = listed ? json_to_int((*rope)[i], f.name("no_rope_layers") + "[" + std::to_string(i) + "]", false) == 0
                                : static_cast<std::int64_t>(i + 1) % interval == 0;
    if (no_rope) m.layers[i].window = window;
  }
}

// GraniteConfig: Llama's layout with attention_bias and mlp_bias; its embedding, residual, attention
// and logits multipliers are scalars, not parameters. Untied unless the file ties (3.x files do).
void parse_granite(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 11008, d.vocab = 32000;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
}

// CohereConfig (Command R): attention and a gated MLP (never biased) side by side after one LayerNorm
// without bias per layer, a final one; biases on q/k/v/o with attention_bias; with use_qk_norm, q/k
// norms over every head's width; tied; logit_scale is a scalar.
void parse_cohere(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 0};
  d.hidden = 8192, d.layers = 40, d.heads = 64, d.ffn = 22528, d.vocab = 256000;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = m.attention.qk_norm_full_width = f.optional_bool("use_qk_norm", false);
  m.norm = NormSpec{NormKind::layernorm_no_bias, 1, true};
}

// Cohere2Config (Command R7B): Cohere's block without q/k norms, head_dim = hidden_size / heads; layers
// slide a 4096-token window except every sliding_window_pattern-th (4), which is global, or as
// layer_types says.
void parse_cohere2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 0};
  d.hidden = 8192, d.layers = 40, d.heads = 64, d.ffn = 22528, d.vocab = 256000;
  parse_llama_like(f, m, d);
  head_dim_from_hidden(f, m);
  attention_bias(f, m, false);
  m.norm = NormSpec{NormKind::layernorm_no_bias, 1, true};
  windows_but_every(f, m, 4096, 4);
}

// PhiConfig (Phi-1.5, Phi-2): attention and a plain fc1/fc2 MLP side by side after one LayerNorm per
// layer, biases on q/k/v/dense and on the MLP, a final LayerNorm, and an LM head with a bias (kept
// when the weight is tied); with qk_layernorm, LayerNorms over head_dim on q and k. Untied.
void parse_phi(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 2048, d.layers = 24, d.heads = 32, d.ffn = 8192, d.vocab = 51200;
  parse_llama_like(f, m, d);
  head_dim_from_hidden(f, m);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = a.o_bias = true;
  a.qk_norm = f.optional_bool("qk_layernorm", false);
  m.ffn = FfnSpec{FfnKind::plain, m.ffn.ffn_dim, true};
  m.norm = NormSpec{NormKind::layernorm, 1, true};
  m.lm_head_bias = true;
}

// SeedOssConfig (Seed-OSS): Qwen2's block, biases on q/k/v with attention_bias (default true) and on o
// with attention_out_bias (default false), mlp_bias; 80 heads of 128 (hidden_size / heads when
// head_dim is null), 8 KV heads, untied.
void parse_seed_oss(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{f.present("head_dim") ? 0 : 128, false, 8};
  d.hidden = 4096, d.layers = 64, d.heads = 80, d.ffn = 27648, d.vocab = 155136;
  parse_llama_like(f, m, d);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = f.optional_bool("attention_bias", true);
  a.o_bias = f.optional_bool("attention_out_bias", false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
}

// A hybrid's layer_types, naming each layer `softmax` (attention) or `linear` (linear attention), if
// present.
bool apply_linear_layer_types(const JsonFields& f, ModelSpec& m, const char* softmax, const char* linear) {
  if (!f.has("layer_types")) return false;
  const auto& types = f.at("layer_types");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
    throw InputError(f.name("layer_types"), json_value_text(types), "must be a list of " + int_text(m.num_layers()) + " layer types");
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i] != softmax && types[i] != linear)
      throw InputError(f.name("layer_types") + "[" + std::to_string(i) + "]", json_value_text(types[i]),
                       std::string("unknown layer type (expected ") + softmax + " or " + linear + ")");
    m.layers[i].linear = types[i] == linear;
  }
  return true;
}

// Qwen3NextConfig (Qwen3-Next): a hybrid of Gated DeltaNet linear attention and gated softmax
// attention. layer_types (else: every full_attention_interval-th layer, default 4, has softmax attention,
// the rest linear) names each layer. Softmax layers: 16 heads of 256, 2 KV heads, q/k norms over
// head_dim, q_proj twice as wide for the output gate, biases with attention_bias. Linear layers: 16 key
// heads and 32 value heads of 128, a convolution of 4. Qwen2-MoE's experts (512 of 512, top 10) with a
// gated shared expert of shared_expert_intermediate_size (512), on every layer by default; untied.
// The checkpoints' mtp.* weights (Qwen3-Next-80B-A3B: one module) are not in the config or the model.
void parse_qwen3_next(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{256, false, 2};
  d.hidden = 2048, d.layers = 48, d.heads = 16, d.ffn = 5632, d.vocab = 151936;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = true;
  m.attention.output_gate = true;
  LinearAttentionSpec& la = m.linear;
  la.num_k_heads = int_or(f, "linear_num_key_heads", 16);
  la.num_v_heads = int_or(f, "linear_num_value_heads", 32);
  la.head_k_dim = int_or(f, "linear_key_head_dim", 128);
  la.head_v_dim = int_or(f, "linear_value_head_dim", 128);
  la.conv_kernel = int_or(f, "linear_conv_kernel_dim", 4);
  if (!apply_linear_layer_types(f, m, "full_attention", "linear_attention")) {
    const std::int64_t interval = int_or(f, "full_attention_interval", 4);
    for (std::size_t i = 0; i < m.layers.size(); ++i) m.layers[i].linear = static_cast<std::int64_t>(i + 1) % interval != 0;
  }
  qwen_moe_layers(f, m, 512, 512, 10);
  m.moe.num_shared_experts = 1;
  m.moe.shared_ffn_dim = int_or(f, "shared_expert_intermediate_size", 512);
  m.moe.shared_gate = true;
}

// GraniteMoeHybridConfig (Granite 4.0, 4.0-H): layer_types names each layer "mamba" (Mamba2) or
// "attention" (default: every layer Mamba2). Attention: heads of hidden_size / heads (no head_dim key),
// KV heads default to the heads, attention_bias on q/k/v/o, no q/k norms (NoPE or RoPE: no weights).
// Mamba2: mamba_n_heads (128) heads of mamba_d_head (mamba_expand x hidden_size / heads), mamba_n_groups
// (1) groups of mamba_d_state (256), a convolution of mamba_d_conv (4) with mamba_conv_bias (true),
// mamba_proj_bias (false). Every layer has the shared MLP (gated, shared_intermediate_size, 1024) and,
// with num_local_experts > 0 (8), the experts (gated, intermediate_size wide, top num_experts_per_tok, 2)
// behind a router without bias; two RMSNorms per layer; untied unless tie_word_embeddings.
void parse_granitemoehybrid(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 0};
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 11008, d.vocab = 32000;
  parse_llama_like(f, m, d);
  if (f.present("head_dim")) {  // GraniteMoeHybridAttention ignores the key: hidden_size / heads
    if (m.d_model % m.attention.num_q_heads != 0)
      throw InputError(f.name("num_attention_heads"), int_text(m.attention.num_q_heads),
                       "must divide hidden_size = " + int_text(m.d_model));
    m.attention.head_dim = m.attention.v_head_dim = m.d_model / m.attention.num_q_heads;
  }
  attention_bias(f, m, false);
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::mamba2;
  la.num_v_heads = int_or(f, "mamba_n_heads", 128);
  la.num_k_heads = int_or(f, "mamba_n_groups", 1);
  la.head_k_dim = int_or(f, "mamba_d_state", 256);
  la.conv_kernel = int_or(f, "mamba_d_conv", 4);
  const std::int64_t inner = m.d_model * int_or(f, "mamba_expand", 2);
  if (f.has("mamba_d_head") && f.at("mamba_d_head") != "auto") {
    la.head_v_dim = f.require_int("mamba_d_head");
  } else {
    if (inner % la.num_v_heads != 0)
      throw InputError(f.name("mamba_n_heads"), int_text(la.num_v_heads),
                       "must divide mamba_expand x hidden_size = " + int_text(inner));
    la.head_v_dim = inner / la.num_v_heads;
  }
  if (la.head_v_dim * la.num_v_heads != inner)
    throw InputError(f.name("mamba_d_head"), int_text(la.head_v_dim),
                     "x mamba_n_heads must equal mamba_expand x hidden_size = " + int_text(inner));
  la.conv_bias = f.optional_bool("mamba_conv_bias", true);
  la.in_bias = la.out_bias = f.optional_bool("mamba_proj_bias", false);
  if (!apply_linear_layer_types(f, m, "attention", "mamba")) {
    for (auto& l : m.layers) l.linear = true;
  }
  const std::int64_t shared = int_or(f, "shared_intermediate_size", 1024);
  const std::int64_t experts = f.present("num_local_experts") ? f.require_int("num_local_experts", false) : 8;
  if (experts < 0)
    throw InputError(f.name("num_local_experts"), int_text(experts), "must not be negative");
  if (experts == 0) {  // the shared MLP alone: a dense FFN
    m.ffn.ffn_dim = shared;
    return;
  }
  m.moe.num_routed_experts = experts;
  m.moe.expert_ffn_dim = int_or(f, "intermediate_size", 11008);
  m.moe.top_k = int_or(f, "num_experts_per_tok", 2);
  m.moe.num_shared_experts = 1;
  m.moe.shared_ffn_dim = shared;
  for (auto& l : m.layers) l.moe = true;
}

// NemotronHConfig (Nemotron-H, Nemotron 3): blocks of one module each, named by hybrid_override_pattern
// ("M" Mamba2, "*" attention, "-" MLP, "E" experts) or by layers_block_type (linear_attention,
// full_attention, mlp, moe; or the older mamba, attention); the pattern's length is the layer count.
// One RMSNorm per block. Attention: head_dim (128), KV heads (8), attention_bias. Mamba2: mamba_num_heads
// (128) of mamba_head_dim (64), n_groups (8) of ssm_state_size (128), conv_kernel (4) with use_conv_bias
// (true), mamba_proj_bias (false). MLP and experts: up and down without a gate (relu2), mlp_bias;
// n_routed_experts (8) of moe_intermediate_size (7688), top num_experts_per_tok (2), n_shared_experts (1)
// x moe_shared_expert_intermediate_size (7688); the router's e_score_correction_bias is a buffer, not
// a parameter. Untied. Not modelled (an error): moe_latent_size (Nemotron 3 Super's latent experts).
void parse_nemotron_h(const JsonFields& f, ModelSpec& m) {
  std::vector<std::string> types;
  auto type_of = [&](const std::string& t, const std::string& field, const nlohmann::json& v) {
    if (t == "linear_attention" || t == "mamba" || t == "M") return std::string("M");
    if (t == "full_attention" || t == "attention" || t == "*") return std::string("*");
    if (t == "mlp" || t == "-") return std::string("-");
    if (t == "moe" || t == "E") return std::string("E");
    throw InputError(field, json_value_text(v), "unknown block type (expected M, *, - or E; or linear_attention, full_attention, mlp, moe)");
  };
  if (f.has("hybrid_override_pattern")) {
    const auto& v = f.at("hybrid_override_pattern");
    if (!v.is_string() || v.get<std::string>().empty())
      throw InputError(f.name("hybrid_override_pattern"), json_value_text(v), "must be a string of M, *, - and E");
    const std::string pattern = v.get<std::string>();
    if (static_cast<std::int64_t>(pattern.size()) > kMaxLayers)
      throw InputError(f.name("hybrid_override_pattern"), "(" + int_text(static_cast<std::int64_t>(pattern.size())) + " blocks)",
                       "must name at most " + int_text(kMaxLayers) + " blocks");
    for (std::size_t i = 0; i < pattern.size(); ++i)
      types.push_back(type_of(std::string(1, pattern[i]), f.name("hybrid_override_pattern") + "[" + std::to_string(i) + "]",
                              nlohmann::json(std::string(1, pattern[i]))));
  } else {
    const char* key = f.has("layers_block_type") ? "layers_block_type" : "layer_types";
    if (!f.has(key)) throw InputError(f.name("hybrid_override_pattern"), "(missing)", "names the blocks (or layers_block_type)");
    const auto& list = f.at(key);
    if (!list.is_array() || list.empty()) throw InputError(f.name(key), json_value_text(list), "must be a list of block types");
    if (static_cast<std::int64_t>(list.size()) > kMaxLayers)
      throw InputError(f.name(key), "(" + int_text(static_cast<std::int64_t>(list.size())) + " blocks)",
                       "must name at most " + int_text(kMaxLayers) + " blocks");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = f.name(key) + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) throw InputError(field, json_value_text(list[i]), "must be a block type");
      types.push_back(type_of(list[i].get<std::string>(), field, list[i]));
    }
  }
  FamilyDefaults d{128, false, 8};
  d.hidden = 4096, d.layers = static_cast<std::int64_t>(types.size()), d.heads = 32, d.ffn = 21504, d.vocab = 131072;
  parse_llama_like(f, m, d);
  m.layers.assign(types.size(), LayerSpec{});  // the pattern's length, whatever num_hidden_layers says (as transformers)
  m.norm.per_layer = 1;
  attention_bias(f, m, false);
  m.ffn.kind = FfnKind::plain;
  m.ffn.bias = f.optional_bool("mlp_bias", false);
  if (f.has("moe_latent_size"))
    throw InputError(f.name("moe_latent_size"), json_value_text(f.at("moe_latent_size")),
                     "latent experts (Nemotron 3 Super) are not modelled");
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::mamba2;
  la.num_v_heads = int_or(f, "mamba_num_heads", 128);
  la.head_v_dim = int_or(f, "mamba_head_dim", 64);
  la.num_k_heads = int_or(f, "n_groups", 8);
  la.head_k_dim = int_or(f, "ssm_state_size", 128);
  la.conv_kernel = int_or(f, "conv_kernel", 4);
  la.conv_bias = f.optional_bool("use_conv_bias", true);
  la.in_bias = la.out_bias = f.optional_bool("mamba_proj_bias", false);
  if (la.num_v_heads % la.num_k_heads != 0)  // named by this family's keys (validate names Granite's)
    throw InputError(f.name("n_groups"), int_text(la.num_k_heads), "must divide mamba_num_heads = " + int_text(la.num_v_heads));
  bool any_moe = false;
  for (std::size_t i = 0; i < types.size(); ++i) {
    LayerSpec& l = m.layers[i];
    l.linear = types[i] == "M";
    l.no_ffn = types[i] == "M" || types[i] == "*";
    l.no_mixer = types[i] == "-" || types[i] == "E";
    l.moe = types[i] == "E";
    any_moe = any_moe || l.moe;
  }
  if (any_moe) {
    m.moe.num_routed_experts = int_or(f, "n_routed_experts", 8);
    m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 7688);
    m.moe.top_k = int_or(f, "num_experts_per_tok", 2);
    m.moe.num_shared_experts = f.optional_int("n_shared_experts", false).value_or(1);
    m.moe.shared_ffn_dim = mul(m.moe.num_shared_experts, int_or(f, "moe_shared_expert_intermediate_size", 7688), "shared FFN width");
  }
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
    m.layers[static_cast<std::size_t>(i)].moe = (i + 1) % interval == 0 && i >= start && i <= end;
}

// KimiLinearConfig (Kimi Linear, remote code): KDA layers (linear_attn_config.kda_layers, 1-based)
// beside MLA layers (the rest). KDA: linear_attn_config's num_heads heads of head_dim for keys and
// values alike, short convolutions of short_conv_kernel_size without bias. MLA: DeepSeek's layout
// (q_lora_rank null: no query compression; kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)
// without RoPE (mla_use_nope), the rope dims kept; head_dim and num_key_value_heads are not read.
// num_experts (null: dense) gated experts of moe_intermediate_size, top num_experts_per_token,
// num_shared_experts as one FFN, on layers from first_k_dense_replace on every moe_layer_freq-th; the
// router's e_score_correction_bias is a parameter. Dense layers use intermediate_size; untied.
void parse_kimi_linear(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {1, false, 0});  // head_dim placeholder; MLA sets it below
  AttentionSpec& a = m.attention;
  a.variant = AttentionVariant::mla;
  a.mla.q_lora_rank = f.optional_int("q_lora_rank").value_or(0);
  a.mla.kv_lora_rank = f.require_int("kv_lora_rank");
  a.mla.qk_nope_head_dim = f.require_int("qk_nope_head_dim");
  a.mla.rope_head_dim = f.require_int("qk_rope_head_dim");
  a.head_dim = add(a.mla.qk_nope_head_dim, a.mla.rope_head_dim, "qk_nope_head_dim + qk_rope_head_dim");
  a.v_head_dim = f.require_int("v_head_dim");
  a.num_kv_heads = a.num_q_heads;
  if (f.present("num_experts") && f.has("num_experts")) {
    m.moe.num_routed_experts = f.require_int("num_experts");
    m.moe.expert_ffn_dim = f.require_int("moe_intermediate_size");
    m.moe.top_k = f.require_int("num_experts_per_token");
    m.moe.num_shared_experts = f.optional_int("num_shared_experts", false).value_or(0);
    m.moe.router_bias = true;
    const std::int64_t first_dense = f.optional_int("first_k_dense_replace", false).value_or(0);
    const std::int64_t freq = f.optional_int("moe_layer_freq").value_or(1);
    for (std::int64_t i = 0; i < m.num_layers(); ++i)
      m.layers[static_cast<std::size_t>(i)].moe = i >= first_dense && i % freq == 0;
  }
  if (!f.has("linear_attn_config")) return;  // every layer MLA
  const JsonFields c = sub_config(f, "linear_attn_config");
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::kda;
  la.num_k_heads = la.num_v_heads = c.require_int("num_heads");
  la.head_k_dim = la.head_v_dim = c.require_int("head_dim");
  la.conv_kernel = c.require_int("short_conv_kernel_size");
  if (!c.has("kda_layers")) return;
  const auto& layers = c.at("kda_layers");
  if (!layers.is_array())
    throw InputError(c.name("kda_layers"), json_value_text(layers), "must be a list of 1-based layer numbers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string at = c.name("kda_layers") + "[" + std::to_string(i) + "]";
    const std::int64_t n = json_to_int(layers[i], at, true);
    if (n > m.num_layers())
      throw InputError(at, int_text(n), "must be a layer number in 1.." + int_text(m.num_layers()) + " (1-based)");
    m.layers[static_cast<std::size_t>(n - 1)].linear = true;
  }
}

// MiniMaxM2Config (MiniMax-M2, M2.1, M2.5, M2.7): 48 heads of head_dim 128 (not hidden_size / heads),
// 8 KV heads, no biases, q/k norms over every head's width (qk_norm_type "per_layer"; partial RoPE adds
// nothing), untied. Every layer sparse: num_local_experts (num_experts; 256) gated experts of
// intermediate_size (1536), top num_experts_per_tok (8), no shared expert, a router whose
// e_score_correction_bias is a buffer in transformers (llama.cpp counts its 256 per layer). The legacy
// mlp_intermediate_size has no weights. attn_type_list must be softmax (1) throughout: MiniMax-Text-01's
// lightning-attention layers (0) are not modelled. The MTP keys (use_mtp, num_mtp_modules) describe
// modules the released checkpoints do not ship; they are not counted.
void parse_minimax_m2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{128, false, 8};
  d.hidden = 3072, d.layers = 62, d.heads = 48, d.ffn = 1536, d.vocab = 200064;
  parse_llama_like(f, m, d);
  m.attention.qk_norm = m.attention.qk_norm_full_width = true;
  m.moe.num_routed_experts = experts_key(f, "num_local_experts", "num_experts", 256);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  m.moe.top_k = int_or(f, "num_experts_per_tok", 8);
  for (auto& l : m.layers) l.moe = true;
  if (!f.has("attn_type_list")) return;
  const auto& types = f.at("attn_type_list");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
    throw InputError(f.name("attn_type_list"), json_value_text(types), "must be a list of " + int_text(m.num_layers()) + " layer types");
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i] != 1)
      throw InputError(f.name("attn_type_list") + "[" + std::to_string(i) + "]", json_value_text(types[i]),
                       "only softmax attention (1) is modelled; lightning attention (0, MiniMax-Text-01) is not");
}

// ApertusConfig (Apertus): Llama's attention with q/k norms over head_dim (always; the file's qk_norm,
// post_norm and mlp_bias are not read), heads of hidden_size / heads, biases with attention_bias; a plain
// MLP (up, xIELU, down) whose xIELU holds two learned scalars (alpha_p, alpha_n; beta and eps are
// buffers); untied.
void parse_apertus(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d;
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 14336, d.vocab = 131072;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = true;
  m.ffn.kind = FfnKind::plain;
  m.ffn.activation_params = f.optional_string("hidden_act").value_or("xielu") == "xielu" ? 2 : 0;
}

// LFM2's layers: layer_types ("conv" or "full_attention"), else full_attn_idxs (0-based indices of the
// attention layers), else every layer attention (Lfm2Config). A conv layer is the gated short
// convolution: in_proj (hidden_size -> B, C, x), a depthwise convolution of conv_L_cache (3) taps over
// hidden_size channels, out_proj; conv_bias on all three.
void lfm2_layers(const JsonFields& f, ModelSpec& m) {
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::short_conv;
  la.num_k_heads = la.num_v_heads = m.d_model;  // channels
  la.head_k_dim = 0;
  la.head_v_dim = 1;
  la.conv_kernel = int_or(f, "conv_L_cache", 3);
  la.conv_bias = la.in_bias = la.out_bias = f.optional_bool("conv_bias", false);
  la.gated_norm = false;
  if (apply_linear_layer_types(f, m, "full_attention", "conv")) return;
  if (!f.has("full_attn_idxs")) return;  // every layer attention
  const auto& idxs = f.at("full_attn_idxs");
  if (!idxs.is_array()) throw InputError(f.name("full_attn_idxs"), json_value_text(idxs), "must be a list of 0-based layer indices");
  for (auto& l : m.layers) l.linear = true;
  for (std::size_t i = 0; i < idxs.size(); ++i) {
    const std::string at = f.name("full_attn_idxs") + "[" + std::to_string(i) + "]";
    const std::int64_t n = json_to_int(idxs[i], at, false);
    if (n >= m.num_layers()) throw InputError(at, int_text(n), "must be a layer index in 0.." + int_text(m.num_layers() - 1));
    m.layers[static_cast<std::size_t>(n)].linear = false;
  }
}

// The LFM2 attention: heads of hidden_size / heads (or head_dim), no biases, q/k norms over head_dim;
// two RMSNorms per layer, the final one (embedding_norm) after the last layer; tied unless
// tie_embedding / tie_word_embeddings say otherwise.
void lfm2_common(const JsonFields& f, ModelSpec& m, FamilyDefaults d) {
  parse_llama_like(f, m, d);
  m.attention.qk_norm = true;
  if (f.present("tie_embedding")) m.tie_embeddings = f.optional_bool("tie_embedding", true);
  lfm2_layers(f, m);
}

// Lfm2Config (LFM2-350M ... 2.6B): a gated FFN whose width is block_ff_dim (else intermediate_size),
// with block_auto_adjust_ff_dim (true) two thirds of it, times block_ffn_dim_multiplier (1.0) and
// rounded up to block_multiple_of (256) when the multiplier is not null.
void parse_lfm2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 8};
  d.hidden = 2560, d.layers = 32, d.heads = 32, d.ffn = 12288, d.vocab = 65536;
  lfm2_common(f, m, d);
  std::int64_t width = f.has("block_ff_dim") ? f.require_int("block_ff_dim") : m.ffn.ffn_dim;
  if (f.optional_bool("block_auto_adjust_ff_dim", true)) {
    width = 2 * width / 3;
    const bool multiplied = !f.present("block_ffn_dim_multiplier") || f.has("block_ffn_dim_multiplier");
    if (multiplied) {
      const double mult = f.present("block_ffn_dim_multiplier") ? f.require_number("block_ffn_dim_multiplier") : 1.0;
      const double scaled = mult * double(width);
      if (!(scaled >= 1 && scaled < 1e15))
        throw InputError(f.name("block_ffn_dim_multiplier"), json_value_text(f.at("block_ffn_dim_multiplier")),
                         "gives an FFN width out of range");
      width = static_cast<std::int64_t>(scaled);
      const std::int64_t multiple = int_or(f, "block_multiple_of", 256);
      width = mul(multiple, (width + multiple - 1) / multiple, "FFN width");
    }
  }
  m.ffn.ffn_dim = width;
}

// Lfm2MoeConfig (LFM2-8B-A1B): the first num_dense_layers (2) have a gated FFN of intermediate_size
// (7168) as is; the rest num_experts (32) gated experts of moe_intermediate_size (1792), top
// num_experts_per_tok (4), a router without bias (expert_bias is a buffer).
void parse_lfm2_moe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 8};
  d.hidden = 2048, d.layers = 24, d.heads = 32, d.ffn = 7168, d.vocab = 65536;
  lfm2_common(f, m, d);
  m.moe.num_routed_experts = int_or(f, "num_experts", 32);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 1792);
  m.moe.top_k = int_or(f, "num_experts_per_tok", 4);
  const std::int64_t dense = f.optional_int("num_dense_layers", false).value_or(2);
  for (std::int64_t i = 0; i < m.num_layers(); ++i) m.layers[static_cast<std::size_t>(i)].moe = i >= dense;
}

// FalconH1Config (Falcon-H1): every layer runs attention and a Mamba2 mixer side by side on the same
// input (their outputs added; muP multipliers are scalars and mup_vector a non-persistent buffer), then
// the MLP; two RMSNorms per layer, untied unless tie_word_embeddings. Attention: heads of head_dim
// (hidden_size / heads when missing), num_key_value_heads (8), attention_bias on q/k/v/o. Mamba2:
// mamba_d_ssm channels (1024 when the key is missing, mamba_expand x hidden_size when null) in
// mamba_n_heads (128) heads of mamba_d_head ("auto": mamba_d_ssm / heads), mamba_n_groups (1) of
// mamba_d_state (256), a convolution of mamba_d_conv (4) with mamba_conv_bias (true), in_proj's bias with
// mamba_proj_bias (false), out_proj's with projectors_bias (false), the gated RMSNorm only with
// mamba_rms_norm (false). MLP: gated, intermediate_size, mlp_bias.
void parse_falcon_h1(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 8};
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 14336, d.vocab = 128000;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::mamba2;
  la.num_v_heads = int_or(f, "mamba_n_heads", 128);
  la.num_k_heads = int_or(f, "mamba_n_groups", 1);
  la.head_k_dim = int_or(f, "mamba_d_state", 256);
  la.conv_kernel = int_or(f, "mamba_d_conv", 4);
  const std::int64_t inner = !f.present("mamba_d_ssm") ? 1024
                             : f.has("mamba_d_ssm")    ? f.require_int("mamba_d_ssm")
                                                       : mul(m.d_model, int_or(f, "mamba_expand", 2), "mamba_expand x hidden_size");
  if (f.has("mamba_d_head") && f.at("mamba_d_head") != "auto") {
    la.head_v_dim = f.require_int("mamba_d_head");
  } else {
    if (inner % la.num_v_heads != 0)
      throw InputError(f.name("mamba_n_heads"), int_text(la.num_v_heads), "must divide mamba_d_ssm = " + int_text(inner));
    la.head_v_dim = inner / la.num_v_heads;
  }
  if (mul(la.head_v_dim, la.num_v_heads, "mamba_d_head x mamba_n_heads") != inner)
    throw InputError(f.name("mamba_d_head"), int_text(la.head_v_dim), "x mamba_n_heads must equal mamba_d_ssm = " + int_text(inner));
  la.conv_bias = f.optional_bool("mamba_conv_bias", true);
  la.in_bias = f.optional_bool("mamba_proj_bias", false);
  la.out_bias = f.optional_bool("projectors_bias", false);
  la.gated_norm = f.optional_bool("mamba_rms_norm", false);
  for (auto& l : m.layers) l.linear = l.parallel = true;
}

// In the order the README lists the families; RefinedWeb* are Falcon's pre-transformers names.
const std::vector<std::pair<std::string, Parser>>& parsers() {
  static const std::vector<std::pair<std::string, Parser>> table = {
      {"gpt2", parse_gpt2},
      {"llama", parse_llama},
      {"mistral", parse_mistral},
      {"mixtral", parse_mixtral},
      {"qwen2", parse_qwen2},
      {"qwen3", parse_qwen3},
      {"qwen2_moe", parse_qwen2_moe},
      {"qwen3_moe", parse_qwen3_moe},
      {"gemma", parse_gemma},
      {"gemma2", parse_gemma2},
      {"gemma3_text", parse_gemma3_text},
      {"gemma3", parse_gemma3},
      {"phi3", parse_phi3},
      {"gpt_oss", parse_gpt_oss},
      {"falcon", parse_falcon},
      {"RefinedWeb", parse_falcon},
      {"RefinedWebModel", parse_falcon},
      {"deepseek_v2", [](const JsonFields& f, ModelSpec& m) { parse_deepseek(f, m, false); }},
      {"deepseek_v3", [](const JsonFields& f, ModelSpec& m) { parse_deepseek(f, m, true); }},
      // Kimi K2 ships DeepSeek-V3's modelling code (architectures DeepseekV3ForCausalLM) and config keys.
      {"kimi_k2", [](const JsonFields& f, ModelSpec& m) { parse_deepseek(f, m, true); }},
      {"glm4", parse_glm4},
      {"glm4_moe", parse_glm4_moe},
      {"llama4_text", parse_llama4_text},
      {"llama4", parse_llama4},
      {"olmo2", parse_olmo2},
      {"olmo3", parse_olmo3},
      {"olmoe", parse_olmoe},
      {"exaone4", parse_exaone4},
      {"gpt_neox", parse_gpt_neox},
      {"starcoder2", parse_starcoder2},
      {"smollm3", parse_smollm3},
      {"granite", parse_granite},
      {"cohere", parse_cohere},
      {"cohere2", parse_cohere2},
      {"phi", parse_phi},
      {"seed_oss", parse_seed_oss},
      {"qwen3_next", parse_qwen3_next},
      {"granitemoehybrid", parse_granitemoehybrid},
      {"nemotron_h", parse_nemotron_h},
      {"falcon_h1", parse_falcon_h1},
      {"ernie4_5", parse_ernie4_5},
      {"ernie4_5_moe", parse_ernie4_5_moe},
      {"kimi_linear", parse_kimi_linear},
      {"minimax_m2", parse_minimax_m2},
      {"apertus", parse_apertus},
      {"lfm2", parse_lfm2},
      {"lfm2_moe", parse_lfm2_moe},
  };
  return table;
}

}  // namespace

const std::vector<std::string_view>& supported_model_types() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto& [name, parser] : parsers()) v.push_back(name);
    return v;
  }();
  return names;
}

ModelSpec spec_from_hf_config(const nlohmann::json& config, const std::string& where) {
  JsonFields f(config, where);
  const std::string type = f.require_string("model_type");
  const auto it = std::find_if(parsers().begin(), parsers().end(), [&](const auto& p) { return p.first == type; });
  if (it == parsers().end()) {
    std::string list;
    for (auto name : supported_model_types()) list += (list.empty() ? "" : ", ") + std::string(name);
    throw InputError(f.name("model_type"), json_value_text(f.at("model_type")),
                     "unsupported model_type (supported: " + list + ")");
  }
  ModelSpec m;
  m.name = where;
  m.family = type == "RefinedWeb" || type == "RefinedWebModel" ? "falcon" : type;
  it->second(f, m);
  if (m.attention.variant != AttentionVariant::mla) set_variant_from_heads(m);
  try {
    validate(m);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  return m;
}

ModelSpec load_hf_config(const std::string& path) {
  // A model's folder (a Hub download) is read through its config.json and names the model.
  struct stat st {};
  const bool folder = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  std::string named = path;
  while (folder && named.size() > 1 && named.back() == '/') named.pop_back();
  const std::string file = folder ? named + "/config.json" : path;
  ModelSpec m = spec_from_hf_config(parse_json(read_file(file, "--hf-config"), file), file);
  const std::string last = named.substr(named.find_last_of('/') + 1);
  m.name = escaped(last.empty() ? named : last);  // on one line; errors above name the whole path
  return m;
}

}  // namespace mhacfg
