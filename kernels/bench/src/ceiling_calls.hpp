// The calls the machine ceilings are measured with (shared by measure_cpu_ceilings and the
// kernels_bench targets check): a large square Eigen SGEMM and a streaming sum over a buffer far
// larger than the last-level cache, both on the given threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "inputs.hpp"
#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg::kernels::detail {

// Each call stays under ~25 ms on one core, like the calibration grid's: on a shared VM whose other
// tenants slow every core for ~80 ms of each ~200 ms, a longer call always overlaps a slow phase. The
// first ceilings (a 2048^3 SGEMM, ~150 ms, and a 1 GiB read, ~70 ms) came out 10-30 % low in some
// calibrations, and the fits inherited it (held-out median 6.0 % with a read ceiling of 11.6 GB/s,
// 3.6 % with 15.6 GB/s, on the same machine). 1024^3 reaches Eigen's full rate (128 GFLOP/s against
// 121 for 2048^3 on the development VM, fastest calls).
inline constexpr GemmShape kCeilingGemm{1024, 1024, 1024};
// The read ceiling streams a buffer over 3x the largest last-level cache we expect (300 MiB on the
// development machine), one slice per call, round robin: each slice is cold when read again.
inline constexpr std::int64_t kCeilingReadBytes = std::int64_t{1} << 30;
inline constexpr std::int64_t kCeilingReadSliceBytes = std::int64_t{64} << 20;  // bytes per call
// Single calls timed for a ceiling; the fastest one is the machine's own speed.
inline constexpr int kCeilingCalls = 40;

// An fp32 Eigen GEMM of shape g on `threads`, its inputs allocated once.
std::function<void()> prepare_gemm_call(const GemmShape& g, int threads);

// A streaming sum over the first `total_bytes` of a buffer, `slice_bytes` per read(), slices round
// robin; evict_next() moves the next slice out of the caches (untimed), for a read that must start cold
// although other calls share the buffer (an InputArena's).
class SliceReads {
 public:
  SliceReads(std::shared_ptr<const Buffer<float>> buffer, std::int64_t total_bytes, std::int64_t slice_bytes,
             int threads);
  void read();
  void evict_next() const;

 private:
  std::shared_ptr<const Buffer<float>> buffer_;
  std::int64_t count_, slice_;  // floats
  int threads_;
  std::int64_t next_ = 0;
  double sink_ = 0;  // keeps the sums observable
};
// Reads of a buffer of their own of `total_bytes`, or with an arena of its fp32 values (grown to
// total_bytes when smaller).
std::shared_ptr<SliceReads> make_slice_reads(std::int64_t total_bytes, std::int64_t slice_bytes, int threads,
                                             InputArena* arena = nullptr);
// Its read() as a call.
std::function<void()> prepare_read_calls(std::int64_t total_bytes, std::int64_t slice_bytes, int threads,
                                         InputArena* arena = nullptr);

inline std::function<void()> prepare_gemm_ceiling(int threads) { return prepare_gemm_call(kCeilingGemm, threads); }
// kCeilingReadSliceBytes per call.
inline std::function<void()> prepare_read_ceiling(int threads, InputArena* arena = nullptr) {
  return prepare_read_calls(kCeilingReadBytes, kCeilingReadSliceBytes, threads, arena);
}

// The machine probe (measure_cpu_probe): a GEMM that stays in the caches and the ceiling's read, which
// does not, in rounds of a few calls each, about a second in all. 512^3 fp32 (3 MiB of operands) takes
// ~2 ms on the development VM, a 64 MiB slice of the 1 GiB buffer ~2-3 ms. The read keeps the ceiling's
// buffer: that VM reports 508 MiB of L3 (getconf LEVEL3_CACHE_SIZE), so a smaller one might be cached.
// Under the CPU backend that buffer is the run's InputArena, whose start the records' calls read
// between probe rounds: each timed slice is evicted from the caches first (SliceReads::evict_next), so
// it is read cold as the round robin over a buffer of its own made it. (The read ceiling needs no
// eviction: its untimed pass over the whole buffer comes first.)
inline constexpr GemmShape kProbeGemm{512, 512, 512};
inline constexpr std::int64_t kProbeReadBytes = kCeilingReadBytes;
inline constexpr std::int64_t kProbeReadSliceBytes = kCeilingReadSliceBytes;
inline constexpr int kProbeGemmCalls = 4;  // per round
inline constexpr int kProbeReadCalls = 4;  // per round: a quarter of the buffer

}  // namespace mhacfg::kernels::detail
