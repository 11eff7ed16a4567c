// The dense decoder families of hf_dense.cpp: each family's implicit behaviour (windows, biases, norms,
// q/k norms, multimodal Gemma 3) on its real config.json.
#include <catch2/catch.hpp>

#include <cmath>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("falcon layouts: 7B multi-query with one shared norm, 40B new decoder architecture", "[hf_config]") {
  const ModelSpec f7 = fixture("falcon-7b");
  CHECK(f7.attention.variant == AttentionVariant::mqa);
  CHECK(f7.attention.num_kv_heads == 1);
  CHECK(f7.norm.per_layer == 1);
  CHECK(f7.norm.kind == NormKind::layernorm);
  CHECK(f7.ffn.kind == FfnKind::plain);
  CHECK(f7.ffn.ffn_dim == 4 * 4544);
  // No published exact count was found; this is the count of the module tree (see PUBLISHED.md):
  // per layer 4544 x (71 + 2) x 64 fused QKV + 4544^2 dense + 2 x 4544 x 18176 MLP + one LayerNorm.
  const std::int64_t per_layer = 4544LL * 73 * 64 + 4544LL * 4544 + 2LL * 4544 * 18176 + 2 * 4544;
  CHECK(count_params(f7).total == 32 * per_layer + 65024LL * 4544 + 2 * 4544);
  // The RefinedWebModel keys (n_head, n_layer) give the same model.
  CHECK(count_params(fixture("falcon-7b-refinedweb")).total == count_params(f7).total);

  const ModelSpec f40 = fixture("falcon-40b");
  CHECK(f40.attention.num_q_heads == 128);
  CHECK(f40.attention.num_kv_heads == 8);
  CHECK(f40.norm.per_layer == 2);  // ln_attn and ln_mlp
  const std::int64_t layer40 = 8192LL * (128 + 16) * 64 + 8192LL * 8192 + 2LL * 8192 * 32768 + 2 * 2 * 8192;
  CHECK(count_params(f40).total == 60 * layer40 + 65024LL * 8192 + 2 * 8192);
}

TEST_CASE("qwen2 has q/k/v biases and ignores a declared window when use_sliding_window is false", "[hf_config]") {
  const ModelSpec q = fixture("qwen2.5-7b");
  CHECK(q.attention.q_bias);
  CHECK(q.attention.k_bias);
  CHECK(q.attention.v_bias);
  CHECK_FALSE(q.attention.o_bias);
  for (const auto& l : q.layers) CHECK(l.window() == 0);
  Workload w;
  w.context = 131072;
  CHECK(count_kv_cache(q, w).layer_tokens == 28 * 131072);
}

TEST_CASE("qwen2 with use_sliding_window windows the layers from max_window_layers on", "[hf_config]") {
  nlohmann::json j = nlohmann::json::parse(R"({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
    "use_sliding_window": true, "sliding_window": 4096, "max_window_layers": 21, "tie_word_embeddings": true})");
  const ModelSpec m = spec_from_hf_config(j, "inline");
  for (int i = 0; i < 24; ++i) CHECK(m.layers[i].window() == (i >= 21 ? 4096 : 0));
}

TEST_CASE("mistral v0.1 caps every layer at its window, v0.3 declares none", "[hf_config][kv]") {
  Workload w;
  w.context = 32768;
  const KvCacheCounts v1 = count_kv_cache(fixture("mistral-7b-v0.1"), w);
  CHECK(v1.layer_tokens == 32 * 4096);  // 4096 tokens per layer
  CHECK(v1.bytes_total == 32LL * 4096 * 131072 / 32);
  CHECK(v1.bytes_per_token_beyond_window == 0);
  const KvCacheCounts v3 = count_kv_cache(fixture("mistral-7b-v0.3"), w);
  CHECK(v3.layer_tokens == 32 * 32768);
}

