// Counts of a multimodal checkpoint's vision encoder and its projector into the language model, for each
// VisionKind (model_spec.hpp describes their layouts). Part of the one place counts are computed
// (counts.cpp has the rest); reported as ParamCounts::vision, outside the total.
#include "mhacfg/costmodel/counts.hpp"

#include "mhacfg/costmodel/checked.hpp"

namespace mhacfg {

namespace {

constexpr const char* kParams = "parameter count";

// An in x out linear layer, with its bias when `bias`.
std::int64_t linear(std::int64_t in, std::int64_t out, bool bias) {
  return add(mul(in, out, kParams), bias ? out : 0, kParams);
}

// How one kind builds its encoder layer.
struct VitLayer {
  std::int64_t norm;  // parameters of each of its two norms (LayerNorm: 2 x hidden, RMSNorm: hidden)
  bool attention_bias;
  bool gated_mlp;  // gate, up and down; else fc1 and fc2
  bool mlp_bias;
};

// One pre-norm encoder layer of width h and MLP width f: two norms, q/k/v/o (a fused qkv counts as three
// h x h projections) and the MLP.
std::int64_t vit_layer(std::int64_t h, std::int64_t f, const VitLayer& l) {
  const std::int64_t attention = mul(4, linear(h, h, l.attention_bias), kParams);
  const std::int64_t up = mul(l.gated_mlp ? 2 : 1, linear(h, f, l.mlp_bias), kParams);
  const std::int64_t mlp = add(up, linear(f, h, l.mlp_bias), kParams);
  return add(add(mul(2, l.norm, kParams), attention, kParams), mlp, kParams);
}

std::int64_t layers(const VisionSpec& v, const VitLayer& l) { return mul(v.layers, vit_layer(v.hidden, v.intermediate, l), kParams); }

// A patch embedding's weights: channels x (frames x) patch x patch inputs to each of hidden outputs.
std::int64_t patch_weights(const VisionSpec& v, std::int64_t frames) {
  return mul(mul(v.channels, frames, kParams), mul(v.patch_size, v.patch_size, v.hidden, kParams), kParams);
}

// SigLIP's encoder (transformers' SiglipVisionTransformer) with Gemma 3's projector or SmolVLM's
// connector (SmolVLMVisionTransformer is SigLIP's encoder), or Llama 4's
// (Llama4VisionModel and Llama4MultiModalProjector): LayerNorms, biases everywhere, a plain MLP.
std::int64_t siglip_or_llama4(const ModelSpec& m) {
  const VisionSpec& v = m.extra.vision;
  const std::int64_t h = v.hidden, f = v.intermediate;
  const std::int64_t side = v.image_size / v.patch_size;
  const std::int64_t norm = mul(2, h, kParams);  // a LayerNorm
  const std::int64_t body = layers(v, {norm, true, false, true});
  if (v.kind == VisionKind::llama4) {
    // The patch linear (no bias), class_embedding, positional_embedding_vlm (patches + the class token),
    // layernorm_pre and layernorm_post.
    const std::int64_t stem = add(add(patch_weights(v, 1), h, kParams),
                                  add(mul(add(mul(side, side, kParams), 1, kParams), h, kParams), mul(2, norm, kParams), kParams),
                                  kParams);
    // The pixel-shuffle adapter's fc1 (intermediate -> projector_input_dim) and fc2, then linear_1.
    const std::int64_t adapter = add(mul(f, v.projector_input_dim, kParams),
                                     mul(v.projector_output_dim, v.projector_output_dim, kParams), kParams);
    return add(add(stem, body, kParams), add(adapter, mul(v.output_dim, m.d_model, kParams), kParams), kParams);
  }
  const std::int64_t patch_conv = add(patch_weights(v, 1), h, kParams);
  const std::int64_t positions = mul(mul(side, side, kParams), h, kParams);
  std::int64_t p = add(add(patch_conv, positions, kParams), add(body, norm, kParams), kParams);
  // The pooling head: a probe, nn.MultiheadAttention (in_proj 3h x h and out_proj, with biases), a
  // LayerNorm and an MLP.
  if (v.pooling_head) {
    const std::int64_t mlp = add(linear(h, f, true), linear(f, h, true), kParams);
    p = add(p, add(add(h, mul(4, linear(h, h, true), kParams), kParams), add(norm, mlp, kParams), kParams), kParams);
  }
  // SmolVLMConnector: the pixel shuffle's merge^2 x h -> d_model, no bias.
  if (v.kind == VisionKind::smolvlm)
    return add(p, linear(mul(h, mul(v.merge, v.merge, kParams), kParams), m.d_model, false), kParams);
  // Gemma3MultiModalProjector: mm_soft_emb_norm (an RMSNorm over h) and mm_input_projection (h x d_model).
  return add(p, add(h, mul(h, m.d_model, kParams), kParams), kParams);
}

// PixtralVisionModel (patch_conv without a bias, ln_pre, RMSNorm layers of a gated MLP, no biases) and
// Mistral3MultiModalProjector (norm, patch_merger's merging_layer, linear_1, linear_2).
std::int64_t pixtral(const ModelSpec& m) {
  const VisionSpec& v = m.extra.vision;
  const std::int64_t h = v.hidden, d = m.d_model;
  const std::int64_t encoder = add(add(patch_weights(v, 1), h, kParams), layers(v, {h, false, true, false}), kParams);
  const std::int64_t merger = linear(mul(h, mul(v.merge, v.merge, kParams), kParams), h, false);
  const std::int64_t projection =
      add(linear(mul(h, v.feature_layers, kParams), d, v.projector_bias), linear(d, d, v.projector_bias), kParams);
  return add(encoder, add(add(h, merger, kParams), projection, kParams), kParams);
}

// A Qwen patch merger: its norm (`norm` parameters), then the merged width (merge^2 x hidden) to itself
// and to out_hidden, with biases.
std::int64_t qwen_merger(const VisionSpec& v, std::int64_t norm) {
  const std::int64_t merged = mul(v.hidden, mul(v.merge, v.merge, kParams), kParams);
  return add(norm, add(linear(merged, merged, true), linear(merged, v.out_hidden, true), kParams), kParams);
}

// Qwen2_5_VisionTransformerPretrainedModel: the Conv3d patch embedding (no bias), RMSNorm blocks with a
// biased qkv and proj and a gated MLP with biases, the merger with an RMSNorm (ln_q).
// Qwen3VLVisionModel: the Conv3d with a bias, pos_embed, LayerNorm blocks with a plain biased MLP, the
// merger (LayerNorm over hidden) and the deepstack mergers (LayerNorm over the merged width).
std::int64_t qwen(const ModelSpec& m) {
  const VisionSpec& v = m.extra.vision;
  const std::int64_t h = v.hidden;
  const std::int64_t conv = patch_weights(v, v.temporal_patch);
  if (v.kind == VisionKind::qwen2_5_vl)
    return add(add(conv, layers(v, {h, true, true, true}), kParams), qwen_merger(v, h), kParams);
  const std::int64_t stem = add(add(conv, h, kParams), mul(v.positions, h, kParams), kParams);
  const std::int64_t merged = mul(h, mul(v.merge, v.merge, kParams), kParams);
  const std::int64_t mergers = add(qwen_merger(v, mul(2, h, kParams)),
                                   mul(v.deepstack, qwen_merger(v, mul(2, merged, kParams)), kParams), kParams);
  return add(add(stem, layers(v, {mul(2, h, kParams), true, false, true}), kParams), mergers, kParams);
}

// Glm4vVisionModel (GLM-4.1V, GLM-4.5V): patch_embed (a Conv3d with a bias) and post_conv_layernorm, the
// position_embedding table, RMSNorm blocks whose MLP is out_hidden wide (qkv biased with attention_bias,
// proj and the MLP without biases), post_layernorm, the downsample Conv2d (merge x merge, biased) to
// out_hidden, and Glm4vVisionPatchMerger (proj, post_projection_norm, a gated MLP `intermediate` wide).
std::int64_t glm4v(const VisionSpec& v) {
  const std::int64_t h = v.hidden, o = v.out_hidden;
  const std::int64_t side = v.image_size / v.patch_size;
  const std::int64_t stem = add(add(patch_weights(v, v.temporal_patch), mul(2, h, kParams), kParams),
                                mul(mul(side, side, kParams), h, kParams), kParams);
  const std::int64_t attention = add(linear(h, mul(3, h, kParams), v.attention_bias), linear(h, h, false), kParams);
  const std::int64_t block = add(add(mul(2, h, kParams), attention, kParams),
                                 add(mul(2, linear(h, o, false), kParams), linear(o, h, false), kParams), kParams);
  const std::int64_t downsample = linear(mul(h, mul(v.merge, v.merge, kParams), kParams), o, true);
  const std::int64_t merger =
      add(add(linear(o, o, false), mul(2, o, kParams), kParams),
          add(mul(2, linear(o, v.intermediate, false), kParams), linear(v.intermediate, o, false), kParams), kParams);
  return add(add(stem, mul(v.layers, block, kParams), kParams), add(add(h, downsample, kParams), merger, kParams),
             kParams);
}

// InternVLVisionModel (embeddings: cls_token, the patch Conv2d with a bias, position_embeddings for the
// patches and the class token; layers: layernorm_before and layernorm_after, q/k/v_proj, q_norm and
// k_norm, projection_layer, fc1 and fc2, lambda_1 and lambda_2) and InternVLMultiModalProjector
// (layer_norm over the pixel-unshuffled width, linear_1, linear_2).
std::int64_t internvl(const ModelSpec& m) {
  const VisionSpec& v = m.extra.vision;
  const std::int64_t h = v.hidden, d = m.d_model;
  const std::int64_t side = v.image_size / v.patch_size;
  const std::int64_t stem = add(add(h, add(patch_weights(v, 1), h, kParams), kParams),
                                mul(add(mul(side, side, kParams), 1, kParams), h, kParams), kParams);
  const std::int64_t norm = v.rms_norm ? h : mul(2, h, kParams);
  const std::int64_t attention = add(mul(3, linear(h, h, v.attention_bias), kParams),
                                     add(linear(h, h, true), v.qk_norm ? mul(2, h, kParams) : 0, kParams), kParams);
  const std::int64_t mlp = add(linear(h, v.intermediate, true), linear(v.intermediate, h, true), kParams);
  const std::int64_t layer =
      add(add(mul(2, norm, kParams), attention, kParams), add(mlp, mul(2, h, kParams), kParams), kParams);
  const std::int64_t unshuffled = mul(h, mul(v.merge, v.merge, kParams), kParams);
  const std::int64_t projector =
      add(mul(2, unshuffled, kParams), add(linear(unshuffled, d, true), linear(d, d, true), kParams), kParams);
  return add(add(stem, mul(v.layers, layer, kParams), kParams), projector, kParams);
}

// Siglip2VisionTransformer without its head (patch_embedding a biased linear, position_embedding,
// SigLIP's layers, post_layernorm) and Lfm2VlMultiModalProjector (layer_norm with projector_use_layernorm,
// linear_1, linear_2).
std::int64_t lfm2_vl(const ModelSpec& m) {
  const VisionSpec& v = m.extra.vision;
  const std::int64_t h = v.hidden, norm = mul(2, h, kParams);
  const std::int64_t stem = add(add(patch_weights(v, 1), h, kParams), mul(v.positions, h, kParams), kParams);
  const std::int64_t encoder = add(add(stem, layers(v, {norm, true, false, true}), kParams), norm, kParams);
  const std::int64_t unshuffled = mul(h, mul(v.merge, v.merge, kParams), kParams);
  const std::int64_t projector = add(v.projector_norm ? mul(2, unshuffled, kParams) : 0,
                                     add(linear(unshuffled, v.out_hidden, v.projector_bias),
                                         linear(v.out_hidden, m.d_model, v.projector_bias), kParams),
                                     kParams);
  return add(encoder, projector, kParams);
}

}  // namespace

std::int64_t vision_params(const ModelSpec& m) {
  const VisionSpec& v = m.extra.vision;
  if (v.hidden == 0) return 0;
  switch (v.kind) {
  case VisionKind::siglip:
  case VisionKind::smolvlm:
  case VisionKind::llama4: return siglip_or_llama4(m);
  case VisionKind::pixtral: return pixtral(m);
  case VisionKind::qwen2_5_vl:
  case VisionKind::qwen3_vl: return qwen(m);
  case VisionKind::glm4v: return glm4v(v);
  case VisionKind::internvl: return internvl(m);
  case VisionKind::lfm2_vl: return lfm2_vl(m);
  }
  return 0;
}

}  // namespace mhacfg
