// HF import of the vision-language wrappers whose language models mhacfg reads: Mistral 3 (a Pixtral
// encoder), Qwen2.5-VL, Qwen3-VL (dense and MoE), GLM-4.1V, GLM-4.5V, InternVL, SmolVLM and LFM2-VL, whose
// vision encoder and projector are counted beside the language model (VisionSpec, counts_vision.cpp), as
// Gemma 3's and Llama 4's are (hf_dense.cpp, hf_moe.cpp); and Command A Vision and Perception LM, whose
// language model is read and whose vision tower is not counted (the output's notes say so, as Gemma 3n's
// do). Each follows its transformers Config classes and modeling code.
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

// Glm4vVisionConfig (Glm4vMoeVisionConfig has the same keys and defaults): depth 24 of 1536, patches of 14
// over 2 frames (in_channels 3), image_size 336 (its (336 / 14)^2 = 576 position embeddings),
// spatial_merge_size 2, out_hidden_size 4096 (the blocks' MLP width and the merger's), intermediate_size
// 13696 (the merger's MLP), attention_bias false.
void glm4v_vision(const JsonFields& f, ModelSpec& m) {
  const JsonFields v = sub_config(f, "vision_config");
  VisionSpec& vs = m.extra.vision;
  vs.kind = VisionKind::glm4v;
  vs.layers = int_or(v, "depth", 24);
  vs.hidden = int_or(v, "hidden_size", 1536);
  vs.intermediate = int_or(v, "intermediate_size", 13696);
  vs.channels = int_or(v, "in_channels", 3);
  vs.image_size = int_or(v, "image_size", 336);
  vs.patch_size = int_or(v, "patch_size", 14);
  vs.temporal_patch = int_or(v, "temporal_patch_size", 2);
  vs.merge = int_or(v, "spatial_merge_size", 2);
  vs.out_hidden = int_or(v, "out_hidden_size", 4096);
  vs.attention_bias = v.optional_bool("attention_bias", false);
}

// A wrapper whose Config class builds one text class whatever text_config's model_type says (Glm4vConfig,
// Glm4vMoeConfig): a model_type naming another is refused rather than read as that class.
void require_text_type(const JsonFields& t, const char* expected) {
  const auto type = t.optional_string("model_type");
  if (type && *type != expected)
    throw InputError(t.name("model_type"), json_value_text(t.at("model_type")),
                     std::string("this wrapper's text model is ") + expected + "'s");
}

// A wrapper whose text_config is read as the family its model_type names (`fallback`, the class its
// Config builds, when it names none; missing, that class's defaults), its head tied as wrapper_tie says,
// and its vision tower not counted: the output says so.
void text_model_only(const JsonFields& f, ModelSpec& m, const char* fallback, const std::string& tower) {
  parse_text_config(sub_config(f, "text_config"), m, fallback);
  wrapper_tie(f, m);
  m.notes.push_back(tower +
                    " and its projector into the language model are not counted: params are the language "
                    "model's (vision tower not counted).");
}

}  // namespace

// Glm4vTextConfig (GLM-4.1V's language model): GLM-4-0414's layer (four RMSNorms, a gated MLP without
// biases) whose q, k and v always carry biases (Glm4vTextAttention builds them with bias=True, whatever
// attention_bias says; o_proj has none), head_dim hidden_size / heads whatever the file says (the class has
// no head_dim key and the attention computes it), and the class defaults (40 layers of 4096, 32 heads, 2 KV
// heads, MLP 13696, a vocabulary of 151552, untied).
void parse_glm4v_text(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 2};
  d.hidden = 4096, d.layers = 40, d.heads = 32, d.ffn = 13696, d.vocab = 151552;
  parse_llama_like(f, m, d);
  head_dim_from_hidden(f, m);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = true;
  a.o_bias = false;
  m.norm.per_layer = 4;
}

// Glm4vMoeTextConfig (GLM-4.5V's language model): Glm4MoeConfig's layers and keys (parse_glm4_moe) with
// this class's defaults where they differ: attention_bias true and a vocabulary of 151424.
void parse_glm4v_moe_text(const JsonFields& f, ModelSpec& m) {
  parse_glm4_moe(f, m);
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = f.optional_bool("attention_bias", true);
  m.vocab_size = int_or(f, "vocab_size", 151424);
}

