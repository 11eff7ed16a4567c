// The CPU machine probe (bench.hpp, measure_cpu_probe): the reference a calibration stores and
// --check-machine repeats, so that the two are the same calls timed the same way.
#include <algorithm>
#include <chrono>
#include <functional>

#include "ceiling_calls.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/bench.hpp"

namespace mhacfg::kernels {

namespace {

// The fastest of `calls` single calls, in seconds (steady_clock: the probe's calls are milliseconds
// long, far above the clock's resolution); `before` (untimed) runs before each.
double fastest_call_s(const std::function<void()>& call, int calls, const std::function<void()>& before = {}) {
  double best = 0;
  for (int i = 0; i < calls; ++i) {
    if (before) before();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i == 0 || s < best) best = s;
  }
  return best;
}

}  // namespace

CpuProbe::CpuProbe(int threads, detail::InputArena* arena) : threads_(threads) {
  if (threads < 1) throw InputError("threads", std::to_string(threads), "must be at least 1");
  gemm_ = detail::prepare_gemm_call(detail::kProbeGemm, threads);
  auto reads = detail::make_slice_reads(detail::kProbeReadBytes, detail::kProbeReadSliceBytes, threads, arena);
  read_ = [reads] { reads->read(); };
  evict_ = [reads] { reads->evict_next(); };
  gemm_();  // warm-up: first touch of the operands and of every slice
  for (std::int64_t i = 0; i < detail::kProbeReadBytes / detail::kProbeReadSliceBytes; ++i) read_();
}

MachineProbe CpuProbe::run(int rounds) {
  MachineProbe p;
  p.measured_at = utc_timestamp();
  p.what = "fp32 GEMM 512^3 (fastest of " + std::to_string(detail::kProbeGemmCalls) + " calls) and a read of " +
           std::to_string(detail::kProbeReadBytes >> 20) + " MiB in " + std::to_string(detail::kProbeReadSliceBytes >> 20) +
           " MiB slices, each evicted from the caches first (fastest of " + std::to_string(detail::kProbeReadCalls) +
           "), per round; " +
           std::to_string(threads_) + " thread(s)";
  const double gemm_flop = static_cast<double>(gemm_flops(detail::kProbeGemm));
  const double slice_bytes = static_cast<double>(detail::kProbeReadSliceBytes);
  for (int round = 0; round < rounds; ++round) {
    p.gemm_rounds_flop_per_s.push_back(gemm_flop / fastest_call_s(gemm_, detail::kProbeGemmCalls));
    p.stream_rounds_bytes_per_s.push_back(slice_bytes / fastest_call_s(read_, detail::kProbeReadCalls, evict_));
  }
  return p;
}

MachineProbe measure_cpu_probe(const BenchOptions& o, int rounds) { return CpuProbe(o.threads).run(rounds); }

}  // namespace mhacfg::kernels