TEST_CASE("gemma2 caps only its sliding (even) layers", "[hf_config][kv]") {
  const ModelSpec g = fixture("gemma-2-9b");
  CHECK(g.norm.per_layer == 4);
  CHECK(g.attention.head_dim == 256);
  for (std::size_t i = 0; i < g.layers.size(); ++i) CHECK(g.layers[i].window() == (i % 2 == 0 ? 4096 : 0));
  Workload w;
  w.context = 32768;
  const KvCacheCounts kv = count_kv_cache(g, w);
  CHECK(kv.layer_tokens == 21 * 4096 + 21 * 32768);
  // 8 KV heads x (256 + 256) x 2 bytes per layer; half the layers grow past the window.
  CHECK(kv.bytes_per_token == 42 * 8 * 512 * 2);
  CHECK(kv.bytes_per_token_beyond_window == 21 * 8 * 512 * 2);
}

TEST_CASE("gemma head_dim differs from d_model / heads", "[hf_config]") {
  const ModelSpec g = fixture("gemma-7b");
  CHECK(g.d_model == 3072);
  CHECK(g.attention.num_q_heads == 16);
  CHECK(g.attention.head_dim == 256);  // 16 x 256 = 4096 != 3072
  CHECK(g.tie_embeddings);
}

TEST_CASE("qwen3 adds per-head q/k norms and no biases", "[hf_config]") {
  const ModelSpec q = fixture("qwen3-8b");
  CHECK(q.attention.qk_norm);
  CHECK_FALSE(q.attention.q_bias);
  // q, k, v, o projections plus q_norm and k_norm over head_dim 128.
  CHECK(attention_params_per_layer(q) == 4096LL * 4096 + 2 * 4096LL * 1024 + 4096LL * 4096 + 2 * 128);
}

TEST_CASE("phi3 honours its declared sliding window", "[hf_config][kv]") {
  const ModelSpec p = fixture("phi-3-mini-4k-instruct");
  for (const auto& l : p.layers) CHECK(l.window() == 2047);
}

TEST_CASE("layer_types: read where the Config class reads it, a sliding layer without a window is full", "[hf_config][kv]") {
  // MistralConfig ignores layer_types (transformers warns): the window stays on every layer.
  const ModelSpec mistral = edited("mistral-7b-v0.1", [](nlohmann::json& j) {
    j["layer_types"] = std::vector<std::string>(32, "full_attention");
  });
  for (const auto& l : mistral.layers) CHECK(l.window() == 4096);
  // Qwen2 without use_sliding_window sets sliding_window None: "sliding" layers attend to everything.
  const ModelSpec qwen = edited("qwen2.5-7b", [](nlohmann::json& j) {
    j["layer_types"] = std::vector<std::string>(28, "sliding_attention");
  });
  for (const auto& l : qwen.layers) CHECK(l.window() == 0);
  // Gemma2 with sliding_window null: no layer is windowed.
  const ModelSpec gemma = edited("gemma-2-9b", [](nlohmann::json& j) { j["sliding_window"] = nullptr; });
  for (const auto& l : gemma.layers) CHECK(l.window() == 0);
}

