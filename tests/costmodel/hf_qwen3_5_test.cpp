// Qwen3.5 (hf_qwen3_5.cpp): the vision-language checkpoints' language model, vision tower and MTP layer
// against the published totals of real config.json files (tests/fixtures/hf/PUBLISHED.md).
#include <catch2/catch.hpp>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

namespace {

// Qwen3_5VisionModel's tensors, one by one: the patch Conv3d (3 x 2 x 16 x 16 per output, a bias), 2304
// learned positions, per block norm1 and norm2 (weight and bias), qkv (3h x h, bias), proj, linear_fc1
// and linear_fc2 (with biases), and the merger (a LayerNorm over h, then 4h x 4h and out x 4h, biases).
std::int64_t qwen3_5_vision(std::int64_t h, std::int64_t f, std::int64_t depth, std::int64_t out) {
  const std::int64_t block = 2 * 2 * h + (3 * h * h + 3 * h) + (h * h + h) + (f * h + f) + (h * f + h);
  const std::int64_t merger = 2 * h + (16 * h * h + 4 * h) + (out * 4 * h + out);
  return (3 * 2 * 16 * 16 * h + h) + 2304 * h + depth * block + merger;
}

}  // namespace

TEST_CASE("qwen3_5: Qwen3.5-0.8B's language model, vision tower and MTP layer make the Hub's total", "[hf_config]") {
  const ModelSpec m = fixture("qwen3.5-0.8b");
  CHECK(m.family == "qwen3_5");
  REQUIRE(m.num_layers() == 24);
  for (std::size_t i = 0; i < 24; ++i) CHECK(m.layers[i].has_linear() == ((i + 1) % 4 != 0));
  CHECK(m.num_attention_layers() == 6);
  CHECK(m.attention.output_gate);
  CHECK(m.attention.qk_norm);
  CHECK(m.tie_embeddings);
  CHECK(m.linear.num_k_heads == 16);
  CHECK(m.linear.num_v_heads == 16);
  CHECK(m.extra.vision.kind == VisionKind::qwen3_vl);
  CHECK(m.extra.mtp_modules == 1);
  const ParamCounts p = count_params(m);
  // Qwen3_5Attention: q_proj 4096 x 1024 (8 heads of 256 and their gate), k_proj and v_proj 512 x 1024,
  // o_proj 1024 x 2048, q_norm and k_norm 256. Qwen3_5GatedDeltaNet: in_proj_qkv 6144 x 1024, in_proj_z
  // 2048 x 1024, in_proj_b and in_proj_a 16 x 1024, conv1d 6144 x 1 x 4, dt_bias and A_log 16 each, norm
  // 128, out_proj 1024 x 2048.
  CHECK(p.attention_per_layer == 4096LL * 1024 + 2 * 512 * 1024 + 1024 * 2048 + 2 * 256);
  CHECK(p.linear_attention_per_layer ==
        6144LL * 1024 + 2048 * 1024 + 2 * 16 * 1024 + 6144 * 4 + 2 * 16 + 128 + 1024 * 2048);
  CHECK(p.lm_head == 0);
  CHECK(p.vision == qwen3_5_vision(768, 3072, 12, 1024));
  // The MTP layer: fc 1024 x 2048, two input norms, a gated-attention layer with the MLP, a final norm.
  CHECK(p.mtp == 1024LL * 2048 + 2 * 1024 + p.attention_per_layer + 3 * 1024 * 3584 + 2 * 1024 + 1024);
  CHECK(p.total == 752'393'024);                     // llama.cpp's n_params of the text model
  CHECK(p.total + p.vision == 852'985'920);          // KerasHub's qwen3_5_0.8b_base
  CHECK(p.total + p.vision + p.mtp == 873'438'784);  // the Hub's safetensors total
  // Six softmax layers cache 2 KV heads of 256; the 18 linear layers hold 16 x 128 x 128 and the
  // convolution's last 3 inputs of 6144 channels.
  Workload w;
  w.context = 8192;
  const KvCacheCounts kv = count_kv_cache(m, w);
  CHECK(kv.bytes_per_token == 6 * 2 * 2 * 256 * 2);
  CHECK(kv.state_bytes_per_layer == (16 * 128 * 128 + 6144 * 3) * 2);
  CHECK(kv.state_bytes_per_sequence == 18 * kv.state_bytes_per_layer);
}

