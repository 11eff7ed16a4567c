// The Hopper prefill (prefill_hopper.cu), called by prefill::run for Variant::hopper. Private.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/kernels/cuda/prefill_attention.hpp"

struct CUtensorMap_st;  // cuda.h's CUtensorMap (this header is also read by plain C++ tests)

namespace mhacfg::kernels::cuda::prefill::hopper_detail {

// Why the hopper variant cannot run this shape on the current device ("" when it can): the shape
// rules of unsupported_reason plus an sm_90 device.
std::string unsupported_on_device(const AttentionShape& s);
// Barrier waits of the hopper kernels that gave up after 2 s since the last reset (0 on a healthy
// device); `reset` zeroes the count. Synchronous.
unsigned barrier_timeouts(bool reset);
// The TMA map of one [batch, len, heads, D] bf16 operand (token and batch strides in elements, heads
// D apart): dimensions ordered (D, heads, tokens, batch), byte strides of dimensions 1..3, boxes of
// 64 dims x 1 head x `rows` tokens. Plain numbers, so tests check them without a device.
struct MapGeometry {
  std::uint64_t dims[4];
  std::uint64_t strides[3];  // bytes, of dims 1, 2, 3
  std::uint32_t box[4];
};
MapGeometry map_geometry(int d, int heads, int len, int batch, std::int64_t token_stride, std::int64_t batch_stride,
                         int rows);
// What cuTensorMapEncodeTiled's documented rules (cuda.h) or the kernels' 128-byte swizzle would
// reject in g ("" when nothing): dims in [1, 2^32], strides multiples of 16 below 2^40 and nested
// (each at least the previous dimension's extent), boxes in [1, 256] with a 128-byte inner box.
std::string map_geometry_problem(const MapGeometry& g);
// The 128-byte-swizzled bf16 TMA map of map_geometry(d, heads, len, batch, ...) (checked by
// map_geometry_problem, encoded through the driver entry point); InputError / RuntimeFailure with
// the shape when refused. Shared with the wgmma MLA decode (mla_decode_hopper.cu).
void tensor_map(CUtensorMap_st* out, const void* base, int d, int heads, int len, int batch,
                std::int64_t token_stride, std::int64_t batch_stride, int rows);
// Launches the kernel; p is already validated by prefill::run (pointers, strides, scale).
void run(const Params& p, Stream stream);

}  // namespace mhacfg::kernels::cuda::prefill::hopper_detail
