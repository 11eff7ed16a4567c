// The calibrated time model of one op (docs/cost-model.md gives the reasons for each term).
//
//   T = t0 + max( F / (P * eta * u) (+) M,   F_unit * S / (P * eta) )
//   eta = (1 - exp(-d / d0)) * (1 - exp(-r / r0)) / (1 + kappa * causal)   compute efficiency
//   u   = 1 / (1 + (A_half / A)^gamma)                   how well A parallel units fill the device
//   M   = min(B, C) / BW_cache + max(0, B - C) / (BW * u)                  memory time
//
// F and B are costmodel's FLOP and byte counts (ops.hpp), d the Q/K head width, A the independent
// work units (prefill: query tiles x heads x batch; decode: KV heads x batch; GEMM: output tiles),
// F_unit the FLOPs of the largest unit (a query tile against its keys) and S the parallel slots: a
// wave of units cannot finish faster than its longest unit. r is the rows one pass multiplies
// against the same weights or K/V tile (GEMM m; attention: the group's queries, or query tiles of
// the whole group where kernels share K/V tiles across a GQA group): matrix-vector work runs far
// below the matrix-matrix rate. C is the bytes a warm cache serves at BW_cache between repeated
// calls (CPU timings; GPU timings flush L2, so C = 0). (+) is a sum (compute and memory phases do not overlap;
// what the fitted data show) or, with `overlap`, a max: a datasheet profile has t0 = 0, eta = u = 1,
// no span and overlap, the plain roofline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg {

struct OpFeatures {
  double flop = 0;
  double bytes = 0;
  double head_dim = 0;   // Q/K width (0 for GEMMs: no head_dim term)
  double causal = 0;     // 1 for a causal mask over more than one query
  double unit_flop = 0;  // FLOPs of the largest work unit
  double streams = 1;    // independent work units (A)
  double rows = 1;       // rows per pass (r)
};

// Rows of one query tile of the attention work decomposition (FlashAttention-style kernels use
// 128 rows up to head_dim 128 and 64 beyond).
std::int64_t attention_tile_rows(std::int64_t head_dim);
// Calls with at most this many queries per sequence are decode-shaped.
inline constexpr std::int64_t kDecodeMaxQueries = 16;

OpFeatures op_features(const AttentionShape& s, DType dtype);
OpFeatures op_features(const GemmShape& g, DType dtype);

struct OpModel {
  double t0_s = 0;             // fixed cost per call (launch, setup)
  double peak_flop_per_s = 0;  // P
  double head_dim_scale = 0;   // d0; 0: no head_dim dependence
  double causal_factor = 0;    // kappa
  double slots = 0;            // S; 0: no span term
  double bw_bytes_per_s = 0;   // BW
  double half_streams = 0;     // A_half; 0: one unit fills the device
  double stream_exponent = 1;  // gamma
  double rows_half = 0;        // r0; 0: no rows dependence
  double cache_bytes = 0;      // C; 0: every byte from memory
  double cache_bw_bytes_per_s = 0;
  bool overlap = false;        // max(compute, memory) instead of their sum
};

// The uncalibrated roofline: max(F / peak, B / bandwidth).
OpModel roofline_model(double peak_flop_per_s, double bw_bytes_per_s);

double predict_seconds(const OpModel& m, const OpFeatures& f);

nlohmann::json op_model_to_json(const OpModel& m);
OpModel op_model_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace mhacfg
