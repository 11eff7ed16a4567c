// Golden CLI tests: exact stdout of representative commands (tests/golden/*.txt). A changed output
// is a failure; regenerate deliberately with MHACFG_UPDATE_GOLDEN=1 and review the diff.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/report/analyze.hpp"
#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"

namespace {

// Whether two outputs are the same text with the same numbers to 1e-12 relative: a build by another
// compiler (scripts/fuzz.sh's sanitized clang build) may round the last of 17 significant digits of a
// double differently from the Release build that wrote the goldens.
bool same_to_last_digits(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  auto number_at = [](const std::string& s, std::size_t k) {
    return k < s.size() && (std::isdigit(static_cast<unsigned char>(s[k])) ||
                            (s[k] == '-' && k + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[k + 1]))));
  };
  while (i < a.size() && j < b.size()) {
    if (number_at(a, i) && number_at(b, j)) {
      char *end_a = nullptr, *end_b = nullptr;
      const double x = std::strtod(a.c_str() + i, &end_a), y = std::strtod(b.c_str() + j, &end_b);
      if (std::fabs(x - y) > 1e-12 * std::max(std::fabs(x), std::fabs(y))) return false;
      i = static_cast<std::size_t>(end_a - a.c_str());
      j = static_cast<std::size_t>(end_b - b.c_str());
      continue;
    }
    if (a[i++] != b[j++]) return false;
  }
  return i == a.size() && j == b.size();
}

void golden(const std::string& name, const std::vector<std::string>& args) {
  const CliResult r = run(args);
  INFO(name << ": " << r.err);
  REQUIRE(r.code == 0);
  const std::string path = std::string(MHACFG_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("MHACFG_UPDATE_GOLDEN")) std::ofstream(path) << r.out;
#ifdef MHACFG_GOLDEN_LAST_DIGITS
  CHECK(same_to_last_digits(r.out, read_text(path)));
#else
  CHECK(r.out == read_text(path));
#endif
}

}  // namespace

TEST_CASE("the sanitized build's golden comparison forgives the last digits only", "[cli][golden]") {
  CHECK(same_to_last_digits("{\"ms\": 1.2043864941681242, \"x\": -3}", "{\"ms\": 1.2043864941681244, \"x\": -3}"));
  CHECK(same_to_last_digits("478.5115588958948 tok/s", "478.51155889589484 tok/s"));
  CHECK_FALSE(same_to_last_digits("1.2043864941681242", "1.2043864942681242"));
  CHECK_FALSE(same_to_last_digits("llama-3-8b 12", "llama-3-8b 13"));
  CHECK_FALSE(same_to_last_digits("a 1 b", "a 1 c"));
  CHECK_FALSE(same_to_last_digits("x", "xy"));
}

TEST_CASE("golden: analyze in every format", "[cli][golden]") {
  golden("analyze-llama-3-8b.txt", {"analyze", "--model", "llama-3-8b", "--context", "8192"});
  golden("analyze-gpt2.json", {"analyze", "--model", "gpt2", "--format", "json"});
  golden("analyze-deepseek-v3.md", {"analyze", "--model", "deepseek-v3", "--context", "32768", "--format", "markdown"});
  golden("analyze-mistral-7b-v0.1.csv", {"analyze", "--model", "mistral-7b-v0.1", "--context", "32k", "--format", "csv"});
  golden("analyze-llama-3-70b-tp8-h100.txt",
         {"analyze", "--model", "llama-3-70b", "--tp", "8", "--batch", "16", "--target", "h100-sxm"});
  golden("analyze-gemma-2-9b.txt", {"analyze", "--hf-config", fixture("hf/gemma-2-9b.json"), "--context", "32768"});
  // Mixed weight dtypes: gpt-oss's experts in mxfp4 beside bf16 attention, their GEMMs transferred from the
  // bf16 GEMM fit, and the note that says so.
  golden("analyze-gpt-oss-20b-mxfp4.txt", {"analyze", "--hf-config", fixture("hf/gpt-oss-20b.json"), "--weight-dtype", "bf16",
                                           "--ffn-weight-dtype", "mxfp4", "--target", "h200-sxm-cudnn", "--batch", "32"});
}

TEST_CASE("golden: profiles and recommend", "[cli][golden]") {
  golden("profiles.txt", {"profiles"});
  golden("profiles-show-h100.json", {"profiles", "show", "h100-sxm", "--format", "json"});
  golden("recommend-llama-3-8b-shape.txt", {"recommend", "--d-model", "4096", "--layers", "32", "--seq", "8192",
                                            "--target", "h100-sxm", "--tp", "1"});
  golden("recommend-7b-h200.json", {"recommend", "--params", "7B", "--seq", "32768", "--target", "h200-sxm",
                                    "--format", "json", "--top", "3"});
  golden("recommend-gpt2-shape.csv", {"recommend", "--d-model", "768", "--layers", "12", "--seq", "1024",
                                      "--target", "h100-sxm", "--format", "csv"});
}

