// The designed grid of kernel shapes `calibrate --device` measures: memory- and compute-bound,
// small and large, several group sizes, head_dims, causal and not, MLA, GEMMs of projection shapes.
#pragma once

#include <vector>

#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

enum class GridDevice { cpu, cuda };

std::vector<MeasurementRecord> calibration_grid(GridDevice device, bool quick);

// The two shapes the kernel-speed ratios are quoted on: a long causal prefill (against the GEMM
// ceiling) and a decode whose KV exceeds 256 MiB (against the read-bandwidth ceiling).
MeasurementRecord speed_check_prefill(GridDevice device);
MeasurementRecord speed_check_decode(GridDevice device);

}  // namespace mhacfg
