// The CUDA twin of the CPU microbenchmark harness (mhacfg/kernels/bench.hpp): turns measurement
// records into timed records with the project's CUDA kernels and cuBLASLt, and measures the device's
// ceilings. Timing: CUDA events around each call, warm-up first, L2 flushed (256 MiB written) before
// every timed call, median of at least 20 calls on each of kCudaWorkloads fresh allocations of the
// inputs, time = the median of those medians, spread = (max - min) / median over the allocations.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/records.hpp"
#include "mhacfg/kernels/bench.hpp"

namespace mhacfg::kernels {

// Devices visible to the CUDA runtime; 0 without a device or driver. Never throws.
int cuda_device_count() noexcept;
std::string cuda_device_name(int device);  // "" when the device does not exist
// Total device memory in bytes. Throws RuntimeFailure when the device does not exist.
std::int64_t cuda_device_memory_bytes(int device);

// Empty when the CUDA backend runs this record, else the reason (shown when the harness skips it).
std::string cuda_unsupported_reason(const MeasurementRecord& r);

// Times one record on o.device (ops attention, gemm, attention_block). Inputs are fresh uniform
// random bf16 values. Throws InputError for an unsupported record, RuntimeFailure for CUDA errors.
Measurement measure_cuda(const MeasurementRecord& r, const BenchOptions& o);

// gemm_flop_per_s: cuBLASLt bf16 GEMM 8192^3 (fp32 accumulation). read_bytes_per_s: device-to-device
// copy of 2 GiB counted as bytes read plus bytes written (a copy moves each byte twice).
Ceilings measure_cuda_ceilings(const BenchOptions& o);

}  // namespace mhacfg::kernels
