// bf16 storage for K/V caches and MLA latents on the CPU: a bf16 value is the upper 16 bits of an
// fp32, stored as std::uint16_t. fp32 -> bf16 rounds to nearest, ties to even (NaN stays NaN);
// bf16 -> fp32 is exact. Compute is always fp32; bf16 only halves the bytes a kernel reads.
#pragma once

#include <cstdint>
#include <cstring>

namespace mhacfg::kernels::cpu {

// The storage type of a bf16 element (its bit pattern).
using bf16_bits = std::uint16_t;

inline bf16_bits fp32_to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<bf16_bits>((u >> 16) | 0x0040u);  // quiet NaN
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then truncate.
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bf16_bits>(u >> 16);
}

inline float bf16_to_fp32(bf16_bits b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Bulk conversions of n elements (vectorised loops).
void fp32_to_bf16(const float* in, bf16_bits* out, std::int64_t n);
void bf16_to_fp32(const bf16_bits* in, float* out, std::int64_t n);

}  // namespace mhacfg::kernels::cpu