// Glm4vConfig (GLM-4.1V-9B): text_config is Glm4vTextConfig's, vision_config Glm4vVisionConfig's.
void parse_glm4v(const JsonFields& f, ModelSpec& m) {
  const JsonFields t = sub_config(f, "text_config");
  require_text_type(t, "glm4v_text");
  parse_glm4v_text(t, m);
  wrapper_tie(f, m);
  glm4v_vision(f, m);
}

// Glm4vMoeConfig (GLM-4.5V): text_config is Glm4vMoeTextConfig's; the encoder is GLM-4.1V's.
void parse_glm4v_moe(const JsonFields& f, ModelSpec& m) {
  const JsonFields t = sub_config(f, "text_config");
  require_text_type(t, "glm4v_moe_text");
  parse_glm4v_moe_text(t, m);
  wrapper_tie(f, m);
  glm4v_vision(f, m);
}

// Glm46VConfig (GLM-4.6V, transformers' modular_glm46v.py): Glm4vForConditionalGeneration's layout with
// both sub-configs built from their own model_type (AutoConfig): text_config is the family it names
// (glm4v_text when it names none), vision_config GLM-4.1V's encoder (glm4v_vision by default; the same keys
// and defaults under GLM-4.5V's spelling glm4v_moe_vision and the published GLM-4.1V files' "glm4v");
// tie_word_embeddings false unless the file says so.
void parse_glm46v(const JsonFields& f, ModelSpec& m) {
  parse_text_config(sub_config(f, "text_config"), m, "glm4v_text");
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", false);
  const JsonFields v = sub_config(f, "vision_config");
  const auto encoder = v.optional_string("model_type");
  if (encoder && *encoder != "glm4v_moe_vision" && *encoder != "glm4v") require_encoder(v, "glm4v_vision");
  glm4v_vision(f, m);
}

// An image or patch size: one integer, or InternVLVisionConfig's [height, width], which must be square.
std::int64_t square_size(const JsonFields& v, const char* key, std::int64_t fallback) {
  if (!v.present(key) || !v.at(key).is_array()) return int_or(v, key, fallback);
  const auto& hw = v.at(key);
  if (hw.size() != 2 || hw[0] != hw[1])
    throw InputError(v.name(key), json_value_text(hw), "must be one size or a square [height, width]");
  return json_to_int(hw[0], v.name(key) + "[0]", true);
}

// InternVLConfig (InternVL3 and InternVL3.5 in the -hf layout): text_config is any family mhacfg reads
// (qwen2 when it names none: InternVL3's Qwen2.5, InternVL3.5's qwen3 or qwen3_moe). The class's own
// tie_word_embeddings default (true in transformers v5) is not assumed: the file's top-level key decides
// when stated, else text_config's (what transformers v4 ties by). vision_config is InternVLVisionConfig's
// (InternViT-300M's sizes: 24 layers of 1024, MLP 4096, 448-pixel images in patches of 14, LayerNorms,
// no biases on q/k/v by default), downsample_ratio (0.5) the projector's pixel unshuffle. Mean pooling
// (the released files' use_mean_pooling) and no mask token are what is counted; other values are refused.
void parse_internvl(const JsonFields& f, ModelSpec& m) {
  parse_text_config(sub_config(f, "text_config"), m, "qwen2");
  wrapper_tie(f, m);
  const JsonFields v = sub_config(f, "vision_config");
  require_encoder(v, "internvl_vision");
  VisionSpec& vs = m.extra.vision;
  vs.kind = VisionKind::internvl;
  vs.hidden = int_or(v, "hidden_size", 1024);
  vs.intermediate = int_or(v, "intermediate_size", 4096);
  vs.layers = int_or(v, "num_hidden_layers", 24);
  vs.channels = int_or(v, "num_channels", 3);
  vs.image_size = square_size(v, "image_size", 448);
  vs.patch_size = square_size(v, "patch_size", 14);
  vs.attention_bias = v.optional_bool("attention_bias", false);
  vs.qk_norm = v.optional_bool("use_qk_norm", false);
  const std::string norm = v.optional_string("norm_type").value_or("layer_norm");
  if (norm != "layer_norm" && norm != "rms_norm")
    throw InputError(v.name("norm_type"), json_value_text(v.at("norm_type")), "must be layer_norm or rms_norm");
  vs.rms_norm = norm == "rms_norm";
  for (const char* key : {"use_mask_token", "use_absolute_position_embeddings", "use_mean_pooling"}) {
    const bool released = std::string(key) != "use_mask_token";
    if (v.optional_bool(key, released) != released)
      throw InputError(
          v.name(key), json_value_text(v.at(key)),
          std::string("only ") + (released ? "true" : "false") + " (the released checkpoints') is counted");
  }
  const double ratio = f.optional_number("downsample_ratio").value_or(0.5);
  const double inverse = ratio > 0 ? 1.0 / ratio : 0.0;
  if (!(inverse >= 1 && inverse <= 64 && inverse == static_cast<double>(static_cast<std::int64_t>(inverse))))
    throw InputError(f.name("downsample_ratio"), json_value_text(f.at("downsample_ratio")),
                     "must be 1 over a whole number");
  vs.merge = static_cast<std::int64_t>(inverse);
}

