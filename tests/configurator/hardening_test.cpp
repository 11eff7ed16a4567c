// Regression tests for the hardening findings (issue 26): escaping per output format, config keys
// named as written, long unknown options, model paths that hold '=', counts at 10M-token contexts,
// repeated calibration records and outputs that cannot be written.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

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

TEST_CASE("a split over devices on a profile without links is refused, not priced free", "[cli][hardening]") {
  // cpu-generic names no interconnect: --tp 8 used to price its all-reduces at 0 ms without a word.
  const std::string why = "spec.interconnect.intra_node = \"none\": 8 devices exchange data (--tp, --ep, --pp), and the "
                          "profile names no link between them (spec.interconnect or interconnect_bw_bytes_per_s)";
  expect_input_error({"analyze", "--model", "llama-3-8b", "--tp", "8", "--target", "cpu-generic"}, why);
  expect_input_error({"compare", "llama-3-8b", "mistral-7b-v0.3", "--tp", "8", "--target", "cpu-generic"}, why);
  // One device exchanges nothing: the same profile answers.
  CHECK(run({"analyze", "--model", "llama-3-8b", "--target", "cpu-generic"}).code == 0);
}

TEST_CASE("analyze, compare and recommend answer at 10M-token contexts and beyond", "[cli][hardening]") {
  // Llama-3-8B at 10M tokens (10 x 2^20): the prefill's attention, 32 layers x 32 heads x 512 FLOPs a
  // causal pair, passes 2^63. JSON writes such a count as the nearest double, the table every digit.
  const double n = 10 * 1048576.0;
  const CliResult j = run({"analyze", "--model", "llama-3-8b", "--context", "10M", "--prompt-len", "10M", "--format", "json"});
  INFO(j.err);
  REQUIRE(j.code == 0);
  const nlohmann::json flops = nlohmann::json::parse(j.out)["flops"];
  const double core = 32.0 * 32 * 512 * (n * (n + 1) / 2);
  const double prefill = core + 2 * n * 41'943'040.0 * 32 + 2 * n * (3.0 * 4096 * 14336) * 32 + 2.0 * 4096 * 128256;
  CHECK(flops["prefill_breakdown"]["attention_core"].is_number_float());
  CHECK(flops["prefill_breakdown"]["attention_core"].get<double>() == Approx(core).epsilon(1e-12));
  CHECK(flops["prefill"].get<double>() == Approx(prefill).epsilon(1e-12));
  // A count that fits 64 bits stays an exact integer: one decode token against 10M keys.
  CHECK(flops["decode_per_token"].is_number_integer());
  CHECK(flops["decode_per_token"].get<std::int64_t>() ==
        32LL * 32 * 512 * (10LL << 20) + 2LL * 41'943'040 * 32 + 2LL * 3 * 4096 * 14336 * 32 + 2LL * 4096 * 128256);
  const CliResult table = run({"analyze", "--model", "llama-3-8b", "--context", "10M", "--prompt-len", "10M"});
  CHECK(table.code == 0);
  CHECK(table.out.find(" 28,823,040,363,950,243,840 ") != std::string::npos);  // 32 x 32 x 512 x n (n + 1) / 2
  // DeepSeek-V3's MLA prefill, decompressed: 61 layers x 128 heads x (2 x 192 + 2 x 128) a pair.
  const CliResult mla = run({"analyze", "--model", "deepseek-v3", "--context", "10M", "--prompt-len", "10M", "--format", "json"});
  INFO(mla.err);
  REQUIRE(mla.code == 0);
  CHECK(nlohmann::json::parse(mla.out)["flops"]["prefill_breakdown"]["attention_core"].get<double>() ==
        Approx(61.0 * 128 * 640 * (n * (n + 1) / 2)).epsilon(1e-12));
  // Every query of a 4096-token window sees at most 4096 keys: 32 layers x 32 heads x 512 per pair.
  const CliResult window = run({"analyze", "--model", "mistral-7b-v0.1", "--context", "16M", "--prompt-len", "16M",
                                "--format", "json"});
  INFO(window.err);
  REQUIRE(window.code == 0);
  const double m16 = 16 * 1048576.0, pairs = 4096.0 * 4097 / 2 + (m16 - 4096) * 4096;
  CHECK(nlohmann::json::parse(window.out)["flops"]["prefill_breakdown"]["attention_core"].get<double>() ==
        Approx(32.0 * 32 * 512 * pairs).epsilon(1e-12));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"analyze", "--model", "llama-3-70b", "--context", "64M", "--prompt-len", "64M", "--target", "h200-sxm"},
        {"analyze", "--model", "gemma-2-9b", "--context", "10M", "--prompt-len", "10M", "--sliding-window", "4096"},
        {"compare", "llama-3-8b", "llama-3-70b", "deepseek-v3", "--context", "10M", "--target", "h200-sxm"},
        {"compare", "llama-3-8b", "mistral-7b-v0.1", "--context", "10M", "--prompt-len", "10M", "--target", "h200-sxm"},
        {"recommend", "--model", "llama-3-8b", "--context", "10M", "--target", "h200-sxm"}}) {
    const CliResult r = run(args);
    INFO(args[0] << " " << args[2] << ": " << r.err);
    CHECK((r.code == 0 || r.code == 1));  // an answer (1: nothing fits the memory), never an input error
    CHECK(!r.out.empty());
  }
  // Absurd contexts are still refused, naming the flags: 2^62 tokens, and 5 billion, whose causal pairs
  // per head pass 2^63.
  expect_input_error({"analyze", "--model", "llama-3-8b", "--context", "4611686018427387904"},
                     "--context = 4611686018427387904: out of range");
  expect_input_error({"analyze", "--model", "llama-3-8b", "--context", "5000000000", "--prompt-len", "5000000000"},
                     "attention pairs would overflow a 64-bit count; the inputs are too large (--context 5000000000, "
                     "--prompt-len 5000000000)");
}