TEST_CASE("qwen3_5_moe: Qwen3.5-35B-A3B against the text, transformers and Hub totals", "[hf_config]") {
  const ModelSpec m = fixture("qwen3.5-35b-a3b");
  CHECK(m.family == "qwen3_5_moe");
  REQUIRE(m.num_layers() == 40);
  CHECK(m.num_attention_layers() == 10);
  for (const auto& l : m.layers) CHECK(l.moe());
  CHECK(m.moe.num_routed_experts == 256);
  CHECK(m.moe.top_k == 8);
  CHECK(shared_ffn_width(m.moe) == 512);
  CHECK(m.moe.shared_gate);
  CHECK_FALSE(m.tie_embeddings);
  const ParamCounts p = count_params(m);
  CHECK(p.total == 34'660'610'688);             // llama.cpp's n_params of the text model
  CHECK(p.total + p.vision == 35'107'181'936);  // Qwen3_5MoeForConditionalGeneration's parameters
  CHECK(p.vision == qwen3_5_vision(1152, 4304, 27, 2048));
  CHECK(p.total + p.vision + p.mtp == 35'951'822'704);  // the Hub's total adds the MTP layer
  // Active per token: 8 of the 256 experts.
  CHECK(p.active == p.total - 40LL * 248 * 3 * 2048 * 512);
}

TEST_CASE("qwen3_5: the shapes of Qwen3.6-27B, from Qwen3.5-0.8B's file", "[hf_config]") {
  // The text sizes of a registry's copy of the 27B's text_config (PUBLISHED.md) and its vision tower's
  // (as the 35B-A3B's, out_hidden_size the text width): the Hub's total with the MTP layer.
  const ModelSpec m = edited("qwen3.5-0.8b", [](nlohmann::json& j) {
    nlohmann::json& t = j["text_config"];
    t["hidden_size"] = 5120, t["intermediate_size"] = 17408, t["num_attention_heads"] = 24,
    t["num_key_value_heads"] = 4;
    t["linear_num_value_heads"] = 48, t["tie_word_embeddings"] = false, t["num_hidden_layers"] = 64;
    t.erase("layer_types");  // every fourth layer full_attention (full_attention_interval 4), as the file's
    j["tie_word_embeddings"] = false;
    nlohmann::json& v = j["vision_config"];
    v["depth"] = 27, v["hidden_size"] = 1152, v["intermediate_size"] = 4304, v["num_heads"] = 16,
    v["out_hidden_size"] = 5120;
  });
  CHECK(m.num_attention_layers() == 16);
  const ParamCounts p = count_params(m);
  CHECK(p.total + p.vision + p.mtp == 27'781'427'952);
}

TEST_CASE("qwen3_5: class defaults, the text-only types and what is refused", "[hf_config]") {
  // The language model alone (qwen3_5_text, Qwen3_5ForCausalLM) reads as the wrapper's, without the
  // vision tower; its own tie_word_embeddings ties the head.
  const ModelSpec wrapped = fixture("qwen3.5-0.8b");
  const ModelSpec text = edited("qwen3.5-0.8b", [](nlohmann::json& j) { j = j["text_config"]; });
  CHECK(text.family == "qwen3_5_text");
  CHECK(count_params(text).total == count_params(wrapped).total);
  CHECK(count_params(text).vision == 0);
  const ModelSpec moe_text = edited("qwen3.5-35b-a3b", [](nlohmann::json& j) { j = j["text_config"]; });
  CHECK(count_params(moe_text).total == 34'660'610'688);
  // Missing keys take the classes' defaults: an empty text_config is Qwen3_5TextConfig's model (4096
  // wide, 32 layers, 16 heads of 256 over 4 KV heads, 12288-wide FFN, 248320 tokens), an empty
  // vision_config Qwen3VLVisionConfig's tower (27 blocks of 1152, out_hidden_size 3584); the head is
  // untied unless the top level says so.
  const ModelSpec d = edited("qwen3.5-0.8b", [](nlohmann::json& j) {
    j["text_config"] = nlohmann::json::object();
    j["vision_config"] = nlohmann::json::object();
    j.erase("tie_word_embeddings");
  });
  CHECK(d.d_model == 4096);
  CHECK(d.num_layers() == 32);
  CHECK(d.num_attention_layers() == 8);
  CHECK(d.attention.num_q_heads == 16);
  CHECK(d.attention.num_kv_heads == 4);
  CHECK(d.attention.head_dim == 256);
  CHECK(d.ffn.ffn_dim == 12288);
  CHECK(d.vocab_size == 248320);
  CHECK(d.linear.num_v_heads == 32);
  CHECK_FALSE(d.tie_embeddings);
  CHECK(d.extra.mtp_modules == 0);
  CHECK(count_params(d).vision == qwen3_5_vision(1152, 4304, 27, 3584));
  // Bad sizes name the key under its sub-config.
  CHECK_THROWS_WITH(edited("qwen3.5-0.8b", [](nlohmann::json& j) { j["vision_config"]["depth"] = 0; }),
                    Catch::Contains("vision_config: depth = 0: must be positive"));
  CHECK_THROWS_WITH(edited("qwen3.5-0.8b", [](nlohmann::json& j) { j["text_config"]["mtp_num_hidden_layers"] = 25; }),
                    Catch::Contains("text_config: mtp_num_hidden_layers = 25: more than the model's 24 layers"));
  CHECK_THROWS_AS(edited("qwen3.5-0.8b", [](nlohmann::json& j) { j["vision_config"]["out_hidden_size"] = 1LL << 62; }),
                  OverflowError);
}
