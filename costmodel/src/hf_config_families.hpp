// Internal to the HF import (hf_config.cpp and the hf_*.cpp family files): the helpers every family
// shares and one parser per family, each filling a ModelSpec from a config.json's fields.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg::hf {

std::string int_text(std::int64_t v);

// Layers whose pattern is given as "layer_types" (newer transformers), if present. Only the families
// whose Config classes read it call this (Qwen2/Qwen3/Qwen3-MoE, Gemma 2/3, GPT-OSS, Llama 4); Mistral's, Mixtral's and Phi-3's ignore
// the key and window every layer. A sliding layer without a window (sliding_window null, or Qwen's
// use_sliding_window false) attends to everything, as in transformers. Llama 4, the only family given
// a `chunk`, has "chunked_attention" layers instead of sliding ones: chunks of `chunk` tokens (0: none).
bool apply_layer_types(const JsonFields& f, ModelSpec& m, std::int64_t window, std::optional<std::int64_t> chunk = std::nullopt);

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
std::int64_t int_or(const JsonFields& f, const char* key, std::int64_t fallback);

// num_hidden_layers (or the family's key) within kMaxLayers, before a LayerSpec per layer exists.
std::int64_t layer_count(const JsonFields& f, const char* key, std::int64_t fallback = 0);

// The common decoder layout: hidden_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads (missing: the class default, e.g. MistralConfig's 8; null: MHA, as the
// "backward compatibility" branches of the Llama, Mistral, Mixtral, Qwen and Phi-3 classes do; Gemma2's
// class has no such branch and mhacfg reads null as MHA there too), head_dim (default hidden_size /
// heads), intermediate_size,
// RMSNorm twice per layer and a final norm, gated FFN.
void parse_llama_like(const JsonFields& f, ModelSpec& m, FamilyDefaults d);

void set_variant_from_heads(ModelSpec& m);

// `attention_bias`: biases on q, k, v and o alike (`fallback` when the key is missing).
void attention_bias(const JsonFields& f, ModelSpec& m, bool fallback);

// A window key that is absent takes the family default; an explicit null disables the window.
std::int64_t window_key(const JsonFields& f, const char* key, std::int64_t family_default);

void set_all_windows(ModelSpec& m, std::int64_t window);

// The experts' count under the key transformers v4 reads (`num_experts`) or the one v5 writes back
// (`num_local_experts`, its attribute_map target).
std::int64_t experts_key(const JsonFields& f, const char* first, const char* second, std::int64_t fallback);

// MLA's widths (DeepSeek-V3's keys) where a missing key takes the family's default and a null
// q_lora_rank means no query compression; K and V heads are the query heads, biases from
// attention_bias. Sets the attention to MLA.
struct MlaDefaults {
  std::int64_t q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
};
void read_mla(const JsonFields& f, AttentionSpec& a, const MlaDefaults& d);

// A list of layer indices under `key`, each below the layer count; the layers it names are true.
std::vector<bool> layer_set(const JsonFields& f, const char* key, const ModelSpec& m);

// Gemma 3's and Command R7B's pattern: sliding_window on every layer but each
// sliding_window_pattern-th, which is global, unless layer_types spells the layers out.
void windows_but_every(const JsonFields& f, ModelSpec& m, std::int64_t default_window, std::int64_t default_pattern);

// A multimodal config's text_config or vision_config; missing, every size takes its class default.
JsonFields sub_config(const JsonFields& f, const char* key);

// The ViT sizes every vision config names alike, with the class defaults in `d`.
void vit_sizes(const JsonFields& v, VisionSpec& vs, const VisionSpec& d);

// Head widths fixed at hidden_size / heads, whatever the file says (GPT-NeoX, Phi, Cohere2 compute it).
void head_dim_from_hidden(const JsonFields& f, ModelSpec& m);

// Multi-token-prediction layers after the main stack, under `key` (DeepSeek-V3 and GLM-4.5 ship 1 as
// num_nextn_predict_layers; Qwen3.5 as mtp_num_hidden_layers). More than the model has layers is no
// checkpoint's, only a typo or an attack on the counts.
std::int64_t mtp_layers(const JsonFields& f, const ModelSpec& m, const char* key = "num_nextn_predict_layers");

