// Inputs as users write them: size suffixes on token lengths and counts, presets named with their
// versions (aliases, names of several releases refused), and `mhacfg models`, which lists the presets.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/common/describe.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using mhacfg::SizeUnits;

namespace {

nlohmann::json json_of(const std::vector<std::string>& args) {
  const CliResult r = run(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

// The same output, whether a flag's value is written out or with its suffix.
void same_output(std::vector<std::string> args, const std::string& flag, const std::string& suffixed, const std::string& plain) {
  args.push_back(flag);
  args.push_back(suffixed);
  const CliResult a = run(args);
  args.back() = plain;
  const CliResult b = run(args);
  INFO(flag << " " << suffixed << " against " << plain << ": " << a.err);
  CHECK(a.code == 0);
  CHECK(a.out == b.out);
}

}  // namespace

TEST_CASE("token lengths take k and m in powers of 1024, counts of sequences in powers of 1000", "[cli][inputs]") {
  CHECK(mhacfg::parse_size("--context", "128k", SizeUnits::tokens) == 131072);
  CHECK(mhacfg::parse_size("--context", "128K", SizeUnits::tokens) == 131072);
  CHECK(mhacfg::parse_size("--context", "1M", SizeUnits::tokens) == 1048576);
  CHECK(mhacfg::parse_size("--context", "1m", SizeUnits::tokens) == 1048576);
  CHECK(mhacfg::parse_size("--context", "1.5k", SizeUnits::tokens) == 1536);
  CHECK(mhacfg::parse_size("--context", "0.25M", SizeUnits::tokens) == 262144);
  CHECK(mhacfg::parse_size("--context", "+8192", SizeUnits::tokens) == 8192);
  CHECK(mhacfg::parse_size("--context", "8192", SizeUnits::tokens) == 8192);
  CHECK(mhacfg::parse_size("--sliding-window", "0", SizeUnits::tokens, false) == 0);
  CHECK(mhacfg::parse_size("--sliding-window", "-0", SizeUnits::tokens, false) == 0);
  CHECK(mhacfg::parse_size("--batch", "1k", SizeUnits::sequences) == 1000);
  CHECK(mhacfg::parse_size("--batch", "2.5K", SizeUnits::sequences) == 2500);
  CHECK(mhacfg::parse_size("--batch", "1m", SizeUnits::sequences) == 1000000);

  // Through the commands: the workload holds the number the suffix names.
  const auto w = json_of({"analyze", "--model", "gpt2", "--context", "1k", "--prompt-len", "0.5k", "--batch", "1k", "--format", "json"});
  CHECK(w["workload"]["context"] == 1024);
  CHECK(w["workload"]["prompt_len"] == 512);
  CHECK(w["workload"]["batch"] == 1000);
  const auto win = json_of({"analyze", "--model", "gpt2", "--sliding-window", "0.5k", "--format", "json"});
  CHECK(win["model"]["layer_pattern"]["windows"] == nlohmann::json::array({512}));
  same_output({"analyze", "--model", "llama-3-8b", "--global-every", "4"}, "--attention-chunk", "8k", "8192");
  same_output({"analyze", "--model", "deepseek-v3"}, "--index-topk", "2K", "2048");
  same_output({"recommend", "--params", "1B", "--top", "2"}, "--context", "32k", "32768");
  same_output({"recommend", "--params", "1B", "--top", "2"}, "--seq", "4K", "4096");
  same_output({"recommend", "--params", "1B", "--top", "2", "--context", "4096", "--global-every", "2"}, "--sliding-window", "1k", "1024");
  same_output({"recommend", "--params", "1B", "--top", "2", "--context", "64k"}, "--index-topk", "2k", "2048");
  same_output({"recommend", "--params", "1B", "--top", "2", "--context", "8k"}, "--batch", "0.1k", "100");
}

TEST_CASE("junk in a token length or a count exits 2 naming the flag and the value", "[cli][inputs][errors]") {
  const std::string tokens = "must be an integer or a token length such as 32k (32768) or 1M (1048576)";
  for (const std::string bad : {"32kk", "32kb", "k", "1e3", "0x10", " 32k", "32k ", "1.", ".5k", "1,024", "1_024", "32 k", "1G"})
    expect_input_error({"analyze", "--model", "gpt2", "--context", bad}, "--context = " + bad + ": " + tokens);
  expect_input_error({"analyze", "--model", "gpt2", "--context", ""}, "--context = \"\": " + tokens);
  expect_input_error({"analyze", "--model", "gpt2", "--context", "1.3k"}, "--context = 1.3k: must be an integer number of tokens");
  expect_input_error({"analyze", "--model", "gpt2", "--context", "-1k"}, "--context = -1k: must be positive");
  expect_input_error({"analyze", "--model", "gpt2", "--prompt-len", "0k"}, "--prompt-len = 0k: must be positive");
  expect_input_error({"analyze", "--model", "gpt2", "--context", "99999999999999999999"}, "--context = 99999999999999999999: out of range");
  expect_input_error({"analyze", "--model", "gpt2", "--context", "9000000000000000m"}, "--context = 9000000000000000m: out of range");
  expect_input_error({"analyze", "--model", "gpt2", "--sliding-window", "-4k"}, "--sliding-window = -4k: must not be negative");
  expect_input_error({"analyze", "--model", "gpt2", "--attention-chunk", "8kk"}, "--attention-chunk = 8kk: " + tokens);
  expect_input_error({"analyze", "--model", "deepseek-v3", "--index-topk", "2x"}, "--index-topk = 2x: " + tokens);
  expect_input_error({"recommend", "--params", "1B", "--seq", "32q"}, "--seq = 32q: " + tokens);
  expect_input_error({"recommend", "--params", "1B", "--index-topk", "0.001k"}, "--index-topk = 0.001k: must be an integer number of tokens");
  expect_input_error({"analyze", "--model", "gpt2", "--batch", "1.0005k"}, "--batch = 1.0005k: must be an integer number of sequences");
  expect_input_error({"analyze", "--model", "gpt2", "--batch", "2.5"}, "--batch = 2.5: must be an integer");
  expect_input_error({"recommend", "--params", "1B", "--batch", "8x"},
                     "--batch = 8x: must be an integer or a count such as 1k (1000)");
  // Widths and vocabularies are written out: a vocabulary's "32k" is 32000 or 32768 by model.
  expect_input_error({"analyze", "--model", "llama-3-8b", "--vocab", "32k"}, "--vocab = 32k: must be an integer");
  expect_input_error({"recommend", "--params", "1B", "--top", "1k"}, "--top = 1k: must be an integer");
}

TEST_CASE("presets carry their versions: an alias shows its preset, a name of several releases is refused", "[cli][inputs]") {
  expect_input_error({"analyze", "--model", "mistral-7b"},
                     "--model = mistral-7b: names 2 releases that count differently: mistral-7b-v0.1 (4096-token sliding "
                     "window, vocabulary 32000), mistral-7b-v0.3 (full attention, vocabulary 32768); give one (mhacfg "
                     "models lists the presets)");
  expect_input_error({"compare", "mistral-7b", "llama-3-8b"},
                     "--model = mistral-7b: names 2 releases that count differently: mistral-7b-v0.1 (4096-token sliding "
                     "window, vocabulary 32000), mistral-7b-v0.3 (full attention, vocabulary 32768); give one (mhacfg "
                     "models lists the presets)");
  // The releases themselves, as their published totals say (tests/fixtures/hf/PUBLISHED.md).
  CHECK(json_of({"analyze", "--model", "mistral-7b-v0.1", "--format", "json"})["params"]["total"] == 7241732096);
  CHECK(json_of({"analyze", "--model", "mistral-7b-v0.3", "--format", "json"})["params"]["total"] == 7248023552);
  // An alias: the outputs name the preset it means.
  const CliResult a = run({"analyze", "--model", "mixtral-8x7b"});
  REQUIRE(a.code == 0);
  CHECK(a.out.rfind("mixtral-8x7b-v0.1 (mixtral): ", 0) == 0);
  CHECK(json_of({"analyze", "--model", "mixtral-8x7b", "--format", "json"})["model"]["name"] == "mixtral-8x7b-v0.1");
  const auto cmp = json_of({"compare", "mixtral-8x7b", "llama-3-8b", "--format", "json"});
  CHECK(cmp["models"][0]["label"] == "mixtral-8x7b-v0.1");
  const CliResult c = run({"compare", "mixtral-8x7b", "llama-3-8b"});
  CHECK(c.out.find("vs mixtral-8x7b-v0.1") != std::string::npos);
  // A cut name is offered the preset it begins, with its version.
  expect_input_error({"analyze", "--model", "mixtral-8x7"}, "--model = mixtral-8x7: unknown model preset (did you mean mixtral-8x7b-v0.1?)");
}

TEST_CASE("every shipped preset loads, names its source, and is no other preset under a second name", "[inputs]") {
  const auto presets = mhacfg::model_presets();
  REQUIRE(presets.size() == mhacfg::model_preset_names().size());
  std::set<std::string> seen;
  for (const auto& p : presets) {
    INFO(p.name);
    const mhacfg::ModelSpec m = mhacfg::load_model_preset(p.name);
    CHECK(m.name == p.name);
    CHECK(p.source.find('/') != std::string::npos);
    nlohmann::json shape = mhacfg::model_json(m);
    shape.erase("name");
    CHECK(seen.insert(shape.dump()).second);  // two names of one config would list one model twice
  }
  // Every checked config of tests/fixtures/hf is a preset of its name or an alias of one with the same
  // counts, so `mhacfg models` lists what the project ships; falcon-7b-refinedweb is falcon-7b in the
  // older RefinedWeb keys, a parser test rather than a model.
  const std::vector<std::string> names = mhacfg::model_preset_names();
  for (const auto& entry : std::filesystem::directory_iterator(fixture("hf"))) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    if (name == "falcon-7b-refinedweb") continue;
    INFO(name << ": add it to MHACFG_MODEL_PRESETS (configurator/CMakeLists.txt) and kSources (presets.cpp)");
    const mhacfg::ModelSpec file = mhacfg::load_hf_config(entry.path().string());
    const mhacfg::ModelSpec preset = mhacfg::load_model_preset(name);
    CHECK(mhacfg::count_params(preset).total == mhacfg::count_params(file).total);
    CHECK(preset.vocab_size == file.vocab_size);
  }
}

TEST_CASE("models lists every preset with its shape, context and source, and the other names --model takes", "[cli][inputs]") {
  const auto j = json_of({"models", "--format", "json"});
  REQUIRE(j["presets"].size() == mhacfg::model_presets().size());
  nlohmann::json llama, dsv3, falcon;
  for (const auto& p : j["presets"]) {
    if (p["name"] == "llama-3-8b") llama = p;
    if (p["name"] == "deepseek-v3") dsv3 = p;
    if (p["name"] == "falcon-7b") falcon = p;
  }
  CHECK(llama["source"] == "meta-llama/Meta-Llama-3-8B");
  CHECK(llama["family"] == "llama");
  CHECK(llama["params"] == 8030261248);
  CHECK(llama["variant"] == "gqa");
  CHECK(llama["num_q_heads"] == 32);
  CHECK(llama["num_kv_heads"] == 8);
  CHECK(llama["head_dim"] == 128);
  CHECK(llama["max_context"] == 8192);
  CHECK(llama["kv_lora_rank"].is_null());
  CHECK(dsv3["variant"] == "mla");
  CHECK(dsv3["kv_lora_rank"] == 512);
  CHECK(dsv3["params"] == 671026419200);
  CHECK(falcon["max_context"].is_null());  // the file states none
  CHECK(j["aliases"].size() == mhacfg::model_preset_aliases().size());

  const CliResult t = run({"models"});
  REQUIRE(t.code == 0);
  CHECK(t.out.find("  llama-3-8b ") != std::string::npos);
  CHECK(t.out.find("meta-llama/Meta-Llama-3-8B") != std::string::npos);
  CHECK(t.out.find("128/latent 512") != std::string::npos);  // DeepSeek's MLA
  CHECK(t.out.find("mistral-7b names mistral-7b-v0.1 or mistral-7b-v0.3") != std::string::npos);
  CHECK(run({"--help"}).out.find("  models ") != std::string::npos);
  expect_input_error({"models", "--format", "csv"}, "--format = csv: unknown format (expected table, json)");
  expect_input_error({"models", "extra"}, "models = (extra argument): takes no positional arguments; see mhacfg models --help");
}
