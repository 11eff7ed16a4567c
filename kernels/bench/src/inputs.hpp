// Fresh random inputs for timed kernels: uninitialised buffers filled in parallel (first touch by
// the threads that will read them) with values uniform in [-1, 1), never zeros. A counter-based
// generator keeps a 1 GiB fill well under a second.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include "mhacfg/kernels/cpu/bf16.hpp"

namespace mhacfg::kernels::detail {

// Uninitialised memory for n elements, 2 MiB aligned and advised to be backed by transparent huge
// pages (MADV_HUGEPAGE) when it spans at least one: with 4 KiB pages a kernel streaming a K/V cache
// larger than the last-level cache also misses the TLB on every page. Such a buffer is mapped on its
// own (mmap) and unmapped when freed, so the buffers a run makes afresh each round give their memory
// back at once (from malloc's heap, freed blocks stayed resident: 200 MiB more at the quick
// calibration's peak).
void* allocate_buffer(std::size_t bytes);
void free_buffer(void* p, std::size_t bytes);

// n values of its own, or a view of n values that `owner` holds (an InputArena's: read only, kept
// alive while the view is).
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::int64_t n)
      : n_(n),
        data_(static_cast<T*>(allocate_buffer(static_cast<std::size_t>(n) * sizeof(T))),
              Free{nullptr, static_cast<std::size_t>(n) * sizeof(T)}) {}
  Buffer(std::shared_ptr<const void> owner, T* data, std::int64_t n) : n_(n), data_(data, Free{std::move(owner), 0}) {}
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::int64_t size() const { return n_; }

 private:
  struct Free {
    std::shared_ptr<const void> owner;  // a view's: nothing of its own to free
    std::size_t bytes = 0;
    void operator()(T* p) const {
      if (!owner) free_buffer(p, bytes);
    }
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

// Random inputs that calls only read (K/V caches, MLA latents, GEMM operands), shared by the calls of a
// run instead of each call owning its own: calls run one at a time, so a run holds the largest call's
// inputs rather than their sum (the quick CPU calibration's calls own 4.5 GiB between them). Every
// call's views start at the beginning, so consecutive calls read the same memory; each timing starts
// with an untimed warm-up call, which leaves the caches as the call's own inputs would. The fp32 part
// is also the read buffer of the machine probe and the read ceiling (seed 9, as theirs was).
class InputArena {
 public:
  // Where a call's views end: values taken so far of each type.
  struct Cursor {
    std::int64_t f32 = 0, bf16 = 0;
    std::int64_t bytes() const { return 4 * f32 + 2 * bf16; }
  };
  // At least `f32` and `bf16` values, filled by `threads` (first touch). A part that grows is replaced:
  // views of the old one keep it alive until they go.
  void reserve(std::int64_t f32, std::int64_t bf16, int threads);
  const std::shared_ptr<Buffer<float>>& f32() const { return f32_; }
  // A view of the n values after the cursor's, or an empty Buffer when they do not fit.
  Buffer<float> take_f32(Cursor& c, std::int64_t n) const { return take(f32_, c.f32, n); }
  Buffer<cpu::bf16_bits> take_bf16(Cursor& c, std::int64_t n) const { return take(bf16_, c.bf16, n); }

 private:
  // Each view starts on a cache line (64 bytes), as a buffer of its own would.
  template <class T>
  static Buffer<T> take(const std::shared_ptr<Buffer<T>>& part, std::int64_t& used, std::int64_t n) {
    constexpr std::int64_t line = 64 / sizeof(T);
    const std::int64_t at = (used + line - 1) / line * line;
    if (!part || at > part->size() || n > part->size() - at) return {};
    Buffer<T> view(part, part->data() + at, n);
    used = at + n;
    return view;
  }
  std::shared_ptr<Buffer<float>> f32_;
  std::shared_ptr<Buffer<cpu::bf16_bits>> bf16_;
};

// The n values of a call's input: a view of the arena (cursor non-null) when they fit, else its own.
template <class T>
Buffer<T> input_buffer(const InputArena* arena, InputArena::Cursor* cursor, std::int64_t n, std::uint64_t seed,
                       int threads) {
  if (arena && cursor) {
    Buffer<T> view;
    if constexpr (std::is_same_v<T, float>) view = arena->take_f32(*cursor, n);
    else view = arena->take_bf16(*cursor, n);
    if (view.data()) return view;
  }
  return random_buffer<T>(n, seed, threads);
}

// Moves `bytes` from `data` on out of every cache level (x86: CLFLUSHOPT, else CLFLUSH; elsewhere it
// does nothing), so that a timed read of them starts cold.
void evict_from_caches(const void* data, std::size_t bytes);

}  // namespace mhacfg::kernels::detail
