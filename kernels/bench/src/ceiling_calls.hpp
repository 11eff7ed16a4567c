// The calls the machine ceilings are measured with (shared by measure_cpu_ceilings and the
// kernels_bench targets check): a large square Eigen SGEMM and a streaming sum over a buffer far
// larger than the last-level cache, both on the given threads.
#pragma once

#include <cstdint>
#include <functional>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg::kernels::detail {

// Big enough for Eigen's best blocking (~0.1-0.3 s per call on two Sapphire Rapids cores).
inline constexpr GemmShape kCeilingGemm{2048, 2048, 2048};
// Over 3x the largest last-level cache we expect (300 MiB on the development machine).
inline constexpr std::int64_t kCeilingReadBytes = std::int64_t{1} << 30;

std::function<void()> prepare_gemm_ceiling(int threads);
std::function<void()> prepare_read_ceiling(int threads);

}  // namespace mhacfg::kernels::detail
