// The calibration loop through the CLI: calibrate --from on the shared H200 records, predict (same
// order, predicted_ms added, extrapolation flagged), validate (per class and overall), record parsing
// errors, and the profile round trip.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/calibrate/calibration_grid.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace {
std::string path(const std::string& name) { return std::string(MHACFG_BINARY_DIR) + "/" + name; }
std::string write(const std::string& name, const std::string& content) {
  std::ofstream(path(name)) << content;
  return path(name);
}
}  // namespace

TEST_CASE("calibrate --from fits the shared H200 records and writes a measured profile", "[calibration][cli]") {
  const std::string out = path("h200-fit.json");
  const CliResult r = run({"calibrate", "--from", fixture("h200-torch.train.jsonl"), "--attention-backend", "cudnn,torch-bmm",
                           "--out", out, "--holdout", fixture("h200-gpu-md-check.jsonl"), "--format", "json"});
  REQUIRE(r.code == 0);
  const mhacfg::Profile p = mhacfg::load_profile_file(out);
  CHECK(p.source == "measured");
  CHECK(p.name == "h200-sxm-measured");
  CHECK(p.spec.memory_bytes == 150'754'820'096);  // the h200-sxm spec (143771 MiB), chosen from "NVIDIA H200"
  CHECK(p.ops.count("attention/prefill") == 1);
  CHECK(p.ops.count("attention/decode") == 1);
  CHECK(p.ops.count("attention/decode/mla") == 1);
  CHECK(p.ops.count("gemm") == 1);
  CHECK(p.ops.at("attention/decode").records == 24);  // cudnn only: the flash records are filtered out
  CHECK(p.ops.at("attention/decode").cv_median_ape < 0.06);
  CHECK(p.ops.at("attention/prefill").cv_median_ape < 0.07);
  REQUIRE(p.validation.size() == 1);
  CHECK(p.validation[0].records == 4);
  CHECK(p.provenance["from"] == fixture("h200-torch.train.jsonl"));
  // The JSON summary printed is the profile written.
  CHECK(nlohmann::json::parse(r.out) == mhacfg::profile_to_json(p));
}

TEST_CASE("the project's own H200 timings refit to the shipped profile's held-out error", "[calibration][cli]") {
  // tests/fixtures/h200-mhacfg-cuda.*: the grid and held-out shapes that `calibrate --device cuda`
  // measured on the H200 for profiles/h200-sxm.json (2026-11-30, scripts/device/h200_check.sh).
  // Fitting them again here, without a GPU, must give the same model: issue 5's bar is a held-out
  // median of at most 5 % (p90 at most 15 %, as for the CPU).
  const std::string out = path("h200-own.json");
  const CliResult r = run({"calibrate", "--from", fixture("h200-mhacfg-cuda.grid.jsonl"), "--holdout",
                           fixture("h200-mhacfg-cuda.holdout.jsonl"), "--out", out, "--format", "json"});
  REQUIRE(r.code == 0);
  const mhacfg::Profile p = mhacfg::load_profile_file(out);
  REQUIRE(p.validation.size() == 1);
  CHECK(p.validation[0].records == 21);
  CHECK(p.validation[0].median_ape <= 0.05);
  CHECK(p.validation[0].p90_ape <= 0.15);
  // The shipped profile was fitted on the device from the same timings: same fits, same error.
  const mhacfg::Profile shipped = mhacfg::load_profile("h200-sxm", "--target");
  REQUIRE(shipped.validation.size() == 1);
  CHECK(p.validation[0].median_ape == Approx(shipped.validation[0].median_ape).epsilon(1e-3));  // another CPU: last digits differ
  for (const auto& [cls, fit] : shipped.ops) {
    INFO(cls);
    REQUIRE(p.ops.count(cls) == 1);
    CHECK(p.ops.at(cls).records == fit.records);
    CHECK(p.ops.at(cls).fit_median_ape == Approx(fit.fit_median_ape).epsilon(1e-3));
  }
}

TEST_CASE("predict writes every record back in order with predicted_ms", "[calibration][cli]") {
  const std::string prof = path("h200-fit2.json");
  const CliResult cal = run({"calibrate", "--from", fixture("h200-torch.train.jsonl"), "--attention-backend", "cudnn", "--out", prof});
  REQUIRE(cal.code == 0);
  // cuDNN has no MLA kernel: the file's two-bmm MLA timings fit that class, and the summary says so.
  CHECK(cal.out.find("attention/decode/mla: no records of the chosen attention backends; used those of torch-bmm.") !=
        std::string::npos);
  const std::string in = write("mixed.jsonl",
      "{\"op\": \"gemm\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"note\": \"kept\"}\n"
      "\n"
      "{\"op\": \"attention\", \"phase\": \"decode\", \"batch\": 16, \"q_len\": 1, \"kv_len\": 8192, \"num_q_heads\": 64, \"num_kv_heads\": 8, \"head_dim\": 128}\n"
      "{\"op\": \"attention_block\", \"phase\": \"prefill\", \"d_model\": 4096, \"batch\": 1, \"q_len\": 4096, \"kv_len\": 4096, \"num_q_heads\": 32, \"num_kv_heads\": 8, \"head_dim\": 128, \"causal\": true}\n"
      "{\"op\": \"attention\", \"phase\": \"decode\", \"batch\": 1, \"q_len\": 1, \"kv_len\": 4096, \"num_q_heads\": 16, \"num_kv_heads\": 1, \"kv_lora_rank\": 512, \"rope_head_dim\": 64}\n"
      "{\"op\": \"attention\", \"phase\": \"decode\", \"batch\": 512, \"q_len\": 1, \"kv_len\": 262144, \"num_q_heads\": 32, \"num_kv_heads\": 8, \"head_dim\": 128}\n");
  const CliResult r = run({"predict", "--profile", prof, "--in", in});
  REQUIRE(r.code == 0);
  std::vector<nlohmann::json> lines;
  std::istringstream ss(r.out);
  for (std::string l; std::getline(ss, l);) lines.push_back(nlohmann::json::parse(l));
  REQUIRE(lines.size() == 5);
  CHECK(lines[0]["op"] == "gemm");
  CHECK(lines[0]["note"] == "kept");  // unknown fields survive
  CHECK(lines[1]["num_q_heads"] == 64);
  CHECK(lines[2]["op"] == "attention_block");
  for (const auto& l : lines) CHECK(l["predicted_ms"].get<double>() > 0);
  CHECK(lines[0]["predicted_basis"] == "measured");
  CHECK(lines[3]["predicted_basis"] == "kernel_class");  // MLA decode: the FlashMLA class, not the torch-bmm fit
  CHECK(lines[4]["extrapolated"] == true);  // 512 sequences of 262144 tokens: bytes beyond the fit
  CHECK_FALSE(lines[1].contains("extrapolated"));
  // A block is its QKV GEMM + attention + O GEMM.
  const double block = lines[2]["predicted_ms"];
  CHECK(block > lines[0]["predicted_ms"].get<double>());
}

TEST_CASE("validate reports per-class and overall errors, a perfect profile scores zero", "[calibration][cli]") {
  const std::string prof = path("h200-fit3.json");
  REQUIRE(run({"calibrate", "--from", fixture("h200-torch.train.jsonl"), "--attention-backend", "cudnn", "--out", prof}).code == 0);
  // Predicted records relabelled as measured: validate must report 0 % error.
  const CliResult pr = run({"predict", "--profile", prof, "--in", fixture("h200-gpu-md-check.jsonl")});
  std::string measured;
  std::istringstream ss(pr.out);
  for (std::string l; std::getline(ss, l);) {
    auto j = nlohmann::json::parse(l);
    j["time_ms"] = j["predicted_ms"];
    measured += j.dump() + "\n";
  }
  const CliResult v = run({"validate", "--profile", prof, "--in", write("self.jsonl", measured), "--format", "json"});
  REQUIRE(v.code == 0);
  const auto doc = nlohmann::json::parse(v.out);
  for (const auto& c : doc["classes"]) CHECK(c["median_ape"].get<double>() < 1e-9);
  CHECK_THAT(run({"validate", "--profile", prof, "--in", path("self.jsonl")}).out, !Catch::Contains("shift this uniform"));
  // The same records measured 15 % slower (a machine slower than at calibration): every prediction is
  // 13 % fast, and validate says the shift is uniform.
  std::string slower;
  std::istringstream ms(run({"predict", "--profile", prof, "--in", fixture("h200-torch.train.jsonl")}).out);
  for (std::string l; std::getline(ms, l);) {
    auto j = nlohmann::json::parse(l);
    j["time_ms"] = j["predicted_ms"].get<double>() * 1.15;
    slower += j.dump() + "\n";
  }
  const CliResult sv = run({"validate", "--profile", prof, "--in", write("slower.jsonl", slower), "--format", "json"});
  REQUIRE(sv.code == 0);
  CHECK(nlohmann::json::parse(sv.out)["classes"].back()["median_error"].get<double>() == Approx(1 / 1.15 - 1));
  CHECK_THAT(run({"validate", "--profile", prof, "--in", path("slower.jsonl")}).out,
             Catch::Contains("Predictions are fast on 100 % of the records (median -13.0 %)"));
  const CliResult real = run({"validate", "--profile", prof, "--in", fixture("h200-torch.train.jsonl"),
                              "--attention-backend", "cudnn", "--format", "json"});
  const auto rd = nlohmann::json::parse(real.out);
  CHECK(rd["classes"].back()["op_class"] == "all");
  CHECK(rd["classes"].back()["records"] == 68);  // 48 cuDNN + 8 two-bmm MLA (no cuDNN MLA) + 12 GEMMs
  // A class no record of any backend covers is predicted by the roofline, and says so.
  const CliResult roof = run({"predict", "--profile", prof, "--in", write("mla-prefill.jsonl",
      "{\"op\": \"attention\", \"phase\": \"prefill\", \"batch\": 1, \"q_len\": 1024, \"kv_len\": 1024, \"num_q_heads\": 16, "
      "\"num_kv_heads\": 1, \"kv_lora_rank\": 512, \"rope_head_dim\": 64, \"causal\": true}\n")});
  REQUIRE(roof.code == 0);
  CHECK(nlohmann::json::parse(roof.out)["predicted_basis"] == "roofline");
}

TEST_CASE("record errors name the file, line and field", "[calibration][errors]") {
  const std::string bad = write("bad.jsonl", "{\"op\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3}\n{\"op\": \"gemm\", \"m\": 0, \"n\": 2, \"k\": 3}\n");
  CliResult r = run({"predict", "--profile", "h100-sxm", "--in", bad});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: " + bad + ":2: m = 0: must be positive\n");
  const std::string op = write("op.jsonl", "{\"op\": \"conv\"}\n");
  r = run({"predict", "--profile", "h100-sxm", "--in", op});
  CHECK(r.err == "mhacfg: error: " + op + ":1: op = \"conv\": unknown op (expected attention, gemm, attention_block, linear_attention or indexer)\n");
  // Indexer records: fp8 (the default), the queries the last q_len positions of kv_len.
  const std::string idx = "{\"op\": \"indexer\", \"phase\": \"decode\", \"batch\": 1, \"q_len\": 1, \"kv_len\": 4096, "
                          "\"num_heads\": 64, \"head_dim\": 128, \"topk\": 2048";
  const std::string idx16 = write("idx16.jsonl", idx + ", \"dtype\": \"bf16\"}\n");
  r = run({"predict", "--profile", "h100-sxm", "--in", idx16});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: " + idx16 + ":1: dtype = \"bf16\": an indexer's keys and queries are fp8 (as the engines cache them)\n");
  const std::string idx_q = write("idxq.jsonl", "{\"op\": \"indexer\", \"phase\": \"prefill\", \"batch\": 1, \"q_len\": 8, \"kv_len\": 4, "
                                                "\"num_heads\": 4, \"head_dim\": 128, \"topk\": 2}\n");
  r = run({"predict", "--profile", "h100-sxm", "--in", idx_q});
  CHECK(r.err == "mhacfg: error: " + idx_q + ":1: q_len = 8: must not exceed kv_len = 4\n");
  const std::string idx_k = write("idxk.jsonl", idx.substr(0, idx.find(", \"topk\"")) + "}\n");
  r = run({"predict", "--profile", "h100-sxm", "--in", idx_k});
  CHECK(r.err == "mhacfg: error: " + idx_k + ":1: topk = (missing): required key is missing\n");
  // ... and a profile without an indexer fit predicts one by its roofline: the FLOPs at the fp8 peak.
  r = run({"predict", "--profile", "h100-sxm", "--in", write("idx.jsonl", idx + "}\n")});
  REQUIRE(r.code == 0);
  const nlohmann::json pi = nlohmann::json::parse(r.out);
  CHECK(pi["predicted_basis"] == "roofline");
  CHECK(pi["predicted_ms"].get<double>() > 0);
  const std::string q = write("q.jsonl", "{\"op\": \"attention\", \"phase\": \"decode\", \"batch\": 1, \"q_len\": 9, \"kv_len\": 4, \"num_q_heads\": 4, \"num_kv_heads\": 2, \"head_dim\": 64}\n");
  r = run({"predict", "--profile", "h100-sxm", "--in", q});
  CHECK(r.err == "mhacfg: error: " + q + ":1: q_len = 9: must not exceed kv_len = 4\n");
  const std::string prefill = "{\"op\": \"attention\", \"phase\": \"prefill\", \"batch\": 1, \"q_len\": 4096, "
                              "\"kv_len\": 4096, \"num_q_heads\": 40, \"num_kv_heads\": 8, \"head_dim\": 128";
  const std::string both = write("both.jsonl", prefill + ", \"window\": 512, \"chunk\": 1024}\n");
  r = run({"predict", "--profile", "h100-sxm", "--in", both});
  CHECK(r.err == "mhacfg: error: " + both + ":1: chunk = 1024: cannot be combined with window = 512\n");
  const std::string open_chunk = write("open.jsonl", prefill + ", \"causal\": false, \"chunk\": 1024}\n");
  r = run({"predict", "--profile", "h100-sxm", "--in", open_chunk});
  CHECK(r.err == "mhacfg: error: " + open_chunk + ":1: chunk = 1024: chunked attention needs causal = true\n");
  // A chunked record keeps its chunk and costs its chunks' causal triangles: 4096 tokens in chunks of
  // 1024 cost what four 1024-token prefills cost, on a GPU profile's model of either.
  const std::string four = "{\"op\": \"attention\", \"phase\": \"prefill\", \"batch\": 4, \"q_len\": 1024, "
                           "\"kv_len\": 1024, \"num_q_heads\": 40, \"num_kv_heads\": 8, \"head_dim\": 128}\n";
  for (const char* profile : {"h100-sxm", "h200-sxm-cudnn"}) {
    INFO(profile);
    r = run({"predict", "--profile", profile, "--in",
             write("chunked.jsonl", prefill + "}\n" + prefill + ", \"chunk\": 1024}\n" + four)});
    REQUIRE(r.code == 0);
    std::vector<nlohmann::json> out;
    std::istringstream lines(r.out);
    for (std::string l; std::getline(lines, l);) out.push_back(nlohmann::json::parse(l));
    REQUIRE(out.size() == 3);
    CHECK(!out[0].contains("chunk"));
    CHECK(out[1]["chunk"] == 1024);
    CHECK(out[1]["predicted_ms"].get<double>() == Approx(out[2]["predicted_ms"].get<double>()).epsilon(1e-9));
    CHECK(out[1]["predicted_ms"].get<double>() < 0.5 * out[0]["predicted_ms"].get<double>());
  }
  // A record whose counts overflow 64 bits is named by its line.
  const std::string huge = write("huge.jsonl", "{\"op\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64}\n"
                                               "{\"op\": \"attention\", \"phase\": \"decode\", \"batch\": 1000000000000000000, "
                                               "\"q_len\": 1, \"kv_len\": 4096, \"num_q_heads\": 32, \"num_kv_heads\": 8, \"head_dim\": 128}\n");
  r = run({"predict", "--profile", "h200-sxm", "--in", huge});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: " + huge + ":2: attention FLOPs would overflow a 64-bit count; the inputs are too large\n");
  // Blank lines count: the untimed record is named by its line, 3.
  const std::string gap = write("gap.jsonl", "{\"op\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"time_ms\": 0.1}\n\n"
                                             "{\"op\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3}\n");
  r = run({"validate", "--profile", "h100-sxm", "--in", gap});
  CHECK(r.err == "mhacfg: error: " + gap + ":3 = (no time_ms): validate needs measured records\n");
  const std::string untimed = write("untimed.jsonl", "{\"op\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3}\n");
  r = run({"calibrate", "--from", untimed, "--base", "h100-sxm", "--out", path("never.json")});
  CHECK(r.code == 2);
  CHECK(r.err.find("calibration needs timed records") != std::string::npos);
}

