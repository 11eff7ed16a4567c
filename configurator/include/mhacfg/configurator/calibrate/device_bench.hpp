// Dispatch of measurements to the CPU or (when built) CUDA harness, shared by bench and calibrate.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/kernels/bench.hpp"

namespace mhacfg {

struct DeviceChoice {
  bool cuda = false;
  int ordinal = 0;
  std::string label;  // "cpu" or "cuda:0"
};
// Parses --device cpu | cuda | cuda:N. Throws InputError; RuntimeFailure when CUDA is unavailable.
DeviceChoice parse_device(const std::string& text);

std::string unsupported_reason(const DeviceChoice& d, const MeasurementRecord& r);
kernels::Measurement measure(const DeviceChoice& d, const MeasurementRecord& r, const kernels::BenchOptions& o);
kernels::Ceilings measure_ceilings(const DeviceChoice& d, const kernels::BenchOptions& o);
std::string device_name(const DeviceChoice& d);
// Memory of the device: MemTotal for the CPU, the card's global memory for CUDA.
std::int64_t device_memory_bytes(const DeviceChoice& d);

}  // namespace mhacfg
