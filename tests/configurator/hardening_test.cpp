// Regression tests for the hardening findings (issue 26): escaping per output format, config keys
// named as written, long unknown options, and model paths that hold '='.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/report/report.hpp"

using namespace mhacfg;

namespace {

Report names_report() {
  Report r;
  r.heading = "<script>alert(1)</script> & co";
  Table t;
  t.title = "<b>models</b>";
  t.columns = {"name", "value"};
  t.rows = {{"<img src=x onerror=alert(1)>", "-1.5"}, {"=1+2", "+3e-4"}, {"@SUM(A1)", "-inf"}, {"-x", "\tq"}};
  t.right_align = {false, true};
  r.tables = {t};
  r.csv = t;
  r.notes = {"a <i>note</i>"};
  return r;
}

std::string rendered(Format f) {
  std::ostringstream out;
  render(names_report(), f, out);
  return out.str();
}

}  // namespace

TEST_CASE("markdown escapes raw HTML in names, headings and notes", "[report][hardening]") {
  const std::string md = rendered(Format::markdown);
  CHECK(md.find('<') == std::string::npos);
  CHECK(md.find("## &lt;script&gt;alert(1)&lt;/script&gt; &amp; co\n") != std::string::npos);
  CHECK(md.find("### &lt;b&gt;models&lt;/b&gt;\n") != std::string::npos);
  CHECK(md.find("| &lt;img src=x onerror=alert(1)&gt; | -1.5 |") != std::string::npos);
  CHECK(md.find("- a &lt;i&gt;note&lt;/i&gt;\n") != std::string::npos);
}

TEST_CASE("csv neutralises formula cells but keeps numbers", "[report][hardening]") {
  CHECK(rendered(Format::csv) ==
        "name,value\n"
        "<img src=x onerror=alert(1)>,-1.5\n"  // '<' is no trigger: unchanged
        "'=1+2,+3e-4\n"
        "'@SUM(A1),'-inf\n"  // not a decimal number: text, neutralised
        "'-x,'\tq\n");
}

TEST_CASE("a config key in an error is named as the config spells it", "[cli][hardening]") {
  const std::string base = R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,)"
                           R"("num_attention_heads":32,"intermediate_size":14336,"vocab_size":128256,)";
  const std::string kv = temp_file("hardening-kv.json", base + R"("num_key_value_heads":4611686018427387904})");
  expect_input_error({"analyze", "--hf-config", kv},
                     kv + ": num_key_value_heads = 4611686018427387904: must divide num_attention_heads = 32");
  const std::string wide = temp_file("hardening-wide.json", R"({"model_type":"llama","hidden_size":1099511627776,)"
                                                            R"("num_hidden_layers":32,"num_attention_heads":32,)"
                                                            R"("num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256})");
  expect_input_error({"analyze", "--hf-config", wide},
                     wide + ": parameter count would overflow a 64-bit count; the inputs are too large (hidden_size = "
                            "1099511627776, num_hidden_layers = 32, num_attention_heads = 32, num_key_value_heads = 8, "
                            "intermediate_size = 14336, vocab_size = 128256)");
}

TEST_CASE("a very long unknown option is shown cut, with its length", "[cli][hardening]") {
  const std::string name = "--" + std::string(131000, 'x');
  expect_input_error({"analyze", name},
                     "option = --" + std::string(118, 'x') + "... (131002 bytes): unknown option for analyze");
}

TEST_CASE("a compare model path holding '=' is a path when the file exists", "[cli][hardening]") {
  const std::string dir = std::string(MHACFG_BINARY_DIR) + "/lr=3e-4";
  ::mkdir(dir.c_str(), 0777);
  const std::string path = dir + "/config.json";
  std::ofstream(path) << std::ifstream(fixture("hf/deepseek-v2-lite.json")).rdbuf();
  const CliResult r = run({"compare", path, "llama-3-8b", "--format", "json"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("\"deepseek_v2\"") != std::string::npos);
  // A key=value list that names no file is still read as flags.
  const CliResult flags = run({"compare", "d-model=4096,nope=1", "llama-3-8b"});
  CHECK(flags.code == 2);
  CHECK(flags.err.rfind("mhacfg: error: --nope = (unknown): unknown option for compare", 0) == 0);
}

TEST_CASE("deepseek_v3 without MLA widths takes transformers' defaults and says so", "[cli][hardening]") {
  nlohmann::json c = nlohmann::json::parse(std::ifstream(fixture("hf/deepseek-v3.json")));
  const nlohmann::json full = c;
  for (const char* key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) c.erase(key);
  const CliResult bare = run({"analyze", "--hf-config", temp_file("hardening-v3-bare.json", c.dump())});
  const CliResult given = run({"analyze", "--hf-config", temp_file("hardening-v3-full.json", full.dump()), "--format", "json"});
  INFO(bare.err);
  CHECK(bare.code == 0);
  CHECK(bare.out.find("The config leaves out MLA widths; used transformers' DeepseekV3Config defaults: kv_lora_rank 512, "
                      "qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128.\n") != std::string::npos);
  // DeepSeek-V3's own file has the same widths: the same counts.
  const CliResult bare_json = run({"analyze", "--hf-config", temp_file("hardening-v3-bare.json", c.dump()), "--format", "json"});
  CHECK(nlohmann::json::parse(bare_json.out)["params"] == nlohmann::json::parse(given.out)["params"]);
  c = full;
  c["num_nextn_predict_layers"] = 1000000;
  const std::string mtp = temp_file("hardening-v3-mtp.json", c.dump());
  expect_input_error({"analyze", "--hf-config", mtp}, mtp + ": num_nextn_predict_layers = 1000000: more than the model's 61 layers");
}

TEST_CASE("calibrate refuses records of two devices and --save-holdout without --holdout", "[cli][hardening]") {
  std::ifstream in(fixture("h200-torch.train.jsonl"));
  std::string first, text;
  std::getline(in, first);
  text = first + "\n";
  const std::string other = "NVIDIA H100 80GB HBM3";
  text += first.replace(first.find("NVIDIA H200"), 11, other) + "\n";
  const std::string two = temp_file("hardening-two-devices.jsonl", text);
  const std::string out = std::string(MHACFG_BINARY_DIR) + "/hardening-two.json";
  expect_input_error({"calibrate", "--from", two, "--out", out},
                     "--from = " + two + ": records of two devices, \"NVIDIA H200\" and \"" + other +
                         "\"; a profile fits one device: split the file by device");
  expect_input_error({"calibrate", "--device", "cpu", "--quick", "--save-holdout", out + ".holdout", "--out", out},
                     "--save-holdout = " + out + ".holdout: needs --holdout (the shapes to measure and save)");
}
