#include "inputs.hpp"

namespace mhacfg::kernels::detail {

namespace {

// splitmix64 of (seed, index): independent per element, so threads fill disjoint ranges.
inline float uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [-1, 1)
}

}  // namespace

void fill_random(float* data, std::int64_t n, std::uint64_t seed, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) data[i] = uniform(seed, static_cast<std::uint64_t>(i));
}

void fill_random(cpu::bf16_bits* data, std::int64_t n, std::uint64_t seed, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) data[i] = cpu::fp32_to_bf16(uniform(seed, static_cast<std::uint64_t>(i)));
}

}  // namespace mhacfg::kernels::detail
