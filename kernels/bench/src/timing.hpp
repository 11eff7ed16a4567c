// The harness's timing engine: Google Benchmark runs one registered call with a warm-up, a fixed
// number of repetitions and a minimum time per repetition; a reporter collects the per-call real
// time of every repetition. Nothing is printed (the CLI writes JSON to stdout).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mhacfg/kernels/bench.hpp"

namespace mhacfg::kernels::detail {

struct Timing {
  std::vector<double> per_call_s;  // one per repetition, in run order
  double median_s = 0;
  double spread = 0;  // (p75 - p25) / median
};

// Times `call`: a warm-up of at least `warmup_s` (o.min_time_s when negative; 0 means one call),
// then o.repetitions repetitions of at least o.min_time_s each. Registers and runs one benchmark,
// then clears Google Benchmark's registry (so a host program must register its own benchmarks after
// calling this). Throws RuntimeFailure if the benchmark reports an error or no repetitions.
Timing time_call(const std::string& name, const std::function<void()>& call, const BenchOptions& o,
                 double warmup_s = -1);
// Times `calls` single calls, each its own repetition (no warm-up): per_call_s holds every call.
Timing time_single_calls(const std::string& name, const std::function<void()>& call, int calls);

// Quantile q in [0, 1] with linear interpolation between order statistics.
double quantile(std::vector<double> values, double q);

}  // namespace mhacfg::kernels::detail
