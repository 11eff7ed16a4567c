// The microbenchmark harness: turns measurement records (shapes) into timed records with the
// project's own kernels. One interface per device; the CLI's `bench` and `calibrate` call these.
#pragma once

#include <functional>
#include <string>

#include "mhacfg/costmodel/records.hpp"

namespace mhacfg::kernels {

struct BenchOptions {
  int threads = 1;           // CPU: fixed thread count for every kernel (Eigen and our own loops)
  int repetitions = 7;       // timed repetitions; the median is reported
  double min_time_s = 0.02;  // each repetition runs the kernel enough times to last at least this
  int device = 0;            // CUDA device ordinal
};

struct Measurement {
  double time_ms = 0;      // median over repetitions of the per-call time
  double spread = 0;       // (p75 - p25) / median over repetitions: run-to-run spread
  int repetitions = 0;
  std::string backend;     // e.g. "mhacfg-cpu", "mhacfg-cuda", "cublas"
  std::string device;      // e.g. the CPU model name or the GPU name
};

// Machine ceilings measured with the same threads as the kernels.
struct Ceilings {
  double gemm_flop_per_s = 0;   // large square GEMM at the kernels' compute dtype
  double read_bytes_per_s = 0;  // streaming read of a buffer far larger than the last-level cache
  std::string device;
};

// CPU (Eigen) kernels. `unsupported_reason` is empty when a kernel supports the record.
std::string cpu_unsupported_reason(const MeasurementRecord& r);
Measurement measure_cpu(const MeasurementRecord& r, const BenchOptions& o);
Ceilings measure_cpu_ceilings(const BenchOptions& o);
std::string cpu_device_name();

}  // namespace mhacfg::kernels