TEST_CASE("linear_attention records: read, predicted on the CPU profile's fit, and refused with their field", "[calibration][cli]") {
  const std::string step = "{\"op\": \"linear_attention\", \"phase\": \"decode\", \"kind\": \"gated_deltanet\", "
                           "\"num_k_heads\": 16, \"num_v_heads\": 32, \"head_k_dim\": 128, \"head_v_dim\": 128, "
                           "\"conv_kernel\": 4, \"dtype\": \"bf16\"";
  const std::string in = write("linear.jsonl", step + ", \"batch\": 4, \"q_len\": 1}\n" + step + ", \"batch\": 8, \"q_len\": 1}\n");
  // The shipped CPU profile fits the class (mhacfg's CPU kernel measured it); a GPU profile has no fit.
  CliResult r = run({"predict", "--profile", "cpu-xeon-2vcpu", "--in", in});
  REQUIRE(r.code == 0);
  std::vector<nlohmann::json> out;
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) out.push_back(nlohmann::json::parse(l));
  REQUIRE(out.size() == 2);
  CHECK(out[0]["predicted_basis"] == "measured");
  CHECK(out[0]["kind"] == "gated_deltanet");
  CHECK(out[1]["batch"] == 8);
  CHECK(out[1]["predicted_ms"].get<double>() > 1.5 * out[0]["predicted_ms"].get<double>());
  r = run({"predict", "--profile", "h200-sxm", "--in", in});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out.substr(0, r.out.find('\n')))["predicted_basis"] == "roofline");
  const std::string kind = write("linear-kind.jsonl", "{\"op\": \"linear_attention\", \"phase\": \"decode\", \"kind\": \"rwkv7\"}\n");
  r = run({"predict", "--profile", "cpu-xeon-2vcpu", "--in", kind});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: " + kind + ":1: kind = \"rwkv7\": must be \"gated_deltanet\", \"mamba2\" or \"kda\"\n");
  const std::string two = write("linear-two.jsonl", step + ", \"batch\": 1, \"q_len\": 2}\n");
  r = run({"predict", "--profile", "cpu-xeon-2vcpu", "--in", two});
  CHECK(r.err == "mhacfg: error: " + two + ":1: q_len = 2: a linear_attention decode step takes one token (q_len 1)\n");
  const std::string heads = write("linear-heads.jsonl", "{\"op\": \"linear_attention\", \"phase\": \"decode\", \"kind\": \"mamba2\", \"batch\": 1, \"q_len\": 1, "
                                                  "\"num_k_heads\": 3, \"num_v_heads\": 32, \"head_k_dim\": 64, \"head_v_dim\": 64, "
                                                  "\"conv_kernel\": 4}\n");
  r = run({"predict", "--profile", "cpu-xeon-2vcpu", "--in", heads});
  CHECK(r.err == "mhacfg: error: " + heads + ":1: num_k_heads = 3: must divide num_v_heads = 32\n");
  const std::string wide = write("linear-wide.jsonl", "{\"op\": \"linear_attention\", \"phase\": \"decode\", \"kind\": \"mamba2\", "
                                                       "\"batch\": 1, \"q_len\": 1, \"num_k_heads\": 4611686018427387904, "
                                                       "\"num_v_heads\": 4611686018427387904, \"head_k_dim\": 64, \"head_v_dim\": 64, "
                                                       "\"conv_kernel\": 4}\n");
  r = run({"predict", "--profile", "cpu-xeon-2vcpu", "--in", wide});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: " + wide + ":1: num_v_heads = 4611686018427387904: the convolution's width 2 x num_k_heads x "
                                            "head_k_dim + num_v_heads x head_v_dim overflows a 64-bit count\n");
  // The CPU harness runs it.
  const std::string tiny = write("tiny-linear.jsonl", "{\"op\": \"linear_attention\", \"phase\": \"prefill\", \"kind\": \"mamba2\", "
                                                       "\"batch\": 1, \"q_len\": 8, \"num_k_heads\": 1, \"num_v_heads\": 2, "
                                                       "\"head_k_dim\": 16, \"head_v_dim\": 8, \"conv_kernel\": 4, \"dtype\": \"fp32\"}\n");
  r = run({"bench", "--in", tiny, "--repetitions", "1"});
  REQUIRE(r.code == 0);
  const auto timed = nlohmann::json::parse(r.out);
  CHECK(timed["backend"] == "mhacfg-cpu");
  CHECK(timed["time_ms"].get<double>() > 0);
}

