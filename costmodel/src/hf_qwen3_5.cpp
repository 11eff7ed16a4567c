// HF import of Qwen3.5 (transformers' qwen3_5 and qwen3_5_moe): Qwen3-Next's hybrid layers with a dense
// FFN or Qwen3-Next's experts, shipped as vision-language checkpoints whose language model is text_config
// and whose Qwen3-VL vision tower (vision_config) is counted beside it, as Gemma 3's is.
#include "hf_config_families.hpp"

#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

namespace {

// The checkpoints' mtp_num_hidden_layers multi-token-prediction layers (mtp.*: fc, two norms on its
// inputs, one layer like the last softmax-attention layer, a final norm), which transformers drops on
// load, are reported as params.mtp; they share the embedding and the head unless
// mtp_use_dedicated_embeddings (false in every released config).
void qwen3_5_mtp(const JsonFields& f, ModelSpec& m) {
  m.extra.mtp_modules = mtp_layers(f, m, "mtp_num_hidden_layers");
  if (m.extra.mtp_modules > 0 && f.optional_bool("mtp_use_dedicated_embeddings", false))
    m.notes.push_back("mtp_use_dedicated_embeddings: the MTP layers' own embedding is not counted in params.mtp.");
}

// Qwen3_5VisionConfig (Qwen3VLVisionConfig's keys and defaults): Qwen3_5VisionModel is Qwen3-VL's
// vision model without its DeepStack mergers, whatever deepstack_visual_indexes says.
void qwen3_5_vision(const JsonFields& f, ModelSpec& m) {
  const JsonFields v = sub_config(f, "vision_config");
  VisionSpec& vs = m.extra.vision;
  vs.kind = VisionKind::qwen3_vl;
  vs.hidden = int_or(v, "hidden_size", 1152);
  vs.intermediate = int_or(v, "intermediate_size", 4304);
  vs.layers = int_or(v, "depth", 27);
  vs.channels = int_or(v, "in_channels", 3);
  vs.patch_size = int_or(v, "patch_size", 16);
  vs.temporal_patch = int_or(v, "temporal_patch_size", 2);
  vs.merge = int_or(v, "spatial_merge_size", 2);
  vs.positions = int_or(v, "num_position_embeddings", 2304);
  vs.out_hidden = int_or(v, "out_hidden_size", 3584);
  vs.deepstack = 0;
}

// Qwen3_5Config / Qwen3_5MoeConfig (Qwen3VLConfig's layout): text_config read by `text`, the LM head
// tied by the top-level tie_word_embeddings (default false), vision_config's tower beside the total.
void qwen3_5_multimodal(const JsonFields& f, ModelSpec& m, void (*text)(const JsonFields&, ModelSpec&)) {
  text(sub_config(f, "text_config"), m);
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", false);
  qwen3_5_vision(f, m);
}

}  // namespace

// Qwen3_5TextConfig (Qwen3.5 dense): qwen_next_layers with Qwen3NextConfig's defaults but 4 KV heads
// (16 heads of 256; 4096 wide, 32 layers, a vocabulary of 248320), a gated FFN of intermediate_size
// (12288) on every layer; untied by default. Qwen3.5's in_proj_qkv, in_proj_z, in_proj_b and in_proj_a
// are Qwen3-Next's in_proj_qkvz and in_proj_ba split, the same weights. attn_output_gate (true in the
// released configs) is not read by transformers: the gate is always there.
void parse_qwen3_5_text(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{256, false, 4};
  d.hidden = 4096, d.layers = 32, d.heads = 16, d.ffn = 12288, d.vocab = 248320;
  qwen_next_layers(f, m, d);
  qwen3_5_mtp(f, m);
}

// Qwen3_5MoeTextConfig (Qwen3.5-MoE): qwen_next_layers (16 heads of 256, 2 KV heads; 2048 wide, 40
// layers, a vocabulary of 248320) with qwen_next_experts (256 of 512, top 8, the gated shared expert) on
// every layer: the class has no intermediate_size, mlp_only_layers or decoder_sparse_step.
void parse_qwen3_5_moe_text(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{256, false, 2};
  d.hidden = 2048, d.layers = 40, d.heads = 16, d.ffn = 1, d.vocab = 248320;  // d.ffn: a placeholder
  qwen_next_layers(f, m, d);
  m.ffn.ffn_dim = 0;  // no dense FFN
  qwen_next_experts(f, m, 256, 8);
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
  qwen3_5_mtp(f, m);
}

void parse_qwen3_5(const JsonFields& f, ModelSpec& m) { qwen3_5_multimodal(f, m, parse_qwen3_5_text); }

void parse_qwen3_5_moe(const JsonFields& f, ModelSpec& m) { qwen3_5_multimodal(f, m, parse_qwen3_5_moe_text); }

}  // namespace mhacfg::hf