TEST_CASE("golden: validate on published serving measurements", "[cli][golden]") {
  golden("validate-e2e-published.txt", {"validate", "--in", fixture("e2e-published.train.jsonl")});
  // Our own vLLM/SGLang set, never fitted to: its figures move only when the model does.
  golden("validate-e2e-own.txt", {"validate", "--in", fixture("e2e-own.validate.jsonl")});
}

TEST_CASE("CLI JSON equals the library's report", "[cli][library]") {
  const CliResult r = run({"analyze", "--model", "qwen2.5-7b", "--batch", "4", "--context", "16384", "--target",
                           "a100-80gb", "--format", "json"});
  REQUIRE(r.code == 0);
  mhacfg::Workload w;
  w.batch = 4;
  w.context = 16384;
  const mhacfg::Profile p = mhacfg::load_profile("a100-80gb", "--target");
  // The CLI describes the default engine's serving unless --engine says otherwise.
  const mhacfg::EngineModel engine = mhacfg::load_engine(mhacfg::kDefaultEngine);
  const auto lib = mhacfg::analyze_report(mhacfg::load_model_preset("qwen2.5-7b"), w, &p, &engine).json;
  CHECK(nlohmann::json::parse(r.out) == lib);
}

TEST_CASE("analyze JSON carries the keys scripts rely on", "[cli][json]") {
  const CliResult r = run({"analyze", "--model", "llama-3-8b", "--context", "8192", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema_version"] == "1.0");
  CHECK(j["params"]["total"] == 8'030'261'248LL);
  CHECK(j["params"]["attention"] == 1'342'177'280LL);
  CHECK(j["params"]["embedding"] == 525'336'576LL);
  CHECK(j["params"]["active"] == 8'030'261'248LL);
  CHECK(j["kv_cache"]["bytes_per_token"] == 131'072);
  CHECK(j["kv_cache"]["bytes_total"] == 131'072LL * 8192);
  CHECK(j["kv_cache"]["dtype"] == "bf16");
  CHECK(j["flops"]["prefill"].is_number_integer());
  CHECK(j["flops"]["decode_per_token"].is_number_integer());
  CHECK(j["bytes"]["decode_per_token"].is_number_integer());
}

TEST_CASE("analyze says when a model does not fit the target's memory", "[cli][json]") {
  // DeepSeek-V3's 671 B bf16 weights on one 80 GB H100: times are still shown, with the warning.
  const CliResult big = run({"analyze", "--model", "deepseek-v3", "--target", "h100-sxm", "--format", "json"});
  REQUIRE(big.code == 0);
  const auto p = nlohmann::json::parse(big.out)["predicted"];
  CHECK(p["fits_memory"] == false);
  CHECK(p["memory_bytes_per_gpu"].get<double>() > 1.3e12);
  CHECK(p["device_memory_bytes"] == 85520809984LL);  // 81559 MiB, what nvidia-smi reports for an H100 80GB
  const CliResult table = run({"analyze", "--model", "deepseek-v3", "--target", "h100-sxm"});
  CHECK(table.out.find("Does not fit: weights 1.22 TiB") != std::string::npos);
  // Llama-3-8B fits, and says nothing.
  const CliResult small = run({"analyze", "--model", "llama-3-8b", "--target", "h100-sxm", "--format", "json"});
  CHECK(nlohmann::json::parse(small.out)["predicted"]["fits_memory"] == true);
  CHECK(run({"analyze", "--model", "llama-3-8b", "--target", "h100-sxm"}).out.find("Does not fit") == std::string::npos);
}

TEST_CASE("flags override a preset, flag-only models resolve with stated defaults", "[cli][model_input]") {
  auto total = [](const std::vector<std::string>& args) {
    const CliResult r = run(args);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  // Llama-3-8B as flags: same counts as the preset when the FFN width and vocabulary are given.
  const auto flags = total({"analyze", "--d-model", "4096", "--layers", "32", "--heads", "32", "--kv-heads", "8",
                            "--ffn-dim", "14336", "--vocab", "128256", "--format", "json"});
  CHECK(flags["params"]["total"] == 8'030'261'248LL);
  CHECK(flags["model"]["attention"]["variant"] == "gqa");
  // The preset with 4 KV heads: KV halves, attention loses 2 x 4096 x 512 per layer.
  const auto mod = total({"analyze", "--model", "llama-3-8b", "--kv-heads", "4", "--format", "json"});
  CHECK(mod["kv_cache"]["bytes_per_token"] == 65'536);
  CHECK(mod["params"]["total"] == 8'030'261'248LL - 32LL * 2 * 4096 * 512);
  CHECK(mod["model"]["name"] == "llama-3-8b (modified)");
  // MLA by flags (DeepSeek-V2-Lite's attention on its own shape).
  const auto mla = total({"analyze", "--d-model", "2048", "--layers", "27", "--heads", "16", "--variant", "mla",
                          "--kv-lora-rank", "512", "--head-dim", "192", "--v-head-dim", "128", "--format", "json"});
  CHECK(mla["kv_cache"]["bytes_per_token"] == 31'104);
  CHECK(mla["params"]["attention_per_layer"] == 13'763'072);
}
