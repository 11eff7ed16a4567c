// The indexer op's record fields (JSON in and out) and what its classes fit.
#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/ops/indexer.hpp"

namespace mhacfg {

IndexerOp IndexerOp::from_json(const JsonFields& f) {
  IndexerOp op;
  IndexerShape& s = op.shape;
  op.phase = phase_from_json(f);
  s.batch = f.require_int("batch");
  s.q_len = f.require_int("q_len");
  s.kv_len = f.require_int("kv_len");
  s.num_heads = f.require_int("num_heads");
  s.head_dim = f.require_int("head_dim");
  s.topk = f.require_int("topk");
  if (s.q_len > s.kv_len)
    throw InputError(f.name("q_len"), std::to_string(s.q_len), "must not exceed kv_len = " + std::to_string(s.kv_len));
  narrow(indexer_flops(s), "indexer FLOPs");  // one kernel call: its counts fit 64 bits
  indexer_bytes(s);
  return op;
}

void IndexerOp::to_json(nlohmann::json& j) const {
  j["phase"] = std::string(to_string(phase));
  j["batch"] = shape.batch;
  j["q_len"] = shape.q_len;
  j["kv_len"] = shape.kv_len;
  j["num_heads"] = shape.num_heads;
  j["head_dim"] = shape.head_dim;
  j["topk"] = shape.topk;
}

FitSpec IndexerOp::fit_spec(const OpClass& c, bool warm_cache) {
  FitSpec s;
  s.cache = warm_cache;
  // The indexer's products run at a rate that grows with the rows a key tile is multiplied against
  // (a query tile's heads) and the head width, like MLA's; mhacfg's CPU kernel (warm cache) also pays
  // per element for the ReLU-weighted sum over heads (E), the fp8 keys' dequantisation (L) and the
  // top-k selection (T: the scores of the queries that see more than topk keys).
  s.rows_half = s.head_dim_scale = true;
  s.stream_exponent = s.half_streams = !warm_cache;
  if (warm_cache) {
    // fp8 keys are 1/64-1/512 of the products' bytes: the read bandwidth is the device's measured one.
    // Each product has 256 rows (a prefill's query tile) or a query's 4-128 heads, which Eigen's GEMM
    // runs at one rate (a rows term fitted r0 = 0.02 rows), and the widths in the grid are 64 and 128,
    // whose difference the per-element terms carry. Prefill's dequantisation is 1/4-1/256 of decode's
    // per score (once per query tile): too little to fit.
    s.bw = s.cache = s.head_dim_scale = s.rows_half = false;
    s.bw_ceiling = true;
    s.softmax = s.tiles = true;
    s.load = c.phase == Phase::decode;
  }
  return s;
}

}  // namespace mhacfg