TEST_CASE("KDA timings: measured by the CPU harness, imported into classes of their own, then used", "[calibration][cli]") {
  using namespace mhacfg;
  // Kimi Linear's KDA layer (32 heads of 128, 4 taps) decoding batches of 1 to 64 on a GPU, measured
  // elsewhere: a fixed cost plus the state's bytes at 3 TB/s (synthetic, to check the loop end to end).
  std::string records;
  for (std::int64_t batch : {1, 2, 4, 8, 16, 32, 64, 128}) {
    const LinearAttentionShape s{batch, 1, 32, 32, 128, 128, 4, LinearKind::kda};
    const double ms = 0.006 + double(linear_attention_bytes(s, DType::bf16)) / 3e12 * 1e3;
    records += "{\"op\": \"linear_attention\", \"phase\": \"decode\", \"kind\": \"kda\", \"batch\": " + std::to_string(batch) +
               ", \"q_len\": 1, \"num_k_heads\": 32, \"num_v_heads\": 32, \"head_k_dim\": 128, \"head_v_dim\": 128, "
               "\"conv_kernel\": 4, \"dtype\": \"bf16\", \"device\": \"NVIDIA H200\", \"backend\": \"fla\", \"time_ms\": " +
               std::to_string(ms) + "}\n";
  }
  // GEMM records so that the profile has its ceilings' class too.
  for (std::int64_t m : {1, 16, 256, 4096})
    records += "{\"op\": \"gemm\", \"m\": " + std::to_string(m) + ", \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\", \"device\": "
               "\"NVIDIA H200\", \"backend\": \"cublas\", \"time_ms\": " + std::to_string(0.01 + 2.0 * m * 4096 * 4096 / 700e12 * 1e3) + "}\n";
  const std::string in = write("kda.jsonl", records);
  // mhacfg's CPU kernel runs KDA: bench times a small step.
  const std::string one = "{\"op\": \"linear_attention\", \"phase\": \"decode\", \"kind\": \"kda\", \"batch\": 2, \"q_len\": 1, "
                          "\"num_k_heads\": 2, \"num_v_heads\": 2, \"head_k_dim\": 32, \"head_v_dim\": 32, \"conv_kernel\": 4, "
                          "\"dtype\": \"bf16\"}\n";
  CliResult r = run({"bench", "--in", write("kda-one.jsonl", one), "--repetitions", "1"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["kind"] == "kda");
  CHECK(nlohmann::json::parse(r.out)["time_ms"].get<double>() > 0);
  const std::string out = path("kda-profile.json");
  r = run({"calibrate", "--from", in, "--name", "kda-test", "--out", out});
  REQUIRE(r.code == 0);
  const Profile p = load_profile_file(out);
  REQUIRE(p.ops.count("linear_attention/decode/kda") == 1);
  CHECK(p.ops.count("linear_attention/decode") == 0);
  // The fitted class predicts its own records within a few percent and a Kimi Linear layer uses it.
  r = run({"validate", "--profile", out, "--in", in, "--format", "json"});
  REQUIRE(r.code == 0);
  bool seen = false;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& c : doc["classes"]) {
    if (c["op_class"] != "linear_attention/decode/kda") continue;
    seen = true;
    CHECK(c["records"] == 8);
    CHECK(c["median_ape"].get<double>() < 0.05);
  }
  CHECK(seen);
  const Predictor pred(p);
  CHECK(pred.linear_attention({8, 1, 32, 32, 128, 128, 4, LinearKind::kda}, Phase::decode, DType::bf16).basis.kind == mhacfg::BasisKind::measured);
  CHECK_FALSE(pred.linear_attention({8, 1, 32, 32, 128, 128, 4, LinearKind::gated_deltanet}, Phase::decode, DType::bf16).basis.kind == mhacfg::BasisKind::measured);
}

