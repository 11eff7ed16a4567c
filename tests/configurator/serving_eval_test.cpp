// validate, predict and calibrate --from on serving records, through the CLI.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"

namespace {

const std::string kTrain = fixture("e2e-published.train.jsonl");

}  // namespace

TEST_CASE("validate on serving records: summary and every row with its mapping", "[cli][serving]") {
  const CliResult r = run({"validate", "--in", kTrain, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["kind"] == "serving");
  REQUIRE(j["records"].size() == 60);
  for (const char* group : {"all", "by_metric", "by_category", "by_gpu"}) CHECK(!j["summary"][group].empty());
  std::size_t predicted = 0;
  for (const auto& row : j["records"]) {
    CHECK(row["mapping"].contains("profile"));
    CHECK(row["mapping"].contains("engine"));
    CHECK(row["mapping"].contains("mode"));
    if (!row["predicted"].is_null()) {
      ++predicted;
      CHECK(row["mapping"].contains("batch"));
      CHECK(row["ape"].get<double>() == Approx(std::fabs(row["predicted"].get<double>() / row["value"].get<double>() - 1)));
    } else {
      CHECK(!row["not_predicted"].get<std::string>().empty());
    }
  }
  CHECK(predicted == j["records_predicted"].get<std::size_t>());
  CHECK(j["summary"]["all"][0]["records"] == predicted);
  // e2e-001: Llama-2-70B on 4 H100, TensorRT-LLM static batching.
  CHECK(j["records"][0]["mapping"]["model"] == "llama-2-70b");
  CHECK(j["records"][0]["mapping"]["profile"] == "h100-sxm");
  CHECK(j["records"][0]["mapping"]["engine"] == "trtllm");
  CHECK(j["records"][0]["mapping"]["mode"] == "static_batch");
}

TEST_CASE("predict on serving records adds the predicted value", "[cli][serving]") {
  const CliResult r = run({"predict", "--in", fixture("serving/vllm-bench-serve.json")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    CHECK(j["predicted"].get<double>() > 0);
    CHECK(j["mapping"]["model"] == "llama-3-8b");
    CHECK(j["mapping"]["profile"] == "h200-sxm-cudnn");
    ++n;
  }
  CHECK(n == 4);
}

TEST_CASE("serving mapping errors: exit 2 and one line", "[cli][serving]") {
  const std::string bad = temp_file("serving-bad-gpu.jsonl",
                                    R"({"model":"meta-llama/Llama-2-7b-hf","gpu":"TPU v5","tp":1,"isl":128,"osl":1,"concurrency":1,"engine":"vLLM","metric":"ttft_ms","value":10})"
                                    "\n");
  expect_input_error({"validate", "--in", bad},
                     bad + ":1: gpu = TPU v5: no row of the GPU table maps it (docs/calibration.md); give --profile");
  expect_input_error({"validate", "--in", fixture("serving/sglang-bench-serving.jsonl")},
                     fixture("serving/sglang-bench-serving.jsonl") +
                         ":1: model = (missing): the record does not name the model: add it (vLLM --metadata model=ID, or mhacfg --set model=ID)");
  expect_input_error({"calibrate", "--from", kTrain, "--out", temp_file("unused-engine.json", "")},
                     "--engine = (missing): calibrate --from with serving records needs --engine NAME: the engine fitted");
}

TEST_CASE("SGLang results with --set validate", "[cli][serving]") {
  const CliResult r = run({"validate", "--in", fixture("serving/sglang-bench-serving.jsonl"), "--set",
                           "model=Qwen/Qwen3-30B-A3B", "--set", "gpu=A100", "--format", "csv"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("qwen3-30b-a3b,a100-80gb,sglang,latency") != std::string::npos);
}

TEST_CASE("calibrate --from serving records writes an engine that --engine reads", "[cli][serving]") {
  const std::string out = std::string(MHACFG_BINARY_DIR) + "/fitted-engine.json";
  const CliResult r = run({"calibrate", "--from", fixture("serving/vllm-bench-serve.json"), "--engine", "vllm",
                           "--out", out, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto engine = nlohmann::json::parse(read_text(out));
  CHECK(engine["name"] == "vllm-fitted");
  CHECK(engine["fit"]["records"] == 4);
  CHECK(engine["fit"]["from"] == fixture("serving/vllm-bench-serve.json"));
  const CliResult v = run({"validate", "--in", fixture("serving/vllm-bench-serve.json"), "--engine", out, "--format", "json"});
  INFO(v.err);
  REQUIRE(v.code == 0);
  CHECK(nlohmann::json::parse(v.out)["summary"]["all"][0]["median_ape"].get<double>() <=
        engine["fit"]["median_ape"].get<double>() + 1e-9);
}