// The families' parsers, by file: hf_dense.cpp, hf_moe.cpp, hf_hybrid.cpp (qwen_windows and
// qwen_moe_layers are shared by the Qwen families across them).
void parse_llama(const JsonFields& f, ModelSpec& m);
void parse_mistral(const JsonFields& f, ModelSpec& m);
// Qwen2's windows: with use_sliding_window, layers from max_window_layers (default `first`: Qwen2Config's 28).
void qwen_windows(const JsonFields& f, ModelSpec& m, std::int64_t first = 28);
void parse_qwen2(const JsonFields& f, ModelSpec& m);
void parse_qwen3(const JsonFields& f, ModelSpec& m);
void parse_gemma(const JsonFields& f, ModelSpec& m);
void parse_gemma2(const JsonFields& f, ModelSpec& m);
void parse_gemma3_text(const JsonFields& f, ModelSpec& m);
void parse_gemma3(const JsonFields& f, ModelSpec& m);
void parse_phi3(const JsonFields& f, ModelSpec& m);
void parse_gpt2(const JsonFields& f, ModelSpec& m);
void parse_falcon(const JsonFields& f, ModelSpec& m);
void parse_glm4(const JsonFields& f, ModelSpec& m);
void parse_chatglm(const JsonFields& f, ModelSpec& m);
void parse_deepseek_v32(const JsonFields& f, ModelSpec& m);
void parse_glm_moe_dsa(const JsonFields& f, ModelSpec& m);
void parse_olmo2(const JsonFields& f, ModelSpec& m);
void parse_exaone4(const JsonFields& f, ModelSpec& m);
void parse_olmo3(const JsonFields& f, ModelSpec& m);
void parse_gpt_neox(const JsonFields& f, ModelSpec& m);
void parse_starcoder2(const JsonFields& f, ModelSpec& m);
void parse_smollm3(const JsonFields& f, ModelSpec& m);
void parse_granite(const JsonFields& f, ModelSpec& m);
void parse_cohere(const JsonFields& f, ModelSpec& m);
void parse_cohere2(const JsonFields& f, ModelSpec& m);
void parse_phi(const JsonFields& f, ModelSpec& m);
void parse_seed_oss(const JsonFields& f, ModelSpec& m);
void parse_apertus(const JsonFields& f, ModelSpec& m);
void parse_mixtral(const JsonFields& f, ModelSpec& m);
void qwen_moe_layers(const JsonFields& f, ModelSpec& m, std::int64_t experts, std::int64_t width, std::int64_t top_k);
void parse_qwen3_moe(const JsonFields& f, ModelSpec& m);
void parse_qwen2_moe(const JsonFields& f, ModelSpec& m);
void parse_gpt_oss(const JsonFields& f, ModelSpec& m);
void parse_deepseek(const JsonFields& f, ModelSpec& m, bool v3);
void parse_glm4_moe(const JsonFields& f, ModelSpec& m);
void parse_glm4_moe_lite(const JsonFields& f, ModelSpec& m);
void parse_llama4_text(const JsonFields& f, ModelSpec& m);
void parse_llama4(const JsonFields& f, ModelSpec& m);
// OLMoE's layers (hf_moe.cpp), which FlexOlmo shares: Llama's layout (the sizes' defaults in `d`) with OLMo
// 2's q/k norms over every head's width, biases with attention_bias; every layer sparse: num_experts (or
// num_local_experts; default `experts`) gated experts of intermediate_size, top num_experts_per_tok
// (`top_k`), a router without bias, no shared expert; untied.
void olmoe_layers(const JsonFields& f, ModelSpec& m, const FamilyDefaults& d, std::int64_t experts,
                  std::int64_t top_k);