TEST_CASE("a failed calibration leaves an existing profile untouched", "[calibration][errors]") {
  const std::string out = write("keep.json", "{\"precious\": true}\n");
  const std::string two = write("two.jsonl", "{\"op\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3, \"time_ms\": 0.01}\n"
                                              "{\"op\": \"gemm\", \"m\": 2, \"n\": 2, \"k\": 3, \"time_ms\": 0.01}\n");
  const CliResult r = run({"calibrate", "--from", two, "--base", "h100-sxm", "--out", out});
  CHECK(r.code == 2);  // two records cannot fit a class
  CHECK(r.err.find("need at least 3 timed records") != std::string::npos);
  std::ifstream in(out);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(content == "{\"precious\": true}\n");
}

TEST_CASE("calibrate refuses flags of the other mode, unknown backends and unwritable outputs before working", "[calibration][errors]") {
  const std::string train = fixture("h200-torch.train.jsonl");
  CliResult r = run({"calibrate", "--from", train, "--quick", "--out", path("q.json")});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: --quick = (with --from): only used with --device\n");
  r = run({"calibrate", "--from", train, "--save-measurements", path("m.jsonl"), "--out", path("q.json")});
  CHECK(r.err == "mhacfg: error: --save-measurements = (with --from): only used with --device\n");
  r = run({"calibrate", "--device", "cpu", "--base", "h100-sxm", "--out", path("q.json")});
  CHECK(r.err == "mhacfg: error: --base = (with --device): only used with --from\n");
  r = run({"calibrate", "--from", train, "--attention-backend", "cudnn,nosuch", "--out", path("q.json")});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: --attention-backend = nosuch: no attention record has this backend (they have: cudnn, flash, torch-bmm)\n");
  r = run({"validate", "--profile", "h200-sxm-cudnn", "--in", train, "--attention-backend", "cudnn2"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--attention-backend = cudnn2: no attention record has this backend") != std::string::npos);
  // An output in a missing folder fails at once, before the ceilings or the grid are measured.
  r = run({"calibrate", "--device", "cpu", "--quick", "--out", path("no-such-folder/p.json")});
  CHECK(r.code == 2);
  CHECK(r.err.find("--out = " + path("no-such-folder/p.json") + ": cannot write: folder") != std::string::npos);
  r = run({"bench", "--in", fixture("cpu-holdout-shapes.jsonl"), "--out", path("no-such-folder/b.jsonl")});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
}

TEST_CASE("calibrate writes no profile that would not load back", "[calibration][errors]") {
  // A base whose FLOP ceiling is 1e-300 is refused when read (every prediction was inf) ...
  auto base = mhacfg::profile_to_json(mhacfg::load_profile("h100-sxm", "--target"));
  base["spec"]["peak_flop_per_s"] = {{"bf16", 1e-300}};
  const std::string tiny = write("tiny.json", base.dump());
  const std::string out = write("keep2.json", "{\"precious\": true}\n");
  const CliResult r = run({"calibrate", "--from", fixture("h200-torch.train.jsonl"), "--base", tiny, "--out", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("peak_flop_per_s.bf16 = 1e-300: must be a number of at least 1e6 FLOP/s") != std::string::npos);
  std::ifstream in(out);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(content == "{\"precious\": true}\n");
}

TEST_CASE("a profile without the work's dtype uses its nearest listed peak, never none", "[calibration][profile]") {
  // The CPU profile lists fp32 only (its kernels widen bf16): a bf16 MLA prefill, predicted by the
  // roofline (the profile has no MLA-prefill fit), costs the same compute as in fp32, not nothing.
  const std::string rec = "{\"op\": \"attention\", \"phase\": \"prefill\", \"batch\": 1, \"q_len\": 4096, "
                          "\"kv_len\": 4096, \"num_q_heads\": 32, \"num_kv_heads\": 1, \"kv_lora_rank\": 512, "
                          "\"rope_head_dim\": 64, \"dtype\": \"DT\"}\n";
  auto predicted = [&](const std::string& dtype) {
    std::string text = rec;
    text.replace(text.find("DT"), 2, dtype);
    const CliResult r = run({"predict", "--profile", "cpu-xeon-2vcpu", "--in", write("mla-" + dtype + ".jsonl", text)});
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out)["predicted_ms"].get<double>();
  };
  const double bf16 = predicted("bf16"), fp32 = predicted("fp32");
  CHECK(bf16 > 0.5 * fp32);  // compute-bound: bf16 halves only the bytes (was 12.95 ms against 3907)
  const mhacfg::Profile cpu = mhacfg::load_profile("cpu-xeon-2vcpu", "--target");
  CHECK(cpu.peak_flop_per_s(mhacfg::DType::bf16) == cpu.peak_flop_per_s(mhacfg::DType::fp32));
}

TEST_CASE("measured times outside a nanosecond to a day are input errors", "[calibration][errors]") {
  const std::string tiny = write("tiny-time.jsonl", "{\"op\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"time_ms\": 1e-300}\n");
  const CliResult r = run({"validate", "--profile", "h200-sxm", "--in", tiny});
  CHECK(r.code == 2);
  CHECK(r.err == "mhacfg: error: " + tiny + ":1: time_ms = 1e-300: must be between 1e-6 (1 ns) and 8.64e7 (a day)\n");
}

TEST_CASE("profile files round trip and reject bad fields", "[calibration][profile]") {
  const mhacfg::Profile h = mhacfg::load_profile("h200-sxm", "--target");
  const auto j = mhacfg::profile_to_json(h);
  CHECK(mhacfg::profile_to_json(mhacfg::profile_from_json(j, "x")) == j);
  auto bad = j;
  bad["spec"]["mem_bw_bytes_per_s"] = -1;
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), "p.json: spec: mem_bw_bytes_per_s = -1: must be at least 1e6 per second");
  // Absurdly small ceilings made every prediction inf; a negative interconnect made comms free.
  bad = j;
  bad["spec"]["peak_flop_per_s"] = {{"bf16", 1e-300}};
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"),
                    "p.json: spec: peak_flop_per_s.bf16 = 1e-300: must be a number of at least 1e6 FLOP/s");
  bad = j;
  bad["spec"]["interconnect_bw_bytes_per_s"] = -1;
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"),
                    "p.json: spec: interconnect_bw_bytes_per_s = -1: must be 0 (none) or at least 1e6 per second");
  bad = j;
  bad["fits"]["attention/decoder"] = bad["fits"]["gemm"];
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), Catch::StartsWith("p.json: fits.attention/decoder = {...}: unknown op class"));
  // Fitted rates below 1e3/s and half-points above 1e9 made predictions inf, NaN or 1e300 s.
  bad = j;
  bad["fits"]["gemm"]["model"]["bw_bytes_per_s"] = 1e-300;
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"),
                    "p.json: fits.gemm: model: bw_bytes_per_s = 1e-300: must be 0 (unused) or at least 1e3 per second");
  bad = j;
  bad["fits"]["gemm"]["model"]["half_streams"] = 1e300;
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), "p.json: fits.gemm: model: half_streams = 1e+300: must be at most 1e9");
  bad = j;
  bad["fits"]["gemm"]["range"] = {{"bytes", {1e12, 1}}};
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), Catch::Contains("must be [min, max] with min <= max"));
  bad = j;
  bad["name"] = "two\nlines";
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), "p.json: name = \"two\\nlines\": must be one line of printable text");
  bad = j;
  bad["device"] = "GPU\r";
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), "p.json: device = \"GPU\\r\": must be one line of printable text");
  bad = j;
  bad["source"] = "guess";
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), "p.json: source = \"guess\": must be \"datasheet\" or \"measured\"");
  // A datasheet profile (no fits) naming an op class: cpu-generic, which no measured profile transfers to
  // (h100-sxm loads with h200-sxm's fits transferred).
  auto sheet = mhacfg::profile_to_json(mhacfg::load_profile("cpu-generic", "--target"));
  REQUIRE(sheet["fits"].empty());
  sheet["ops"] = {"gemm"};
  CHECK_THROWS_WITH(mhacfg::profile_from_json(sheet, "p.json"), "p.json: ops = \"gemm\": lists an op class with no entry in fits");
  // A measured profile whose ops list misses a fitted class.
  REQUIRE(h.calibrated());
  bad = j;
  bad["ops"] = {"gemm"};
  CHECK_THROWS_WITH(mhacfg::profile_from_json(bad, "p.json"), "p.json: ops = [\"gemm\"]: must list every op class in fits");
}

