// HF import of the dense decoder families: Llama-style layouts and their variants (windows, biases,
// norms, q/k norms, multimodal Gemma 3). Each follows its transformers Config class and modeling code.
#include "hf_config_families.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

namespace {

void gemma_attention(const JsonFields& f, ModelSpec& m, std::int64_t default_kv_heads) {
  parse_llama_like(f, m, {256, true, default_kv_heads});  // head_dim 256, tied embeddings
  attention_bias(f, m, false);
}

}  // namespace

void parse_llama(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {});
  attention_bias(f, m, false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
}

void parse_mistral(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {0, false, 8});  // MistralConfig: 8 KV heads
  set_all_windows(m, window_key(f, "sliding_window", 4096));  // MistralConfig default; layer_types ignored
}

// Qwen2/Qwen3: windows only when use_sliding_window, and then on layers >= max_window_layers.
void qwen_windows(const JsonFields& f, ModelSpec& m, std::int64_t first_default) {
  const bool use = f.optional_bool("use_sliding_window", false);
  const std::int64_t window = use ? window_key(f, "sliding_window", 4096) : 0;
  if (apply_layer_types(f, m, window)) return;
  if (window > 0) {
    const std::int64_t first = f.optional_int("max_window_layers", false).value_or(first_default);
    for (std::int64_t i = first; i < m.num_layers(); ++i)
      m.layers[static_cast<std::size_t>(i)].span = Span::window(window);
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

void parse_gemma(const JsonFields& f, ModelSpec& m) { gemma_attention(f, m, 16); }  // GemmaConfig: 16 KV heads

void parse_gemma2(const JsonFields& f, ModelSpec& m) {
  gemma_attention(f, m, 4);  // Gemma2Config: 4 KV heads
  m.norm.per_layer = 4;  // input, post-attention, pre-FFN and post-FFN norms
  // Layers alternate sliding (even index) and global (odd index).
  const std::int64_t window = window_key(f, "sliding_window", 4096);
  if (!apply_layer_types(f, m, window))
    for (std::size_t i = 0; i < m.layers.size(); i += 2) m.layers[i].span = Span::window(window);
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

// ChatGLMConfig (chatglm: ChatGLM2-6B, ChatGLM3-6B, GLM-4-9B-Chat; THUDM's remote modeling_chatglm.py):
// num_layers (28; num_hidden_layers is its alias) of hidden_size (4096), num_attention_heads (32) of
// kv_channels (128), multi_query_group_num (1) KV heads when multi_query_attention (default false: one per
// head), a gated FFN of ffn_hidden_size (13696) whose gate and up are one matrix (dense_h_to_4h), the fused
// query_key_value with a bias when add_qkv_bias or add_bias_linear (both false by default), the output
// projection and the FFN with one when add_bias_linear; RMSNorm (rmsnorm true, else LayerNorm) before
// attention and the FFN, a final one with post_layer_norm (true); padded_vocab_size (65024) rows in the
// embedding and in the separate output_layer. ChatGLM-6B's first version (inner_hidden_size, a GLM
// block with 2D positions) shares the model_type and is refused.
void parse_chatglm(const JsonFields& f, ModelSpec& m) {
  if (f.has("inner_hidden_size") && !f.present("ffn_hidden_size"))
    throw InputError(f.name("inner_hidden_size"), json_value_text(f.at("inner_hidden_size")),
                     "ChatGLM-6B's first version (its GLM blocks and 2D positions) is not read; ChatGLM2 and later are");
  m.d_model = int_or(f, "hidden_size", 4096);
  m.layers.assign(static_cast<std::size_t>(layer_count(f, f.present("num_layers") ? "num_layers" : "num_hidden_layers", 28)),
                  LayerSpec{});
  AttentionSpec& a = m.attention;
  a.num_q_heads = int_or(f, "num_attention_heads", 32);
  a.num_kv_heads = f.optional_bool("multi_query_attention", false) ? int_or(f, "multi_query_group_num", 1) : a.num_q_heads;
  a.head_dim = a.v_head_dim = int_or(f, "kv_channels", 128);
  const bool linear_bias = f.optional_bool("add_bias_linear", false);
  a.q_bias = a.k_bias = a.v_bias = linear_bias || f.optional_bool("add_qkv_bias", false);
  a.o_bias = linear_bias;
  m.ffn = FfnSpec{FfnKind::gated, int_or(f, "ffn_hidden_size", 13696), linear_bias, 0};
  m.vocab_size = int_or(f, f.present("padded_vocab_size") ? "padded_vocab_size" : "vocab_size", 65024);
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", false);
  m.norm = NormSpec{f.optional_bool("rmsnorm", true) ? NormKind::rmsnorm : NormKind::layernorm, 2,
                    f.optional_bool("post_layer_norm", true)};
  if (f.has("vision_config"))
    m.notes.push_back("The config's vision_config (GLM-4V's vision tower) is not counted; the language model is.");
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
      if (pattern[i % pattern.size()] == 'L') m.layers[i].span = Span::window(window);
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
    if (static_cast<std::int64_t>(i + 1) % 4 != 0) m.layers[i].span = Span::window(window);
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
    if (no_rope) m.layers[i].span = Span::window(window);
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

}  // namespace mhacfg::hf
