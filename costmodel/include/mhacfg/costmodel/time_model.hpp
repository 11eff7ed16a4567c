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
// F and B are costmodel's FLOP and byte counts (ops.hpp), F_mask the FLOPs mhacfg's CPU prefill
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
  double softmax = 0;    // exponentials: query-key pairs x heads (E)
  double elements = 0;   // decode: K/V elements loaded, once per key and KV head (L)
  double masked_flop = 0;  // prefill: FLOPs mhacfg's CPU kernel spends on masked pairs (F_mask)
  double tile_elements = 0;  // prefill: (query tile, key tile) products of mhacfg's CPU kernel x the
                             // tile's rows x (d + d_v): work per key tile whatever its width (T)
  double widened = 0;    // decode: K/V elements stored narrower than fp32 (bf16), widened on load (L_w)
  double skinny_elements = 0;  // GEMM with m <= kCpuSkinnyGemmRows: B elements (k x n) the CPU
                               // skinny kernel streams per pass of its row blocks (L_s); else 0
  double resident_bytes = 0;  // bytes competing for a warm cache between calls (0: `bytes`)
};

// Facts of mhacfg's CPU kernels (kernels/cpu) that their time model counts with; the kernels assert
// they match. Query rows are register-blocked 4, then 2, then 1 at a time (small_rows.hpp), and
// GEMMs with at most kCpuSkinnyGemmRows rows stream B through those blocks in place instead of
// packing it for a blocked GEMM.
inline constexpr std::int64_t kCpuRowBlock = 4;
inline constexpr std::int64_t kCpuSkinnyGemmRows = 16;
// CPU decode runs up to kCpuDecodeSmallRows query rows per KV head (q_len x group) through those
// blocks, each block re-reading the K/V tile from L1/L2; more rows go to Eigen's GEMM, which packs
// the tile once (one pass).
inline constexpr std::int64_t kCpuDecodeSmallRows = 32;
// The CPU prefill kernel stacks kCpuPrefillTileRows / group positions of a GQA group's heads into
// one query tile and multiplies it against every key up to the tile's last position: a causal mask
// is applied to computed scores, so the triangle above the diagonal of each tile is work done.
inline constexpr std::int64_t kCpuPrefillTileRows = 128;
inline constexpr std::int64_t kCpuPrefillKeyTile = 256;  // keys per key tile, the first one of a block takes the rest
// Query-key pairs per query head and sequence that the CPU prefill kernel computes (masked or not).
double cpu_prefill_pairs_computed(const AttentionShape& s);
// Sum over the CPU prefill kernel's query tiles (one sequence, one KV head) of rows x key tiles.
double cpu_prefill_tile_rows(const AttentionShape& s);

// The CPU linear-attention kernel walks each value head's state once per token for Mamba2 (update and
// read fused) and twice for Gated DeltaNet (decay and S^T k; then the update and S^T q), and widens a
// bf16 state to fp32 and rounds it back once per block of kCpuLinearTokenBlock tokens.
inline constexpr std::int64_t kCpuLinearTokenBlock = 64;
inline constexpr std::int64_t cpu_linear_state_passes(LinearKind k) { return k == LinearKind::mamba2 ? 1 : 2; }

// The CPU indexer (kernels/cpu/src/indexer.cpp) multiplies query tiles of cpu_indexer_tile_queries
// queries (their heads as rows, kCpuIndexerTileRows of them at most) against key tiles of
// kCpuIndexerKeyTile keys, up to the tile's last query's last key, dequantising each key tile from
// fp8 once per query tile.
inline constexpr std::int64_t kCpuIndexerTileRows = 256;
inline constexpr std::int64_t kCpuIndexerKeyTile = 256;
inline constexpr std::int64_t cpu_indexer_tile_queries(std::int64_t num_heads) {
  return num_heads >= kCpuIndexerTileRows ? 1 : kCpuIndexerTileRows / (num_heads < 1 ? 1 : num_heads);
}
// Key elements the CPU indexer dequantises: per sequence and query tile, its last query's keys x head_dim.
double cpu_indexer_keys_dequantised(const IndexerShape& s);
// Scores the CPU indexer's top-k selection scans: those of every query that sees more than topk keys
// (a query that sees at most topk keeps them all).
double cpu_indexer_scores_selected(const IndexerShape& s);

// Rows of one query tile of the attention work decomposition (FlashAttention-style kernels use
// 128 rows up to head_dim 128 and 64 beyond).
std::int64_t attention_tile_rows(std::int64_t head_dim);
// Calls with at most this many queries per sequence are decode-shaped.
inline constexpr std::int64_t kDecodeMaxQueries = 16;

OpFeatures op_features(const AttentionShape& s, DType dtype);
OpFeatures op_features(const GemmShape& g, DType dtype);
// Linear attention's core: its units are the (sequence, value head) recurrences, each a chain of
// q_len dependent steps over its state; `dtype` is the state's. L counts the recurrent state's elements
// walked (per token, cpu_linear_state_passes), L_w those widened and rounded back (bf16 states).
OpFeatures op_features(const LinearAttentionShape& s, DType dtype);
// A sparse model's lightning indexer (bytes are indexer_bytes', in the engines' fp8 format): its
// units are the (query tile, key tile) products of the CPU kernel's decomposition, r a query tile's
// heads (decode: num_heads), E the ReLU-weighted sums (visible pairs x heads), L the key elements
// dequantised (cpu_indexer_keys_dequantised), T the scores the top-k selection scans
// (cpu_indexer_scores_selected).
OpFeatures op_features(const IndexerShape& s);

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
