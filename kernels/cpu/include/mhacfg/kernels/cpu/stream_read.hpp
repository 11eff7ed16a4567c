// The read-bandwidth ceiling kernel: a sum-reduction over a buffer, split evenly across threads, each
// thread reading its slice as several streams side by side (stream_read.cpp says why).
// Decode attention is quoted against this number, so it lives next to the kernels and uses the same
// threading and vector code.
#pragma once

#include <cstdint>

namespace mhacfg::kernels::cpu {

struct StreamReadParams {
  const float* data = nullptr;  // [count]
  std::int64_t count = 0;
  int threads = 1;
};

// Sum of all elements (returned so the reads cannot be optimised away).
double stream_read_sum(const StreamReadParams& p);

}  // namespace mhacfg::kernels::cpu
