// The calibrated time model of one op (docs/cost-model.md gives the reasons for each term).
//
//   T = t0 + max( combine(C, M),   F_unit * S / (P * eta) )
//   C   = ((F + mu F_mask) / (P * eta * u) + E / R_exp + (L / R_load + L_w / R_w) passes) * (1 + phi * (1 - h))
//         (the CPU skinny GEMM: L_s * passes(m) / R_s instead of the FLOP term)
//   eta = (1 - exp(-d / d0)) * (1 - exp(-r / r0)) / (1 + kappa * causal)   compute efficiency
//   u   = 1 / (1 + (A_half / A)^gamma)                   how well A parallel units fill the device
//   M   = B * (h / BW_cache + (1 - h) / (BW * u)),  h = 1 / (1 + (B / C_bytes)^4)  memory time
//   combine(C, M) = (C^k + M^k)^(1/k)
//
// F and B are costmodel's FLOP and byte counts (ops.hpp; each op's folder computes its OpFeatures),
// F_mask the FLOPs mhacfg's CPU prefill
// kernel spends on masked pairs (cpu_prefill_pairs_computed) at mu times a useful FLOP's cost, d the Q/K head width, A the independent
// work units (prefill: query tiles x heads x batch; decode: KV heads x batch; GEMM: output tiles),
// F_unit the FLOPs of the largest unit (a query tile against its keys) and S the parallel slots: a
// wave of units cannot finish faster than its longest unit. r is the rows one pass multiplies
// against the same weights or K/V tile (GEMM m; attention: the group's queries, or query tiles of
// the whole group where kernels share K/V tiles across a GQA group): matrix-vector work runs far
// below the matrix-matrix rate. E is the softmax exponentials (one per query-key pair and head) and
// L the K/V elements a decode kernel loads (and, from bf16, widens) once per key and KV head: work
// that is per element, not per FLOP, at rates R_exp and R_load (0: no such term); a kernel that
// blocks query rows in registers loads each K/V element once per row block. h is the fraction
// of the B bytes a warm cache of C_bytes serves at BW_cache when a call repeats on the same inputs
// (CPU timings; GPU timings flush L2, so C_bytes = 0): ~1 below the capacity, falling steeply above
// it, as a sweep larger than an LRU-like cache evicts itself. phi is how much slower the compute
// loop runs on operands streamed from memory (one core stalls on its loads). k >= 1 says how far compute and memory overlap: k = 1 is their sum (one core
// that waits on its loads), large k their max (`overlap`: k = infinity). A datasheet profile has
// t0 = 0, eta = u = 1, no span and overlap, the plain roofline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/op_features.hpp"
#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg {

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
  double softmax_rate = 0;     // R_exp, exponentials per second; 0: no term
  double load_rate = 0;        // R_load, elements per second; 0: no term
  double combine_excess = 0;   // k - 1 (0: the sum of compute and memory)
  double miss_slowdown = 0;    // phi; 0: compute runs as fast on cache misses
  double masked_weight = 0;    // mu: masked pairs' FLOPs (F_mask) cost mu x a useful FLOP; 0: free
  double tile_rate = 0;        // R_tile: tile elements (T) per second; 0: no term
  double widen_rate = 0;       // R_w: extra cost of widening a K/V element per pass; 0: none
  double skinny_rate = 0;      // R_s: B elements per second per row-block pass of the CPU skinny GEMM;
                               // when set, its compute time is L_s x passes(m) / R_s (not F / (P eta))
  double row_block = 0;        // decode: query rows per register block (4: blocks of 4, 2, 1 rows
                               // each re-read the K/V tile); 0: one pass
  bool overlap = false;        // max(compute, memory): k = infinity
};

// The uncalibrated roofline: max(F / peak, B / bandwidth).
OpModel roofline_model(double peak_flop_per_s, double bw_bytes_per_s);

double predict_seconds(const OpModel& m, const OpFeatures& f);
// K/V passes of `rows` query rows in register blocks of row_block, row_block / 2, ..., 1 rows.
double row_passes(double rows, double row_block);

nlohmann::json op_model_to_json(const OpModel& m);
// The limits every OpModel keeps, the fitter's and a profile file's alike (a file outside them is an
// input error; the fitter clamps to them, so what it writes loads back): rates are 0 (term unused) or
// at least kMinModelRate per second; exponents at most kMaxModelExponent; half-points, slots and row
// blocks at most kMaxModelCount. Outside them predictions became inf, NaN or 1e300 s.
constexpr double kMinModelRate = 1e3;
constexpr double kMaxModelExponent = 64;
constexpr double kMaxModelCount = 1e9;
// `m` with every field moved inside those limits.
OpModel within_limits(OpModel m);

OpModel op_model_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace mhacfg
