// The engine fit recovers the engine times that generated synthetic records (predict_serving with
// known constants), from a start far from them.
#include <catch2/catch.hpp>

#include <cmath>
#include <deque>

#include "mhacfg/configurator/calibrate/serving_eval.hpp"

using namespace mhacfg;

namespace {

ServingRecord record(const std::string& model, const std::string& gpu, std::int64_t tp, std::int64_t isl,
                     std::int64_t osl, std::int64_t concurrency, ServingMetric metric) {
  ServingRecord r;
  r.id = model + "/" + std::to_string(isl) + "/" + std::to_string(concurrency) + "/" + std::string(to_string(metric));
  r.where = r.id;
  r.model = model;
  r.gpu = gpu;
  r.engine = "vLLM";
  r.tp = tp;
  r.isl = isl;
  r.osl = osl;
  r.concurrency = concurrency;
  r.mode = concurrency == 1 ? ServingMode::latency : ServingMode::continuous;
  r.metric = metric;
  r.value = 1;
  return r;
}

}  // namespace

TEST_CASE("engine fit: recovers the constants that generated the records", "[serving_fit]") {
  EngineModel truth;
  truth.name = "truth";
  truth.other_ops = true;
  truth.kernel_gap_s = 4e-6;
  truth.step_overhead_s = 3e-4;
  truth.request_overhead_s = 0.02;
  truth.max_num_seqs = 256;
  std::deque<ServingRecord> records;  // stable addresses: cases point at them
  for (const char* model : {"meta-llama/Llama-2-7b-hf", "Qwen/Qwen3-30B-A3B", "meta-llama/Llama-3.3-70B-Instruct"}) {
    const std::int64_t tp = std::string(model).find("70B") != std::string::npos ? 2 : 1;
    for (std::int64_t isl : {128, 2048}) {
      records.push_back(record(model, "H100-SXM", tp, isl, 128, 1, ServingMetric::ttft_ms));
      records.push_back(record(model, "H100-SXM", tp, isl, 128, 1, ServingMetric::tpot_ms));
      records.push_back(record(model, "H100-SXM", tp, isl, 256, 16, ServingMetric::tpot_ms));
    }
  }
  ServingMapper mapper({});
  std::vector<ServingCase> cases;
  for (ServingRecord& r : records) {
    cases.push_back(mapper.map(r));
    const ServingPrediction p = predict_case(cases.back(), truth);
    REQUIRE(p.ok);
    r.value = p.predicted;  // the record measures what the true engine predicts
  }
  EngineModel start = truth;
  start.name = "vllm";
  start.kernel_gap_s = 5e-7;
  start.step_overhead_s = 5e-3;
  start.request_overhead_s = 1e-3;
  const EngineFit fit = fit_engine(cases, start);
  CHECK(fit.records == std::int64_t(records.size()));
  // Synthetic records are exact: the fit must land on the constants, not near a plausible engine.
  constexpr double kRecovered = 0.03;  // relative; the search stops at a simplex spread of 1e-7 in the loss
  CHECK(fit.engine.kernel_gap_s == Approx(truth.kernel_gap_s).epsilon(kRecovered));
  CHECK(fit.engine.step_overhead_s == Approx(truth.step_overhead_s).epsilon(kRecovered));
  CHECK(fit.engine.request_overhead_s == Approx(truth.request_overhead_s).epsilon(kRecovered));
  CHECK(fit.fit_median_ape < 0.01);
  CHECK(fit.cv_median_ape < 0.02);
  CHECK(fit.folds == 10);
  CHECK(fit.engine.name == "vllm");
}

TEST_CASE("engine fit: too few predictable records is an input error", "[serving_fit]") {
  std::deque<ServingRecord> records = {record("meta-llama/Llama-2-7b-hf", "H100-SXM", 1, 128, 128, 1, ServingMetric::ttft_ms)};
  ServingMapper mapper({});
  std::vector<ServingCase> cases = {mapper.map(records.front())};
  CHECK_THROWS_WITH(fit_engine(cases, cases.front().engine), Catch::Contains("needs at least 3"));
}
