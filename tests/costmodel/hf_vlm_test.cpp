// The vision-language wrappers of hf_vlm.cpp (Mistral 3, Qwen2.5-VL, Qwen3-VL dense and MoE, GLM-4.1V,
// GLM-4.5V, InternVL, SmolVLM, LFM2-VL) on real config.json files: the language model is the total, the vision
// encoder and projector are counted beside it, module by module as transformers builds them, and the two
// together are the published checkpoints'. Command A Vision and Perception LM: the language model only, with
// a note that the vision tower is not counted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

namespace {

std::int64_t linear(std::int64_t in, std::int64_t out, bool bias) { return in * out + (bias ? out : 0); }

bool noted(const ModelSpec& m, const std::string& text) {
  return std::any_of(m.notes.begin(), m.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// Glm4vVisionModel, module by module (the GLM-4.5V checkpoint's tensor list, PUBLISHED.md): patch_embed
// (Conv3d 3 x 2 x 14 x 14 -> 1536, biased) and post_conv_layernorm, position_embedding (576 x 1536), 24
// blocks (norm1, norm2; qkv and proj without biases; gate, up and down through out_hidden 4096),
// post_layernorm, downsample (Conv2d 2 x 2, 1536 -> 4096, biased), the merger (proj 4096 x 4096,
// post_projection_norm, gate and up 4096 -> `merger`, down).
std::int64_t glm4v_vision(std::int64_t merger) {
  const std::int64_t h = 1536, o = 4096;
  const std::int64_t block =
      2 * h + linear(h, 3 * h, false) + linear(h, h, false) + 2 * linear(h, o, false) + linear(o, h, false);
  return (3 * 2 * 14 * 14 * h + h) + h + 576 * h + 24 * block + h + linear(4 * h, o, true) +
         (linear(o, o, false) + 2 * o + 2 * linear(o, merger, false) + linear(merger, o, false));
}

// Qwen3VLVisionModel, module by module (modeling_qwen3_vl.py): patch_embed (Conv3d 3 x 2 x 16 x 16, with
// a bias), pos_embed (2304 x h), 27 blocks (norm1, norm2 LayerNorms; qkv and proj; linear_fc1 and fc2,
// all biased), the merger (LayerNorm over h) and three deepstack mergers (LayerNorm over 4h).
std::int64_t qwen3_vision(std::int64_t out) {
  const std::int64_t h = 1152, f = 4304, merged = 4 * h;
  const std::int64_t block = 2 * (2 * h) + linear(h, 3 * h, true) + linear(h, h, true) + linear(h, f, true) + linear(f, h, true);
  const std::int64_t mlp = linear(merged, merged, true) + linear(merged, out, true);
  return (3 * 2 * 16 * 16 * h + h) + 2304 * h + 27 * block + (2 * h + mlp) + 3 * (2 * merged + mlp);
}

}  // namespace

TEST_CASE("mistral3: Mistral Small 3.1's language model, the Pixtral encoder and the patch-merging projector", "[hf_config][vision]") {
  const ModelSpec m = fixture("mistral-small-3.1-24b-instruct-2503");
  const ParamCounts p = count_params(m);
  CHECK(m.family == "mistral3");
  CHECK(m.extra.vision.kind == VisionKind::pixtral);
  CHECK(m.attention.num_kv_heads == 8);
  CHECK(m.attention.head_dim == 128);
  CHECK_FALSE(m.tie_embeddings);  // the checkpoint keeps an lm_head
  CHECK(m.layers[0].window() == 0);  // text_config's sliding_window is null
  // The language model: Mistral-Small-3.1-24B's shapes, as published for a text-only fine-tune (PUBLISHED.md).
  CHECK(p.total == 23'572'403'200);
  // PixtralVisionModel: patch_conv (3 x 14 x 14 -> 1024, no bias), ln_pre, 24 layers (two RMSNorms,
  // q/k/v/o 1024 x 1024, gate/up/down 1024 x 4096, no biases); Mistral3MultiModalProjector: norm,
  // merging_layer (4 x 1024 -> 1024), linear_1 (1024 -> 5120), linear_2 (5120 -> 5120), no biases.
  const std::int64_t h = 1024, f = 4096, d = 5120;
  const std::int64_t encoder = 3 * 14 * 14 * h + h + 24 * (2 * h + 4 * h * h + 3 * h * f);
  const std::int64_t projector = h + 4 * h * h + h * d + d * d;
  CHECK(p.vision == encoder + projector);
  CHECK(p.total + p.vision == 24'011'361'280);
  CHECK(p.active == p.total);

  // Two feature layers widen linear_1's input; the projector's biases add linear_1's and linear_2's.
  const ModelSpec two = edited("mistral-small-3.1-24b-instruct-2503", [](nlohmann::json& j) { j["vision_feature_layer"] = {-1, -2}; });
  CHECK(count_params(two).vision - p.vision == h * d);
  const ModelSpec biased = edited("mistral-small-3.1-24b-instruct-2503", [](nlohmann::json& j) { j["multimodal_projector_bias"] = true; });
  CHECK(count_params(biased).vision - p.vision == 2 * d);
  // vision_config's missing keys take PixtralVisionConfig's defaults (patches of 16): more conv weights.
  const ModelSpec patch16 = edited("mistral-small-3.1-24b-instruct-2503", [](nlohmann::json& j) { j["vision_config"].erase("patch_size"); });
  CHECK(count_params(patch16).vision - p.vision == 3 * (16 * 16 - 14 * 14) * h);
  // Without text_config, Mistral3Config's own (Small 3.1's sizes) is built.
  const ModelSpec bare = edited("mistral-small-3.1-24b-instruct-2503", [](nlohmann::json& j) { j.erase("text_config"); });
  CHECK(count_params(bare).total == p.total);
}

TEST_CASE("mistral3 refuses what it cannot count, naming the field", "[hf_config][vision]") {
  const auto refused = [](std::function<void(nlohmann::json&)> edit) {
    return [edit] { edited("mistral-small-3.1-24b-instruct-2503", edit); };
  };
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["text_config"]["model_type"] = "not_a_model"; })(),
                    Catch::Contains("text_config: model_type = \"not_a_model\": a text model mhacfg does not read"));
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["vision_config"]["model_type"] = "siglip_vision_model"; })(),
                    Catch::Contains("vision_config: model_type = \"siglip_vision_model\": only pixtral's encoder is read"));
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["vision_feature_layer"] = nlohmann::json::array(); })(),
                    Catch::Contains("vision_feature_layer = []: must be a layer index or a non-empty list of them"));
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["spatial_merge_size"] = 0; })(),
                    Catch::Contains("spatial_merge_size = 0: must be positive"));
  CHECK_THROWS_AS(refused([](nlohmann::json& j) { j["vision_config"]["hidden_size"] = 0; })(), InputError);
}

