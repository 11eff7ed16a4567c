// Storage data types for weights and the KV cache, with the quantisation scales each format stores
// beside its elements (docs/cost-model.md, "Dtypes").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mhacfg {

// fp8: E4M3 with per-tensor (or per-head) scales; fp8_block: E4M3 with one fp32 scale per 128x128 block
// (DeepSeek-V3); int4: weight-only groups of 128 (AWQ/GPTQ); nvfp4 and mxfp4: 4-bit E2M1 in blocks of
// 16 and 32. Add new types at the end: profiles and records name them by to_string().
enum class DType { fp32, bf16, fp16, fp8, int8, int4, nvfp4, mxfp4, fp8_block };

// Bits per element; int4, nvfp4 and mxfp4 pack two elements per byte. Quantisation scales are not
// included: storage_bits_per_element and stored_bytes add them.
int dtype_bits(DType t);
std::string_view to_string(DType t);
// Throws InputError naming `field` for an unknown name.
DType parse_dtype(std::string_view name, const std::string& field);
// Every DType, in the enum's order.
std::vector<DType> all_dtypes();
// "fp32, bf16, ... or fp8-block": every name parse_dtype accepts, for help texts and errors.
std::string dtype_names();

// Bytes of `elements` elements of type t (rounded up to whole bytes), scales not included.
std::int64_t dtype_bytes(DType t, std::int64_t elements, const char* quantity);

// The scales a format stores: one scale of scale_bits (and, for asymmetric formats, a zero point of
// zero_bits) per block of block_elements elements. block_elements 0: per-tensor (or per-head) scales,
// a few bytes per matrix or layer that no count here resolves, counted as none.
struct QuantScales {
  std::int64_t block_elements = 0;
  int scale_bits = 0;
  int zero_bits = 0;
};
QuantScales quant_scales(DType t);
// Bits one element takes in memory with its share of the block scales (4.5 for nvfp4).
double storage_bits_per_element(DType t);
// Bytes of the scales of `elements` elements: one per started block.
std::int64_t scale_bytes(DType t, std::int64_t elements, const char* quantity);
// Bytes of `elements` elements with their scales: dtype_bytes + scale_bytes.
std::int64_t stored_bytes(DType t, std::int64_t elements, const char* quantity);

// The dtype a GEMM whose weights are stored in t multiplies in, whose peak rate it runs at: fp8,
// int8 (W8A8), nvfp4 and mxfp4 (W4A4) quantise the activations too and run on the tensor cores of
// their own width; fp8_block runs fp8 GEMMs; weight-only int4 dequantises to bf16.
DType compute_dtype(DType t);
// The dtype of a GEMM's output (C): fp32 and fp16 GEMMs write their own type; the rest write bf16.
DType gemm_output_dtype(DType t);

}  // namespace mhacfg
