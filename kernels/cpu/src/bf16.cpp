// Bulk bf16 <-> fp32 conversions; the scalar forms in bf16.hpp define the rounding. Plain loops that
// GCC and Clang vectorise at -O2/-O3 (widening is a shift, narrowing an add and a shift).
#include "mhacfg/kernels/cpu/bf16.hpp"

namespace mhacfg::kernels::cpu {

void fp32_to_bf16(const float* in, bf16_bits* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = fp32_to_bf16(in[i]);
}

void bf16_to_fp32(const bf16_bits* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(in[i]);
}

}  // namespace mhacfg::kernels::cpu