TEST_CASE("qwen2_5_vl: Qwen2.5-7B's language model beside the window-attention encoder and its merger", "[hf_config][vision]") {
  const ModelSpec m = fixture("qwen2.5-vl-7b-instruct");
  const ParamCounts p = count_params(m);
  CHECK(m.extra.vision.kind == VisionKind::qwen2_5_vl);
  CHECK(m.attention.q_bias);
  CHECK_FALSE(m.attention.o_bias);
  CHECK(m.layers[27].window() == 0);  // use_sliding_window false
  // The language model is Qwen2.5-7B's (its published count, PUBLISHED.md), the same as reading qwen2.5-7b.
  CHECK(p.total == 7'615'616'512);
  CHECK(p.total == count_params(fixture("qwen2.5-7b")).total);
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == count_kv_cache(fixture("qwen2.5-7b"), w).bytes_per_token);
  // Qwen2_5_VisionTransformerPretrainedModel: patch_embed (Conv3d 3 x 2 x 14 x 14 -> 1280, no bias), 32
  // blocks (two RMSNorms, qkv and proj with biases, gate/up/down 1280 x 3420 with biases), the merger
  // (ln_q, 5120 -> 5120 -> 3584 with biases): the "visual" module's published 676,550,144.
  const std::int64_t h = 1280, f = 3420, merged = 4 * h;
  const std::int64_t block = 2 * h + linear(h, 3 * h, true) + linear(h, h, true) + 2 * linear(h, f, true) + linear(f, h, true);
  CHECK(p.vision == 3 * 2 * 14 * 14 * h + 32 * block + h + linear(merged, merged, true) + linear(merged, 3584, true));
  CHECK(p.vision == 676'550'144);
  CHECK(p.total + p.vision == 8'292'166'656);

  // Re-saved files drop the vision keys equal to Qwen2_5_VLVisionConfig's defaults (unsloth's copy keeps
  // hidden_size, in_chans, spatial_patch_size, tokens_per_second): the defaults give the same count.
  const ModelSpec trimmed = edited("qwen2.5-vl-7b-instruct", [](nlohmann::json& j) {
    j["vision_config"] = {{"hidden_size", 1280}, {"in_chans", 3}, {"model_type", "qwen2_5_vl"}, {"spatial_patch_size", 14}};
  });
  CHECK(count_params(trimmed).vision == p.vision);
  // Newer files nest the language model in text_config; the count is the same.
  const ModelSpec nested = edited("qwen2.5-vl-7b-instruct", [](nlohmann::json& j) {
    nlohmann::json text = j;
    text.erase("vision_config");
    text["model_type"] = "qwen2_5_vl_text";
    for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "vocab_size"})
      j.erase(key);
    j["text_config"] = text;
  });
  CHECK(count_params(nested).total == p.total);
  // With use_sliding_window, layers from max_window_layers (28 here: none of the 28) slide.
  const ModelSpec windowed = edited("qwen2.5-vl-7b-instruct", [](nlohmann::json& j) {
    j["use_sliding_window"] = true;
    j["max_window_layers"] = 20;
  });
  CHECK(windowed.layers[19].window() == 0);
  CHECK(windowed.layers[20].window() == 32768);
}

