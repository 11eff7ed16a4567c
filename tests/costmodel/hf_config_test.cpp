// The HF import as a whole (hf_config.cpp): every family's config.json (tests/fixtures/hf, real Hub files;
// provenance in PUBLISHED.md) resolves to the published parameter count; class defaults, errors, folders.
// The families' own behaviour is tested beside their sources: hf_dense_test, hf_moe_test, hf_hybrid_test.
#include <catch2/catch.hpp>

#include <filesystem>

#include <unistd.h>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

namespace {

// Published totals (tests/fixtures/hf/PUBLISHED.md gives the source of each).
struct PublishedTotal {
  const char* file;
  std::int64_t total;
};
const PublishedTotal kPublishedTotals[] = {
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
    {"minimax-m1-80k", 456'089'655'296},  // the Hub's total; MiniMax-Text-01 has the same shapes (PUBLISHED.md)
    {"apertus-8b-2509", 8'053'338'176},  // the Hub's 8,053,338,240 adds the xIELU beta and eps buffers
    {"lfm2-350m", 354'483'968},  // tied head counted once
    {"lfm2-1.2b", 1'170'340'608},
    {"lfm2-8b-a1b", 8'339'929'856},  // the Hub's F32 704 more are the experts' bias buffers
    {"exaone-4.0-1.2b", 1'279'391'488},  // tied head counted once
    {"exaone-4.0-32b", 32'003'216'384},
    // Backbones without the MTP layer and the FP8 scales (see the sparse-attention test for the Hub totals).
    {"deepseek-v3.2", 671'877'944'064},
    {"glm-5.1", 743'911'218'432},  // Fireworks' paramCount
    {"llama-3.3-nemotron-super-49b-v1", 49'867'145'216},
    {"glm-4-9b-chat", 9'399'951'360},
    // GLM-4.7-Flash: what transformers builds; the checkpoint adds its MTP layer (the glm4_moe_lite test).
    {"glm-4.7-flash", 31'221'488'576 - 643'706'112 - 2LL * 154'880 * 2048 - 47 * 64},
    {"hunyuan-a13b-instruct", 80'393'183'232},  // tied head counted once
    {"dots.llm1.base", 142'774'381'696},  // the Hub's total: the router's bias is stored
    // Qwen3.5: the language models; the vision towers and MTP layers are in the qwen3_5 tests.
    {"qwen3.5-0.8b", 752'393'024},  // tied head counted once
    {"qwen3.5-35b-a3b", 34'660'610'688},
    {"vaultgemma-1b", 1'038'741'120},  // tied head counted once
    {"flexolmo-7x7b-1t", 33'270'665'216},  // the index's total_parameters (OLMoE's layers, post-norms)
    // LongCat-Flash-Chat: what transformers builds; the Hub total adds the MTP layer with its own embedding
    // and the router buffers (the longcat_flash test).
    {"longcat-flash-chat", 561'862'880'256 - 392'593'408 - 131'072LL * 6144 - 28 * 768},
};

}  // namespace

TEST_CASE("published parameter counts of every family", "[hf_config][counts]") {
  for (const auto& c : kPublishedTotals) {
    INFO(c.file);
    CHECK(count_params(fixture(c.file)).total == c.total);
  }
}

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
                    Catch::Contains("num_kv_heads = 32: must divide num_attention_heads = 28"));
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
  CHECK_THAT(err(R"({"model_type": "bert"})"), Catch::StartsWith("c.json: model_type = \"bert\": unsupported model_type (closest supported: "));
  CHECK_THAT(err(R"({"model_type": "bert"})"), Catch::Contains("types are read, docs/models-survey.md lists them and the ones refused)"));
  // MiniMax's layer lists name each layer's mixer; anything else is refused by its index.
  CHECK(err(R"({"model_type": "minimax", "num_hidden_layers": 2, "attn_type_list": [0, 2]})") ==
        "c.json: attn_type_list[1] = 2: unknown layer type (expected 1, softmax attention, or 0, lightning attention)");
  CHECK_THAT(err(R"({"model_type": "minimax", "num_hidden_layers": 2, "layer_types": ["linear_attention", "mamba"]})"),
             Catch::StartsWith("c.json: layer_types[1] = \"mamba\": unknown layer type"));
  const std::string base = R"("model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 32,
    "intermediate_size": 11008, "vocab_size": 32000)";
  CHECK(err("{" + base + R"(, "hidden_size": "4096"})") == "c.json: hidden_size = \"4096\": must be an integer");
  CHECK(err("{" + base + R"(, "hidden_size": 4096.5})") == "c.json: hidden_size = 4096.5: must be an integer");
  CHECK(err("{" + base + R"(, "hidden_size": 0})") == "c.json: hidden_size = 0: must be positive");
  CHECK(err("{" + base + R"(, "hidden_size": 4096, "num_key_value_heads": 5})") ==
        "c.json: num_key_value_heads = 5: must divide num_attention_heads = 32");
  // The experts' keys as the file spells them (the library's top_k and num_routed_experts are not the file's).
  CHECK(err(R"({"model_type": "mixtral", "num_hidden_layers": 2, "num_attention_heads": 32, "hidden_size": 4096,
    "intermediate_size": 11008, "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 9})") ==
        "c.json: num_experts_per_tok = 9: must not exceed num_local_experts = 8");
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

TEST_CASE("a refused model_type names the closest supported types and what the nearest would need", "[hf_config][errors]") {
  auto err = [](const nlohmann::json& j) {
    try {
      spec_from_hf_config(j, "c.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A Qwen3-Omni MoE file (qwen3_omni_moe) lists the Qwen MoEs first; read as qwen3_vl_moe its keys would
  // do, but the layers are not assumed to be the same.
  nlohmann::json moe = nlohmann::json::parse(read_file(std::string(MHACFG_FIXTURES_DIR) + "/hf/qwen3-30b-a3b.json", "fixture"));
  moe["model_type"] = "qwen3_omni_moe";
  CHECK_THAT(err(moe), Catch::Contains("unsupported model_type (closest supported: qwen3_vl_moe, qwen3_5_moe, qwen3_moe; "
                                       "its keys also read as qwen3_vl_moe's, but mhacfg does not assume qwen3_vl_moe's "
                                       "layers;"));
  CHECK_THAT(err(nlohmann::json{{"model_type", "glm4_moe_lite_v2"}, {"hidden_size", 2048}}),
             Catch::Contains(
                 "(closest supported: glm4_moe_lite, glm4_moe, glm4v_moe_text; its keys also read as glm4_moe_lite's"));
  // A file without the nearest family's keys is told the first one it lacks.
  CHECK_THAT(err(nlohmann::json{{"model_type", "llama5"}}),
             Catch::Contains("read as llama it would need hidden_size = (missing): required key is missing;"));
}

