// HF import of the vision-language wrappers whose language models mhacfg reads: Mistral 3 (a Pixtral
// encoder), Qwen2.5-VL and Qwen3-VL (dense and MoE). The language model is the main model; the vision
// encoder and its projector are counted beside it (VisionSpec, counts_vision.cpp), as Gemma 3's and
// Llama 4's are (hf_dense.cpp, hf_moe.cpp). Each follows its transformers Config classes and modeling code.
#include "hf_config_families.hpp"

#include <string>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

namespace {

// Whether the LM head is tied: the wrapper's tie_word_embeddings when the file states it, else what the
// text config read (its key or its class's default). The released Qwen3-VL files state it at the top
// (the 30B-A3B's text_config leaves it out); Mistral 3's files state it nowhere and keep an lm_head.
void wrapper_tie(const JsonFields& f, ModelSpec& m) {
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", m.tie_embeddings);
}

// The number of entries of a list of layer indices (`fallback` when the key is missing).
std::int64_t index_count(const JsonFields& f, const char* key, std::int64_t fallback) {
  if (!f.present(key)) return fallback;
  const auto& list = f.at(key);
  if (!list.is_array()) throw InputError(f.name(key), json_value_text(list), "must be a list of layer indices");
  for (std::size_t k = 0; k < list.size(); ++k) json_to_int(list[k], f.name(key) + "[" + std::to_string(k) + "]", false);
  return static_cast<std::int64_t>(list.size());
}

// Mistral3Config's vision_feature_layer: one layer index (negative from the end) or a list of them,
// whose hidden states are concatenated and widen linear_1's input.
std::int64_t feature_layers(const JsonFields& f) {
  if (!f.has("vision_feature_layer")) return 1;
  const auto& layers = f.at("vision_feature_layer");
  const bool list = layers.is_array();
  bool indices = list ? !layers.empty() : layers.is_number_integer();
  for (std::size_t k = 0; list && k < layers.size(); ++k) indices = indices && layers[k].is_number_integer();
  if (!indices)
    throw InputError(f.name("vision_feature_layer"), json_value_text(layers), "must be a layer index or a non-empty list of them");
  return list ? static_cast<std::int64_t>(layers.size()) : 1;
}

// A vision_config's model_type, when it names one, must be the encoder the wrapper builds.
void require_encoder(const JsonFields& v, const char* expected) {
  const auto type = v.optional_string("model_type");
  if (type && *type != expected)
    throw InputError(v.name("model_type"), json_value_text(v.at("model_type")),
                     std::string("only ") + expected + "'s encoder is read for this wrapper");
}

// Qwen2_5_VLVisionConfig's and Qwen3VLVisionConfig's shared keys (`d` holds the class defaults).
void qwen_vision(const JsonFields& v, VisionSpec& vs, const VisionSpec& d) {
  vs.kind = d.kind;
  vs.layers = int_or(v, "depth", d.layers);
  vs.hidden = int_or(v, "hidden_size", d.hidden);
  vs.intermediate = int_or(v, "intermediate_size", d.intermediate);
  vs.channels = int_or(v, "in_channels", d.channels);  // the classes take in_channels; an old file's in_chans is not read
  vs.patch_size = int_or(v, "patch_size", d.patch_size);
  vs.temporal_patch = int_or(v, "temporal_patch_size", d.temporal_patch);
  vs.merge = int_or(v, "spatial_merge_size", d.merge);
  vs.out_hidden = int_or(v, "out_hidden_size", d.out_hidden);
}

VisionSpec qwen_defaults(VisionKind kind, std::int64_t depth, std::int64_t hidden, std::int64_t intermediate,
                         std::int64_t patch) {
  VisionSpec d;
  d.kind = kind, d.layers = depth, d.hidden = hidden, d.intermediate = intermediate, d.channels = 3;
  d.patch_size = patch, d.temporal_patch = 2, d.merge = 2, d.out_hidden = 3584;
  return d;
}

// Qwen3VLVisionConfig (Qwen3VLMoeVisionConfig is the same class): depth 27 of 1152, MLP 4304, patches
// of 16, 2304 position embeddings, deepstack mergers at layers 8, 16 and 24.
void qwen3_vision(const JsonFields& f, ModelSpec& m) {
  const JsonFields v = sub_config(f, "vision_config");
  VisionSpec& vs = m.extra.vision;
  qwen_vision(v, vs, qwen_defaults(VisionKind::qwen3_vl, 27, 1152, 4304, 16));
  vs.positions = int_or(v, "num_position_embeddings", 2304);
  vs.deepstack = index_count(v, "deepstack_visual_indexes", 3);
}

// Qwen3VLTextConfig: Qwen3's layer (q/k norms over head_dim, biases with attention_bias) without
// windows; head_dim 128, 32 KV heads and untied by default.
void qwen3_vl_text(const JsonFields& t, ModelSpec& m) {
  FamilyDefaults d{128, false, 32};
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 22016, d.vocab = 151936;
  parse_llama_like(t, m, d);
  attention_bias(t, m, false);
  m.attention.qk_norm = true;
}

}  // namespace