TEST_CASE("gemma3 multimodal: the language model is the total, the SigLIP encoder and projector beside it", "[hf_config]") {
  struct Case {
    const char* file;
    std::int64_t checkpoint;  // Gemma3ForConditionalGeneration's published count (PUBLISHED.md)
    std::int64_t keras_text;  // KerasHub's text-only preset, built with vocab 262144
    std::int64_t d_model;
  };
  for (const Case c : {Case{"gemma-3-4b-pt", 4'300'079'472, 3'880'099'328, 2560},
                       Case{"gemma-3-12b-pt", 12'187'325'040, 11'765'788'416, 3840},
                       Case{"gemma-3-27b-it", 27'432'406'640, 27'009'002'240, 5376}}) {
    INFO(c.file);
    const ModelSpec m = fixture(c.file);
    const ParamCounts p = count_params(m);
    CHECK(m.vocab_size == 262'208);  // text_config leaves it out: Gemma3TextConfig's default
    CHECK(p.total == c.keras_text + (262'208 - 262'144) * c.d_model);
    CHECK(p.total + p.vision == c.checkpoint);
    CHECK(p.active == p.total);
    // SigLIP So400m/14 at 896 px: patch conv, 4096 positions, 27 layers, post-norm; no pooling head.
    CHECK(p.vision == 416'866'032 + 1152 * c.d_model + 1152);
  }
  const ModelSpec g4 = fixture("gemma-3-4b-pt");
  CHECK(g4.attention.num_q_heads == 8);  // the 4B's text_config leaves the heads to the defaults too
  CHECK(g4.attention.num_kv_heads == 4);
  CHECK(g4.attention.head_dim == 256);
  // A pooling head (vision_use_head missing: SiglipVisionConfig's default) adds a probe, an attention
  // (in_proj 3h x h, out_proj, biases), a LayerNorm and an MLP.
  const ModelSpec pooled = edited("gemma-3-4b-pt", [](nlohmann::json& j) { j["vision_config"].erase("vision_use_head"); });
  const std::int64_t h = 1152, f = 4304;
  CHECK(count_params(pooled).vision - count_params(g4).vision == h + 4 * (h * h + h) + 2 * h + 2 * h * f + f + h);
}

TEST_CASE("gemma3 layers slide except every sixth, with q/k norms and four norms per layer", "[hf_config][kv]") {
  const ModelSpec g = fixture("gemma-3-1b-it");  // sliding_window_pattern 6, window 512
  CHECK(g.attention.qk_norm);
  CHECK(g.norm.per_layer == 4);
  CHECK(g.tie_embeddings);
  for (std::size_t i = 0; i < g.layers.size(); ++i) CHECK(g.layers[i].window() == ((i + 1) % 6 == 0 ? 0 : 512));
  Workload w;
  w.context = 32768;
  CHECK(count_kv_cache(g, w).layer_tokens == 22 * 512 + 4 * 32768);
  // The 270M spells the same pattern out as layer_types.
  const ModelSpec small = fixture("gemma-3-270m");
  for (std::size_t i = 0; i < small.layers.size(); ++i) CHECK(small.layers[i].window() == ((i + 1) % 6 == 0 ? 0 : 512));
  // Another pattern, and EmbeddingGemma's bidirectional encoder, which has no causal decode.
  const ModelSpec every_third = edited("gemma-3-1b-it", [](nlohmann::json& j) { j["sliding_window_pattern"] = 3; });
  for (std::size_t i = 0; i < every_third.layers.size(); ++i)
    CHECK(every_third.layers[i].window() == ((i + 1) % 3 == 0 ? 0 : 512));
  CHECK_THROWS_WITH(edited("gemma-3-270m", [](nlohmann::json& j) { j["use_bidirectional_attention"] = true; }),
                    Catch::Contains("use_bidirectional_attention = true: a bidirectional encoder"));
}

TEST_CASE("glm4: q/k/v biases by default, o without, four norms per layer", "[hf_config]") {
  const ModelSpec g = fixture("glm-4-9b-0414");
  CHECK(g.attention.q_bias);
  CHECK(g.attention.v_bias);
  CHECK_FALSE(g.attention.o_bias);
  CHECK(g.norm.per_layer == 4);
  CHECK(g.attention.num_kv_heads == 2);
  // q, o (32 x 128), k, v (2 x 128) and their biases.
  CHECK(count_params(g).attention_per_layer == 2LL * 4096 * 4096 + 2LL * 4096 * 256 + 4096 + 2 * 256);
  // attention_bias missing takes Glm4Config's true; false drops the q/k/v biases only.
  CHECK(count_params(edited("glm-4-9b-0414", [](nlohmann::json& j) { j.erase("attention_bias"); })).total == 9'400'279'040);
  CHECK(count_params(g).total - count_params(edited("glm-4-9b-0414", [](nlohmann::json& j) { j["attention_bias"] = false; })).total ==
        40LL * (4096 + 2 * 256));
  // The 32B (no biases, 61 layers of 48/2 heads): "32.57 B" in a GGUF load log (PUBLISHED.md).
  const std::int64_t big = count_params(fixture("glm-4-32b-0414")).total;
  CHECK(big == 32'566'081'536);
  CHECK(std::llround(double(big) / 1e7) == 3257);
}

TEST_CASE("olmo2 and olmoe: q/k norms over every head's width", "[hf_config]") {
  const ModelSpec o7 = fixture("olmo-2-1124-7b");
  CHECK(o7.attention.qk_norm);
  CHECK(o7.attention.qk_norm_full_width);
  CHECK_FALSE(o7.tie_embeddings);
  // MHA 32 x 128: q, k, v, o and the two norms of 32 x 128 weights each.
  CHECK(count_params(o7).attention_per_layer == 4LL * 4096 * 4096 + 2 * 4096);
  const ModelSpec o32 = fixture("olmo-2-0325-32b");  // GQA 40/8: k_norm is 8 x 128 wide
  CHECK(count_params(o32).attention_per_layer == 2LL * 5120 * 5120 + 2LL * 5120 * 1024 + 5120 + 1024);
  const ModelSpec moe = fixture("olmoe-1b-7b-0924");
  CHECK(moe.attention.qk_norm_full_width);
  CHECK(moe.moe.num_routed_experts == 64);
  CHECK(moe.moe.top_k == 8);
  CHECK(moe.moe.num_shared_experts == 0);
  CHECK_FALSE(moe.moe.router_bias);
  for (const auto& l : moe.layers) CHECK(l.moe());
  const ParamCounts p = count_params(moe);
  CHECK(p.total - p.active == 16LL * (64 - 8) * 3 * 2048 * 1024);
  CHECK(std::llround(double(p.active) / 1e8) == 13);  // "1.3B active"
}

TEST_CASE("olmo3: OLMo 2's layer, three 4096-token sliding layers to one global", "[hf_config][kv]") {
  const ModelSpec o = fixture("olmo-3-1125-32b");
  CHECK(o.attention.qk_norm_full_width);
  CHECK(o.attention.num_kv_heads == 8);
  CHECK(count_params(o).attention_per_layer == 2LL * 5120 * 5120 + 2LL * 5120 * 1024 + 5120 + 1024);
  for (std::size_t i = 0; i < o.layers.size(); ++i) CHECK(o.layers[i].window() == ((i + 1) % 4 != 0 ? 4096 : 0));
  Workload w;
  w.context = 65536;
  const KvCacheCounts kv = count_kv_cache(o, w);
  CHECK(kv.layer_tokens == 48 * 4096 + 16 * 65536);
  CHECK(kv.bytes_per_token_beyond_window == 16LL * 2 * 8 * 128 * 2);  // only the 16 global layers grow
  // Without layer_types Olmo3Config's fixed pattern gives the same layers; a null window none.
  const ModelSpec implicit = edited("olmo-3-1125-32b", [](nlohmann::json& j) { j.erase("layer_types"); });
  for (std::size_t i = 0; i < o.layers.size(); ++i) CHECK(implicit.layers[i].window() == o.layers[i].window());
  const ModelSpec unwindowed = edited("olmo-3-1025-7b", [](nlohmann::json& j) {
    j.erase("layer_types");
    j["sliding_window"] = nullptr;
  });
  for (const auto& l : unwindowed.layers) CHECK(l.full_attention());
  // The same parameters as OLMo 2's layer: only the vocabulary differs from OLMo-2-7B.
  CHECK(count_params(fixture("olmo-2-1124-7b")).total - count_params(fixture("olmo-3-1025-7b")).total == 2LL * (100352 - 100278) * 4096);
}

TEST_CASE("gpt_neox: fused biased attention, a plain biased MLP, LayerNorms, untied", "[hf_config]") {
  const ModelSpec p160 = fixture("pythia-160m");
  const AttentionSpec& a = p160.attention;
  CHECK(a.variant == AttentionVariant::mha);
  CHECK(a.head_dim == 64);
  CHECK((a.q_bias && a.k_bias && a.v_bias && a.o_bias));  // attention_bias: the class default, true
  CHECK(p160.ffn.kind == FfnKind::plain);
  CHECK(p160.ffn.bias);
  CHECK(p160.norm.kind == NormKind::layernorm);
  const ParamCounts p = count_params(p160);
  CHECK(p.total - p.embedding - p.lm_head == 85'056'000);  // the Pythia table's non-embedding column
  const ModelSpec unbiased = edited("pythia-160m", [](nlohmann::json& j) { j["attention_bias"] = false; });
  CHECK(p.total - count_params(unbiased).total == 12 * (3 * 768 + 768));
  CHECK_THROWS_WITH(edited("pythia-160m", [](nlohmann::json& j) { j["num_attention_heads"] = 7; }),
                    Catch::Contains("num_attention_heads = 7: must divide hidden_size = 768"));
}

TEST_CASE("starcoder2: tied unless the file says not, biases with use_bias, a window on every layer", "[hf_config][kv]") {
  const ModelSpec s3 = fixture("starcoder2-3b");
  CHECK(s3.tie_embeddings);  // no tie_word_embeddings key: Starcoder2Config's true
  CHECK(count_params(s3).total == 3'030'371'328);  // "3.03B"; 4 bytes each: the 12.1 GB float32 file
  CHECK(s3.attention.num_kv_heads == 2);
  for (const auto& l : s3.layers) CHECK(l.window() == 4096);
  Workload w;
  w.context = 16384;
  CHECK(count_kv_cache(s3, w).layer_tokens == 30 * 4096);
  CHECK_FALSE(fixture("starcoder2-15b").tie_embeddings);
  const ModelSpec plain = edited("starcoder2-3b", [](nlohmann::json& j) { j["use_bias"] = false; });
  CHECK_FALSE(plain.ffn.bias);
  CHECK_FALSE(plain.attention.q_bias);
  // q, k, v, o and the MLP's biases go; the LayerNorms keep theirs.
  CHECK(count_params(s3).total - count_params(plain).total == 30LL * (3072 + 2 * 256 + 3072 + 12288 + 3072));
}

TEST_CASE("smollm3 and granite: Llama's layout with their own defaults", "[hf_config][kv]") {
  const ModelSpec s = fixture("smollm3-3b");
  CHECK(s.tie_embeddings);
  CHECK(s.attention.num_kv_heads == 4);
  for (const auto& l : s.layers) CHECK(l.full_attention());  // NoPE layers differ in RoPE only
  // use_sliding_window slides the layers without RoPE (every fourth), as SmolLM3Config's layer_types do.
  const ModelSpec slid = edited("smollm3-3b", [](nlohmann::json& j) {
    j["use_sliding_window"] = true;
    j["sliding_window"] = 2048;
    j.erase("layer_types");
  });
  for (std::size_t i = 0; i < slid.layers.size(); ++i) CHECK(slid.layers[i].window() == ((i + 1) % 4 == 0 ? 2048 : 0));
  const ModelSpec g = fixture("granite-3.1-8b-instruct");
  CHECK(g.tie_embeddings);
  CHECK(count_params(g).total == 8'170'848'256);  // "8.1B"; the 2B's count is published exactly
  const ModelSpec biased = edited("granite-3.1-2b-instruct", [](nlohmann::json& j) {
    j["attention_bias"] = true;
    j["mlp_bias"] = true;
  });
  // q, k, v, o biases (2048 + 2 x 512 + 2048) and the MLP's (2 x 8192 + 2048), 40 layers.
  CHECK(count_params(biased).total - 2'533'531'648 == 40LL * (2048 + 1024 + 2048 + 2 * 8192 + 2048));
}

TEST_CASE("exaone4: q/k norms over head_dim, three sliding layers to one global from layer_types or the pattern", "[hf_config][kv]") {
  const ModelSpec e = fixture("exaone-4.0-32b");
  CHECK(e.attention.qk_norm);
  CHECK_FALSE(e.attention.qk_norm_full_width);
  CHECK_FALSE(e.attention.q_bias);
  CHECK(e.norm.per_layer == 2);
  for (std::size_t i = 0; i < e.layers.size(); ++i) CHECK(e.layers[i].window() == ((i + 1) % 4 != 0 ? 4096 : 0));
  Workload w;
  w.context = 131072;
  CHECK(count_kv_cache(e, w).layer_tokens == 48 * 4096 + 16 * 131072);
  // Without layer_types: the pattern, as a count or as the files' "LLLG", gives the same layers.
  const ModelSpec counted = edited("exaone-4.0-32b", [](nlohmann::json& j) {
    j.erase("layer_types");
    j["sliding_window_pattern"] = 4;
  });
  const ModelSpec spelled = edited("exaone-4.0-32b", [](nlohmann::json& j) { j.erase("layer_types"); });
  const ModelSpec gl = edited("exaone-4.0-32b", [](nlohmann::json& j) {
    j.erase("layer_types");
    j["sliding_window_pattern"] = "LG";
  });
  for (std::size_t i = 0; i < e.layers.size(); ++i) {
    CHECK(counted.layers[i].window() == e.layers[i].window());
    CHECK(spelled.layers[i].window() == e.layers[i].window());
    CHECK(gl.layers[i].window() == (i % 2 == 0 ? 4096 : 0));
  }
  CHECK_THROWS_WITH(edited("exaone-4.0-32b", [](nlohmann::json& j) {
                      j.erase("layer_types");
                      j["sliding_window_pattern"] = "LLXG";
                    }),
                    Catch::Contains("sliding_window_pattern") && Catch::Contains("LLXG"));
  // The 1.2B: a null window, every layer global, the head tied.
  const ModelSpec small = fixture("exaone-4.0-1.2b");
  CHECK(small.tie_embeddings);
  for (const auto& l : small.layers) CHECK(l.full_attention());
  CHECK(edited("exaone-4.0-1.2b", [](nlohmann::json& j) { j.erase("layer_types"); }).layers[3].full_attention());
  // Attention: q, o (32 heads of 64), k, v (8) and two head_dim-wide norms; two post-norms per layer.
  CHECK(count_params(small).attention == 30LL * (2 * 2048 * 32 * 64 + 2 * 2048 * 8 * 64 + 2 * 64));
  CHECK(count_params(small).norms == 30LL * 2 * 2048 + 2048);
}

TEST_CASE("cohere and cohere2: one LayerNorm without bias per parallel block, cohere2's windows", "[hf_config][kv]") {
  const ModelSpec r = fixture("c4ai-command-r-v01");
  CHECK(r.norm.kind == NormKind::layernorm_no_bias);
  CHECK(r.norm.per_layer == 1);
  CHECK(r.tie_embeddings);
  CHECK(count_params(r).norms == 41 * 8192);  // one weight-only norm per layer and the final one
  CHECK(count_params(r).total == 34'980'831'232);  // "35B"
  // use_qk_norm (Command R+): q and k norms over every head's width, weights only.
  const ModelSpec qk = edited("c4ai-command-r-v01", [](nlohmann::json& j) { j["use_qk_norm"] = true; });
  CHECK(count_params(qk).total - count_params(r).total == 40LL * (64 + 64) * 128);
  const ModelSpec r7 = fixture("c4ai-command-r7b-12-2024");
  for (std::size_t i = 0; i < r7.layers.size(); ++i) CHECK(r7.layers[i].window() == ((i + 1) % 4 != 0 ? 4096 : 0));
  // head_dim is hidden_size / heads whatever the file says.
  CHECK(edited("c4ai-command-r7b-12-2024", [](nlohmann::json& j) { j["head_dim"] = 96; }).attention.head_dim == 128);
  Workload w;
  w.context = 131072;
  CHECK(count_kv_cache(r7, w).layer_tokens == 24 * 4096 + 8 * 131072);
}

TEST_CASE("phi: biases everywhere, one LayerNorm per block, an LM head with a bias even when tied", "[hf_config]") {
  const ModelSpec p2 = fixture("phi-2");
  CHECK(p2.lm_head_bias);
  CHECK(p2.norm.kind == NormKind::layernorm);
  CHECK(p2.norm.per_layer == 1);
  CHECK(p2.ffn.kind == FfnKind::plain);
  const ParamCounts p = count_params(p2);
  CHECK(p.lm_head == 51200LL * 2560 + 51200);
  const ModelSpec tied = edited("phi-2", [](nlohmann::json& j) { j["tie_word_embeddings"] = true; });
  CHECK(count_params(tied).lm_head == 51200);  // the bias stays
  // qk_layernorm: LayerNorms (weight and bias) over head_dim on q and k.
  const ModelSpec qk = edited("phi-2", [](nlohmann::json& j) { j["qk_layernorm"] = true; });
  CHECK(count_params(qk).total - p.total == 32 * 4 * 80);
}

TEST_CASE("seed_oss: biases on q, k and v, on o only with attention_out_bias", "[hf_config]") {
  const ModelSpec s = fixture("seed-oss-36b-instruct");
  CHECK((s.attention.q_bias && s.attention.k_bias && s.attention.v_bias));
  CHECK_FALSE(s.attention.o_bias);
  CHECK(s.attention.head_dim == 128);  // 80 x 128 = 10240, twice hidden_size
  const ModelSpec out = edited("seed-oss-36b-instruct", [](nlohmann::json& j) { j["attention_out_bias"] = true; });
  CHECK(count_params(out).total - count_params(s).total == 64 * 5120);
  const ModelSpec plain = edited("seed-oss-36b-instruct", [](nlohmann::json& j) { j.erase("attention_bias"); });
  CHECK(plain.attention.q_bias);  // SeedOssConfig's default
}

TEST_CASE("apertus: a plain MLP with xIELU's two learned scalars, q/k norms over head_dim", "[hf_config]") {
  const ModelSpec a = fixture("apertus-8b-2509");
  CHECK(a.ffn.kind == FfnKind::plain);
  CHECK(a.ffn.activation_params == 2);
  CHECK(a.attention.qk_norm);
  CHECK_FALSE(a.attention.qk_norm_full_width);
  const ParamCounts p = count_params(a);
  CHECK(p.ffn == 32LL * (2 * 4096 * 21504 + 2));
  CHECK(p.attention_per_layer == 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 2 * 128);
  // Another activation has no learned scalars.
  CHECK(p.total - count_params(edited("apertus-8b-2509", [](nlohmann::json& j) { j["hidden_act"] = "relu2"; })).total == 64);
}

TEST_CASE("chatglm: fused biased QKV over kv_channels, multi-query groups, a fused gated FFN, ChatGLM2/3 and GLM-4", "[hf_config][kv]") {
  const ModelSpec g = fixture("glm-4-9b-chat");
  CHECK(g.num_layers() == 40);
  CHECK(g.attention.num_q_heads == 32);
  CHECK(g.attention.num_kv_heads == 2);  // multi_query_group_num with multi_query_attention
  CHECK(g.attention.head_dim == 128);    // kv_channels
  CHECK(g.attention.q_bias);             // add_qkv_bias: q, k and v (query_key_value)
  CHECK(g.attention.v_bias);
  CHECK_FALSE(g.attention.o_bias);  // add_bias_linear false
  CHECK(g.ffn.ffn_dim == 13696);
  CHECK(g.vocab_size == 151552);  // padded_vocab_size
  const ParamCounts p = count_params(g);
  // query_key_value: 4096 -> 32 x 128 + 2 x 2 x 128 with its bias; dense 4096 x 4096.
  CHECK(p.attention_per_layer == 4096LL * 4608 + 4608 + 4096LL * 4096);
  CHECK(p.ffn == 40LL * 3 * 4096 * 13696);  // dense_h_to_4h (gate and up) and dense_4h_to_h
  Workload w;
  CHECK(count_kv_cache(g, w).bytes_per_token == 40 * 2 * 2 * 128 * 2);
  // ChatGLM2-6B and ChatGLM3-6B: GLM-4-9B's layer with 28 layers and 65,024 tokens (6,243,584,000;
  // PUBLISHED.md); a missing key takes ChatGLMConfig's default, which is ChatGLM3-6B's.
  const ModelSpec six = edited("glm-4-9b-chat", [](nlohmann::json& j) {
    for (const char* key : {"num_layers", "num_hidden_layers", "padded_vocab_size", "vocab_size"}) j.erase(key);
  });
  CHECK(count_params(six).total == 6'243'584'000);
  const ModelSpec mha = edited("glm-4-9b-chat", [](nlohmann::json& j) { j["multi_query_attention"] = false; });
  CHECK(mha.attention.num_kv_heads == 32);
  CHECK_THROWS_WITH(edited("glm-4-9b-chat", [](nlohmann::json& j) { j.erase("ffn_hidden_size"); j["inner_hidden_size"] = 16384; }),
                    Catch::Contains("inner_hidden_size = 16384: ChatGLM-6B's first version"));
}
