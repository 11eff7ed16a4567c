// The mixture-of-experts and MLA families of hf_moe.cpp (DeepSeek, Qwen MoE, GPT-OSS,
// GLM-4.5, Llama 4, ERNIE 4.5, MiniMax-M2, Mixtral, FlexOlmo): layouts, defaults and counts on real config.json
// files.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/io.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("deepseek MLA caches the latent, MoE layout, V3 MTP reported separately", "[hf_config][kv]") {
  const ModelSpec lite = fixture("deepseek-v2-lite");
  CHECK(lite.attention.variant == AttentionVariant::mla);
  CHECK(lite.layers[0].moe() == false);  // first_k_dense_replace = 1
  CHECK(lite.layers[1].moe());
  Workload w;
  CHECK(count_kv_cache(lite, w).bytes_per_token == 31'104);  // (512 + 64) x 27 layers x 2 bytes

  const ModelSpec v3 = fixture("deepseek-v3");
  CHECK(v3.moe.router_bias);
  CHECK(v3.extra.mtp_modules == 1);
  const ParamCounts p = count_params(v3);
  // MTP: enorm + hnorm + eh_proj (14336 x 7168) + one MoE block + the shared head's norm.
  const std::int64_t block = 187'107'328 + 257LL * 3 * 7168 * 2048 + 256LL * 7168 + 256 + 2 * 7168;
  CHECK(p.mtp == 2 * 7168 + 14336LL * 7168 + block + 7168);
  CHECK(p.active == 37'552'297'472);  // "37B activated"
  CHECK(count_kv_cache(v3, w).bytes_per_token == 576 * 61 * 2);
}

TEST_CASE("mixtral: every layer sparse, 2 of 8 experts active", "[hf_config]") {
  const ParamCounts p = count_params(fixture("mixtral-8x7b"));
  CHECK(p.active == 12'879'925'248);  // "12.9B active"
  CHECK(p.router == 32LL * 8 * 4096);
}

TEST_CASE("deepseek: missing keys take the Config class defaults, nulls switch the part off", "[hf_config]") {
  const ParamCounts v3 = count_params(fixture("deepseek-v3"));
  // DeepSeek-V3's own values are DeepseekV3Config's defaults: erasing them changes nothing.
  const ModelSpec bare = edited("deepseek-v3", [](nlohmann::json& j) {
    for (const char* k : {"q_lora_rank", "n_routed_experts", "n_shared_experts", "moe_intermediate_size",
                          "num_experts_per_tok", "first_k_dense_replace"})
      j.erase(k);
  });
  CHECK(count_params(bare).total == v3.total);
  CHECK(count_params(bare).active == v3.active);
  // V2-Lite states q_lora_rank null (no query compression) and 64 experts; erased, the V2 class
  // defaults apply: q_lora_rank 1536, n_shared_experts 2 (as stated), 64 routed experts.
  const ModelSpec lite = fixture("deepseek-v2-lite");
  CHECK(lite.attention.mla.q_lora_rank == 0);
  const ModelSpec lite_q = edited("deepseek-v2-lite", [](nlohmann::json& j) { j.erase("q_lora_rank"); });
  CHECK(lite_q.attention.mla.q_lora_rank == 1536);
  const ModelSpec dense = edited("deepseek-v2-lite", [](nlohmann::json& j) { j["n_routed_experts"] = nullptr; });
  for (const auto& l : dense.layers) CHECK_FALSE(l.moe());
  CHECK_THROWS_WITH(edited("deepseek-v2-lite", [](nlohmann::json& j) { j.erase("num_experts_per_tok"); }),
                    Catch::Contains("num_experts_per_tok = (missing): required key is missing"));
}

TEST_CASE("deepseek attention_bias: q_a, kv_a and o projections, never q_proj", "[hf_config][counts]") {
  // V2-Lite has no query compression (q_lora_rank null): q_proj stays bias-free.
  const std::int64_t base = attention_params_per_layer(fixture("deepseek-v2-lite"));
  const ModelSpec biased = edited("deepseek-v2-lite", [](nlohmann::json& j) { j["attention_bias"] = true; });
  CHECK(attention_params_per_layer(biased) - base == (512 + 64) + 2048);  // kv_a_proj_with_mqa and o_proj
  // With compression (V3) the q_a_proj bias counts too.
  const std::int64_t v3 = attention_params_per_layer(fixture("deepseek-v3"));
  const ModelSpec v3b = edited("deepseek-v3", [](nlohmann::json& j) { j["attention_bias"] = true; });
  CHECK(attention_params_per_layer(v3b) - v3 == 1536 + (512 + 64) + 7168);
}

TEST_CASE("gpt-oss: sinks, biases everywhere, every layer sparse, windows of 128 on even layers", "[hf_config][kv]") {
  const ModelSpec g = fixture("gpt-oss-20b");
  const AttentionSpec& a = g.attention;
  CHECK(a.sinks);
  CHECK(a.q_bias);
  CHECK(a.o_bias);
  CHECK(a.head_dim == 64);  // 64 heads of 64 = 4096 != hidden_size 2880
  // q, k, v, o with biases, and a sink logit per head.
  CHECK(attention_params_per_layer(g) == 2880LL * 4096 + 4096 + 2 * (2880LL * 512 + 512) + 4096LL * 2880 + 2880 + 64);
  const ParamCounts p = count_params(g);
  // The card's split (Table 1): MLP 19.12B, attention 0.64B, active 3.61B counting the unembedding
  // but not the embedding.
  CHECK(std::llround(double(p.ffn + p.router) / 1e7) == 1912);
  CHECK(std::llround(double(p.attention) / 1e7) == 64);
  CHECK(std::llround(double(p.active - p.embedding) / 1e7) == 361);
  CHECK(p.router == 24LL * (32 * 2880 + 32));  // router weight and bias
  for (std::size_t i = 0; i < g.layers.size(); ++i) {
    CHECK(g.layers[i].moe());
    CHECK(g.layers[i].window() == (i % 2 == 0 ? 128 : 0));
  }
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(g, w);
  CHECK(kv.bytes_per_token == 24 * 8 * 128 * 2);
  CHECK(kv.layer_tokens == 12 * 128 + 12 * 131072);
  // Without layer_types the default alternation is the same; head_dim null falls back to hidden / heads.
  const ModelSpec no_types = edited("gpt-oss-20b", [](nlohmann::json& j) { j.erase("layer_types"); });
  for (std::size_t i = 0; i < no_types.layers.size(); ++i) CHECK(no_types.layers[i].window() == (i % 2 == 0 ? 128 : 0));
  CHECK(edited("gpt-oss-20b", [](nlohmann::json& j) { j["head_dim"] = nullptr; }).attention.head_dim == 45);
  CHECK(edited("gpt-oss-20b", [](nlohmann::json& j) { j.erase("head_dim"); }).attention.head_dim == 64);
}

TEST_CASE("qwen3_moe: sparse layers by decoder_sparse_step and mlp_only_layers, head_dim from the file", "[hf_config]") {
  const ModelSpec q = fixture("qwen3-30b-a3b");
  CHECK(q.attention.qk_norm);
  CHECK(q.attention.head_dim == 128);
  CHECK_FALSE(q.moe.router_bias);
  CHECK(q.moe.num_shared_experts == 0);
  const ParamCounts p = count_params(q);
  CHECK(p.active == 3'353'032'704);  // "3.3B activated"
  for (const auto& l : q.layers) CHECK(l.moe());
  // Qwen3MoeConfig has no head_dim default: the model falls back to hidden_size / heads.
  CHECK(edited("qwen3-30b-a3b", [](nlohmann::json& j) { j.erase("head_dim"); }).attention.head_dim == 64);
  // transformers v5 writes the expert count back as num_local_experts.
  const ModelSpec v5 = edited("qwen3-30b-a3b", [](nlohmann::json& j) {
    j["num_local_experts"] = j["num_experts"];
    j.erase("num_experts");
  });
  CHECK(count_params(v5).total == p.total);
  // Dense layers use intermediate_size; sparse ones need (i + 1) % decoder_sparse_step == 0.
  const ModelSpec mixed = edited("qwen3-30b-a3b", [](nlohmann::json& j) {
    j["mlp_only_layers"] = {0, 47};
    j["decoder_sparse_step"] = 2;
  });
  std::int64_t sparse = 0;
  for (std::size_t i = 0; i < mixed.layers.size(); ++i) {
    CHECK(mixed.layers[i].moe() == (i != 47 && (i + 1) % 2 == 0));
    sparse += mixed.layers[i].moe();
  }
  const std::int64_t moe_layer = 128LL * 3 * 2048 * 768 + 2048LL * 128, dense_layer = 3LL * 2048 * 6144;
  CHECK(count_params(mixed).total == p.total - (48 - sparse) * (moe_layer - dense_layer));
  CHECK_THROWS_WITH(edited("qwen3-30b-a3b", [](nlohmann::json& j) { j["mlp_only_layers"] = {48}; }),
                    Catch::Contains("mlp_only_layers[0] = 48: must be a layer index below 48"));
  // use_sliding_window windows every layer.
  const ModelSpec windowed = edited("qwen3-30b-a3b", [](nlohmann::json& j) {
    j["use_sliding_window"] = true;
    j["sliding_window"] = 4096;
  });
  for (const auto& l : windowed.layers) CHECK(l.window() == 4096);
}

TEST_CASE("qwen2_moe: a shared FFN of its own width behind a gate, q/k/v biases", "[hf_config]") {
  const ModelSpec q = fixture("qwen1.5-moe-a2.7b");
  CHECK(q.moe.num_shared_experts == 1);
  CHECK(shared_ffn_width(q.moe) == 5632);  // not num_shared x moe_intermediate_size (1408)
  CHECK(q.moe.shared_gate);
  CHECK(q.attention.q_bias);
  CHECK_FALSE(q.attention.o_bias);
  const ParamCounts p = count_params(q);
  // Router (60 experts) and the shared gate (one more output), per layer.
  CHECK(p.router == 24LL * 61 * 2048);
  CHECK(std::llround(double(p.active) / 1e8) == 27);  // "A2.7B"
  // Decode FLOPs per layer's FFN: router and gate, top 4 of 60 experts and the shared FFN.
  Workload w;
  const std::int64_t ffn = 2LL * 2048 * 61 + 2LL * 4 * 3 * 2048 * 1408 + 2LL * 3 * 2048 * 5632;
  CHECK(count_flops(q, w).decode_per_token.ffn == 24 * ffn);
}

TEST_CASE("glm4_moe: dense first layers, fused shared experts, the MTP layer beside the total", "[hf_config]") {
  const ModelSpec g = fixture("glm-4.5-air");
  CHECK(g.attention.q_bias);
  CHECK_FALSE(g.attention.o_bias);
  CHECK_FALSE(g.attention.qk_norm);
  CHECK(g.attention.head_dim == 128);  // 96 heads of 128 = 12288 != hidden_size 4096
  CHECK_FALSE(g.layers[0].moe());      // first_k_dense_replace 1
  CHECK(g.layers[1].moe());
  CHECK_FALSE(g.moe.router_bias);      // e_score_correction_bias is a buffer, not a parameter
  const ParamCounts p = count_params(g);
  CHECK(p.mtp == 2'375'059'456);
  // The Hub's checkpoint total adds the MTP layer, its own embedding and head copies and the routing
  // biases (45 MoE layers and the MTP block, 128 each).
  CHECK(p.total + p.mtp + 2LL * 151'552 * 4096 + 46 * 128 == 110'468'824'832);
  CHECK(std::llround(double(p.active - p.embedding - p.lm_head) / 1e9) == 12);  // "12B active"
  const ModelSpec big = fixture("glm-4.5");
  CHECK(big.attention.qk_norm);  // use_qk_norm
  CHECK(count_params(big).total + count_params(big).mtp + 2LL * 151'552 * 5120 + 90 * 160 == 358'337'791'296);
}

TEST_CASE("kimi_k2 is DeepSeek-V3's architecture with its own sizes", "[hf_config][kv]") {
  const ModelSpec k = fixture("kimi-k2-instruct");
  CHECK(k.family == "kimi_k2");
  CHECK(k.attention.variant == AttentionVariant::mla);
  CHECK(k.attention.num_q_heads == 64);
  CHECK(k.moe.num_routed_experts == 384);
  CHECK_FALSE(k.layers[0].moe());
  CHECK(k.layers[1].moe());
  CHECK(k.extra.mtp_modules == 0);
  CHECK(std::llround(double(count_params(k).active) / 1e9) == 33);  // "32B activated" + embedding and head
  Workload w;
  CHECK(count_kv_cache(k, w).bytes_per_token == 576 * 61 * 2);  // the same latent as DeepSeek-V3
}

namespace {
struct Llama4Checkpoint {
  const char* file;
  std::int64_t checkpoint;  // the Hub's total (PUBLISHED.md)
  std::int64_t text;        // the language model alone (third-party splits, PUBLISHED.md)
  std::int64_t experts;
  std::size_t moe_step;     // interleave_moe_layer_step
};

// One Llama 4 checkpoint: its totals, chunked and global layers, experts and the cache at a long context.
void check_llama4_checkpoint(const Llama4Checkpoint& c) {
  const std::int64_t h = 5120, expert = 3 * h * 8192, dense = 3 * h * 16384;
  INFO(c.file);
  const ModelSpec m = fixture(c.file);
  const ParamCounts p = count_params(m);
  CHECK(p.total == c.text);
  CHECK(p.total + p.vision == c.checkpoint);
  CHECK(p.vision == 871'932'416);
  CHECK(m.family == "llama4");
  CHECK(m.extra.vision.kind == VisionKind::llama4);
  CHECK_FALSE(m.attention.qk_norm);  // Llama4TextL2Norm has no weights
  CHECK(m.attention.head_dim == 128);
  CHECK(m.moe.num_routed_experts == c.experts);
  CHECK(shared_ffn_width(m.moe) == 8192);  // the shared expert is intermediate_size wide
  CHECK(m.ffn.ffn_dim == 16384);           // dense layers: intermediate_size_mlp
  std::int64_t sparse = 0;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    CHECK(m.layers[i].chunk() == ((i + 1) % 4 != 0 ? 8192 : 0));  // NoPE every fourth layer, global
    CHECK(m.layers[i].window() == 0);
    CHECK(m.layers[i].moe() == ((i + 1) % c.moe_step == 0));
    sparse += m.layers[i].moe();
  }
  // Active: the embedding, the head, attention and norms everywhere, one routed and the shared
  // expert (and the router) on sparse layers, the dense FFN elsewhere: "17B active".
  const std::int64_t attention_and_norms = 48 * (p.attention_per_layer + 2 * h) + h;
  CHECK(p.active == p.embedding + p.lm_head + attention_and_norms + sparse * (2 * expert + h * c.experts) +
                        (48 - sparse) * dense);
  CHECK(std::llround(double(p.active) / 1e9) == 17);
  // At a 131072-token context the 36 chunked layers hold 8192 tokens each.
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(m, w);
  CHECK(kv.layer_tokens == 36 * 8192 + 12 * 131072);
  CHECK(kv.bytes_per_token_beyond_window == 12 * 8 * 256 * 2);
}
}  // namespace

TEST_CASE("llama4: chunked RoPE layers with every fourth global, experts with a shared one, the vision encoder beside the total", "[hf_config][kv]") {
  const std::int64_t h = 5120, expert = 3 * h * 8192, dense = 3 * h * 16384;
  for (const Llama4Checkpoint& c : {Llama4Checkpoint{"llama-4-scout-17b-16e-instruct", 108'641'793'536, 107'769'861'120, 16, 1},
                                    Llama4Checkpoint{"llama-4-maverick-17b-128e-instruct", 401'583'781'376, 400'711'848'960, 128, 2}})
    check_llama4_checkpoint(c);
  // The text model alone (Llama4ForCausalLM) has no vision part.
  const nlohmann::json scout = nlohmann::json::parse(
      read_file(std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-4-scout-17b-16e-instruct.json", "fixture"));
  const ModelSpec text = spec_from_hf_config(scout["text_config"], "text");
  CHECK(text.family == "llama4_text");
  CHECK(count_params(text).total == 107'769'861'120);
  CHECK(count_params(text).vision == 0);
  // The layer pattern spelled out: no_rope_layers (1: RoPE, chunked), layer_types, or moe_layers.
  const ModelSpec rope_listed = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["no_rope_layers"] = std::vector<int>(48, 1);
    j["text_config"]["no_rope_layers"][0] = 0;
  });
  for (std::size_t i = 0; i < 48; ++i) CHECK(rope_listed.layers[i].chunk() == (i == 0 ? 0 : 8192));
  const ModelSpec empty_rope = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["no_rope_layers"] = nlohmann::json::array();  // empty: the interval, as in transformers
  });
  CHECK(empty_rope.layers[3].chunk() == 0);
  CHECK(empty_rope.layers[4].chunk() == 8192);
  const ModelSpec typed = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["layer_types"] = std::vector<std::string>(48, "full_attention");
    j["text_config"]["layer_types"][5] = "chunked_attention";
  });
  for (std::size_t i = 0; i < 48; ++i) CHECK(typed.layers[i].chunk() == (i == 5 ? 8192 : 0));
  const ModelSpec unchunked = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["attention_chunk_size"] = nullptr;
  });
  for (const auto& l : unchunked.layers) CHECK(l.full_attention());
  const ModelSpec dense_only = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["moe_layers"] = nlohmann::json::array();  // a list, even empty, replaces the interleave
  });
  for (const auto& l : dense_only.layers) CHECK_FALSE(l.moe());
  CHECK(count_params(dense_only).total == 107'769'861'120 - 48 * (16 * expert + h * 16 + expert - dense));
  const auto refused = [](const std::function<void(nlohmann::json&)>& edit) {
    return [edit] { edited("llama-4-scout-17b-16e-instruct", edit); };
  };
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["text_config"]["no_rope_layers"] = {1, 0}; })(),
                    Catch::Contains("text_config: no_rope_layers = [1,0]: must list 0 or 1 for each of 48 layers"));
  // A longer list is read up to the layers, and any non-zero entry means RoPE, as transformers reads it.
  const ModelSpec lenient = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["no_rope_layers"] = std::vector<int>(50, 2);
    j["text_config"]["no_rope_layers"][7] = 0;
  });
  for (std::size_t i = 0; i < 48; ++i) CHECK(lenient.layers[i].chunk() == (i == 7 ? 0 : 8192));
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["text_config"]["no_rope_layers"] = {1, -1}; })(),
                    Catch::Contains("text_config: no_rope_layers"));
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) {
                      j["text_config"]["layer_types"] = std::vector<std::string>(48, "sliding_attention");
                    })(),
                    Catch::Contains("text_config: layer_types[0] = \"sliding_attention\": unknown layer type "
                                    "(expected full_attention or chunked_attention)"));
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["text_config"]["moe_layers"] = {3, 48}; })(),
                    Catch::Contains("text_config: moe_layers[1] = 48: must be a layer index below 48"));
  CHECK_THROWS_WITH(refused([](nlohmann::json& j) { j["vision_config"]["projector_input_dim"] = 0; })(),
                    Catch::Contains("vision_config: projector_input_dim = 0: must be positive"));
  // Other families do not know chunked layers.
  CHECK_THROWS_WITH(edited("gemma-2-2b", [](nlohmann::json& j) {
                      j["layer_types"] = std::vector<std::string>(26, "chunked_attention");
                    }),
                    Catch::Contains("(expected full_attention or sliding_attention)"));
}