TEST_CASE("calibrate fits a repeated record once and says so", "[cli][hardening][calibration]") {
  // The fixture's 12 GEMM timings of the H200; the first one repeated 50 times.
  std::ifstream in(fixture("h200-torch.train.jsonl"));
  std::vector<std::string> gemm;
  for (std::string line; std::getline(in, line);)
    if (line.find("\"op\": \"gemm\"") != std::string::npos) gemm.push_back(line + "\n");
  REQUIRE(gemm.size() == 12);
  std::string copies, repeated, distinct;
  for (int i = 0; i < 50; ++i) copies += gemm[0];
  for (const auto& line : gemm) distinct += line;
  repeated = copies + distinct.substr(gemm[0].size());
  const std::string out = std::string(MHACFG_BINARY_DIR) + "/hardening-repeated";
  // 50 copies of one shape are one shape: too few to fit, named with the count.
  expect_input_error({"calibrate", "--from", temp_file("hardening-copies.jsonl", copies), "--out", out + "-copies.json"},
                     "records = gemm: need at least 3 distinct shapes to fit an op class, got 1 (50 records: copies of a "
                     "shape count once)");
  // With the other 11 shapes: the same fit as the file without the copies, and a note saying so.
  const CliResult r = run({"calibrate", "--from", temp_file("hardening-repeated.jsonl", repeated), "--out", out + ".json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("Merged 49 records repeating another's shape (the same op, shape, dtype, backend and device): each "
                   "shape is fitted once, at the median of its times, and the leave-one-out error leaves it out whole.") !=
        std::string::npos);
  const CliResult d = run({"calibrate", "--from", temp_file("hardening-distinct.jsonl", distinct), "--out", out + "-distinct.json"});
  REQUIRE(d.code == 0);
  CHECK(d.out.find("Merged") == std::string::npos);
  const nlohmann::json a = nlohmann::json::parse(read_text(out + ".json"))["fits"]["gemm"];
  const nlohmann::json b = nlohmann::json::parse(read_text(out + "-distinct.json"))["fits"]["gemm"];
  CHECK(a["records"] == 12);
  CHECK(a == b);
  // Each shape left out with its copies: a real error (50 copies of one record kept it at 0.0 %).
  CHECK(a["cross_validation"]["median_ape"].get<double>() > 0.01);
}

TEST_CASE("an output nobody can write is invalid input, exit 2, as README and docs/security.md say", "[cli][hardening]") {
  const std::string records = temp_file("hardening-out.jsonl", "{\"op\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64}\n");
  // No file can be made in /proc, by root neither (root writes into a read-only folder).
  const CliResult proc = run({"predict", "--profile", "h200-sxm", "--in", records, "--out", "/proc/mhacfg-hardening.jsonl"});
  CHECK(proc.code == 2);
  CHECK(proc.out.empty());
  CHECK(proc.err.rfind("mhacfg: error: --out = /proc/mhacfg-hardening.jsonl: cannot write", 0) == 0);
  // A read-only folder, which only a user other than root cannot write.
  const std::string dir = std::string(MHACFG_BINARY_DIR) + "/hardening-read-only";
  ::mkdir(dir.c_str(), 0755);
  ::chmod(dir.c_str(), 0555);
  if (::geteuid() == 0) {
    WARN("skipped the read-only folder: running as root, which writes it");
  } else {
    const CliResult ro = run({"calibrate", "--from", fixture("h200-torch.train.jsonl"), "--out", dir + "/profile.json"});
    CHECK(ro.code == 2);
    CHECK(ro.err.rfind("mhacfg: error: --out = " + dir + "/profile.json: cannot write", 0) == 0);
  }
}
