// Parameter counts of a multimodal checkpoint's vision encoder and its projector into the language
// model (ParamCounts::vision). Part of the one place counts are computed (counts.cpp has the rest).
#include "mhacfg/costmodel/counts.hpp"

#include "mhacfg/costmodel/checked.hpp"

namespace mhacfg {

namespace {

constexpr const char* kParams = "parameter count";

// A pre-norm ViT layer of width h and MLP width f: q, k and v (Qwen3-VL fuses them as qkv, the same
// count) and the output projection, two LayerNorms and the two-layer MLP, all with biases.
std::int64_t vit_layer(std::int64_t h, std::int64_t f) {
  const std::int64_t linear = add(mul(h, h, kParams), h, kParams);                   // h x h with a bias
  const std::int64_t mlp = add(mul(2, h, f, kParams), add(f, h, kParams), kParams);  // fc1 and fc2 with biases
  const std::int64_t norm = mul(2, h, kParams);                                      // a LayerNorm
  return add(add(mul(4, linear, kParams), mul(2, norm, kParams), kParams), mlp, kParams);
}

// Qwen3VLVisionModel (Qwen3-VL; Qwen3.5's Qwen3_5VisionModel without the DeepStack mergers): the patch
// Conv3d with a bias, the learned positions, the blocks, the patch merger (a LayerNorm over hidden, then
// linear_fc1 over the merged patches and linear_fc2 to out_hidden, with biases) and a DeepStack merger
// per deepstack_visual_indexes entry (the same, its LayerNorm over the merged patches).
std::int64_t qwen3_vl_params(const VisionSpec& v) {
  const std::int64_t h = v.hidden;
  const std::int64_t patch =
      add(mul(mul(v.channels, v.temporal_patch, kParams), mul(v.patch_size, v.patch_size, kParams), h, kParams), h,
          kParams);
  const std::int64_t positions = mul(v.num_positions, h, kParams);
  const std::int64_t merged = mul(h, mul(v.spatial_merge, v.spatial_merge, kParams), kParams);
  const std::int64_t fcs = add(add(mul(merged, merged, kParams), merged, kParams),
                               add(mul(merged, v.out_hidden, kParams), v.out_hidden, kParams), kParams);
  const std::int64_t merger = add(mul(2, h, kParams), fcs, kParams);
  const std::int64_t deepstack = mul(v.deepstack_mergers, add(mul(2, merged, kParams), fcs, kParams), kParams);
  return add(add(patch, positions, kParams),
             add(add(mul(v.layers, vit_layer(h, v.intermediate), kParams), merger, kParams), deepstack, kParams),
             kParams);
}

}  // namespace

// SigLIP's (transformers' SiglipVisionTransformer) with Gemma 3's projector, Llama 4's
// (Llama4VisionModel and Llama4MultiModalProjector), or Qwen3-VL's (its merger is the projector).
std::int64_t vision_params(const ModelSpec& m) {
  const VisionSpec& v = m.extra.vision;
  if (v.hidden == 0) return 0;
  if (v.kind == VisionKind::qwen3_vl) return qwen3_vl_params(v);
  const std::int64_t h = v.hidden, f = v.intermediate;
  const std::int64_t side = v.image_size / v.patch_size;
  const std::int64_t linear = add(mul(h, h, kParams), h, kParams);                   // h x h with a bias
  const std::int64_t mlp = add(mul(2, h, f, kParams), add(f, h, kParams), kParams);  // fc1 and fc2 with biases
  const std::int64_t norm = mul(2, h, kParams);                                      // a LayerNorm
  const std::int64_t layers = mul(v.layers, vit_layer(h, f), kParams);
  const std::int64_t patch_weights = mul(mul(v.channels, v.patch_size, v.patch_size, kParams), h, kParams);
  if (v.kind == VisionKind::llama4) {
    // The patch linear (no bias), class_embedding, positional_embedding_vlm (patches + the class token),
    // layernorm_pre and layernorm_post.
    const std::int64_t stem =
        add(add(patch_weights, h, kParams),
            add(mul(add(mul(side, side, kParams), 1, kParams), h, kParams), mul(2, norm, kParams), kParams), kParams);
    // The pixel-shuffle adapter's fc1 (intermediate -> projector_input_dim) and fc2, then linear_1.
    const std::int64_t adapter = add(mul(f, v.projector_input_dim, kParams),
                                     mul(v.projector_output_dim, v.projector_output_dim, kParams), kParams);
    return add(add(stem, layers, kParams), add(adapter, mul(v.output_dim, m.d_model, kParams), kParams), kParams);
  }
  const std::int64_t patch_conv = add(patch_weights, h, kParams);
  const std::int64_t positions = mul(mul(side, side, kParams), h, kParams);
  std::int64_t p = add(add(patch_conv, positions, kParams), add(layers, norm, kParams), kParams);
  // The pooling head: a probe, nn.MultiheadAttention (in_proj 3h x h and out_proj, with biases), a
  // LayerNorm and an MLP.
  if (v.pooling_head)
    p = add(p, add(add(h, mul(4, linear, kParams), kParams), add(norm, mlp, kParams), kParams), kParams);
  // Gemma3MultiModalProjector: mm_soft_emb_norm (an RMSNorm over h) and mm_input_projection (h x d_model).
  return add(p, add(h, mul(h, m.d_model, kParams), kParams), kParams);
}

}  // namespace mhacfg
