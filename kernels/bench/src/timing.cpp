#include "timing.hpp"

#include <algorithm>
#include <cmath>

#include <benchmark/benchmark.h>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::detail {

namespace {

// Keeps each repetition's per-call real time; prints nothing.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      if (run.error_occurred) {
        error = run.error_message;
        continue;
      }
      if (run.iterations > 0) per_call_s.push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
    }
  }

  std::vector<double> per_call_s;
  std::string error;
};

}  // namespace

double quantile(std::vector<double> values, double q) {
  MHACFG_CHECK(!values.empty(), "quantile of no values");
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (at - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

namespace {

Timing run_registered(const std::string& name, benchmark::internal::Benchmark* b) {
  (void)b;
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, "^mhacfg_cpu_measure(/|$)");  // name/min_time:.../repeats:...
  benchmark::ClearRegisteredBenchmarks();
  if (!reporter.error.empty()) throw RuntimeFailure(name + ": " + reporter.error);
  if (reporter.per_call_s.empty()) throw RuntimeFailure(name + ": the benchmark reported no repetitions");
  Timing t;
  t.per_call_s = reporter.per_call_s;
  t.median_s = quantile(t.per_call_s, 0.5);
  t.spread = t.median_s > 0 ? (quantile(t.per_call_s, 0.75) - quantile(t.per_call_s, 0.25)) / t.median_s : 0;
  return t;
}

benchmark::internal::Benchmark* register_call(const std::function<void()>& call) {
  // A fixed name free of regex metacharacters; it is the only benchmark run.
  return benchmark::RegisterBenchmark("mhacfg_cpu_measure",
                                      [&call](benchmark::State& state) {
                                        for (auto _ : state) call();
                                      })
      ->UseRealTime()
      ->ReportAggregatesOnly(false);
}

}  // namespace

Timing time_call(const std::string& name, const std::function<void()>& call, const BenchOptions& o, double warmup_s) {
  if (o.repetitions < 1) throw InputError("repetitions", std::to_string(o.repetitions), "must be at least 1");
  if (!(o.min_time_s > 0)) throw InputError("min_time_s", std::to_string(o.min_time_s), "must be positive");
  return run_registered(name, register_call(call)
                                  ->Repetitions(o.repetitions)
                                  ->MinWarmUpTime(warmup_s < 0 ? o.min_time_s : warmup_s)
                                  ->MinTime(o.min_time_s));
}

Timing time_single_calls(const std::string& name, const std::function<void()>& call, int calls) {
  if (calls < 1) throw InputError("calls", std::to_string(calls), "must be at least 1");
  return run_registered(name, register_call(call)->Iterations(1)->Repetitions(calls));
}

}  // namespace mhacfg::kernels::detail
