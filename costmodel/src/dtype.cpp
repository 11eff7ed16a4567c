#include "mhacfg/costmodel/dtype.hpp"

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  int bits;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::fp32, "fp32", 32}, {DType::bf16, "bf16", 16}, {DType::fp16, "fp16", 16},
    {DType::fp8, "fp8", 8},    {DType::int8, "int8", 8},  {DType::int4, "int4", 4},
};
}  // namespace

int dtype_bits(DType t) {
  for (const auto& d : kDTypes)
    if (d.type == t) return d.bits;
  MHACFG_CHECK(false, "unknown DType");
}

std::string_view to_string(DType t) {
  for (const auto& d : kDTypes)
    if (d.type == t) return d.name;
  MHACFG_CHECK(false, "unknown DType");
}

DType parse_dtype(std::string_view name, const std::string& field) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.type;
  if (name == "float32") return DType::fp32;
  if (name == "bfloat16") return DType::bf16;
  if (name == "float16") return DType::fp16;
  throw InputError(field, std::string(name), "unknown dtype (expected fp32, bf16, fp16, fp8, int8 or int4)");
}

std::int64_t dtype_bytes(DType t, std::int64_t elements, const char* quantity) {
  const std::int64_t bits = mul(elements, dtype_bits(t), quantity);
  return bits / 8 + (bits % 8 != 0);
}

}  // namespace mhacfg
