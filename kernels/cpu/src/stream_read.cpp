// Streaming read ceiling: each thread sums its contiguous slice as kReadStreams equal parts read side
// by side, the access pattern that reaches a core's read bandwidth. One core of the development VM
// (1 GiB, best of 5) read one sequential stream at 14.2-15.2 GB/s, 2 streams at 16.0-16.7, 4-16 at
// 20.8-21.5 and 32 at 16.4-17.8; mhacfg's decode kernel, which sweeps 16 rows of a key tile at a
// time, reads K/V at 17-18 GB/s there.
#include "mhacfg/kernels/cpu/stream_read.hpp"

#include <omp.h>

#include <cstring>

#include <Eigen/Core>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cpu {

namespace {

constexpr std::int64_t kReadStreams = 8;
constexpr std::int64_t kLanes = 16;

typedef float f32x16 __attribute__((vector_size(64)));

double sum_streams(const float* data, std::int64_t count) {
  const std::int64_t part = count / kReadStreams / kLanes * kLanes;  // whole vectors per stream
  f32x16 acc[kReadStreams] = {};
  for (std::int64_t i = 0; i < part; i += kLanes)
    for (std::int64_t s = 0; s < kReadStreams; ++s) {
      f32x16 v;
      std::memcpy(&v, data + s * part + i, sizeof v);
      acc[s] += v;
    }
  double total = 0;
  for (const f32x16& a : acc)
    for (std::int64_t l = 0; l < kLanes; ++l) total += a[l];
  const std::int64_t done = part * kReadStreams;
  return total + Eigen::Map<const Eigen::VectorXf>(data + done, count - done).cast<double>().sum();
}

}  // namespace

double stream_read_sum(const StreamReadParams& p) {
  MHACFG_CHECK(p.data || p.count == 0, "stream_read_sum: null buffer");
  MHACFG_CHECK(p.threads >= 1, "stream_read_sum: threads must be at least 1");
  double total = 0;
#pragma omp parallel num_threads(p.threads) reduction(+ : total)
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t begin = p.count * t / threads, end = p.count * (t + 1) / threads;
    total += sum_streams(p.data + begin, end - begin);
  }
  return total;
}

}  // namespace mhacfg::kernels::cpu