// Mistral3Config (Mistral Small 3.1/3.2): text_config is read as the family its model_type names
// (mistral by default; MistralConfig's Small-3.1 sizes when text_config is missing), vision_config as
// PixtralVisionConfig (its defaults, or Mistral3Config's own when vision_config is missing), and the
// projector from spatial_merge_size (2), vision_feature_layer (-1) and multimodal_projector_bias (false).
void parse_mistral3(const JsonFields& f, ModelSpec& m) {
  static const nlohmann::json small_3_1 = {{"model_type", "mistral"}, {"head_dim", 128}, {"hidden_size", 5120},
                                           {"intermediate_size", 32768}, {"num_attention_heads", 32},
                                           {"num_hidden_layers", 40}, {"num_key_value_heads", 8},
                                           {"sliding_window", nullptr}, {"vocab_size", 131072}};
  const JsonFields t = f.has("text_config") ? sub_config(f, "text_config") : JsonFields(small_3_1, f.name("text_config"));
  parse_text_config(t, m, "mistral");
  wrapper_tie(f, m);
  const bool given = f.has("vision_config");
  const JsonFields v = sub_config(f, "vision_config");
  require_encoder(v, "pixtral");
  VisionSpec& vs = m.extra.vision;
  vit_sizes(v, vs, {VisionKind::pixtral, 1024, 4096, 24, 3, given ? 1024 : 1540, given ? 16 : 14});
  vs.merge = int_or(f, "spatial_merge_size", 2);
  vs.feature_layers = feature_layers(f);
  vs.projector_bias = f.optional_bool("multimodal_projector_bias", false);
}

// Qwen2_5_VLConfig: the text model is text_config's, or, in the files released with the model, the
// top-level keys (Qwen2_5_VLTextConfig: Qwen2's q/k/v biases, windows only with use_sliding_window);
// vision_config is Qwen2_5_VLVisionConfig's (depth 32, MLP 3420, patches of 14 over 2 frames; its
// hidden_size default, 3584, is not the released 1280, which the files state).
void parse_qwen2_5_vl(const JsonFields& f, ModelSpec& m) {
  const JsonFields t = f.has("text_config") ? sub_config(f, "text_config") : f;
  FamilyDefaults d{0, false, 8};
  d.hidden = 8192, d.layers = 80, d.heads = 64, d.ffn = 29568, d.vocab = 152064;
  parse_llama_like(t, m, d);
  m.attention.q_bias = m.attention.k_bias = m.attention.v_bias = true;
  qwen_windows(t, m, 80);
  wrapper_tie(f, m);
  qwen_vision(sub_config(f, "vision_config"), m.extra.vision, qwen_defaults(VisionKind::qwen2_5_vl, 32, 3584, 3420, 14));
}

// Qwen3VLConfig (Qwen3-VL dense): Qwen3VLTextConfig's language model, Qwen3VLVisionConfig's encoder.
void parse_qwen3_vl(const JsonFields& f, ModelSpec& m) {
  qwen3_vl_text(sub_config(f, "text_config"), m);
  wrapper_tie(f, m);
  qwen3_vision(f, m);
}

// Qwen3VLMoeConfig: Qwen3VLMoeTextConfig's language model, Qwen3-MoE's layers (experts on every
// decoder_sparse_step-th layer not in mlp_only_layers; 60 experts of 1408, top 4 by default) with the
// dense model's attention, head_dim hidden_size / heads by default; the dense model's encoder.
void parse_qwen3_vl_moe(const JsonFields& f, ModelSpec& m) {
  const JsonFields t = sub_config(f, "text_config");
  FamilyDefaults d{0, false, 16};
  d.hidden = 2048, d.layers = 24, d.heads = 16, d.ffn = 5632, d.vocab = 151936;
  parse_llama_like(t, m, d);
  attention_bias(t, m, false);
  m.attention.qk_norm = true;
  qwen_moe_layers(t, m, 60, 1408, 4);
  wrapper_tie(f, m);
  qwen3_vision(f, m);
}

}  // namespace mhacfg::hf
