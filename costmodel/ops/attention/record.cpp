// The attention op's record fields (JSON in and out), its op classes and what each fits.
#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/ops/attention.hpp"
#include "mhacfg/costmodel/time_model.hpp"

namespace mhacfg {

namespace {

// MLA records may restate the latent widths as head_dim / v_head_dim; they must then agree.
void parse_mla_widths(const JsonFields& f, AttentionShape& s) {
  if (f.has("head_dim") && f.require_int("head_dim") != s.qk_dim())
    throw InputError(f.name("head_dim"), std::to_string(f.require_int("head_dim")),
                     "must equal kv_lora_rank + rope_head_dim = " + std::to_string(s.qk_dim()) + " for MLA");
  if (f.has("v_head_dim") && f.require_int("v_head_dim") != s.kv_lora_rank)
    throw InputError(f.name("v_head_dim"), std::to_string(f.require_int("v_head_dim")),
                     "must equal kv_lora_rank = " + std::to_string(s.kv_lora_rank) + " for MLA");
  if (s.num_kv_heads != 1)
    throw InputError(f.name("num_kv_heads"), std::to_string(s.num_kv_heads), "must be 1 for MLA (one shared latent)");
  s.head_dim = s.qk_dim();
  s.v_head_dim = s.kv_lora_rank;
}

void check_mask(const JsonFields& f, const AttentionShape& s) {
  if (s.chunk > 0 && s.window > 0)
    throw InputError(f.name("chunk"), std::to_string(s.chunk), "cannot be combined with window = " + std::to_string(s.window));
  if (s.chunk > 0 && !s.causal)
    throw InputError(f.name("chunk"), std::to_string(s.chunk), "chunked attention needs causal = true");
}

}  // namespace

AttentionOp AttentionOp::from_json(const JsonFields& f) {
  AttentionOp op;
  AttentionShape& s = op.shape;
  op.phase = phase_from_json(f);
  s.batch = f.require_int("batch");
  s.q_len = f.require_int("q_len");
  s.kv_len = f.require_int("kv_len");
  s.num_q_heads = f.require_int("num_q_heads");
  s.num_kv_heads = f.require_int("num_kv_heads");
  s.kv_lora_rank = f.optional_int("kv_lora_rank").value_or(0);
  s.rope_head_dim = f.optional_int("rope_head_dim", false).value_or(0);
  if (s.is_mla()) {
    parse_mla_widths(f, s);
  } else {
    s.head_dim = f.require_int("head_dim");
    s.v_head_dim = f.optional_int("v_head_dim").value_or(s.head_dim);
  }
  s.causal = f.optional_bool("causal", op.phase == Phase::prefill);
  s.window = f.optional_int("window", false).value_or(0);
  s.chunk = f.optional_int("chunk", false).value_or(0);
  check_mask(f, s);
  if (s.num_q_heads % s.num_kv_heads != 0)
    throw InputError(f.name("num_kv_heads"), std::to_string(s.num_kv_heads),
                     "must divide num_q_heads = " + std::to_string(s.num_q_heads));
  if (s.q_len > s.kv_len)
    throw InputError(f.name("q_len"), std::to_string(s.q_len),
                     "must not exceed kv_len = " + std::to_string(s.kv_len));
  return op;
}

void AttentionOp::to_json(nlohmann::json& j) const {
  const AttentionShape& s = shape;
  j["phase"] = std::string(to_string(phase));
  j["batch"] = s.batch;
  j["q_len"] = s.q_len;
  j["kv_len"] = s.kv_len;
  j["num_q_heads"] = s.num_q_heads;
  j["num_kv_heads"] = s.kv_heads();
  j["head_dim"] = s.qk_dim();
  j["v_head_dim"] = s.v_dim();
  if (s.is_mla()) {
    j["kv_lora_rank"] = s.kv_lora_rank;
    j["rope_head_dim"] = s.rope_head_dim;
  }
  if (s.window > 0) j["window"] = s.window;
  if (s.chunk > 0) j["chunk"] = s.chunk;
  j["causal"] = s.causal;
}

OpClass AttentionOp::op_class() const { return {kind, phase, shape.is_mla() ? OpVariant::mla : OpVariant::none}; }

FitSpec AttentionOp::fit_spec(const OpClass& c, bool warm_cache) {
  if (c.phase == Phase::prefill && c.variant == OpVariant::none) {
    FitSpec s;
    s.cache = warm_cache;
    // Compute-bound: rows efficiency, causal masking cost, the one-wave span term and one
    // exponential per score (what makes narrow heads slower per FLOP: at head_dim 64 the
    // exponentials are twice the share of the work they are at 128).
    s.causal_factor = s.slots = s.rows_half = s.softmax = true;
    s.bw = false;
    // mhacfg's CPU kernel computes the masked triangle of each query tile (ops/attention.hpp).
    s.masked = warm_cache;
    // ... and pays per key tile for the work that does not scale with its keys (packing the query
    // tile for Eigen's GEMM, rescaling the running output): short, windowed and ragged key ranges
    // pay it more often per FLOP.
    s.tiles = warm_cache;
    return s;
  }
  // Decode and MLA (MLA prefill has no records of its own; it is fitted as decode is).
  FitSpec s = matrix_fit_spec(warm_cache, true);
  if (!warm_cache) {
    s.combine = c.phase == Phase::decode;
    return s;
  }
  if (c.phase == Phase::decode && c.variant == OpVariant::none) {
    // The CPU decode kernel (kernels/cpu): per K/V element loads in register blocks of 4, 2 and 1
    // query rows, one exponential per score, compute and memory partly overlapped on one core, and
    // the loop slower when K/V stream from memory than from cache.
    s.head_dim_scale = s.rows_half = false;
    s.softmax = s.load = s.combine = s.miss = true;
    s.row_block = true;
    // Partial overlap only (k <= 2): on noisy grids fits reached k = 10-25 (compute and memory fully
    // overlapped) with a FLOP rate of 105-180 GFLOP/s instead of ~285, a second mode of the same grid
    // error. With the cap, 20 grids of the development VM (2 of them full) refitted offline gave
    // held-out medians of 1.5-5.4 % (median 3.4 %) instead of 0.8-7.0 % (median 3.6 %).
    s.combine_max = 1.0;
    s.widen = true;
  }
  return s;
}

}  // namespace mhacfg
