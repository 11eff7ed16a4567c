// The device a command measures on (--device), and its measurements through the backend plugins
// (mhacfg/kernels/backend.hpp), shared by bench and calibrate. A plugin is loaded on first use only,
// so the commands that do not measure never load CUDA or the benchmark harness.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mhacfg/kernels/backend.hpp"

namespace mhacfg {

struct DeviceChoice {
  bool cuda = false;
  int ordinal = 0;
  std::string label;  // "cpu" or "cuda:0"
};
// Parses --device cpu | cuda | cuda:N. Throws InputError; RuntimeFailure when CUDA is unavailable.
DeviceChoice parse_device(const std::string& text);

std::string unsupported_reason(const DeviceChoice& d, const MeasurementRecord& r);
// Every record, as the device's harness measures them (see kernels::Backend::measure_rounds).
std::vector<kernels::Measurement> measure_rounds(const DeviceChoice& d, const std::vector<MeasurementRecord>& rs,
                                                 const kernels::BenchOptions& o, const kernels::BenchProgress& progress);
kernels::Ceilings measure_ceilings(const DeviceChoice& d, const kernels::BenchOptions& o);
// The machine probe (kernels::Backend::probe): `rounds` rounds, 0 the reference (about a second).
MachineProbe probe_machine(const DeviceChoice& d, const kernels::BenchOptions& o, int rounds = 0);
std::string device_name(const DeviceChoice& d);
// The facts the device's kernels publish (the CPU kernels' tiles, as a profile's cpu_kernel_facts);
// null where the time model needs none.
nlohmann::json kernel_facts(const DeviceChoice& d);
// Memory of the device: MemTotal for the CPU, the card's global memory for CUDA.
std::int64_t device_memory_bytes(const DeviceChoice& d);

}  // namespace mhacfg