TEST_CASE("the CUDA grid measures both indexer classes, none of them a held-out shape", "[calibration]") {
  // calibrate --device cuda fits indexer/decode and indexer/prefill from these records (mhacfg's CUDA
  // indexer); h200_check.sh validates on tests/fixtures/h200-holdout-shapes.jsonl, which must stay apart.
  const std::vector<mhacfg::MeasurementRecord> grid = mhacfg::calibration_grid(mhacfg::GridDevice::cuda, false);
  std::set<std::string> held_out;
  for (const auto& r : mhacfg::read_records(fixture("h200-holdout-shapes.jsonl")))
    if (r.op() == mhacfg::OpKind::indexer) held_out.insert(mhacfg::record_to_json(r).dump());
  CHECK(held_out.size() >= 4);
  std::map<std::string, std::vector<const mhacfg::MeasurementRecord*>> by_class;
  std::vector<mhacfg::MeasurementRecord> timed;
  timed.reserve(grid.size());
  for (const auto& r : grid) {
    if (r.op() != mhacfg::OpKind::indexer) continue;
    INFO(r.json.dump());
    CHECK(r.dtype == mhacfg::DType::fp8);
    CHECK(held_out.count(mhacfg::record_to_json(r).dump()) == 0);
    // A roofline of an fp8 tensor-core kernel on an H200 plus a launch cost: the class's features must
    // fit it (enough distinct shapes for the fit and its leave-one-out).
    mhacfg::MeasurementRecord t = r;
    const mhacfg::OpFeatures f = mhacfg::record_features(t);
    t.time_ms = 1e3 * (std::max(f.bytes / 4.3e12, f.flop / 6e14) + 8e-6);
    timed.push_back(t);
  }
  for (const auto& t : timed) by_class[t.op_class()].push_back(&t);
  REQUIRE(by_class.size() == 2);
  mhacfg::SpecCeilings h200;
  h200.memory_bytes = 141'000'000'000;
  h200.mem_bw_bytes_per_s = 4.8e12;
  h200.peak_flop_per_s["fp8"] = 1979e12;
  h200.compute_units = 132;
  for (const auto& [op_class, records] : by_class) {
    INFO(op_class);
    CHECK(records.size() >= 12);
    const mhacfg::OpFit fit = mhacfg::fit_op_class(op_class, records, h200);
    CHECK(fit.records == static_cast<std::int64_t>(records.size()));
    CHECK(fit.fit_median_ape < 0.10);
  }
}

