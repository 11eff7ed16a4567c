// The harness's internals, shared by bench.cpp and mhacfg_cuda_speed: a record's inputs on the
// device plus the call that runs it, and the event timer (flush, warm-up, median).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mhacfg/costmodel/records.hpp"
#include "mhacfg/kernels/cuda/mla_decode.hpp"
#include "mhacfg/kernels/cuda/prefill_attention.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::detail {

// Kernel choices a record leaves open; the speed program sweeps them, the harness uses defaults.
struct Knobs {
  int num_splits = 0;  // decode / MLA decode; 0: planned for the device
  prefill::Variant variant = prefill::Variant::automatic;
  bool fused_merge = false;  // decode: splits merged in the grid where it fits (decode::Params)
  bool fp8_fast_accum = false;  // fp8 GEMM: cuBLASLt's fast accumulation (gemm::Fp8Params)
  mla_decode::Variant mla_variant = mla_decode::Variant::automatic;  // MLA decode kernel (issue 28 step 3)
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual void run(Stream stream) = 0;
  const std::string& kernel() const { return kernel_; }  // e.g. "decode d128 mt1, 32 splits"
  int num_splits() const { return num_splits_; }

 protected:
  std::string kernel_;
  int num_splits_ = 0;
};

// Allocates the record's tensors (fresh uniform random bf16; see bench.hpp) on the current device.
// Throws InputError for an unsupported record, RuntimeFailure when device memory is short.
std::unique_ptr<Workload> make_workload(const MeasurementRecord& r, const Knobs& knobs, std::uint64_t seed,
                                        Stream stream);

enum class Flush {
  write,           // write 256 MiB before each call (L2 flushed, as the published industry numbers are timed)
  write_and_read,  // then read another 256 MiB, so the timed call starts without dirty L2 lines
};

struct Timing {
  double median_ms = 0;
  double p25_ms = 0;
  double p75_ms = 0;
  int calls = 0;
  double spread() const { return median_ms > 0 ? (p75_ms - p25_ms) / median_ms : 0; }
};
// Warm-up calls, then `calls` timed calls each preceded by the flush; CUDA events around each.
Timing time_calls(const std::function<void(Stream)>& fn, int calls, int warmup, Flush flush, Stream stream);

constexpr int kMinTimedCalls = 20;
constexpr int kWarmupCalls = 3;

}  // namespace mhacfg::kernels::cuda::detail