TEST_CASE("qwen3_vl: Qwen3-8B's language model, the encoder with learned positions and deepstack mergers", "[hf_config][vision]") {
  const ModelSpec m = fixture("qwen3-vl-8b-instruct");
  const ParamCounts p = count_params(m);
  CHECK(m.family == "qwen3_vl");
  CHECK(m.extra.vision.kind == VisionKind::qwen3_vl);
  CHECK(m.attention.qk_norm);
  // The language model has Qwen3-8B's shapes and count (PUBLISHED.md).
  CHECK(p.total == 8'190'735'360);
  CHECK(p.total == count_params(fixture("qwen3-8b")).total);
  CHECK(p.vision == qwen3_vision(4096));
  CHECK(p.total + p.vision == 8'767'123'696);

  // No deepstack layers: three mergers fewer.
  const ModelSpec flat = edited("qwen3-vl-8b-instruct", [](nlohmann::json& j) { j["vision_config"]["deepstack_visual_indexes"] = nlohmann::json::array(); });
  const std::int64_t merged = 4 * 1152;
  CHECK(p.vision - count_params(flat).vision == 3 * (2 * merged + linear(merged, merged, true) + linear(merged, 4096, true)));
  // The wrapper's tie_word_embeddings decides, as the 2B and 4B files state it at the top.
  const ModelSpec tied = edited("qwen3-vl-8b-instruct", [](nlohmann::json& j) { j["tie_word_embeddings"] = true; });
  CHECK(p.total - count_params(tied).total == 151'936 * 4096);
  CHECK_THROWS_WITH(edited("qwen3-vl-8b-instruct", [](nlohmann::json& j) { j["vision_config"]["deepstack_visual_indexes"] = 8; }),
                    Catch::Contains("vision_config: deepstack_visual_indexes = 8: must be a list of layer indices"));
  CHECK_THROWS_WITH(edited("qwen3-vl-8b-instruct", [](nlohmann::json& j) { j["vision_config"]["depth"] = 0; }),
                    Catch::Contains("vision_config: depth = 0: must be positive"));
}

TEST_CASE("qwen3_vl_moe: Qwen3-MoE's language models beside the Qwen3-VL encoder", "[hf_config][vision]") {
  struct Case {
    const char* file;
    const char* text;  // the text-only checkpoint of the same shapes
    std::int64_t text_total, checkpoint, out;
  };
  for (const Case c : {Case{"qwen3-vl-30b-a3b-instruct", "qwen3-30b-a3b", 30'532'122'624, 31'070'754'032, 2048},
                       Case{"qwen3-vl-235b-a22b-instruct", "qwen3-235b-a22b", 235'093'634'560, 235'670'022'896, 4096}}) {
    INFO(c.file);
    const ModelSpec m = fixture(c.file);
    const ModelSpec text = fixture(c.text);
    const ParamCounts p = count_params(m);
    CHECK(m.family == "qwen3_vl_moe");
    CHECK(m.moe.num_routed_experts == text.moe.num_routed_experts);
    CHECK(m.moe.top_k == 8);
    CHECK(p.total == c.text_total);
    CHECK(p.total == count_params(text).total);
    CHECK(p.active == count_params(text).active);
    CHECK(p.vision == qwen3_vision(c.out));
    CHECK(p.total + p.vision == c.checkpoint);
    Workload w;
    CHECK(count_kv_cache(m, w).bytes_per_token == count_kv_cache(text, w).bytes_per_token);
  }
  // mlp_only_layers keeps a layer dense (intermediate_size wide).
  const ModelSpec dense0 = edited("qwen3-vl-30b-a3b-instruct", [](nlohmann::json& j) { j["text_config"]["mlp_only_layers"] = {0}; });
  CHECK_FALSE(dense0.layers[0].moe());
  CHECK(dense0.layers[1].moe());
  CHECK(dense0.ffn.ffn_dim == 6144);
}

TEST_CASE("glm4v: GLM-4.1V's language model is GLM-4-0414's, beside the GLM vision tower", "[hf_config][vision]") {
  const ModelSpec m = fixture("glm-4.1v-9b-thinking");
  const ParamCounts p = count_params(m);
  CHECK(m.family == "glm4v");
  CHECK(m.extra.vision.kind == VisionKind::glm4v);
  CHECK(m.attention.num_kv_heads == 2);
  CHECK(m.attention.head_dim == 128);  // hidden_size / heads: Glm4vTextConfig has no head_dim
  CHECK(m.attention.q_bias);
  CHECK_FALSE(m.attention.o_bias);
  CHECK(m.norm.per_layer == 4);
  CHECK_FALSE(m.tie_embeddings);
  // The language model has GLM-4-9B-0414's shapes and count (PUBLISHED.md).
  CHECK(p.total == 9'400'279'040);
  CHECK(p.total == count_params(fixture("glm-4-9b-0414")).total);
  CHECK(p.vision == glm4v_vision(13696));
  // GLM-4.6V-Flash (a glm4v checkpoint of the same shapes): its published 10,292,777,472.
  CHECK(p.total + p.vision == 10'292'777'472);

  // Glm4vTextAttention builds q/k/v with biases whatever attention_bias says.
  const ModelSpec unbiased =
      edited("glm-4.1v-9b-thinking", [](nlohmann::json& j) { j["text_config"]["attention_bias"] = false; });
  CHECK(count_params(unbiased).total == p.total);
  // ... and its head_dim is hidden_size / heads, whatever the file says.
  CHECK(edited("glm-4.1v-9b-thinking", [](nlohmann::json& j) {
          j["text_config"]["head_dim"] = 96;
        }).attention.head_dim == 128);
  // The vision tower's attention_bias puts biases on the 24 fused qkv projections.
  const ModelSpec vbias =
      edited("glm-4.1v-9b-thinking", [](nlohmann::json& j) { j["vision_config"]["attention_bias"] = true; });
  CHECK(count_params(vbias).vision - p.vision == 24 * 3 * 1536);
  // A missing vision_config takes Glm4vVisionConfig's defaults, which are GLM-4.1V's.
  const ModelSpec bare = edited("glm-4.1v-9b-thinking", [](nlohmann::json& j) { j.erase("vision_config"); });
  CHECK(count_params(bare).vision == p.vision);
  CHECK_THROWS_WITH(edited("glm-4.1v-9b-thinking", [](nlohmann::json& j) { j["text_config"]["model_type"] = "glm4"; }),
                    Catch::Contains("text_config: model_type = \"glm4\": this wrapper's text model is glm4v_text's"));
  CHECK_THROWS_WITH(
      edited("glm-4.1v-9b-thinking", [](nlohmann::json& j) { j["vision_config"]["spatial_merge_size"] = 0; }),
      Catch::Contains("vision_config: spatial_merge_size = 0: must be positive"));
}

TEST_CASE("glm4v_moe: GLM-4.5V's language model is GLM-4.5-Air's, beside the GLM vision tower", "[hf_config][vision]") {
  const ModelSpec m = fixture("glm-4.5v");
  const ModelSpec air = fixture("glm-4.5-air");
  const ParamCounts p = count_params(m);
  CHECK(m.family == "glm4v_moe");
  CHECK(m.attention.q_bias);
  CHECK_FALSE(m.attention.qk_norm);
  CHECK(m.moe.num_routed_experts == 128);
  CHECK_FALSE(m.layers[0].moe());
  CHECK(m.layers[1].moe());
  // The language model transformers builds for GLM-4.5-Air (PUBLISHED.md), the same shapes; GLM-4.5V ships
  // no MTP layer.
  CHECK(p.total == 106'852'245'504);
  CHECK(p.total == count_params(air).total);
  CHECK(p.active == count_params(air).active);
  CHECK(p.mtp == 0);
  CHECK(p.vision == glm4v_vision(10944));
  // The checkpoint's tensors (PUBLISHED.md) add the routers' e_score_correction_bias buffers, 45 x 128.
  CHECK(p.total + p.vision + 45 * 128 == 107'710'933'120);

  // Glm4vMoeTextConfig's defaults: attention_bias true, a vocabulary of 151424.
  const ModelSpec defaults = edited("glm-4.5v", [](nlohmann::json& j) {
    j["text_config"].erase("attention_bias");
    j["text_config"].erase("vocab_size");
  });
  CHECK(defaults.attention.q_bias);
  CHECK(p.total - count_params(defaults).total == 2 * (151552 - 151424) * 4096);
  CHECK_THROWS_WITH(
      edited("glm-4.5v", [](nlohmann::json& j) { j["text_config"]["model_type"] = "glm4_moe"; }),
      Catch::Contains("text_config: model_type = \"glm4_moe\": this wrapper's text model is glm4v_moe_text's"));
}

TEST_CASE("glm46v: GLM-4.6V's wrapper reads the text model its text_config names, beside the GLM tower",
          "[hf_config][vision]") {
  // Glm46VConfig builds both sub-configs from their model_type (AutoConfig) around
  // Glm4vForConditionalGeneration: GLM-4.1V's and GLM-4.5V's files under this wrapper count the same.
  const auto as_glm46v = [](const char* name, const char* text_type) {
    return edited(name, [&](nlohmann::json& j) {
      j["model_type"] = "glm46v";
      j["text_config"]["model_type"] = text_type;
      j["vision_config"]["model_type"] = "glm4v_vision";
    });
  };
  const ModelSpec dense = as_glm46v("glm-4.1v-9b-thinking", "glm4v_text");
  const ParamCounts p = count_params(dense), glm4v = count_params(fixture("glm-4.1v-9b-thinking"));
  CHECK(dense.family == "glm46v");
  CHECK(dense.extra.vision.kind == VisionKind::glm4v);
  CHECK(p.total == glm4v.total);
  CHECK(p.vision == glm4v.vision);
  const ParamCounts moe = count_params(as_glm46v("glm-4.5v", "glm4v_moe_text"));
  const ParamCounts glm4v_moe = count_params(fixture("glm-4.5v"));
  CHECK(moe.total == glm4v_moe.total);
  CHECK(moe.active == glm4v_moe.active);
  CHECK(moe.vision == glm4v_moe.vision);
  // No text model_type: Glm46VConfig builds glm4v_text; the head is untied unless the file ties it.
  const ModelSpec bare = edited("glm-4.1v-9b-thinking", [](nlohmann::json& j) {
    j["model_type"] = "glm46v";
    j["text_config"].erase("model_type");
    j.erase("tie_word_embeddings");
  });
  CHECK(count_params(bare).total == p.total);
  CHECK_FALSE(bare.tie_embeddings);
  CHECK_THROWS_WITH(edited("glm-4.1v-9b-thinking",
                           [](nlohmann::json& j) {
                             j["model_type"] = "glm46v";
                             j["vision_config"]["model_type"] = "siglip_vision_model";
                           }),
                    Catch::Contains("vision_config: model_type = \"siglip_vision_model\": only glm4v_vision's encoder"));
}

TEST_CASE("internvl: InternVL3-1B's Qwen2.5 language model beside InternViT-300M and the MLP projector",
          "[hf_config][vision]") {
  const ModelSpec m = fixture("internvl3-1b-hf");
  const ParamCounts p = count_params(m);
  CHECK(m.family == "internvl");
  CHECK(m.extra.vision.kind == VisionKind::internvl);
  CHECK(m.attention.q_bias);      // Qwen2's
  CHECK_FALSE(m.tie_embeddings);  // text_config leaves it to Qwen2Config (false); the checkpoint keeps an lm_head
  const std::int64_t d = 896, vocab = 151674;
  CHECK(p.lm_head == vocab * d);
  // InternVLVisionModel: cls_token, the patch Conv2d (3 x 14 x 14 -> 1024, biased), 1025 positions, 24
  // layers (two LayerNorms, q/k/v and the projection with biases, fc1 and fc2 with biases, lambda_1 and
  // lambda_2); InternVLMultiModalProjector: a LayerNorm over 4 x 1024, 4096 -> 896 -> 896, biased.
  const std::int64_t h = 1024, f = 4096;
  const std::int64_t layer = 2 * (2 * h) + 4 * linear(h, h, true) + linear(h, f, true) + linear(f, h, true) + 2 * h;
  const std::int64_t encoder = h + (3 * 14 * 14 * h + h) + 1025 * h + 24 * layer;
  const std::int64_t projector = 2 * 4 * h + linear(4 * h, d, true) + linear(d, d, true);
  CHECK(p.vision == encoder + projector);
  // The Hub's total of OpenGVLab/InternVL3-1B-hf (PUBLISHED.md).
  CHECK(p.total + p.vision == 938'193'024);

  // The top-level tie_word_embeddings decides when the file states it.
  const ModelSpec tied = edited("internvl3-1b-hf", [](nlohmann::json& j) { j["tie_word_embeddings"] = true; });
  CHECK(p.total - count_params(tied).total == vocab * d);
  // text_config's model_type defaults to qwen2.
  const ModelSpec untyped = edited("internvl3-1b-hf", [](nlohmann::json& j) { j["text_config"].erase("model_type"); });
  CHECK(count_params(untyped).total == p.total);
  // InternViT-6B's variants: RMSNorms (h each, not 2h), q/k norms over hidden, no q/k/v biases.
  const ModelSpec rms =
      edited("internvl3-1b-hf", [](nlohmann::json& j) { j["vision_config"]["norm_type"] = "rms_norm"; });
  CHECK(p.vision - count_params(rms).vision == 24 * 2 * h);
  const ModelSpec qk = edited("internvl3-1b-hf", [](nlohmann::json& j) { j["vision_config"]["use_qk_norm"] = true; });
  CHECK(count_params(qk).vision - p.vision == 24 * 2 * h);
  const ModelSpec nobias =
      edited("internvl3-1b-hf", [](nlohmann::json& j) { j["vision_config"]["attention_bias"] = false; });
  CHECK(p.vision - count_params(nobias).vision == 24 * 3 * h);
  // downsample_ratio 0.25: a 4 x 4 unshuffle, 16 x 1024 into the projector.
  const ModelSpec quarter = edited("internvl3-1b-hf", [](nlohmann::json& j) { j["downsample_ratio"] = 0.25; });
  CHECK(count_params(quarter).vision - p.vision == 12 * h * 2 + 12 * h * d);
  CHECK_THROWS_WITH(
      edited("internvl3-1b-hf", [](nlohmann::json& j) { j["vision_config"]["use_mean_pooling"] = false; }),
      Catch::Contains("vision_config: use_mean_pooling = false: only true (the released checkpoints') is counted"));
  CHECK_THROWS_WITH(
      edited("internvl3-1b-hf",
             [](nlohmann::json& j) {
               j["vision_config"]["image_size"] = {448, 224};
             }),
      Catch::Contains("vision_config: image_size = [448,224]: must be one size or a square [height, width]"));
  CHECK_THROWS_WITH(edited("internvl3-1b-hf", [](nlohmann::json& j) { j["downsample_ratio"] = 0.3; }),
                    Catch::Contains("downsample_ratio = 0.3: must be 1 over a whole number"));
  CHECK_THROWS_WITH(
      edited("internvl3-1b-hf", [](nlohmann::json& j) { j["vision_config"]["norm_type"] = "batch_norm"; }),
      Catch::Contains("vision_config: norm_type = \"batch_norm\": must be layer_norm or rms_norm"));
}

TEST_CASE("smolvlm: SmolVLM2-500M's Llama language model beside the SigLIP encoder and the connector",
          "[hf_config][vision]") {
  const ModelSpec m = fixture("smolvlm2-500m-video-instruct");
  const ParamCounts p = count_params(m);
  CHECK(m.family == "smolvlm");
  CHECK(m.extra.vision.kind == VisionKind::smolvlm);
  CHECK(m.attention.num_kv_heads == 5);
  CHECK(m.attention.head_dim == 64);
  CHECK_FALSE(m.tie_embeddings);
  // The published split of the checkpoint (PUBLISHED.md): text_model 361,944,000 and lm_head 47,308,800;
  // vision_model 86,433,024 and connector 11,796,480; 507,482,304 in all.
  CHECK(p.lm_head == 47'308'800);
  CHECK(p.total - p.lm_head == 361'944'000);
  // SmolVLMVisionTransformer: the patch Conv2d (3 x 16 x 16 -> 768, biased), 1024 positions, 12 SigLIP
  // layers (LayerNorms, biased q/k/v/o and fc1/fc2 of 3072, the class defaults), post_layernorm;
  // SmolVLMConnector: 16 x 768 -> 960 without a bias (scale_factor 4).
  const std::int64_t h = 768, f = 3072;
  const std::int64_t layer = 2 * (2 * h) + 4 * linear(h, h, true) + linear(h, f, true) + linear(f, h, true);
  const std::int64_t vision_model = (3 * 16 * 16 * h + h) + 1024 * h + 12 * layer + 2 * h;
  CHECK(vision_model == 86'433'024);
  CHECK(p.vision == vision_model + 16 * h * 960);
  CHECK(p.total + p.vision == 507'482'304);

  // scale_factor 2: a 2 x 2 shuffle, a connector a quarter as wide.
  const ModelSpec half = edited("smolvlm2-500m-video-instruct", [](nlohmann::json& j) { j["scale_factor"] = 2; });
  CHECK(p.vision - count_params(half).vision == 12 * h * 960);
  // The top-level vocab_size is not read: the embedding is text_config's.
  const ModelSpec vocab = edited("smolvlm2-500m-video-instruct", [](nlohmann::json& j) { j["vocab_size"] = 128; });
  CHECK(count_params(vocab).total == p.total);
  CHECK_THROWS_WITH(
      edited("smolvlm2-500m-video-instruct",
             [](nlohmann::json& j) { j["vision_config"]["model_type"] = "siglip_vision_model"; }),
      Catch::Contains("vision_config: model_type = \"siglip_vision_model\": only smolvlm_vision's encoder is read"));
  CHECK_THROWS_WITH(edited("smolvlm2-500m-video-instruct", [](nlohmann::json& j) { j["scale_factor"] = 0; }),
                    Catch::Contains("scale_factor = 0: must be positive"));
}

// Siglip2VisionTransformer without a head (patch_embedding 3 x 16 x 16 -> h biased, 256 positions, SigLIP
// layers of LayerNorms and biased q/k/v/o, fc1 and fc2, post_layernorm) and Lfm2VlMultiModalProjector
// (a LayerNorm over 4h with `norm`, 4h -> `projector` -> d, biased).
std::int64_t lfm2_vl_vision(std::int64_t h, std::int64_t f, std::int64_t layers, bool norm, std::int64_t projector,
                            std::int64_t d) {
  const std::int64_t layer = 2 * (2 * h) + 4 * linear(h, h, true) + linear(h, f, true) + linear(f, h, true);
  const std::int64_t encoder = linear(3 * 16 * 16, h, true) + 256 * h + layers * layer + 2 * h;
  return encoder + (norm ? 2 * 4 * h : 0) + linear(4 * h, projector, true) + linear(projector, d, true);
}

TEST_CASE("lfm2_vl: LFM2's language models beside the SigLIP2 NaFlex encoder and the projector",
          "[hf_config][vision]") {
  const ModelSpec m = fixture("lfm2.5-vl-450m");
  const ParamCounts p = count_params(m);
  CHECK(m.family == "lfm2_vl");
  CHECK(m.extra.vision.kind == VisionKind::lfm2_vl);
  CHECK(m.tie_embeddings);
  // LFM2.5-VL-450M: LFM2-350M's language model (its published count, PUBLISHED.md), SigLIP2 base without the
  // projector's LayerNorm; the Hub's total of the checkpoint.
  CHECK(p.total == 354'483'968);
  CHECK(p.total == count_params(fixture("lfm2-350m")).total);
  CHECK(p.vision == lfm2_vl_vision(768, 3072, 12, false, 2048, 1024));
  CHECK(p.total + p.vision == 448'718'848);
  // Without projector_use_layernorm, the LayerNorm transformers always built before the key.
  const ModelSpec normed = edited("lfm2.5-vl-450m", [](nlohmann::json& j) { j.erase("projector_use_layernorm"); });
  CHECK(count_params(normed).vision - p.vision == 2 * 4 * 768);
  CHECK_THROWS_WITH(edited("lfm2.5-vl-450m", [](nlohmann::json& j) { j["vision_config"]["vision_use_head"] = true; }),
                    Catch::Contains("vision_config: vision_use_head = true: only false (the released checkpoints': no "
                                    "pooling head) is counted"));
  CHECK_THROWS_WITH(edited("lfm2.5-vl-450m", [](nlohmann::json& j) { j["vision_config"].erase("vision_use_head"); }),
                    Catch::Contains("vision_config: vision_use_head = (missing): only false"));
  CHECK_THROWS_WITH(edited("lfm2.5-vl-450m", [](nlohmann::json& j) { j["downsample_factor"] = 0; }),
                    Catch::Contains("downsample_factor = 0: must be positive"));

  // LFM2-VL-1.6B: LFM2-1.2B's language model (its published count); its tower (SigLIP2 so400m, 27 layers
  // of 1152, the projector's LayerNorm by default) is counted by the same module list, with no published
  // total of the checkpoint to check it against (PUBLISHED.md).
  const ModelSpec big = fixture("lfm2-vl-1.6b");
  const ParamCounts q = count_params(big);
  CHECK(q.total == 1'170'340'608);
  CHECK(q.total == count_params(fixture("lfm2-1.2b")).total);
  CHECK(q.vision == lfm2_vl_vision(1152, 4304, 27, true, 2560, 2048));
  // transformers' auto mapping names the type lfm2_vl; LFM2-VL's released files say lfm2-vl.
  CHECK(big.family == "lfm2_vl");
  const ModelSpec renamed = edited("lfm2-vl-1.6b", [](nlohmann::json& j) { j["model_type"] = "lfm2_vl"; });
  CHECK(count_params(renamed).total == q.total);
  const ModelSpec untied = edited("lfm2-vl-1.6b", [](nlohmann::json& j) { j["tie_word_embeddings"] = false; });
  CHECK(count_params(untied).total - q.total == 65'536 * 2048);
}

TEST_CASE("cohere2_vision and perception_lm read their text_config's family, the vision tower not counted",
          "[hf_config][vision]") {
  // No Hub file of Command A Vision or Perception LM was found (PUBLISHED.md): each wrapper is built here
  // around a text model fixture, as the Config classes nest it.
  const auto wrap = [](const char* type) {
    return [type](nlohmann::json& j) {
      const nlohmann::json text = j;
      j = {{"model_type", type}, {"text_config", text}, {"vision_config", {{"model_type", "siglip_vision_model"}}}};
    };
  };
  for (const auto& [type, text] : {std::pair<const char*, const char*>{"cohere2_vision", "c4ai-command-r7b-12-2024"},
                                   {"perception_lm", "llama-3.2-1b"}}) {
    INFO(type);
    const ModelSpec m = edited(text, wrap(type));
    const ModelSpec plain = fixture(text);
    CHECK(m.family == type);
    CHECK(count_params(m).total == count_params(plain).total);
    CHECK(count_params(m).vision == 0);
    CHECK(m.tie_embeddings == plain.tie_embeddings);
    CHECK(noted(m, "vision tower not counted"));
  }
  // text_config's model_type, when missing, is the Config class's default: cohere2, llama.
  const ModelSpec cohere = edited("c4ai-command-r7b-12-2024", [&](nlohmann::json& j) {
    wrap("cohere2_vision")(j);
    j["text_config"].erase("model_type");
  });
  CHECK(count_params(cohere).total == count_params(fixture("c4ai-command-r7b-12-2024")).total);
  // Command A Plus nests a cohere2_moe text model, which mhacfg does not read.
  CHECK_THROWS_WITH(edited("c4ai-command-r7b-12-2024",
                           [&](nlohmann::json& j) {
                             wrap("cohere2_vision")(j);
                             j["text_config"]["model_type"] = "cohere2_moe";
                           }),
                    Catch::Contains("text_config: model_type = \"cohere2_moe\": a text model mhacfg does not read"));
}
