// The linear-attention op's record fields (JSON in and out), its op classes and what each fits.
#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/ops/linear_attention.hpp"

namespace mhacfg {

namespace {
LinearKind kind_from_json(const JsonFields& f) {
  const std::string kind = f.require_string("kind");
  if (kind == "gated_deltanet") return LinearKind::gated_deltanet;
  if (kind == "mamba2") return LinearKind::mamba2;
  if (kind == "kda") return LinearKind::kda;
  throw InputError(f.name("kind"), "\"" + kind + "\"", "must be \"gated_deltanet\", \"mamba2\" or \"kda\"");
}
}  // namespace

LinearAttentionOp LinearAttentionOp::from_json(const JsonFields& f) {
  LinearAttentionOp op;
  LinearAttentionShape& s = op.shape;
  op.phase = phase_from_json(f);
  s.kind = kind_from_json(f);
  s.batch = f.require_int("batch");
  s.q_len = f.require_int("q_len");
  s.num_k_heads = f.require_int("num_k_heads");
  s.num_v_heads = f.require_int("num_v_heads");
  s.head_k_dim = f.require_int("head_k_dim");
  s.head_v_dim = f.require_int("head_v_dim");
  s.conv_kernel = f.require_int("conv_kernel");
  if (s.num_v_heads % s.num_k_heads != 0)
    throw InputError(f.name("num_k_heads"), std::to_string(s.num_k_heads),
                     "must divide num_v_heads = " + std::to_string(s.num_v_heads));
  if (op.phase == Phase::decode && s.q_len != 1)
    throw InputError(f.name("q_len"), std::to_string(s.q_len), "a linear_attention decode step takes one token (q_len 1)");
  try {
    s.conv_dim();
  } catch (const InputError&) {  // the overflow, named by the record's field
    throw InputError(f.name("num_v_heads"), std::to_string(s.num_v_heads),
                     "the convolution's width 2 x num_k_heads x head_k_dim + num_v_heads x head_v_dim overflows a 64-bit count");
  }
  return op;
}

void LinearAttentionOp::to_json(nlohmann::json& j) const {
  const LinearAttentionShape& s = shape;
  j["phase"] = std::string(to_string(phase));
  j["kind"] = std::string(to_string(s.kind));
  j["batch"] = s.batch;
  j["q_len"] = s.q_len;
  j["num_k_heads"] = s.num_k_heads;
  j["num_v_heads"] = s.num_v_heads;
  j["head_k_dim"] = s.head_k_dim;
  j["head_v_dim"] = s.head_v_dim;
  j["conv_kernel"] = s.conv_kernel;
}

OpClass LinearAttentionOp::op_class() const {
  const OpVariant v = shape.kind == LinearKind::kda          ? OpVariant::kda
                      : shape.kind == LinearKind::short_conv ? OpVariant::short_conv
                      : shape.kind == LinearKind::lightning  ? OpVariant::lightning
                                                             : OpVariant::none;
  return {kind, phase, v};
}

FitSpec LinearAttentionOp::fit_spec(const OpClass& c, bool warm_cache) {
  FitSpec s;
  s.cache = warm_cache;
  // The recurrences: with one core (CPU) the time follows the state elements walked and widened
  // (L, L_w in time_model.hpp), the bytes from cache or memory; on a device with many units, how
  // well the (sequence, value head) units fill it.
  s.stream_exponent = !warm_cache;
  s.half_streams = !warm_cache;
  s.load = s.widen = warm_cache;
  if (warm_cache && c.phase == Phase::prefill) {  // the state stays in cache
    s.cache = s.bw = false;
    s.bw_ceiling = true;
  }
  return s;
}

}  // namespace mhacfg
