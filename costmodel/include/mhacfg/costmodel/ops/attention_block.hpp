// The attention block op: one fused QKV GEMM, the attention call and the O GEMM of a d_model-wide
// layer (MHA/GQA/MQA only). Predictions compose it from the attention and GEMM ops; its records
// validate that composition and are never fitted (costmodel/ops/attention_block/).
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "mhacfg/costmodel/ops/attention.hpp"
#include "mhacfg/costmodel/ops/gemm.hpp"

namespace mhacfg {

// An attention_block record's op fields (records.hpp); the op's entry in op_registry.hpp.
struct AttentionBlockOp {
  static constexpr OpKind kind = OpKind::attention_block;
  static constexpr std::string_view name = "attention_block";
  static constexpr bool phased = true;
  static constexpr OpVariant fitted_variant = OpVariant::mla;  // parsed as attention's; records refuse MLA
  static constexpr DType default_dtype = DType::bf16;
  static constexpr std::string_view only_default_dtype = "";

  Phase phase = Phase::prefill;
  AttentionShape shape;  // the attention call's
  std::int64_t d_model = 0;

  // x [tokens, d_model] -> Q, K and V in one GEMM.
  GemmShape qkv_gemm() const;
  // O [tokens, heads x v_head_dim] -> d_model.
  GemmShape o_gemm() const;

  OpClass op_class() const;
  // The attention call's (the block is validated as a composition, not fitted).
  OpFeatures features(DType dtype, const CpuKernelFacts& facts = {}) const { return op_features(shape, dtype, facts); }
  static AttentionBlockOp from_json(const JsonFields& f);
  void to_json(nlohmann::json& j) const;
  static FitSpec fit_spec(const OpClass& c, bool warm_cache);
};

}  // namespace mhacfg
