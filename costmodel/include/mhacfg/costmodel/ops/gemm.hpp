// The GEMM op: C[m,n] = A[m,k] B[k,n]. Its shape, counts, features and record fields
// (costmodel/ops/gemm/).
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/op_class.hpp"
#include "mhacfg/costmodel/op_features.hpp"

namespace mhacfg {

struct FitSpec;

// C[m,n] = A[m,k] B[k,n].
struct GemmShape {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
};
WideCount gemm_flops(const GemmShape& g);  // 2 * m * n * k, exact and wide
// A and B read, C written, once each: B (the weights) stored in `dtype` with its scales, A in the
// dtype the GEMM computes in (compute_dtype), C in gemm_output_dtype.
std::int64_t gemm_bytes(const GemmShape& g, DType dtype);

// GEMMs with at most facts.skinny_gemm_rows rows run mhacfg's CPU skinny kernel, which streams B
// through register blocks of rows in place instead of packing it for a blocked GEMM.
OpFeatures op_features(const GemmShape& g, DType dtype, const CpuKernelFacts& facts = {});

// A GEMM record's op fields (records.hpp); the op's entry in op_registry.hpp.
struct GemmOp {
  static constexpr OpKind kind = OpKind::gemm;
  static constexpr std::string_view name = "gemm";
  static constexpr bool phased = false;
  static constexpr OpVariant fitted_variant = OpVariant::none;
  static constexpr DType default_dtype = DType::bf16;
  static constexpr std::string_view only_default_dtype = "";
  static constexpr bool dtype_keyed = true;  // fp8, fp4 and int4 GEMMs run kernels of their own

  GemmShape shape;

  OpClass op_class() const { return {kind, Phase::prefill, OpVariant::none}; }
  // The class of this GEMM with weights stored in `dtype` ("gemm/fp8"; "gemm" for 16 and 32 bits).
  OpClass op_class(DType dtype) const { return keyed_class(op_class(), dtype); }
  OpFeatures features(DType dtype, const CpuKernelFacts& facts = {}) const { return op_features(shape, dtype, facts); }
  static GemmOp from_json(const JsonFields& f);
  void to_json(nlohmann::json& j) const;
  static FitSpec fit_spec(const OpClass& c, bool warm_cache);
};

}  // namespace mhacfg
