// Serving records from the three formats: mhacfg's JSONL, vLLM's --save-result JSON, SGLang's JSONL.
#include <catch2/catch.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/serving_records.hpp"

using namespace mhacfg;

namespace {
std::string fixture(const std::string& rel) { return std::string(MHACFG_FIXTURES_DIR) + "/" + rel; }
}  // namespace

TEST_CASE("serving JSONL: the published training file reads with its free text mapped", "[serving_records]") {
  const auto rs = read_serving_records(fixture("e2e-published.train.jsonl"), "--in");
  REQUIRE(rs.size() == 60);
  const ServingRecord& first = rs.front();  // e2e-001: TensorRT-LLM static batching, batch 1, TTFT
  CHECK(first.id == "e2e-001");
  CHECK(first.model == "meta-llama/Llama-2-70b-hf");
  CHECK(first.tp == 4);
  CHECK(first.mode == ServingMode::static_batch);
  CHECK(first.batch == 1);
  CHECK(first.metric == ServingMetric::ttft_ms);
  CHECK(first.value == 26);
  CHECK(first.weight_dtype == "fp8");
  CHECK(first.unusable.empty());
  for (const ServingRecord& r : rs) {
    if (r.id == "e2e-037") CHECK(r.model == "deepseek-ai/DeepSeek-R1");  // "(NVFP4 MoE via ModelOpt)" dropped
    if (r.id == "e2e-039") {
      CHECK(r.mode == ServingMode::latency);
      CHECK(r.kv_dtype.empty());  // "unstated"
    }
    if (r.id == "e2e-044") {
      CHECK(r.mode == ServingMode::continuous);
      CHECK(r.concurrency == 25);
      CHECK(r.metric == ServingMetric::itl_ms);
    }
    if (r.id == "e2e-017") CHECK(r.concurrency == 0);  // max throughput
    if (r.id == "e2e-066") CHECK(r.unusable == "tp not given");
    if (r.id == "e2e-033") CHECK(r.unusable == "speculative decoding is not modelled");
    if (r.id == "e2e-072") CHECK(r.weight_dtype == "fp8");  // "fp8 (block-scaled, native checkpoint)"
  }
}

TEST_CASE("dtype words: the first dtype word, unstated, or an error naming the field", "[serving_records]") {
  CHECK(dtype_word("fp8 (block-scaled, native R1 checkpoint)", "f") == "fp8");
  CHECK(dtype_word("nvfp4 MoE (mixed: attention bf16)", "f") == "nvfp4");
  CHECK(dtype_word("bf16 (assumed, HF checkpoint)", "f") == "bf16");
  CHECK(dtype_word("unstated (FP8 build)", "f").empty());
  CHECK(dtype_word("FLOAT16", "f") == "fp16");
  CHECK_THROWS_WITH(dtype_word("half precision", "x.jsonl:3: weight_dtype"),
                    Catch::StartsWith("x.jsonl:3: weight_dtype = half precision: names no dtype"));
}

