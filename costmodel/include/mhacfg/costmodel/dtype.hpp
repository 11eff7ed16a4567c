// Storage data types for weights and the KV cache.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mhacfg {

enum class DType { fp32, bf16, fp16, fp8, int8, int4 };

// Bits per element; int4 packs two elements per byte. Quantisation scales are not included.
int dtype_bits(DType t);
std::string_view to_string(DType t);
// Throws InputError naming `field` for an unknown name.
DType parse_dtype(std::string_view name, const std::string& field);

// Bytes of `elements` elements of type t (rounded up to whole bytes).
std::int64_t dtype_bytes(DType t, std::int64_t elements, const char* quantity);

}  // namespace mhacfg
