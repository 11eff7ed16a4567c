// Google Benchmark of the analytic evaluation: one count_model call (parameters, KV cache, FLOPs,
// bytes per decode step) per iteration, on one core. Target: >= 1,000,000 evaluations per second.
#include <benchmark/benchmark.h>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace {

mhacfg::ModelSpec fixture(const char* name) {
  return mhacfg::load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + name + ".json");
}

void evaluate(benchmark::State& state, const char* name) {
  const mhacfg::ModelSpec m = fixture(name);
  mhacfg::Workload w;
  w.batch = 8;
  w.prompt_len = 4096;
  w.context = 32768;
  for (auto _ : state) {
    w.context = 32768 + (state.iterations() & 1);  // defeat hoisting
    benchmark::DoNotOptimize(mhacfg::count_model(m, w));
  }
  state.counters["evaluations_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(evaluate, llama_3_8b, "llama-3-8b");
BENCHMARK_CAPTURE(evaluate, gemma_2_9b_alternating_windows, "gemma-2-9b");
BENCHMARK_CAPTURE(evaluate, deepseek_v3_mla_moe, "deepseek-v3");
BENCHMARK_CAPTURE(evaluate, mixtral_8x7b, "mixtral-8x7b");

// JSON input with many objects: parse_json is linear in them (the callback parser it replaced took
// 62 s on a 1.4 MB config of 100,000 empty objects).
void parse_many_objects(benchmark::State& state) {
  std::string text = "{";
  for (std::int64_t i = 0; i < state.range(0); ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": {}";
  text += "}";
  for (auto _ : state) benchmark::DoNotOptimize(mhacfg::parse_json(text, "bench"));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(parse_many_objects)->Arg(10000)->Arg(100000);

BENCHMARK_MAIN();