TEST_CASE("vLLM bench serve result: one record per metric, lengths from the totals", "[serving_records]") {
  const auto rs = read_serving_records(fixture("serving/vllm-bench-serve.json"), "--in");
  REQUIRE(rs.size() == 4);
  CHECK(rs[0].format == "vllm");
  CHECK(rs[0].model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(rs[0].gpu == "H200");            // from --metadata gpu=H200
  CHECK(rs[0].engine == "vllm");
  CHECK(rs[0].isl == 1024);              // 65536 / 64
  CHECK(rs[0].osl == 256);               // 16384 / 64
  CHECK(rs[0].concurrency == 8);
  CHECK(rs[0].category == "fixed_concurrency");
  CHECK(rs[0].metric == ServingMetric::ttft_ms);
  CHECK(rs[0].value == 58.3);            // the median
  CHECK(rs[1].metric == ServingMetric::tpot_ms);
  CHECK(rs[2].metric == ServingMetric::latency_ms);
  CHECK(rs[3].metric == ServingMetric::output_tokens_per_s);
  CHECK(rs[3].value == 799.2);
}

TEST_CASE("SGLang bench_serving JSONL: Infinity read, model and GPU from the defaults", "[serving_records]") {
  const std::string path = fixture("serving/sglang-bench-serving.jsonl");
  CHECK_THROWS_WITH(read_serving_records(path, "--in"), Catch::Contains(": model = (missing)"));
  const auto rs = read_serving_records(path, "--in", {{"model", "Qwen/Qwen3-30B-A3B"}, {"gpu", "A100"}});
  REQUIRE(rs.size() == 8);
  CHECK(rs[0].engine == "sglang");
  CHECK(rs[0].mode == ServingMode::latency);
  CHECK(rs[0].category == "latency_c1");
  CHECK(rs[0].isl == 2048);
  CHECK(rs[0].osl == 128);
  CHECK(rs[4].concurrency == 16);
  CHECK(rs[4].mode == ServingMode::continuous);
}

TEST_CASE("serving records: multi-step scheduling and the benchmark's ITL as the record states them", "[serving_records]") {
  // Our validation set quotes vLLM 0.6's launch (--num-scheduler-steps 10) in its notes; SGLang's rows do not.
  const auto own = read_serving_records(fixture("e2e-own.validate.jsonl"), "--in");
  for (const ServingRecord& r : own) {
    if (r.id == "own-010") CHECK(r.scheduler_steps == 10);
    if (r.id == "own-009") CHECK(r.scheduler_steps == 0);
    if (r.metric == ServingMetric::itl_ms) CHECK_FALSE(r.itl_per_request);  // SGLang's and vLLM's chunk gaps
  }
  // NIM's rows were measured with GenAI-Perf/AIPerf: each request's mean gap.
  for (const ServingRecord& r : read_serving_records(fixture("e2e-published.train.jsonl"), "--in"))
    if (r.id == "e2e-044") CHECK(r.itl_per_request);
  const std::string base = R"({"model":"m","gpu":"H100","metric":"itl_ms","value":10,"isl":1,"osl":2)";
  CHECK(parse_serving_records(base + R"(,"num_scheduler_steps":4})", "s.jsonl").front().scheduler_steps == 4);
  CHECK(parse_serving_records(base + R"(,"engine_args":"vllm serve m --num_scheduler_steps=8"})", "s.jsonl").front().scheduler_steps == 8);
  CHECK(parse_serving_records(base + "}", "s.jsonl").front().scheduler_steps == 0);
  CHECK_THROWS_WITH(parse_serving_records(base + R"(,"num_scheduler_steps":0})", "s.jsonl"),
                    Catch::Contains("num_scheduler_steps = 0"));
  // Predicted as the benchmark defines the metric: chunk gaps, or a request's mean gap (its TPOT).
  ServingTimes t;
  t.tpot_ms = 12;
  t.itl_ms = 10;
  ServingRecord chunked = parse_serving_records(base + "}", "s.jsonl").front();
  CHECK(serving_metric_value(t, chunked) == 10);
  chunked.itl_per_request = true;
  CHECK(serving_metric_value(t, chunked) == 12);
}

TEST_CASE("serving records: bad lines are one-line errors naming the line and field", "[serving_records]") {
  CHECK_THROWS_WITH(parse_serving_records(R"({"model":"m","gpu":"H100","metric":"speed","value":1})", "s.jsonl"),
                    Catch::StartsWith("s.jsonl:1: metric = speed: unknown serving metric"));
  CHECK_THROWS_WITH(parse_serving_records(R"({"model":"m","gpu":"H100","metric":"ttft_ms","value":-2})", "s.jsonl"),
                    Catch::StartsWith("s.jsonl:1: value = -2: must be positive"));
  CHECK_THROWS_WITH(parse_serving_records("{\"op\":\"gemm\"}", "s.jsonl"), Catch::Contains("not a serving record"));
  CHECK(is_serving_text("{\"metric\":\"ttft_ms\"}\n"));
  CHECK_FALSE(is_serving_text("{\"op\":\"gemm\",\"m\":1}\n"));
}
