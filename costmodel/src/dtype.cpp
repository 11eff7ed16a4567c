#include "mhacfg/costmodel/dtype.hpp"

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  int bits;
  QuantScales scales;
  DType compute;
};
// The scales, by format:
// - fp8 (E4M3), weights and KV cache: a per-tensor fp32 scale (vLLM's fp8 KV cache: "a single scale is
//   applied for each Q, K, and V tensor", or one per attention head; docs.vllm.ai, features/quantization/
//   quantized_kvcache), bytes per matrix or layer, not per element: none counted.
// - fp8_block: DeepSeek-V3's checkpoint, quantization_config {"fmt": "e4m3", "weight_block_size": [128,
//   128]} (its config.json; tests/fixtures/hf/deepseek-v3.json), one fp32 weight_scale_inv per 128x128
//   block: 32 bits per 16384 elements.
// - int4: AWQ's packed format (AutoAWQ awq/modules/linear/gemm.py, WQLinear_GEMM) holds per group of
//   group_size input elements and output column one fp16 scale and one 4-bit zero point packed in int32;
//   groups of 128 (AWQ's and GPTQ's usual q_group_size).
// - nvfp4: E2M1 elements in blocks of 16 with one UE4M3 (FP8) scale each, and one FP32 scale per tensor
//   (Intel Neural Compressor, "NVFP4 Quantization", docs/source/3x/PT_NVFP4Quant, its format table;
//   NVIDIA cuTile tutorial 11, "Inference with NVFP4/MXFP8": 16 values take 8 packed FP4 bytes plus
//   one FP8 scale byte): 8 bits per 16 elements.
// - mxfp4: OCP Microscaling (MX) v1.0: E2M1 elements in blocks of 32 sharing one E8M0 (8-bit power-of-two)
//   scale (Modular's fp4_utils: MXFP4_SF_VECTOR_SIZE = 32, MXFP4_SF_DTYPE = float8_e8m0fnu; NVIDIA
//   Transformer Engine's MXFP8 page: "one scaling factor per 32 consecutive values", E8M0): 8 bits per 32.
// int8 (W8A8) keeps per-channel or per-tensor scales: none counted.
constexpr DTypeInfo kDTypes[] = {
    {DType::fp32, "fp32", 32, {}, DType::fp32},
    {DType::bf16, "bf16", 16, {}, DType::bf16},
    {DType::fp16, "fp16", 16, {}, DType::fp16},
    {DType::fp8, "fp8", 8, {}, DType::fp8},
    {DType::int8, "int8", 8, {}, DType::int8},
    {DType::int4, "int4", 4, {128, 16, 4}, DType::bf16},
    {DType::nvfp4, "nvfp4", 4, {16, 8, 0}, DType::nvfp4},
    {DType::mxfp4, "mxfp4", 4, {32, 8, 0}, DType::mxfp4},
    {DType::fp8_block, "fp8-block", 8, {128 * 128, 32, 0}, DType::fp8},
};

const DTypeInfo& info(DType t) {
  for (const auto& d : kDTypes)
    if (d.type == t) return d;
  MHACFG_CHECK(false, "unknown DType");
}
}  // namespace

int dtype_bits(DType t) { return info(t).bits; }

std::string_view to_string(DType t) { return info(t).name; }

std::vector<DType> all_dtypes() {
  std::vector<DType> out;
  for (const auto& d : kDTypes) out.push_back(d.type);
  return out;
}

std::string dtype_names() {
  std::string names;
  constexpr std::size_t n = sizeof(kDTypes) / sizeof(kDTypes[0]);
  for (std::size_t i = 0; i < n; ++i)
    names += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(kDTypes[i].name);
  return names;
}

DType parse_dtype(std::string_view name, const std::string& field) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.type;
  if (name == "float32") return DType::fp32;
  if (name == "bfloat16") return DType::bf16;
  if (name == "float16") return DType::fp16;
  throw InputError(field, std::string(name), "unknown dtype (expected " + dtype_names() + ")");
}

std::int64_t dtype_bytes(DType t, std::int64_t elements, const char* quantity) {
  const std::int64_t bits = mul(elements, dtype_bits(t), quantity);
  return bits / 8 + (bits % 8 != 0);
}

QuantScales quant_scales(DType t) { return info(t).scales; }

double storage_bits_per_element(DType t) {
  const QuantScales s = quant_scales(t);
  const double per_block = s.block_elements > 0 ? double(s.scale_bits + s.zero_bits) / double(s.block_elements) : 0.0;
  return double(dtype_bits(t)) + per_block;
}

std::int64_t scale_bytes(DType t, std::int64_t elements, const char* quantity) {
  const QuantScales s = quant_scales(t);
  if (s.block_elements <= 0 || elements <= 0) return 0;
  const std::int64_t blocks = elements / s.block_elements + (elements % s.block_elements != 0);
  const std::int64_t bits = mul(blocks, s.scale_bits + s.zero_bits, quantity);
  return bits / 8 + (bits % 8 != 0);
}

std::int64_t stored_bytes(DType t, std::int64_t elements, const char* quantity) {
  return add(dtype_bytes(t, elements, quantity), scale_bytes(t, elements, quantity), quantity);
}

DType compute_dtype(DType t) { return info(t).compute; }

DType gemm_output_dtype(DType t) {
  if (t == DType::fp32 || t == DType::fp16) return t;
  return DType::bf16;
}


}  // namespace mhacfg