TEST_CASE("ernie4_5: head_dim 128 beside a 1024 hidden size, ernie4_5_moe: MoE layers by start, end and interval", "[hf_config]") {
  const ModelSpec e = fixture("ernie-4.5-0.3b-pt");
  CHECK(e.attention.head_dim == 128);  // not hidden_size / heads = 64
  CHECK(e.tie_embeddings);
  CHECK(count_params(e).attention_per_layer == 2LL * 1024 * 2048 + 2LL * 1024 * 256);
  // A missing head_dim is Ernie4_5Config's 128, a null one hidden_size / heads.
  CHECK(edited("ernie-4.5-0.3b-pt", [](nlohmann::json& j) { j.erase("head_dim"); }).attention.head_dim == 128);
  CHECK(edited("ernie-4.5-0.3b-pt", [](nlohmann::json& j) { j["head_dim"] = nullptr; }).attention.head_dim == 64);
  // use_bias: q, k, v, o and the MLP's gate, up and down.
  CHECK(count_params(edited("ernie-4.5-0.3b-pt", [](nlohmann::json& j) { j["use_bias"] = true; })).total - 360'748'032 ==
        18LL * (2048 + 2 * 256 + 1024 + 2 * 3072 + 1024));

  const ModelSpec moe = fixture("ernie-4.5-21b-a3b-pt");
  REQUIRE(moe.num_layers() == 28);
  CHECK_FALSE(moe.layers[0].moe());
  for (std::size_t i = 1; i < 28; ++i) CHECK(moe.layers[i].moe());
  CHECK(moe.attention.head_dim == 128);  // hidden_size / heads
  CHECK(moe.moe.top_k == 6);
  CHECK(shared_ffn_width(moe.moe) == 2 * 1536);
  const ParamCounts p = count_params(moe);
  // The router: 64 x 2560 and moe_statics' 64 correction biases, in each of the 27 sparse layers.
  CHECK(p.router == 27LL * (64 * 2560 + 64));
  // 21.83 B: the Hub's rounded "22B" (no exact figure found; PUBLISHED.md).
  CHECK(p.total == 21'825'437'888);
  CHECK(p.total - p.active == 27LL * (64 - 6) * 3 * 2560 * 1536);
  // start, end (-1: the last layer) and interval.
  const ModelSpec every_other = edited("ernie-4.5-21b-a3b-pt", [](nlohmann::json& j) {
    j["moe_layer_start_index"] = 3;
    j["moe_layer_end_index"] = -1;
    j["moe_layer_interval"] = 2;
  });
  for (std::size_t i = 0; i < 28; ++i) CHECK(every_other.layers[i].moe() == (i >= 3 && (i + 1) % 2 == 0));
  const ModelSpec ended = edited("ernie-4.5-21b-a3b-pt", [](nlohmann::json& j) { j["moe_layer_end_index"] = 9; });
  for (std::size_t i = 0; i < 28; ++i) CHECK(ended.layers[i].moe() == (i >= 1 && i <= 9));
  CHECK_THROWS_WITH(edited("ernie-4.5-21b-a3b-pt", [](nlohmann::json& j) { j["moe_layer_end_index"] = -2; }),
                    Catch::Contains("moe_layer_end_index = -2: must be a layer index or -1 (the last layer)"));
  // No shared experts when the file says 0 (the class default is 2).
  CHECK(shared_ffn_width(edited("ernie-4.5-21b-a3b-pt", [](nlohmann::json& j) { j["moe_num_shared_experts"] = 0; }).moe) == 0);
}

TEST_CASE("minimax_m2: full-width q/k norms, head_dim 128, 256 experts on every layer, no MTP counted", "[hf_config][kv]") {
  const ModelSpec m = fixture("minimax-m2.7");
  CHECK(m.attention.head_dim == 128);  // hidden_size / heads would be 64
  CHECK(m.attention.qk_norm_full_width);
  CHECK(count_params(m).attention_per_layer == 2LL * 3072 * 6144 + 2LL * 3072 * 1024 + 6144 + 1024);
  for (const auto& l : m.layers) {
    CHECK(l.moe());
    CHECK(l.full_attention());
  }
  CHECK(m.moe.num_shared_experts == 0);
  CHECK_FALSE(m.moe.router_bias);
  CHECK(m.extra.mtp_modules == 0);  // num_mtp_modules 3: none in the checkpoint
  const ParamCounts p = count_params(m);
  CHECK(p.total - p.active == 62LL * (256 - 8) * 3 * 3072 * 1536);
  Workload w;
  w.context = 196608;
  CHECK(count_kv_cache(m, w).bytes_per_token == 62 * 2 * 8 * 128 * 2);
  // The legacy key has no weights; lightning-attention layers are refused by name (they are minimax's).
  CHECK(count_params(edited("minimax-m2.7", [](nlohmann::json& j) { j["mlp_intermediate_size"] = 8192; })).total == p.total);
  CHECK_THROWS_WITH(edited("minimax-m2.7", [](nlohmann::json& j) { j["attn_type_list"][0] = 0; }),
                    Catch::Contains("attn_type_list[0] = 0: MiniMax-M2's layers are softmax attention (1)"));
}

TEST_CASE("glm4_moe_lite: DeepSeek-V3's MLA in GLM-4.5's MoE layers, the MTP layer beside the total", "[hf_config][kv]") {
  const ModelSpec g = fixture("glm-4.7-flash");
  CHECK(g.attention.variant == AttentionVariant::mla);
  CHECK(g.attention.mla.q_lora_rank == 768);
  CHECK(g.attention.head_dim == 192 + 64);
  CHECK(g.attention.v_head_dim == 256);
  CHECK_FALSE(g.layers[0].moe());  // first_k_dense_replace 1
  CHECK(g.layers[1].moe());
  CHECK_FALSE(g.moe.router_bias);  // Glm4MoeTopkRouter: e_score_correction_bias is a buffer
  CHECK(g.extra.mtp_modules == 1);
  const ParamCounts p = count_params(g);
  // q_a, q_a norm, q_b (20 x 256), kv_a with the RoPE key, kv_a norm, kv_b (20 x (192 + 256)), o.
  CHECK(p.attention_per_layer ==
        2048LL * 768 + 768 + 768LL * 5120 + 2048LL * 576 + 512 + 512LL * 8960 + 5120LL * 2048);
  // The checkpoint's 31,221,488,576 (PUBLISHED.md) adds the MTP layer with its own embedding and head
  // copies, and the routing biases of 46 MoE layers and the MTP block.
  CHECK(p.total + p.mtp + 2LL * 154'880 * 2048 + 47 * 64 == 31'221'488'576);
  Workload w;
  CHECK(count_kv_cache(g, w).bytes_per_token == 47 * (512 + 64) * 2);
  // mlp_layer_types, where a file gives it, says which layers are sparse.
  const ModelSpec typed = edited("glm-4.7-flash", [](nlohmann::json& j) {
    std::vector<std::string> t(47, "sparse");
    t[0] = t[1] = "dense";
    j["mlp_layer_types"] = t;
  });
  CHECK_FALSE(typed.layers[1].moe());
  CHECK_THROWS_WITH(edited("glm-4.7-flash", [](nlohmann::json& j) { j["mlp_layer_types"] = {"dense"}; }),
                    Catch::Contains("mlp_layer_types = [\"dense\"]: must be a list of 47"));
}

TEST_CASE("flex_olmo: OLMoE's experts on every layer with OLMo 2's attention and post-norms", "[hf_config][kv]") {
  const ModelSpec m = fixture("flexolmo-7x7b-1t");
  const ParamCounts p = count_params(m);
  const std::int64_t h = 4096, f = 11008, vocab = 100352, layers = 32, experts = 7;
  CHECK(m.family == "flex_olmo");
  CHECK(m.attention.variant == AttentionVariant::mha);
  CHECK(m.attention.qk_norm_full_width);
  CHECK(m.moe.num_routed_experts == experts);
  CHECK(m.moe.top_k == 7);
  for (const auto& l : m.layers) CHECK(l.moe());
  // q, k, v and o with q_norm and k_norm over all 32 heads; seven gated experts and the router; two norms.
  CHECK(p.attention_per_layer == 4 * h * h + 2 * h);
  CHECK(p.total == 2 * vocab * h + layers * (p.attention_per_layer + experts * (3 * h * f + h) + 2 * h) + h);
  CHECK(p.total == 33'270'665'216);  // the checkpoint index's total_parameters
  CHECK(p.active == p.total);        // num_experts_per_tok 7: every expert runs
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == layers * 2 * h * 2);
  // OLMoE's count: its pre-norms and FlexOlmo's post-norms hold the same weights.
  const ModelSpec olmoe = edited("flexolmo-7x7b-1t", [](nlohmann::json& j) { j["model_type"] = "olmoe"; });
  CHECK(count_params(olmoe).total == p.total);
  // Flex-reddit-2x7B-1T: the public expert and one more, both active; its float32 shards' total_size,
  // 46,509,604,864 bytes, is four per parameter.
  const ModelSpec pair = edited("flexolmo-7x7b-1t", [](nlohmann::json& j) {
    j["num_experts"] = 2;
    j["num_experts_per_tok"] = 2;
  });
  CHECK(4 * count_params(pair).total == 46'509'604'864);
  // FlexOlmoConfig's defaults: 7 experts, top 5; v5's num_local_experts names the experts too.
  const ModelSpec defaults = edited("flexolmo-7x7b-1t", [](nlohmann::json& j) {
    j.erase("num_experts_per_tok");
    j.erase("num_experts");
    j.erase("vocab_size");
    j.erase("intermediate_size");
  });
  CHECK(count_params(defaults).total == p.total);
  CHECK(count_params(defaults).active == p.total - layers * 2 * 3 * h * f);
  const ModelSpec v5 = edited("flexolmo-7x7b-1t", [](nlohmann::json& j) {
    j.erase("num_experts");
    j["num_local_experts"] = 8;
  });
  CHECK(v5.moe.num_routed_experts == 8);
  CHECK_THROWS_WITH(edited("flexolmo-7x7b-1t", [](nlohmann::json& j) { j["num_experts"] = 0; }),
                    Catch::Contains("num_experts = 0"));
  CHECK_THROWS_WITH(edited("flexolmo-7x7b-1t", [](nlohmann::json& j) { j["num_experts"] = 4; }),
                    Catch::Contains("num_experts_per_tok = 7: must not exceed num_experts = 4"));
}