// Lfm2VlConfig (LFM2-VL, LFM2.5-VL): text_config is any family mhacfg reads (lfm2 when it names none);
// vision_config is Siglip2VisionConfig's (12 layers of 768, MLP 3072, patches of 16, 256 positions) and must
// leave out its pooling head (vision_use_head false, as the released files state; Siglip2VisionTransformer
// builds one otherwise); the projector takes downsample_factor (2), projector_hidden_size (2560),
// projector_bias (true) and projector_use_layernorm (true: the LayerNorm transformers built before the key).
void parse_lfm2_vl(const JsonFields& f, ModelSpec& m) {
  parse_text_config(sub_config(f, "text_config"), m, "lfm2");
  wrapper_tie(f, m);
  const JsonFields v = sub_config(f, "vision_config");
  require_encoder(v, "siglip2_vision_model");
  if (v.optional_bool("vision_use_head", true))
    throw InputError(v.name("vision_use_head"),
                     v.present("vision_use_head") ? json_value_text(v.at("vision_use_head")) : "(missing)",
                     "only false (the released checkpoints': no pooling head) is counted");
  VisionSpec& vs = m.extra.vision;
  vs.kind = VisionKind::lfm2_vl;
  vs.hidden = int_or(v, "hidden_size", 768);
  vs.intermediate = int_or(v, "intermediate_size", 3072);
  vs.layers = int_or(v, "num_hidden_layers", 12);
  vs.channels = int_or(v, "num_channels", 3);
  vs.patch_size = int_or(v, "patch_size", 16);
  vs.positions = int_or(v, "num_patches", 256);
  vs.merge = int_or(f, "downsample_factor", 2);
  vs.out_hidden = int_or(f, "projector_hidden_size", 2560);
  vs.projector_bias = f.optional_bool("projector_bias", true);
  vs.projector_norm = f.optional_bool("projector_use_layernorm", true);
}

// Cohere2VisionConfig (Command A Vision): text_config is any family mhacfg reads (cohere2 when it names
// none); the SigLIP encoder and the pixel-shuffle SwiGLU projector are not counted.
void parse_cohere2_vision(const JsonFields& f, ModelSpec& m) {
  text_model_only(f, m, "cohere2", "Command A Vision's vision tower (vision_config: SigLIP)");
}

// SmolVLMConfig (SmolVLM, SmolVLM2): text_config is any family mhacfg reads (llama when it names none); the
// class's tie_word_embeddings defaults to false, and the top-level vocab_size the files repeat is not read
// (the language model's embedding is text_config's). vision_config is SmolVLMVisionConfig's (SigLIP's
// encoder: 12 layers of 1152, MLP 3072, patches of 32 over 224-pixel images, no pooling head), the
// connector's pixel shuffle scale_factor (2) at the top level.
void parse_smolvlm(const JsonFields& f, ModelSpec& m) {
  parse_text_config(sub_config(f, "text_config"), m, "llama");
  wrapper_tie(f, m);
  const JsonFields v = sub_config(f, "vision_config");
  require_encoder(v, "smolvlm_vision");
  VisionSpec& vs = m.extra.vision;
  vit_sizes(v, vs, {VisionKind::smolvlm, 1152, 3072, 12, 3, 224, 32});
  vs.merge = int_or(f, "scale_factor", 2);
}

// PerceptionLMConfig (Perception LM): text_config is any family mhacfg reads (llama when it names none);
// the Perception Encoder (a timm ViT) and the pooling projector are not counted.
void parse_perception_lm(const JsonFields& f, ModelSpec& m) {
  text_model_only(f, m, "llama", "Perception LM's vision tower (vision_config: a timm Perception Encoder)");
}

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