void parse_olmoe(const JsonFields& f, ModelSpec& m);
void parse_flex_olmo(const JsonFields& f, ModelSpec& m);
void parse_ernie4_5(const JsonFields& f, ModelSpec& m);
void parse_ernie4_5_moe(const JsonFields& f, ModelSpec& m);
void parse_minimax_m2(const JsonFields& f, ModelSpec& m);
// Qwen3-Next's layers (hf_hybrid.cpp), which Qwen3.5 shares: Gated DeltaNet linear attention beside
// gated softmax attention, named by layer_types (else every full_attention_interval-th layer, default 4,
// softmax, the rest linear). Softmax layers: head_dim heads, q/k norms over head_dim, q_proj twice as
// wide for the output gate, biases with attention_bias. Linear layers: linear_num_key_heads (16) and
// linear_num_value_heads (32) of linear_key_head_dim and linear_value_head_dim (128), a convolution of
// linear_conv_kernel_dim (4). The sizes' defaults in `d`; the FFNs are the caller's.
void qwen_next_layers(const JsonFields& f, ModelSpec& m, FamilyDefaults d);
// Their experts: Qwen2-MoE's (num_experts of moe_intermediate_size, 512; top num_experts_per_tok) on the
// layers qwen_moe_layers places them, with a gated shared expert of shared_expert_intermediate_size (512).
void qwen_next_experts(const JsonFields& f, ModelSpec& m, std::int64_t experts, std::int64_t top_k);
void parse_qwen3_next(const JsonFields& f, ModelSpec& m);
void parse_granitemoehybrid(const JsonFields& f, ModelSpec& m);
void parse_nemotron_h(const JsonFields& f, ModelSpec& m);
void parse_minimax(const JsonFields& f, ModelSpec& m);
void parse_kimi_linear(const JsonFields& f, ModelSpec& m);
void parse_lfm2(const JsonFields& f, ModelSpec& m);
void parse_lfm2_moe(const JsonFields& f, ModelSpec& m);
void parse_falcon_h1(const JsonFields& f, ModelSpec& m);
void parse_nemotron_nas(const JsonFields& f, ModelSpec& m);
// hf_hunyuan.cpp
void parse_hunyuan_v1_dense(const JsonFields& f, ModelSpec& m);
void parse_hunyuan_v1_moe(const JsonFields& f, ModelSpec& m);
// hf_dots1.cpp
void parse_dots1(const JsonFields& f, ModelSpec& m);
// hf_ministral3.cpp
void parse_ministral3(const JsonFields& f, ModelSpec& m);
// hf_longcat_flash.cpp
void parse_longcat_flash(const JsonFields& f, ModelSpec& m);

// A wrapper's text_config read as the family its model_type names (`fallback` when it names none),
// through the table of hf_config.cpp; the vision-language wrappers of hf_vlm.cpp.
void parse_text_config(const JsonFields& t, ModelSpec& m, const std::string& fallback);
void parse_mistral3(const JsonFields& f, ModelSpec& m);
void parse_qwen2_5_vl(const JsonFields& f, ModelSpec& m);
void parse_qwen3_vl(const JsonFields& f, ModelSpec& m);
void parse_qwen3_vl_moe(const JsonFields& f, ModelSpec& m);
// GLM-4.1V/4.5V (and their language models), InternVL, LFM2-VL, SmolVLM, whose towers are counted; Command A
// Vision and Perception LM, read for their language model (a note says the tower is not counted).
void parse_glm4v_text(const JsonFields& f, ModelSpec& m);
void parse_glm4v_moe_text(const JsonFields& f, ModelSpec& m);
void parse_glm4v(const JsonFields& f, ModelSpec& m);
void parse_glm4v_moe(const JsonFields& f, ModelSpec& m);
void parse_glm46v(const JsonFields& f, ModelSpec& m);
void parse_internvl(const JsonFields& f, ModelSpec& m);
void parse_lfm2_vl(const JsonFields& f, ModelSpec& m);
void parse_cohere2_vision(const JsonFields& f, ModelSpec& m);
void parse_smolvlm(const JsonFields& f, ModelSpec& m);
void parse_perception_lm(const JsonFields& f, ModelSpec& m);
void parse_afmoe(const JsonFields& f, ModelSpec& m);  // hf_afmoe.cpp
// hf_dense_2025.cpp
void parse_vaultgemma(const JsonFields& f, ModelSpec& m);
void parse_arcee(const JsonFields& f, ModelSpec& m);
void parse_jais2(const JsonFields& f, ModelSpec& m);
void parse_cwm(const JsonFields& f, ModelSpec& m);
// hf_qwen3_5.cpp
void parse_qwen3_5_text(const JsonFields& f, ModelSpec& m);
void parse_qwen3_5_moe_text(const JsonFields& f, ModelSpec& m);
void parse_qwen3_5(const JsonFields& f, ModelSpec& m);
void parse_qwen3_5_moe(const JsonFields& f, ModelSpec& m);
// hf_bitnet.cpp
void parse_bitnet(const JsonFields& f, ModelSpec& m);
// hf_gemma3n.cpp
void parse_gemma3n_text(const JsonFields& f, ModelSpec& m);
void parse_gemma3n(const JsonFields& f, ModelSpec& m);

}  // namespace mhacfg::hf
