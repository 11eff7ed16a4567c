// Google Benchmark of the recommender's default search (all candidates evaluated, ranked and
// explained). Target: under 100 ms per search; the counter gives candidates evaluated per second.
#include <benchmark/benchmark.h>

#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/configurator/search/recommend.hpp"

namespace {

void search(benchmark::State& state, std::int64_t d, std::int64_t layers, std::int64_t tp, const char* target) {
  mhacfg::RecommendOptions o;
  o.d_model = d;
  o.layers = layers;
  o.workload = o.workload.serving(8192);
  o.workload.tp = tp;
  o.target = target;
  const mhacfg::Profile p = mhacfg::load_profile(target, "--target");
  std::int64_t evaluated = 0;
  for (auto _ : state) {
    const mhacfg::Recommendation r = mhacfg::recommend(o, p);
    evaluated += r.evaluated;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["candidates_per_s"] = benchmark::Counter(double(evaluated), benchmark::Counter::kIsRate);
  state.counters["candidates"] = double(evaluated) / double(state.iterations());
}

}  // namespace

BENCHMARK_CAPTURE(search, d4096_l32_h100, 4096, 32, 1, "h100-sxm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search, d8192_l80_tp8_h100, 8192, 80, 8, "h100-sxm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search, d768_l12_h100, 768, 12, 1, "h100-sxm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search, d4096_l32_cpu_any_head_dim, 4096, 32, 1, "cpu-generic")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
