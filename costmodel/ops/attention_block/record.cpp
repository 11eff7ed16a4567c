// The attention block op: its GEMMs, record fields (JSON in and out) and what its classes would fit
// (blocks are validated as compositions of attention and GEMM predictions, never fitted).
#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/ops/attention_block.hpp"

namespace mhacfg {

GemmShape AttentionBlockOp::qkv_gemm() const {
  const AttentionShape& s = shape;
  return {s.batch * s.q_len, s.num_q_heads * s.head_dim + s.num_kv_heads * (s.head_dim + s.v_head_dim), d_model};
}

GemmShape AttentionBlockOp::o_gemm() const {
  const AttentionShape& s = shape;
  return {s.batch * s.q_len, d_model, s.num_q_heads * s.v_head_dim};
}

AttentionBlockOp AttentionBlockOp::from_json(const JsonFields& f) {
  const AttentionOp attention = AttentionOp::from_json(f);
  AttentionBlockOp op;
  op.phase = attention.phase;
  op.shape = attention.shape;
  op.d_model = f.require_int("d_model");
  if (op.shape.is_mla())
    throw InputError(f.name("kv_lora_rank"), std::to_string(op.shape.kv_lora_rank),
                     "attention_block records describe MHA/GQA/MQA blocks only");
  return op;
}

void AttentionBlockOp::to_json(nlohmann::json& j) const {
  AttentionOp{phase, shape}.to_json(j);
  j["d_model"] = d_model;
}

OpClass AttentionBlockOp::op_class() const { return {kind, phase, shape.is_mla() ? OpVariant::mla : OpVariant::none}; }

FitSpec AttentionBlockOp::fit_spec(const OpClass&, bool warm_cache) { return matrix_fit_spec(warm_cache, true); }

}  // namespace mhacfg
