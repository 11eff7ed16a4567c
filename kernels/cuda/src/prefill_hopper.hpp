// The Hopper prefill (prefill_hopper.cu), called by prefill::run for Variant::hopper. Private.
#pragma once

#include <string>

#include "mhacfg/kernels/cuda/prefill_attention.hpp"

namespace mhacfg::kernels::cuda::prefill::hopper_detail {

// Why the hopper variant cannot run this shape on the current device ("" when it can): the shape
// rules of unsupported_reason plus an sm_90 device.
std::string unsupported_on_device(const AttentionShape& s);
// Barrier waits of the hopper kernels that gave up after 2 s since the last reset (0 on a healthy
// device); `reset` zeroes the count. Synchronous.
unsigned barrier_timeouts(bool reset);
// Launches the kernel; p is already validated by prefill::run (pointers, strides, scale).
void run(const Params& p, Stream stream);

}  // namespace mhacfg::kernels::cuda::prefill::hopper_detail
