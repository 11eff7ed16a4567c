// Streaming read ceiling: each thread sums one contiguous slice with Eigen's vectorised reduction.
#include "mhacfg/kernels/cpu/stream_read.hpp"

#include <omp.h>

#include <Eigen/Core>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cpu {

double stream_read_sum(const StreamReadParams& p) {
  MHACFG_CHECK(p.data || p.count == 0, "stream_read_sum: null buffer");
  MHACFG_CHECK(p.threads >= 1, "stream_read_sum: threads must be at least 1");
  double total = 0;
#pragma omp parallel num_threads(p.threads) reduction(+ : total)
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t begin = p.count * t / threads, end = p.count * (t + 1) / threads;
    total += Eigen::Map<const Eigen::VectorXf>(p.data + begin, end - begin).sum();
  }
  return total;
}

}  // namespace mhacfg::kernels::cpu
