#include "inputs.hpp"

#include <sys/mman.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <cstdint>
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

namespace {
constexpr std::size_t kHuge = std::size_t{2} << 20;
std::size_t mapped_bytes(std::size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }
}  // namespace

void* allocate_buffer(std::size_t bytes) {
  if (bytes < kHuge) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Mapped with a huge page to spare, then trimmed to a 2 MiB-aligned run of whole huge pages.
  const std::size_t rounded = mapped_bytes(bytes);
  void* m = ::mmap(nullptr, rounded + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t aligned = (start + kHuge - 1) / kHuge * kHuge;
  if (aligned > start) ::munmap(m, aligned - start);
  if (const std::size_t tail = start + rounded + kHuge - (aligned + rounded); tail > 0)
    ::munmap(reinterpret_cast<void*>(aligned + rounded), tail);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
#endif
  return p;
}

void free_buffer(void* p, std::size_t bytes) {
  if (!p) return;
  if (bytes < kHuge) std::free(p);
  else ::munmap(p, mapped_bytes(bytes));
}

void fill_random(float* data, std::int64_t n, std::uint64_t seed, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) data[i] = uniform(seed, static_cast<std::uint64_t>(i));
}

void fill_random(cpu::bf16_bits* data, std::int64_t n, std::uint64_t seed, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) data[i] = cpu::fp32_to_bf16(uniform(seed, static_cast<std::uint64_t>(i)));
}

void InputArena::reserve(std::int64_t f32, std::int64_t bf16, int threads) {
  if (f32 > 0 && (!f32_ || f32_->size() < f32)) {
    f32_.reset();  // freed before the larger one is made (unless a view holds it)
    f32_ = std::make_shared<Buffer<float>>(random_buffer<float>(f32, 9, threads));
  }
  if (bf16 > 0 && (!bf16_ || bf16_->size() < bf16)) {
    bf16_.reset();
    bf16_ = std::make_shared<Buffer<cpu::bf16_bits>>(random_buffer<cpu::bf16_bits>(bf16, 2, threads));
  }
}

namespace {

constexpr std::size_t kCacheLine = 64;

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("clflushopt"))) void flush_lines_opt(const char* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += kCacheLine) _mm_clflushopt(const_cast<char*>(p + i));
}

// CPUID leaf 7 asked directly: clang's __builtin_cpu_supports does not know "clflushopt".
bool has_clflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (b & bit_CLFLUSHOPT) != 0;
}
#endif

}  // namespace

void evict_from_caches(const void* data, std::size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  const char* p = static_cast<const char*>(data);
  static const bool opt = has_clflushopt();
  if (opt) {
    flush_lines_opt(p, bytes);
  } else {
    for (std::size_t i = 0; i < bytes; i += kCacheLine) _mm_clflush(p + i);
  }
  _mm_mfence();
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace mhacfg::kernels::detail
