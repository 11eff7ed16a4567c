// Fresh random inputs for timed kernels: uninitialised buffers filled in parallel (first touch by
// the threads that will read them) with values uniform in [-1, 1), never zeros. A counter-based
// generator keeps a 1 GiB fill well under a second.
#pragma once

#include <cstdint>
#include <memory>

#include "mhacfg/kernels/cpu/bf16.hpp"

namespace mhacfg::kernels::detail {

// Uninitialised memory for n elements, 2 MiB aligned and advised to be backed by transparent huge
// pages (MADV_HUGEPAGE) when it spans at least one: with 4 KiB pages a kernel streaming a K/V cache
// larger than the last-level cache also misses the TLB on every page.
void* allocate_buffer(std::size_t bytes);
void free_buffer(void* p);

template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::int64_t n)
      : n_(n), data_(static_cast<T*>(allocate_buffer(static_cast<std::size_t>(n) * sizeof(T)))) {}
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::int64_t size() const { return n_; }

 private:
  struct Free {
    void operator()(T* p) const { free_buffer(p); }
  };
  std::int64_t n_ = 0;
  std::unique_ptr<T, Free> data_;
};

// Fills with uniform values in [-1, 1), a different stream per seed.
void fill_random(float* data, std::int64_t n, std::uint64_t seed, int threads);
void fill_random(cpu::bf16_bits* data, std::int64_t n, std::uint64_t seed, int threads);

template <class T>
Buffer<T> random_buffer(std::int64_t n, std::uint64_t seed, int threads) {
  Buffer<T> b(n);
  fill_random(b.data(), n, seed, threads);
  return b;
}

}  // namespace mhacfg::kernels::detail
