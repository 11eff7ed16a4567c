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

BENCHMARK_MAIN();
