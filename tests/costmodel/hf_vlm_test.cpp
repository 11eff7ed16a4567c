// The vision-language wrappers of hf_vlm.cpp (Mistral 3, Qwen2.5-VL, Qwen3-VL dense and MoE) on real
// config.json files: the language model is the total, the vision encoder and projector are counted beside
// it, module by module as transformers builds them, and the two together are the published checkpoints'.
#include <catch2/catch.hpp>

#include <functional>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

namespace {

std::int64_t linear(std::int64_t in, std::int64_t out, bool bias) { return in * out + (bias ? out : 0); }

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
