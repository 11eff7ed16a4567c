#include "inputs.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

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

void* allocate_buffer(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (bytes < kHuge) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, rounded);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
#endif
  return p;
}

void free_buffer(void* p) { std::free(p); }

void fill_random(float* data, std::int64_t n, std::uint64_t seed, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) data[i] = uniform(seed, static_cast<std::uint64_t>(i));
}

void fill_random(cpu::bf16_bits* data, std::int64_t n, std::uint64_t seed, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) data[i] = cpu::fp32_to_bf16(uniform(seed, static_cast<std::uint64_t>(i)));
}

}  // namespace mhacfg::kernels::detail
