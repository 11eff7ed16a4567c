// Turns a supported measurement record into a ready-to-time CPU kernel call that owns fresh random
// inputs for the record's shape. Shared by measure_cpu and the mhacfg_kernels_bench executable.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "mhacfg/costmodel/records.hpp"

namespace mhacfg::kernels::detail {

// Empty when a CPU kernel runs the record; otherwise one line naming the field and value.
std::string cpu_call_unsupported_reason(const MeasurementRecord& r);

// Bytes of inputs, outputs and workspaces the call allocates.
std::int64_t cpu_call_bytes(const MeasurementRecord& r);

// The record must be supported (throws InputError with the reason otherwise).
std::function<void()> prepare_cpu_call(const MeasurementRecord& r, int threads);

}  // namespace mhacfg::kernels::detail