TEST_CASE("the CUDA grid measures fp8 GEMMs and fp8-KV decodes, none of them a held-out shape", "[calibration]") {
  const std::vector<mhacfg::MeasurementRecord> grid = mhacfg::calibration_grid(mhacfg::GridDevice::cuda, false);
  std::map<std::string, int> per_class;
  std::set<std::string> shapes;
  for (const auto& r : grid) {
    ++per_class[r.op_class()];
    shapes.insert(mhacfg::record_to_json(r).dump());
  }
  CHECK(per_class["gemm"] == 25);
  CHECK(per_class["gemm/fp8"] == 26);
  CHECK(per_class["attention/decode/fp8"] == 27);
  for (const auto& r : grid) {
    INFO(r.json.dump());
    if (r.op_class() == "gemm/fp8")  // cuBLASLt's fp8 kernels: n and k multiples of 16 (kernels/cuda/src/gemm.cpp)
      CHECK((r.gemm().n % 16 == 0 && r.gemm().k % 16 == 0));
    if (r.op_class() == "attention/decode/fp8")  // mhacfg's fp8 KV decode: head_dim 64 and 128
      CHECK((r.attention().head_dim == 64 || r.attention().head_dim == 128));
  }
  // The speed tool's fp8 bar shape and a decode-sized fp8 GEMM are fitted.
  mhacfg::MeasurementRecord bar;
  bar.shape = mhacfg::GemmOp{mhacfg::GemmShape{8192, 8192, 8192}};
  bar.dtype = mhacfg::DType::fp8;
  CHECK(shapes.count(mhacfg::record_to_json(bar).dump()) == 1);
  bar.shape = mhacfg::GemmOp{mhacfg::GemmShape{1, 6144, 4096}};
  CHECK(shapes.count(mhacfg::record_to_json(bar).dump()) == 1);
  // Held out means not measured for the fit.
  int fp8_held = 0;
  for (const auto& r : mhacfg::read_records(fixture("h200-holdout-shapes.jsonl"))) {
    INFO(r.json.dump());
    CHECK(shapes.count(mhacfg::record_to_json(r).dump()) == 0);
    fp8_held += r.dtype == mhacfg::DType::fp8 && r.op() != mhacfg::OpKind::indexer;
  }
  CHECK(fp8_held == 8);
}
