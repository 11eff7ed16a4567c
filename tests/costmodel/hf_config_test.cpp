// Each family's config.json (tests/fixtures/hf, real Hub files; provenance in PUBLISHED.md) resolves
// to the published parameter count, and each family's implicit behaviour is honoured.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include <unistd.h>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/io.hpp"

using namespace mhacfg;

namespace {
ModelSpec fixture(const std::string& name) { return load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + name + ".json"); }
}  // namespace

TEST_CASE("published parameter counts of every family", "[hf_config][counts]") {
  // Published totals (tests/fixtures/hf/PUBLISHED.md gives the source of each).
  struct Case {
    const char* file;
    std::int64_t total;
  };
  const Case cases[] = {
      {"gpt2", 124'439'808},  // the Hub's 137,022,720 adds the attn.bias causal-mask buffers
      {"gpt2-medium", 354'823'168},
      {"llama-2-7b", 6'738'415'616},
      {"llama-3-8b", 8'030'261'248},
      {"llama-3-70b", 70'553'706'496},
      {"llama-3.2-1b", 1'235'814'400},  // tied head counted once
      {"mistral-7b-v0.1", 7'241'732'096},
      {"mistral-7b-v0.3", 7'248'023'552},
      {"mixtral-8x7b", 46'702'792'704},
      {"qwen2-0.5b", 494'032'768},
      {"qwen2.5-7b", 7'615'616'512},
      {"qwen3-0.6b", 596'049'920},  // the Hub's 751,632,384 stores the tied lm_head again
      {"qwen3-8b", 8'190'735'360},
      {"gemma-2b", 2'506'172'416},
      {"gemma-7b", 8'537'680'896},
      {"gemma-2-2b", 2'614'341'888},
      {"gemma-2-9b", 9'241'705'984},
      {"gemma-2-27b", 27'227'128'320},
      {"phi-3-mini-4k-instruct", 3'821'079'552},
      {"phi-3-medium-4k-instruct", 13'960'238'080},
      {"deepseek-v2-lite", 15'706'484'224},
      {"deepseek-v2", 235'741'434'880},
      {"deepseek-v3", 671'026'419'200},  // main model; the MTP module is reported separately
      {"qwen3-30b-a3b", 30'532'122'624},
      {"qwen3-235b-a22b", 235'093'634'560},
      {"gpt-oss-20b", 20'914'757'184},
      {"gpt-oss-120b", 116'829'156'672},
      {"gemma-3-270m", 268'098'176},
      {"gemma-3-1b-it", 999'885'952},
      {"qwen1.5-moe-a2.7b", 14'315'784'192},
      {"qwen2-57b-a14b", 57'408'658'944},
      {"glm-4.5-air", 106'852'245'504},  // what transformers builds; the checkpoint adds MTP (below)
      {"glm-4.5", 352'797'814'784},
      {"kimi-k2-instruct", 1'026'408'232'448},
      {"olmo-2-1124-7b", 7'298'617'344},
      {"olmo-2-0325-32b", 32'234'279'936},
      {"olmoe-1b-7b-0924", 6'919'161'856},
      {"pythia-160m", 162'322'944},  // the Hub's total adds causal-mask and rotary buffers
      {"gpt-neox-20b", 20'554'567'680},
      {"starcoder2-15b", 15'957'889'024},
      {"smollm3-3b", 3'075'098'624},
      {"granite-3.1-2b-instruct", 2'533'531'648},
      {"phi-2", 2'779'683'840},
      {"phi-1_5", 1'418'270'720},
      {"c4ai-command-r7b-12-2024", 8'028'033'024},  // as aya-expanse-8b's, the same shapes (PUBLISHED.md)
      {"seed-oss-36b-instruct", 36'151'104'512},
      // The Hub's 81,324,862,720 adds the checkpoint's MTP module (see the qwen3_next test).
      {"qwen3-next-80b-a3b-instruct", 79'674'391'296},
      {"granite-4.0-h-small", 32'207'337'984},
      {"nemotron-3-nano-30b-a3b", 31'577'937'344},  // the Hub's total: the router's bias is a buffer
      {"nvidia-nemotron-nano-9b-v2", 8'888'227'328},
      {"olmo-3-1025-7b", 7'298'011'136},
      {"olmo-3-1125-32b", 32'233'522'176},
      {"glm-4-9b-0414", 9'400'279'040},
      {"falcon-h1-tiny-90m-base", 91'131'072},  // tied head counted once
      {"falcon-h1-0.5b-base", 521'411'104},
      {"falcon-h1-1.5b-instruct", 1'554'863'488},
      {"falcon-h1-7b-instruct", 7'585'654'880},
      {"ernie-4.5-0.3b-pt", 360'748'032},  // tied; the exact figure is a derivative's (PUBLISHED.md)
      {"kimi-linear-48b-a3b-instruct", 49'122'681'728},
      // llama.cpp's 228,689,764,864 adds the 62 x 256 e_score_correction_bias buffers (PUBLISHED.md).
      {"minimax-m2.7", 228'689'764'864 - 62 * 256},
      {"apertus-8b-2509", 8'053'338'176},  // the Hub's 8,053,338,240 adds the xIELU beta and eps buffers
      {"lfm2-350m", 354'483'968},  // tied head counted once
      {"lfm2-1.2b", 1'170'340'608},
      {"lfm2-8b-a1b", 8'339'929'856},  // the Hub's F32 704 more are the experts' bias buffers
      {"exaone-4.0-1.2b", 1'279'391'488},  // tied head counted once
      {"exaone-4.0-32b", 32'003'216'384},
      // Backbones without the MTP layer and the FP8 scales (see the sparse-attention test for the Hub totals).
      {"deepseek-v3.2", 671'877'944'064},
      {"glm-5.1", 743'911'218'432},  // Fireworks' paramCount
  };
  for (const auto& c : cases) {
    INFO(c.file);
    CHECK(count_params(fixture(c.file)).total == c.total);
  }
}

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
  for (const auto& l : q.layers) CHECK(l.window == 0);
  Workload w;
  w.context = 131072;
  CHECK(count_kv_cache(q, w).layer_tokens == 28 * 131072);
}

TEST_CASE("qwen2 with use_sliding_window windows the layers from max_window_layers on", "[hf_config]") {
  nlohmann::json j = nlohmann::json::parse(R"({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
    "use_sliding_window": true, "sliding_window": 4096, "max_window_layers": 21, "tie_word_embeddings": true})");
  const ModelSpec m = spec_from_hf_config(j, "inline");
  for (int i = 0; i < 24; ++i) CHECK(m.layers[i].window == (i >= 21 ? 4096 : 0));
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
  for (std::size_t i = 0; i < g.layers.size(); ++i) CHECK(g.layers[i].window == (i % 2 == 0 ? 4096 : 0));
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
  for (const auto& l : p.layers) CHECK(l.window == 2047);
}

TEST_CASE("deepseek MLA caches the latent, MoE layout, V3 MTP reported separately", "[hf_config][kv]") {
  const ModelSpec lite = fixture("deepseek-v2-lite");
  CHECK(lite.attention.variant == AttentionVariant::mla);
  CHECK(lite.layers[0].moe == false);  // first_k_dense_replace = 1
  CHECK(lite.layers[1].moe);
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

namespace {
// A fixture's JSON with `edit` applied (keys erased or set), resolved as if read from a file.
ModelSpec edited(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(read_file(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + name + ".json", "fixture"));
  edit(j);
  return spec_from_hf_config(j, name);
}
}  // namespace

TEST_CASE("a missing num_key_value_heads takes the family's class default, an explicit null MHA", "[hf_config]") {
  struct Case {
    const char* fixture;
    std::int64_t missing;  // MistralConfig/MixtralConfig 8, Qwen2Config/Qwen3Config 32, GemmaConfig 16, Gemma2Config 4
  };
  for (const Case c : {Case{"mistral-7b-v0.1", 8}, Case{"mixtral-8x7b", 8}, Case{"qwen3-8b", 32}, Case{"gemma-7b", 16}, Case{"gemma-2-9b", 4}, Case{"llama-3-8b", 32},
                       Case{"phi-3-mini-4k-instruct", 32}}) {
    INFO(c.fixture);
    const ModelSpec as_is = fixture(c.fixture);
    const ModelSpec missing = edited(c.fixture, [](nlohmann::json& j) { j.erase("num_key_value_heads"); });
    const ModelSpec null = edited(c.fixture, [](nlohmann::json& j) { j["num_key_value_heads"] = nullptr; });
    CHECK(missing.attention.num_kv_heads == c.missing);
    CHECK(null.attention.num_kv_heads == as_is.attention.num_q_heads);
  }
  // The published Mistral-7B counts whether or not its config names the 8 KV heads.
  const ModelSpec m = edited("mistral-7b-v0.1", [](nlohmann::json& j) { j.erase("num_key_value_heads"); });
  CHECK(count_params(m).total == 7'241'732'096);
  // Qwen2.5-7B has 28 query heads, which Qwen2Config's default of 32 does not divide: an input error.
  CHECK_THROWS_WITH(edited("qwen2.5-7b", [](nlohmann::json& j) { j.erase("num_key_value_heads"); }),
                    Catch::Contains("num_kv_heads = 32: must divide num_q_heads = 28"));
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
  for (const auto& l : dense.layers) CHECK_FALSE(l.moe);
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

TEST_CASE("layer_types: read where the Config class reads it, a sliding layer without a window is full", "[hf_config][kv]") {
  // MistralConfig ignores layer_types (transformers warns): the window stays on every layer.
  const ModelSpec mistral = edited("mistral-7b-v0.1", [](nlohmann::json& j) {
    j["layer_types"] = std::vector<std::string>(32, "full_attention");
  });
  for (const auto& l : mistral.layers) CHECK(l.window == 4096);
  // Qwen2 without use_sliding_window sets sliding_window None: "sliding" layers attend to everything.
  const ModelSpec qwen = edited("qwen2.5-7b", [](nlohmann::json& j) {
    j["layer_types"] = std::vector<std::string>(28, "sliding_attention");
  });
  for (const auto& l : qwen.layers) CHECK(l.window == 0);
  // Gemma2 with sliding_window null: no layer is windowed.
  const ModelSpec gemma = edited("gemma-2-9b", [](nlohmann::json& j) { j["sliding_window"] = nullptr; });
  for (const auto& l : gemma.layers) CHECK(l.window == 0);
}

TEST_CASE("bad config.json input is an InputError naming the field", "[hf_config][errors]") {
  auto err = [](const std::string& text) {
    try {
      spec_from_hf_config(nlohmann::json::parse(text), "c.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err(R"({"hidden_size": 4096})") == "c.json: model_type = (missing): required key is missing");
  CHECK(err(R"({"model_type": "bert"})").find("unsupported model_type (supported: gpt2, llama, mistral, mixtral, qwen2, qwen3, qwen2_moe, qwen3_moe, gemma, gemma2, gemma3_text, gemma3, phi3, gpt_oss, falcon") != std::string::npos);
  const std::string base = R"("model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 32,
    "intermediate_size": 11008, "vocab_size": 32000)";
  CHECK(err("{" + base + R"(, "hidden_size": "4096"})") == "c.json: hidden_size = \"4096\": must be an integer");
  CHECK(err("{" + base + R"(, "hidden_size": 4096.5})") == "c.json: hidden_size = 4096.5: must be an integer");
  CHECK(err("{" + base + R"(, "hidden_size": 0})") == "c.json: hidden_size = 0: must be positive");
  CHECK(err("{" + base + R"(, "hidden_size": 4096, "num_key_value_heads": 5})") ==
        "c.json: num_kv_heads = 5: must divide num_q_heads = 32");
  CHECK(err("{" + base + R"(, "hidden_size": 99999999999999999999})") ==
        "c.json: hidden_size = 1e+20: out of range");  // beyond 64 bits
  CHECK(err("{" + base + R"(, "hidden_size": 4096, "tie_word_embeddings": "no"})") ==
        "c.json: tie_word_embeddings = \"no\": must be true or false");
  CHECK(err("[1, 2]") == "c.json = [1,2]: must be a JSON object");
  CHECK(err(R"({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 30, "intermediate_size": 11008,
    "vocab_size": 32000, "hidden_size": 4096})").find(
            "must divide hidden_size = 4096 when head_dim is not given") != std::string::npos);
  // With head_dim given the heads need not divide hidden_size (as transformers accepts).
  CHECK(err(R"({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 30, "num_key_value_heads": 10,
    "head_dim": 128, "intermediate_size": 11008, "vocab_size": 32000, "hidden_size": 4096})") == "no error");
  CHECK(err("{" + base + R"(, "hidden_size": 4096, "num_hidden_layers": 2147483648})") ==
        "c.json: num_hidden_layers = 2147483648: must be at most 100000");  // before a layer list is allocated
  // A value nested far deeper than any message shows is cut, not serialised whole (that recursed per
  // level and overflowed the stack at 100000 levels).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(err(R"({"model_type": )" + deep + "}") == "c.json: model_type = [[[[[[[[[...]]]]]]]]]: must be a string");
  CHECK_THAT(err(R"({"model_type": ")" + std::string(5000, 'x') + R"("})"),
             Catch::StartsWith("c.json: model_type = \"" + std::string(56, 'x') + "...: unsupported model_type"));
}

TEST_CASE("unreadable and malformed files name the file", "[hf_config][errors]") {
  CHECK_THROWS_WITH(load_hf_config("/nonexistent/config.json"),
                    Catch::StartsWith("--hf-config = /nonexistent/config.json: cannot read file"));
  CHECK_THROWS_WITH(load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/PUBLISHED.md"),
                    Catch::Contains("(malformed JSON): parse error at byte"));
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
  for (std::size_t i = 0; i < g.layers.size(); ++i) CHECK(g.layers[i].window == ((i + 1) % 6 == 0 ? 0 : 512));
  Workload w;
  w.context = 32768;
  CHECK(count_kv_cache(g, w).layer_tokens == 22 * 512 + 4 * 32768);
  // The 270M spells the same pattern out as layer_types.
  const ModelSpec small = fixture("gemma-3-270m");
  for (std::size_t i = 0; i < small.layers.size(); ++i) CHECK(small.layers[i].window == ((i + 1) % 6 == 0 ? 0 : 512));
  // Another pattern, and EmbeddingGemma's bidirectional encoder, which has no causal decode.
  const ModelSpec every_third = edited("gemma-3-1b-it", [](nlohmann::json& j) { j["sliding_window_pattern"] = 3; });
  for (std::size_t i = 0; i < every_third.layers.size(); ++i) CHECK(every_third.layers[i].window == ((i + 1) % 3 == 0 ? 0 : 512));
  CHECK_THROWS_WITH(edited("gemma-3-270m", [](nlohmann::json& j) { j["use_bidirectional_attention"] = true; }),
                    Catch::Contains("use_bidirectional_attention = true: a bidirectional encoder"));
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
    CHECK(g.layers[i].moe);
    CHECK(g.layers[i].window == (i % 2 == 0 ? 128 : 0));
  }
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(g, w);
  CHECK(kv.bytes_per_token == 24 * 8 * 128 * 2);
  CHECK(kv.layer_tokens == 12 * 128 + 12 * 131072);
  // Without layer_types the default alternation is the same; head_dim null falls back to hidden / heads.
  const ModelSpec no_types = edited("gpt-oss-20b", [](nlohmann::json& j) { j.erase("layer_types"); });
  for (std::size_t i = 0; i < no_types.layers.size(); ++i) CHECK(no_types.layers[i].window == (i % 2 == 0 ? 128 : 0));
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
  for (const auto& l : q.layers) CHECK(l.moe);
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
    CHECK(mixed.layers[i].moe == (i != 47 && (i + 1) % 2 == 0));
    sparse += mixed.layers[i].moe;
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
  for (const auto& l : windowed.layers) CHECK(l.window == 4096);
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
  CHECK_FALSE(g.layers[0].moe);        // first_k_dense_replace 1
  CHECK(g.layers[1].moe);
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

TEST_CASE("kimi_k2 is DeepSeek-V3's architecture with its own sizes", "[hf_config][kv]") {
  const ModelSpec k = fixture("kimi-k2-instruct");
  CHECK(k.family == "kimi_k2");
  CHECK(k.attention.variant == AttentionVariant::mla);
  CHECK(k.attention.num_q_heads == 64);
  CHECK(k.moe.num_routed_experts == 384);
  CHECK_FALSE(k.layers[0].moe);
  CHECK(k.layers[1].moe);
  CHECK(k.extra.mtp_modules == 0);
  CHECK(std::llround(double(count_params(k).active) / 1e9) == 33);  // "32B activated" + embedding and head
  Workload w;
  CHECK(count_kv_cache(k, w).bytes_per_token == 576 * 61 * 2);  // the same latent as DeepSeek-V3
}

TEST_CASE("llama4: chunked RoPE layers with every fourth global, experts with a shared one, the vision encoder beside the total", "[hf_config][kv]") {
  struct Case {
    const char* file;
    std::int64_t checkpoint;  // the Hub's total (PUBLISHED.md)
    std::int64_t text;        // the language model alone (third-party splits, PUBLISHED.md)
    std::int64_t experts;
    std::size_t moe_step;     // interleave_moe_layer_step
  };
  const std::int64_t h = 5120, expert = 3 * h * 8192, dense = 3 * h * 16384;
  for (const Case c : {Case{"llama-4-scout-17b-16e-instruct", 108'641'793'536, 107'769'861'120, 16, 1},
                       Case{"llama-4-maverick-17b-128e-instruct", 401'583'781'376, 400'711'848'960, 128, 2}}) {
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
      CHECK(m.layers[i].chunk == ((i + 1) % 4 != 0 ? 8192 : 0));  // NoPE every fourth layer, global
      CHECK(m.layers[i].window == 0);
      CHECK(m.layers[i].moe == ((i + 1) % c.moe_step == 0));
      sparse += m.layers[i].moe;
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
  for (std::size_t i = 0; i < 48; ++i) CHECK(rope_listed.layers[i].chunk == (i == 0 ? 0 : 8192));
  const ModelSpec empty_rope = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["no_rope_layers"] = nlohmann::json::array();  // empty: the interval, as in transformers
  });
  CHECK(empty_rope.layers[3].chunk == 0);
  CHECK(empty_rope.layers[4].chunk == 8192);
  const ModelSpec typed = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["layer_types"] = std::vector<std::string>(48, "full_attention");
    j["text_config"]["layer_types"][5] = "chunked_attention";
  });
  for (std::size_t i = 0; i < 48; ++i) CHECK(typed.layers[i].chunk == (i == 5 ? 8192 : 0));
  const ModelSpec unchunked = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["attention_chunk_size"] = nullptr;
  });
  for (const auto& l : unchunked.layers) CHECK(l.full_attention());
  const ModelSpec dense_only = edited("llama-4-scout-17b-16e-instruct", [](nlohmann::json& j) {
    j["text_config"]["moe_layers"] = nlohmann::json::array();  // a list, even empty, replaces the interleave
  });
  for (const auto& l : dense_only.layers) CHECK_FALSE(l.moe);
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
  for (std::size_t i = 0; i < 48; ++i) CHECK(lenient.layers[i].chunk == (i == 7 ? 0 : 8192));
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
  for (const auto& l : moe.layers) CHECK(l.moe);
  const ParamCounts p = count_params(moe);
  CHECK(p.total - p.active == 16LL * (64 - 8) * 3 * 2048 * 1024);
  CHECK(std::llround(double(p.active) / 1e8) == 13);  // "1.3B active"
}

TEST_CASE("olmo3: OLMo 2's layer, three 4096-token sliding layers to one global", "[hf_config][kv]") {
  const ModelSpec o = fixture("olmo-3-1125-32b");
  CHECK(o.attention.qk_norm_full_width);
  CHECK(o.attention.num_kv_heads == 8);
  CHECK(count_params(o).attention_per_layer == 2LL * 5120 * 5120 + 2LL * 5120 * 1024 + 5120 + 1024);
  for (std::size_t i = 0; i < o.layers.size(); ++i) CHECK(o.layers[i].window == ((i + 1) % 4 != 0 ? 4096 : 0));
  Workload w;
  w.context = 65536;
  const KvCacheCounts kv = count_kv_cache(o, w);
  CHECK(kv.layer_tokens == 48 * 4096 + 16 * 65536);
  CHECK(kv.bytes_per_token_beyond_window == 16LL * 2 * 8 * 128 * 2);  // only the 16 global layers grow
  // Without layer_types Olmo3Config's fixed pattern gives the same layers; a null window none.
  const ModelSpec implicit = edited("olmo-3-1125-32b", [](nlohmann::json& j) { j.erase("layer_types"); });
  for (std::size_t i = 0; i < o.layers.size(); ++i) CHECK(implicit.layers[i].window == o.layers[i].window);
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
  for (const auto& l : s3.layers) CHECK(l.window == 4096);
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
  for (std::size_t i = 0; i < slid.layers.size(); ++i) CHECK(slid.layers[i].window == ((i + 1) % 4 == 0 ? 2048 : 0));
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
  for (std::size_t i = 0; i < e.layers.size(); ++i) CHECK(e.layers[i].window == ((i + 1) % 4 != 0 ? 4096 : 0));
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
    CHECK(counted.layers[i].window == e.layers[i].window);
    CHECK(spelled.layers[i].window == e.layers[i].window);
    CHECK(gl.layers[i].window == (i % 2 == 0 ? 4096 : 0));
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
  for (std::size_t i = 0; i < r7.layers.size(); ++i) CHECK(r7.layers[i].window == ((i + 1) % 4 != 0 ? 4096 : 0));
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

TEST_CASE("qwen3_next: Gated DeltaNet layers with a fixed state, gated attention every fourth layer", "[hf_config][kv]") {
  const ModelSpec q = fixture("qwen3-next-80b-a3b-instruct");
  REQUIRE(q.num_layers() == 48);
  for (std::size_t i = 0; i < 48; ++i) CHECK(q.layers[i].linear == ((i + 1) % 4 != 0));
  CHECK(q.num_attention_layers() == 12);
  CHECK(q.attention.output_gate);
  CHECK(q.attention.qk_norm);
  CHECK(q.attention.variant == AttentionVariant::gqa);
  const ParamCounts p = count_params(q);
  // The tensor shapes of transformers' Qwen3NextAttention: q_proj 8192 x 2048 (queries and the gate),
  // k_proj and v_proj 512 x 2048, o_proj 2048 x 4096, q_norm and k_norm 256.
  CHECK(p.attention_per_layer == 8192LL * 2048 + 2 * 512 * 2048 + 2048 * 4096 + 2 * 256);
  // Qwen3NextGatedDeltaNet: in_proj_qkvz 12288 x 2048, in_proj_ba 64 x 2048, conv1d 8192 x 1 x 4,
  // dt_bias and A_log 32 each, norm 128, out_proj 2048 x 4096.
  CHECK(p.linear_attention_per_layer == 12288LL * 2048 + 64 * 2048 + 8192 * 4 + 2 * 32 + 128 + 2048 * 4096);
  CHECK(p.attention == 12 * p.attention_per_layer);
  CHECK(p.linear_attention == 36 * p.linear_attention_per_layer);
  // The checkpoint's one MTP module (mtp.fc, three norms, a gated-attention layer with the experts) is
  // the rest of the Hub's total.
  ModelSpec with_mtp = q;
  with_mtp.extra.mtp_modules = 1;
  CHECK(count_params(with_mtp).total + count_params(with_mtp).mtp == 81'324'862'720);
  // The KV cache grows in the 12 softmax layers only; the 36 linear layers hold a 32 x 128 x 128
  // recurrent state and the convolution's last 3 inputs of 8192 channels, whatever the context.
  Workload w;
  w.batch = 2;
  w.context = 32768;
  const KvCacheCounts kv = count_kv_cache(q, w);
  CHECK(kv.bytes_per_token == 12 * 2 * 2 * 256 * 2);
  CHECK(kv.state_bytes_per_layer == (32 * 128 * 128 + 8192 * 3) * 2);
  CHECK(kv.state_bytes_per_sequence == 36 * kv.state_bytes_per_layer);
  CHECK(kv.layer_tokens == 12 * 32768);
  CHECK(kv.bytes_total == 2 * (12LL * 32768 * 2048 + kv.state_bytes_per_sequence));
  w.state_dtype = DType::fp32;  // transformers keeps the recurrent state in float32
  CHECK(count_kv_cache(q, w).state_bytes_per_layer == (32 * 128 * 128 + 8192 * 3) * 4);
  // At tp 4 each GPU holds one of the 2 KV heads (replicated twice) and a quarter of the linear heads.
  w.tp = 4;
  const KvCacheCounts kv4 = count_kv_cache(q, w);
  CHECK(kv4.bytes_per_gpu == 2LL * 12 * 32768 * 2048 / 2 + 2 * kv4.state_bytes_per_sequence / 4);
  w.state_dtype = DType::bf16;
  // A decode step reads the softmax layers' caches and reads and writes each state once.
  w.tp = 1;
  const ModelCounts c = count_model(q, w);
  CHECK(c.bytes.state == 2 * 2 * c.kv_cache.state_bytes_per_sequence);
  CHECK(c.bytes.kv_read == 2LL * 12 * 32768 * 2048);
  // Decode FLOPs of the linear layers' core: per value head 6 x 128 x 128, the convolution 2 x 8192 x 4.
  Workload short_ctx = w;
  short_ctx.context = 1;
  const std::int64_t softmax_core = count_flops(q, short_ctx).decode_per_token.attention_core -
                                    36 * (6LL * 32 * 128 * 128 + 2 * 8192 * 4);
  CHECK(softmax_core == 12 * 2 * 2 * 16 * 256);  // one key: q k and p v for 16 heads of 256
  // layer_types, when given, names the layers; an unknown type is refused.
  const ModelSpec typed = edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) {
    std::vector<std::string> t(48, "full_attention");
    t[0] = "linear_attention";
    j["layer_types"] = t;
  });
  CHECK(typed.num_attention_layers() == 47);
  CHECK_THROWS_WITH(edited("qwen3-next-80b-a3b-instruct",
                           [](nlohmann::json& j) { j["layer_types"] = std::vector<std::string>(48, "sliding_attention"); }),
                    Catch::Contains("layer_types[0] = \"sliding_attention\": unknown layer type (expected full_attention or "
                                    "linear_attention)"));
  CHECK_THROWS_WITH(edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) { j["linear_num_key_heads"] = 12; }),
                    Catch::Contains("linear_num_key_heads = 12: must divide linear_num_value_heads = 32"));
  // Widths too large for exact counts are input errors, not wrapped numbers.
  const ModelSpec huge = edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) { j["linear_key_head_dim"] = 1LL << 62; });
  CHECK_THROWS_WITH(count_params(huge), Catch::Contains("would overflow"));
  CHECK_THROWS_WITH(count_kv_cache(huge, Workload{}), Catch::Contains("would overflow"));
  const ModelSpec wide = edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) { j["head_dim"] = 1LL << 61; });
  CHECK_THROWS_WITH(count_params(wide), Catch::Contains("would overflow"));
}

TEST_CASE("granitemoehybrid: Mamba2 layers beside four attention layers, a shared MLP beside the experts", "[hf_config][kv]") {
  const ModelSpec g = fixture("granite-4.0-h-small");
  REQUIRE(g.num_layers() == 40);
  for (std::size_t i = 0; i < 40; ++i) CHECK(g.layers[i].linear == (i % 10 != 5));
  CHECK(g.linear.kind == LinearKind::mamba2);
  CHECK(g.attention.head_dim == 128);  // hidden_size / heads
  const ParamCounts p = count_params(g);
  // transformers' GraniteMoeHybridMambaLayer with d_inner 8192, conv_dim 8192 + 2 x 128: in_proj
  // 16768 x 4096 (z, x, B, C, dt), conv1d 8448 x 1 x 4 with its bias, dt_bias, A_log and D of 128,
  // the gated norm over 8192, out_proj 4096 x 8192.
  CHECK(p.linear_attention_per_layer == 16768LL * 4096 + 8448 * 4 + 8448 + 3 * 128 + 8192 + 4096LL * 8192);
  CHECK(p.attention_per_layer == 4096LL * 4096 * 2 + 2LL * 4096 * 1024);
  // Every layer: 72 experts of 768 and the shared MLP of 1536, gated; a router of 72 x 4096.
  CHECK(p.ffn == 40 * (72LL * 3 * 4096 * 768 + 3LL * 4096 * 1536));
  CHECK(p.router == 40LL * 72 * 4096);
  // The state: 128 heads of 64 x 128 and 3 inputs of 8448 channels, per Mamba2 layer.
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(g, w);
  CHECK(kv.state_bytes_per_layer == (128 * 64 * 128 + 8448 * 3) * 2);
  CHECK(kv.bytes_per_token == 4 * 2 * 8 * 128 * 2);
  // Under tp 2 the heads split; the single group's B and C are held by both GPUs.
  CHECK(linear_attention_state_elements_per_gpu(g, 2) == 64 * 64 * 128 + (2 * 128 + 64 * 64) * 3);
  // Decode FLOPs of a Mamba2 core per token: the update and the read, 2 x 2 x 128 x 64 x 128, and the
  // convolution's 2 x 8448 x 4.
  w.context = 1;
  const std::int64_t core = count_flops(g, w).decode_per_token.attention_core;
  CHECK(core == 36 * (4LL * 128 * 64 * 128 + 2 * 8448 * 4) + 4 * 2 * 2 * 32 * 128);
  // Without experts the shared MLP is the layers' dense FFN; without layer_types every layer is Mamba2.
  const ModelSpec dense = edited("granite-4.0-h-small", [](nlohmann::json& j) {
    j["num_local_experts"] = 0;
    j.erase("layer_types");
  });
  for (const auto& l : dense.layers) {
    CHECK(l.linear);
    CHECK_FALSE(l.moe);
  }
  CHECK(dense.ffn.ffn_dim == 1536);
  CHECK(count_params(dense).total == 32'207'337'984 - 40LL * (72LL * 3 * 4096 * 768 + 72 * 4096) -
                                         4 * p.attention_per_layer + 4 * p.linear_attention_per_layer);
  CHECK_THROWS_WITH(edited("granite-4.0-h-small", [](nlohmann::json& j) { j["mamba_d_head"] = 32; }),
                    Catch::Contains("mamba_d_head = 32: x mamba_n_heads must equal mamba_expand x hidden_size = 8192"));
  CHECK_THROWS_WITH(edited("granite-4.0-h-small", [](nlohmann::json& j) { j["layer_types"][3] = "linear_attention"; }),
                    Catch::Contains("layer_types[3] = \"linear_attention\": unknown layer type (expected attention or mamba)"));
  CHECK_THROWS_WITH(edited("granite-4.0-h-small", [](nlohmann::json& j) { j["num_local_experts"] = -1; }),
                    Catch::Contains("num_local_experts = -1: must not be negative"));
}

TEST_CASE("nemotron_h: blocks of one module each, Mamba2, attention, MLP or experts", "[hf_config][kv]") {
  const ModelSpec n = fixture("nemotron-3-nano-30b-a3b");
  const std::string pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  REQUIRE(n.num_layers() == 52);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    CHECK(n.layers[i].linear == (c == 'M'));
    CHECK(n.layers[i].moe == (c == 'E'));
    CHECK(n.layers[i].no_mixer == (c == 'E' || c == '-'));
    CHECK(n.layers[i].no_ffn == (c == 'M' || c == '*'));
  }
  CHECK(n.num_attention_layers() == 6);
  CHECK(n.num_linear_layers() == 23);
  CHECK(n.norm.per_layer == 1);
  CHECK(n.ffn.kind == FfnKind::plain);  // relu2: up and down, no gate
  const ParamCounts p = count_params(n);
  // NemotronHMamba2Mixer: 64 heads of 64, 8 groups of 128: in_proj 10304 x 2688, conv1d 6144 x 4 with
  // its bias, dt_bias, A_log and D of 64, the gated norm over 4096, out_proj 2688 x 4096.
  CHECK(p.linear_attention_per_layer == 10304LL * 2688 + 6144 * 4 + 6144 + 3 * 64 + 4096 + 2688LL * 4096);
  CHECK(p.attention_per_layer == 2LL * 2688 * 4096 + 2LL * 2688 * 256);
  // 23 expert blocks: 128 experts and the shared expert (3712), up and down each; the router.
  CHECK(p.ffn == 23 * (128LL * 2 * 2688 * 1856 + 2LL * 2688 * 3712));
  CHECK(p.router == 23LL * 128 * 2688);
  CHECK(p.norms == 53 * 2688);
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(n, w);
  CHECK(kv.bytes_per_token == 6 * 2 * 2 * 128 * 2);
  CHECK(kv.state_bytes_per_layer == (64 * 64 * 128 + 6144 * 3) * 2);
  CHECK(kv.state_bytes_per_sequence == 23 * kv.state_bytes_per_layer);
  CHECK(kv.layer_tokens == 6 * 131072);
  // Decode FLOPs: an expert block has no attention core, a Mamba2 block no FFN.
  w.context = 1;
  const FlopCounts f = count_flops(n, w);
  CHECK(f.decode_per_token.attention_core == 23 * (4LL * 64 * 64 * 128 + 2 * 6144 * 4) + 6 * 2 * 2 * 32 * 128);
  CHECK(f.decode_per_token.ffn == 23 * 2 * (128LL * 2688 + 6 * 2 * 2688 * 1856 + 2LL * 2688 * 3712));
  // layers_block_type, in the current names or the older ones, gives the same model.
  const ModelSpec listed = edited("nemotron-3-nano-30b-a3b", [&](nlohmann::json& j) {
    j.erase("hybrid_override_pattern");
    std::vector<std::string> t;
    for (char c : pattern) t.push_back(c == 'M' ? "linear_attention" : c == 'E' ? "moe" : c == '*' ? "attention" : "mlp");
    j["layers_block_type"] = t;
  });
  CHECK(count_params(listed).total == p.total);
  CHECK_THROWS_WITH(edited("nemotron-3-nano-30b-a3b", [](nlohmann::json& j) { j["hybrid_override_pattern"] = "MEX*"; }),
                    Catch::Contains("hybrid_override_pattern[2] = \"X\": unknown block type"));
  CHECK_THROWS_WITH(edited("nemotron-3-nano-30b-a3b", [](nlohmann::json& j) { j["moe_latent_size"] = 1024; }),
                    Catch::Contains("moe_latent_size = 1024: latent experts (Nemotron 3 Super) are not modelled"));
  // Nemotron-Nano-9B-v2: Mamba2, attention and MLP blocks, no experts.
  const ModelSpec nano = fixture("nvidia-nemotron-nano-9b-v2");
  CHECK(nano.num_linear_layers() == 27);
  CHECK(nano.num_attention_layers() == 4);
  CHECK(count_params(nano).ffn == 25LL * 2 * 4480 * 15680);
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
  CHECK_FALSE(moe.layers[0].moe);
  for (std::size_t i = 1; i < 28; ++i) CHECK(moe.layers[i].moe);
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
  for (std::size_t i = 0; i < 28; ++i) CHECK(every_other.layers[i].moe == (i >= 3 && (i + 1) % 2 == 0));
  const ModelSpec ended = edited("ernie-4.5-21b-a3b-pt", [](nlohmann::json& j) { j["moe_layer_end_index"] = 9; });
  for (std::size_t i = 0; i < 28; ++i) CHECK(ended.layers[i].moe == (i >= 1 && i <= 9));
  CHECK_THROWS_WITH(edited("ernie-4.5-21b-a3b-pt", [](nlohmann::json& j) { j["moe_layer_end_index"] = -2; }),
                    Catch::Contains("moe_layer_end_index = -2: must be a layer index or -1 (the last layer)"));
  // No shared experts when the file says 0 (the class default is 2).
  CHECK(shared_ffn_width(edited("ernie-4.5-21b-a3b-pt", [](nlohmann::json& j) { j["moe_num_shared_experts"] = 0; }).moe) == 0);
}

TEST_CASE("kimi_linear: KDA layers beside MLA without RoPE, DeepSeek-V3's experts", "[hf_config][kv]") {
  const ModelSpec k = fixture("kimi-linear-48b-a3b-instruct");
  REQUIRE(k.num_layers() == 27);
  // kda_layers is 1-based: layers 4, 8, ..., 24 and 27 (0-based 3, 7, ..., 23, 26) are MLA.
  for (std::size_t i = 0; i < 27; ++i) CHECK(k.layers[i].linear == ((i + 1) % 4 != 0 && i != 26));
  CHECK(k.num_linear_layers() == 20);
  CHECK(k.linear.kind == LinearKind::kda);
  CHECK(k.attention.variant == AttentionVariant::mla);
  CHECK(k.attention.mla.q_lora_rank == 0);
  CHECK(k.attention.head_dim == 192);  // nope 128 + the unrotated 64; the file's head_dim 72 is not read
  const ParamCounts p = count_params(k);
  // KDA: q, k, v (32 x 128 each), the three 4-tap convolutions without bias, the decay's and the output
  // gate's low rank (2304 -> 128 -> 4096), b_proj, A_log (32), dt_bias (4096), o_norm (128), o_proj.
  CHECK(p.linear_attention_per_layer == 3LL * 2304 * 4096 + 3 * 4096 * 4 + 2 * (2304 * 128 + 128 * 4096) + 2304 * 32 + 32 + 4096 + 128 +
                                            4096LL * 2304);
  CHECK(p.linear_attention_per_layer == 39'514'272);
  // MLA: q_proj 2304 -> 32 x 192, kv_a 2304 -> 576, its norm, kv_b 512 -> 32 x 256, o_proj.
  CHECK(p.attention_per_layer == 2304LL * 6144 + 2304 * 576 + 512 + 512LL * 8192 + 4096LL * 2304);
  // Experts on layers 1..26 with e_score_correction_bias; layer 0 dense.
  CHECK_FALSE(k.layers[0].moe);
  for (std::size_t i = 1; i < 27; ++i) CHECK(k.layers[i].moe);
  CHECK(p.router == 26LL * (256 * 2304 + 256));
  // The caches: MLA's latent and rope key on 7 layers; per KDA layer 32 x 128 x 128 and 3 x 4096 x 3.
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(k, w);
  CHECK(kv.bytes_per_token == 7 * 576 * 2);
  CHECK(kv.state_bytes_per_layer == (32 * 128 * 128 + 12288 * 3) * 2);
  w.state_dtype = DType::fp32;  // vLLM keeps KDA's recurrent state in fp32
  CHECK(count_kv_cache(k, w).state_bytes_per_sequence == 20LL * (32 * 128 * 128 + 12288 * 3) * 4);
  // Without linear_attn_config every layer is MLA.
  const ModelSpec all_mla = edited("kimi-linear-48b-a3b-instruct", [](nlohmann::json& j) { j.erase("linear_attn_config"); });
  CHECK(all_mla.num_linear_layers() == 0);
  CHECK(count_params(all_mla).total == 49'122'681'728 - 20 * p.linear_attention_per_layer + 20 * p.attention_per_layer);
  CHECK_THROWS_WITH(edited("kimi-linear-48b-a3b-instruct", [](nlohmann::json& j) { j["linear_attn_config"]["kda_layers"][0] = 28; }),
                    Catch::Contains("kda_layers[0] = 28: must be a layer number in 1..27 (1-based)"));
  CHECK_THROWS_WITH(edited("kimi-linear-48b-a3b-instruct", [](nlohmann::json& j) { j["linear_attn_config"]["kda_layers"][0] = 0; }),
                    Catch::Contains("kda_layers[0] = 0"));
}

TEST_CASE("minimax_m2: full-width q/k norms, head_dim 128, 256 experts on every layer, no MTP counted", "[hf_config][kv]") {
  const ModelSpec m = fixture("minimax-m2.7");
  CHECK(m.attention.head_dim == 128);  // hidden_size / heads would be 64
  CHECK(m.attention.qk_norm_full_width);
  CHECK(count_params(m).attention_per_layer == 2LL * 3072 * 6144 + 2LL * 3072 * 1024 + 6144 + 1024);
  for (const auto& l : m.layers) {
    CHECK(l.moe);
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
  // The legacy key has no weights; lightning-attention layers are refused by name.
  CHECK(count_params(edited("minimax-m2.7", [](nlohmann::json& j) { j["mlp_intermediate_size"] = 8192; })).total == p.total);
  CHECK_THROWS_WITH(edited("minimax-m2.7", [](nlohmann::json& j) { j["attn_type_list"][0] = 0; }),
                    Catch::Contains("attn_type_list[0] = 0: only softmax attention (1) is modelled"));
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

TEST_CASE("lfm2: gated short convolutions beside attention, the FFN width adjusted, LFM2-MoE's experts", "[hf_config][kv]") {
  const ModelSpec s = fixture("lfm2-350m");
  REQUIRE(s.num_layers() == 16);
  // full_attn_idxs (0-based) names the attention layers; the rest are short convolutions.
  for (std::size_t i = 0; i < 16; ++i) {
    const bool attention = i == 2 || i == 5 || i == 8 || i == 10 || i == 12 || i == 14;
    CHECK(s.layers[i].linear == !attention);
  }
  CHECK(s.linear.kind == LinearKind::short_conv);
  CHECK(s.ffn.ffn_dim == 4608);  // block_ff_dim 6656: 2/3 of it is 4437, rounded up to 256
  const ParamCounts p = count_params(s);
  // A conv layer: in_proj 1024 -> 3 x 1024, the 3-tap depthwise convolution, out_proj; no biases.
  CHECK(p.linear_attention_per_layer == 3LL * 1024 * 1024 + 1024 * 3 + 1024LL * 1024);
  // Attention 16/8 heads of 64 with q/k norms over head_dim.
  CHECK(p.attention_per_layer == 2LL * 1024 * 1024 + 2LL * 1024 * 512 + 2 * 64);
  // The caches: K and V on 6 layers; per conv layer the last 2 inputs of 1024 channels, no recurrent state.
  Workload w;
  w.context = 32768;
  const KvCacheCounts kv = count_kv_cache(s, w);
  CHECK(kv.bytes_per_token == 6 * 2 * 8 * 64 * 2);
  CHECK(kv.state_bytes_per_layer == 1024 * 2 * 2);
  CHECK(kv.state_bytes_per_sequence == 10 * 1024 * 2 * 2);
  // Decode core FLOPs: the attention layers' and each convolution's 2 x 1024 x 3.
  w.context = 1;
  CHECK(count_flops(s, w).decode_per_token.attention_core == 6 * 2 * 2 * 16 * 64 + 10 * 2 * 1024 * 3);
  // conv_bias: in_proj's 3 x 1024, the convolution's 1024 and out_proj's 1024 in each conv layer.
  CHECK(count_params(edited("lfm2-350m", [](nlohmann::json& j) { j["conv_bias"] = true; })).total - 354'483'968 == 10 * 5 * 1024);
  // LFM2-700M's shapes (1536 wide, 24 heads, block_ff_dim 10240 -> 6912): the model card's 742,489,344.
  const ModelSpec s700 = edited("lfm2-350m", [](nlohmann::json& j) {
    j["hidden_size"] = 1536;
    j["num_attention_heads"] = 24;
    j["block_ff_dim"] = 10240;
  });
  CHECK(s700.ffn.ffn_dim == 6912);
  CHECK(count_params(s700).total == 742'489'344);
  // Without the adjustment the width is the file's; without a multiplier it is not rounded.
  CHECK(edited("lfm2-350m", [](nlohmann::json& j) { j["block_auto_adjust_ff_dim"] = false; }).ffn.ffn_dim == 6656);
  CHECK(edited("lfm2-350m", [](nlohmann::json& j) { j["block_ffn_dim_multiplier"] = nullptr; }).ffn.ffn_dim == 4437);
  // layer_types (newer files) give the same layers; neither key: every layer attention.
  const ModelSpec typed = edited("lfm2-350m", [](nlohmann::json& j) {
    j.erase("full_attn_idxs");
    j["layer_types"] = nlohmann::json::array();
    for (int i = 0; i < 16; ++i) j["layer_types"].push_back(i == 2 || i == 5 || i == 8 || i == 10 || i == 12 || i == 14 ? "full_attention" : "conv");
  });
  for (std::size_t i = 0; i < 16; ++i) CHECK(typed.layers[i].linear == s.layers[i].linear);
  CHECK(edited("lfm2-350m", [](nlohmann::json& j) { j.erase("full_attn_idxs"); }).num_linear_layers() == 0);
  CHECK_THROWS_WITH(edited("lfm2-350m", [](nlohmann::json& j) { j["full_attn_idxs"][0] = 16; }),
                    Catch::Contains("full_attn_idxs[0] = 16: must be a layer index in 0..15"));
  // Under tp 2 each GPU convolves half the channels.
  CHECK(linear_attention_state_elements_per_gpu(s, 2) == 512 * 2);

  const ModelSpec moe = fixture("lfm2-8b-a1b");
  CHECK_FALSE(moe.layers[0].moe);
  CHECK_FALSE(moe.layers[1].moe);
  for (std::size_t i = 2; i < 24; ++i) CHECK(moe.layers[i].moe);
  CHECK(moe.ffn.ffn_dim == 7168);  // as is: no adjustment in LFM2-MoE
  CHECK_FALSE(moe.moe.router_bias);
  CHECK(moe.num_linear_layers() == 18);
  // Active: the embedding (tied), 2 dense FFNs, 4 of 32 experts and the router per sparse layer: the card's "1.5B".
  CHECK(std::llround(double(count_params(moe).active) / 1e8) == 16);
}

TEST_CASE("falcon_h1: attention and Mamba2 side by side in every layer, both counted, cached and costed", "[hf_config][kv]") {
  const ModelSpec h = fixture("falcon-h1-0.5b-base");
  REQUIRE(h.num_layers() == 36);
  for (const auto& l : h.layers) {
    CHECK(l.linear);
    CHECK(l.parallel);
    CHECK(l.softmax());
    CHECK(l.full_attention());
  }
  CHECK(h.num_attention_layers() == 36);
  CHECK(h.num_linear_layers() == 36);
  const ParamCounts p = count_params(h);
  // Attention 8/2 heads of 64 on 1024; Mamba2 d_ssm 1536 = 24 heads of 64, one group of 128: in_proj
  // 1024 x (2 x 1536 + 2 x 128 + 24), conv1d 1792 x 4 with its bias, dt_bias, A_log, D; no gated norm
  // (mamba_rms_norm false); out_proj 1536 x 1024.
  CHECK(p.attention_per_layer == 2LL * 1024 * 512 + 2LL * 1024 * 128);
  CHECK(p.linear_attention_per_layer == 1024LL * (2 * 1536 + 2 * 128 + 24) + 1792 * 4 + 1792 + 3 * 24 + 1536LL * 1024);
  CHECK(p.attention == 36 * p.attention_per_layer);
  CHECK(p.linear_attention == 36 * p.linear_attention_per_layer);
  // Each layer caches K and V of 2 heads of 64 per token and keeps the Mamba2 state beside them.
  Workload w;
  w.context = 16384;
  const KvCacheCounts kv = count_kv_cache(h, w);
  CHECK(kv.bytes_per_token == 36 * 2 * 2 * 64 * 2);
  CHECK(kv.state_bytes_per_layer == (24 * 64 * 128 + 1792 * 3) * 2);
  CHECK(kv.state_bytes_per_sequence == 36 * kv.state_bytes_per_layer);
  // Decode FLOPs of the core per token: both mixers in every layer.
  const std::int64_t attention = 2LL * 2 * 8 * 64 * 16384;
  const std::int64_t mamba = 4LL * 24 * 64 * 128 + 2 * 1792 * 4;
  CHECK(count_flops(h, w).decode_per_token.attention_core == 36 * (attention + mamba));
  // The options: the gated norm (mamba_rms_norm, on in the 1.5B and 7B), in_proj's bias, out_proj's
  // (projectors_bias), and attention_bias on q, k, v and o.
  auto params_with = [](const char* key) {
    return count_params(edited("falcon-h1-0.5b-base", [&](nlohmann::json& j) { j[key] = true; })).total - 521'411'104;
  };
  CHECK(params_with("mamba_rms_norm") == 36 * 1536);
  CHECK(params_with("mamba_proj_bias") == 36 * (2 * 1536 + 2 * 128 + 24));
  CHECK(params_with("projectors_bias") == 36 * 1024);
  CHECK(params_with("attention_bias") == 36 * (512 + 2 * 128 + 1024));
  CHECK(count_params(fixture("falcon-h1-7b-instruct")).linear_attention_per_layer -
            count_params(edited("falcon-h1-7b-instruct", [](nlohmann::json& j) { j["mamba_rms_norm"] = false; })).linear_attention_per_layer ==
        3072);
  // mamba_d_ssm: missing 1024, null mamba_expand x hidden_size; mamba_d_head "auto" divides it.
  const ModelSpec missing = edited("falcon-h1-0.5b-base", [](nlohmann::json& j) {
    j.erase("mamba_d_ssm");
    j["mamba_d_head"] = "auto";
    j["mamba_n_heads"] = 16;
  });
  CHECK(missing.linear.value_dim() == 1024);
  CHECK(missing.linear.head_v_dim == 64);
  const ModelSpec null = edited("falcon-h1-0.5b-base", [](nlohmann::json& j) {
    j["mamba_d_ssm"] = nullptr;
    j["mamba_d_head"] = "auto";
    j["mamba_n_heads"] = 32;
  });
  CHECK(null.linear.value_dim() == 2048);
  CHECK_THROWS_WITH(edited("falcon-h1-0.5b-base", [](nlohmann::json& j) { j.erase("mamba_d_ssm"); }),
                    Catch::Contains("mamba_d_head = 64: x mamba_n_heads must equal mamba_d_ssm = 1024"));
  // Under tp 2: 4 query heads and one KV head, 12 Mamba2 heads per GPU.
  Workload t2 = w;
  t2.tp = 2;
  CHECK(count_kv_cache(h, t2).kv_heads_per_gpu == 1);
  CHECK(linear_attention_state_elements_per_gpu(h, 2) == 12 * 64 * 128 + (2 * 128 + 12 * 64) * 3);
}

TEST_CASE("a model's folder is read through its config.json and names the model", "[hf_config]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("mhacfg-Llama-3-8B-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-3-8b.json", dir / "config.json",
                fs::copy_options::overwrite_existing);
  for (const std::string& path : {dir.string(), dir.string() + "/", dir.string() + "//"}) {
    INFO(path);
    const ModelSpec m = load_hf_config(path);
    CHECK(m.name == dir.filename().string());
    CHECK(count_params(m).total == 8'030'261'248);
  }
  fs::remove(dir / "config.json");
  CHECK_THROWS_WITH(load_hf_config(dir.string()),
                    Catch::StartsWith("--hf-config = " + dir.string() + "/config.json: cannot read file"));
  fs::remove(dir);
}

TEST_CASE("sparse attention (DeepSeek-V3.2, GLM-5.1): the indexer's weights and keys, the checkpoints' totals",
          "[hf_config][counts][kv]") {
  const ModelSpec v32 = fixture("deepseek-v3.2");
  REQUIRE(v32.attention.sparse());
  CHECK(v32.attention.indexer.num_heads == 64);
  CHECK(v32.attention.indexer.head_dim == 128);
  CHECK(v32.attention.indexer.topk == 2048);
  // Per layer: wq_b (1536 -> 64 x 128), wk (7168 -> 128), k_norm (weight + bias), weights_proj (7168 -> 64).
  const std::int64_t indexer = 1536LL * 64 * 128 + 7168LL * 128 + 2 * 128 + 7168LL * 64;
  CHECK(indexer == 13'959'424);
  CHECK(attention_params_per_layer(v32) - attention_params_per_layer(fixture("deepseek-v3")) == indexer);
  const ParamCounts p = count_params(v32);
  CHECK(p.indexer == 61 * indexer);
  // Every GPU holds the indexers whole: at tp 8 in fp8, 7/8 of them more than an even split.
  CHECK(served_weight_bytes_per_gpu(p, DType::fp8, 8) == Approx(double(p.total) / 8 + double(p.indexer) * 7 / 8));
  // The checkpoint's 685,355,329,792 elements without the FP8 scales (its header audit's 685,396,921,376 with
  // them): the backbone, and an MTP layer that stores its own copies of the embedding and the head.
  CHECK(p.total + p.mtp + 2 * 129'280LL * 7168 == 685'355'329'792);
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(v32, w);
  CHECK(kv.indexer_bytes_per_token_per_layer == 132);  // 128 fp8 values and one fp32 scale
  CHECK(kv.bytes_per_token == 61 * ((512 + 64) * 2 + 132));

  const ModelSpec glm = fixture("glm-5.1");
  REQUIRE(glm.attention.sparse());
  CHECK(glm.attention.indexer.num_heads == 32);
  CHECK(glm.attention.mla.q_lora_rank == 2048);
  CHECK(glm.attention.v_head_dim == 256);
  const ParamCounts g = count_params(glm);
  CHECK(g.total + g.mtp == 753'864'139'008);  // the Hub's safetensors total: its MTP layer shares embedding and head
  CHECK(count_kv_cache(glm, w).bytes_per_token == 78 * ((512 + 64) * 2 + 132));

  // GlmMoeDsaConfig's defaults when the indexer's keys are missing; DeepseekV32Config's 64 heads.
  const ModelSpec bare = edited("glm-5.1", [](nlohmann::json& j) {
    for (const char* k : {"index_n_heads", "index_head_dim", "index_topk", "q_lora_rank"}) j.erase(k);
  });
  CHECK(count_params(bare).total == g.total);
  CHECK(edited("deepseek-v3.2", [](nlohmann::json& j) { j.erase("index_n_heads"); }).attention.indexer.num_heads == 64);
  // Layers that reuse another layer's top k carry no indexer: refused by name, never miscounted.
  CHECK_THROWS_WITH(edited("glm-5.1", [](nlohmann::json& j) { j["index_topk_freq"] = 4; }),
                    Catch::Contains("index_topk_freq") && Catch::Contains("not modelled"));
  CHECK_THROWS_WITH(edited("glm-5.1", [](nlohmann::json& j) { j["index_topk_pattern"] = "FFFS"; }),
                    Catch::Contains("index_topk_pattern"));
  CHECK_THROWS_WITH(edited("glm-5.1", [](nlohmann::json& j) { j["indexer_types"] = {"full", "shared"}; }),
                    Catch::Contains("indexer_types[1]") && Catch::Contains("not modelled"));
  CHECK_NOTHROW(edited("glm-5.1", [](nlohmann::json& j) { j["index_topk_freq"] = 1; }));
  // Widths whose products overflow are an input error, never a wrapped count (the sanitized suite runs this).
  for (const char* key : {"index_head_dim", "index_n_heads"}) {
    INFO(key);
    const ModelSpec huge = edited("deepseek-v3.2", [&](nlohmann::json& j) { j[key] = std::numeric_limits<std::int64_t>::max(); });
    CHECK_THROWS_AS(count_params(huge), InputError);
    CHECK_THROWS_AS(count_model(huge, w), InputError);
  }
  const ModelSpec far = edited("deepseek-v3.2", [](nlohmann::json& j) { j["index_topk"] = std::numeric_limits<std::int64_t>::max(); });
  CHECK(count_model(far, w).bytes.kv_read > 0);  // every key is in the top k: dense MLA plus the indexer
}

TEST_CASE("sparse attention counts: queries attend to the top k keys, the indexer scores every key", "[counts]") {
  const ModelSpec v32 = fixture("deepseek-v3.2");
  Workload w;
  w.batch = 2;
  w.context = 131072;
  w.prompt_len = 4096;
  const ModelCounts c = count_model(v32, w);
  // Decode, per token and layer: the indexer's 64 heads x (2 x 128 + 2) FLOPs per cached key, and the
  // absorbed MLA of 128 heads over 2048 keys ((512 + 64) + 512 dims, a multiply-add each).
  const std::int64_t indexer = 2LL * 64 * (128 + 1) * 131072;
  const std::int64_t mla = 2LL * 128 * 2048 * (576 + 512);
  CHECK(c.flops.decode_per_token.attention_core == 61 * (indexer + mla));
  // The step reads the top 2048 latents and every indexer key of each sequence.
  CHECK(c.bytes.kv_read == 2LL * 61 * (2048 * 1152 + 131072 * 132));
  // Prefill: a query at position p sees min(p + 1, 2048) keys; the indexer scores all p + 1.
  const std::int64_t capped = 2048LL * 2049 / 2 + (4096LL - 2048) * 2048, causal = 4096LL * 4097 / 2;
  const std::int64_t prefill_mla = 128LL * capped * 2 * (192 + 128);  // decompressed: 128 heads of 192 / 128
  CHECK(c.flops.prefill.attention_core == 61 * 2 * (prefill_mla + 2LL * 64 * 129 * causal));
  // The indexer is whole on every GPU, beside the latent: tp replicates the whole cache.
  w.tp = 8;
  const KvCacheCounts kv = count_kv_cache(v32, w);
  CHECK(kv.bytes_per_gpu == kv.bytes_total);
}
