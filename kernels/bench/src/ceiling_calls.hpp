// The calls the machine ceilings are measured with (shared by measure_cpu_ceilings and the
// kernels_bench targets check): a large square Eigen SGEMM and a streaming sum over a buffer far
// larger than the last-level cache, both on the given threads.
#pragma once

#include <cstdint>
#include <functional>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg::kernels::detail {

// Each call stays under ~25 ms on one core, like the calibration grid's: on a shared VM whose other
// tenants slow every core for ~80 ms of each ~200 ms, a longer call always overlaps a slow phase. The
// first ceilings (a 2048^3 SGEMM, ~150 ms, and a 1 GiB read, ~70 ms) came out 10-30 % low in some
// calibrations, and the fits inherited it (held-out median 6.0 % with a read ceiling of 11.6 GB/s,
// 3.6 % with 15.6 GB/s, on the same machine). 1024^3 reaches Eigen's full rate (128 GFLOP/s against
// 121 for 2048^3 on the development VM, fastest calls).
inline constexpr GemmShape kCeilingGemm{1024, 1024, 1024};
// The read ceiling streams a buffer over 3x the largest last-level cache we expect (300 MiB on the
// development machine), one slice per call, round robin: each slice is cold when read again.
inline constexpr std::int64_t kCeilingReadBytes = std::int64_t{1} << 30;
inline constexpr std::int64_t kCeilingReadSliceBytes = std::int64_t{64} << 20;  // bytes per call
// Single calls timed for a ceiling; the fastest one is the machine's own speed.
inline constexpr int kCeilingCalls = 40;

std::function<void()> prepare_gemm_ceiling(int threads);
std::function<void()> prepare_read_ceiling(int threads);  // reads kCeilingReadSliceBytes per call

}  // namespace mhacfg::kernels::detail
