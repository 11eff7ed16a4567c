// The indexer op: DeepSeek Sparse Attention's lightning indexer. Its shape, counts, the facts of
// mhacfg's CPU kernel its time model counts with, its features and its record fields
// (costmodel/ops/indexer/).
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

// DeepSeek Sparse Attention's lightning indexer (model_spec.hpp's IndexerSpec) for `batch` sequences:
// each of the q_len queries (the last q_len positions of kv_len tokens) scores every key it may see,
// causally, with num_heads heads of head_dim, I(t, s) = sum_h w_h ReLU(q_h . k_s), and keeps the topk
// best for the attention. Keys are held as the engines hold them (DeepSeek's inference code, vLLM,
// SGLang, TensorRT-LLM): fp8 with one fp32 scale per 128 values, the queries likewise.
struct IndexerShape {
  std::int64_t batch = 1;
  std::int64_t q_len = 1;
  std::int64_t kv_len = 1;
  std::int64_t num_heads = 64;
  std::int64_t head_dim = 128;
  std::int64_t topk = 2048;
};
// Bytes of one cached indexer key: head_dim fp8 values and a 4-byte scale per 128 of them (132 at 128).
std::int64_t indexer_key_bytes(std::int64_t head_dim);
// FLOPs of the scores: per (query, visible key) pair, q_h . k for every head (2 x num_heads x head_dim)
// and the weighted sum over the heads (2 x num_heads). Selecting the top k is not a matmul. Exact and wide.
WideCount indexer_flops(const IndexerShape& s);
// Minimum bytes moved: every key read once per sequence, the queries and the fp32 head weights read,
// min(topk, kv_len) int32 indices written per query.
std::int64_t indexer_bytes(const IndexerShape& s);

// The CPU indexer (kernels/cpu/src/indexer.cpp) multiplies query tiles of
// facts.indexer_tile_queries(num_heads) queries (their heads as rows, facts.indexer_tile_rows of them
// at most) against key tiles of facts.indexer_key_tile keys, up to the tile's last query's last key,
// dequantising each key tile from fp8 once per query tile.
// Key elements the CPU indexer dequantises: per sequence and query tile, its last query's keys x head_dim.
double cpu_indexer_keys_dequantised(const IndexerShape& s, const CpuKernelFacts& facts = {});
// Scores the CPU indexer's top-k selection scans: those of every query that sees more than topk keys
// (a query that sees at most topk keeps them all).
double cpu_indexer_scores_selected(const IndexerShape& s);

// Bytes are indexer_bytes', in the engines' fp8 format: its units are the (query tile, key tile)
// products of the CPU kernel's decomposition, r a query tile's heads (decode: num_heads), E the
// ReLU-weighted sums (visible pairs x heads), L the key elements dequantised
// (cpu_indexer_keys_dequantised), T the scores the top-k selection scans (cpu_indexer_scores_selected).
OpFeatures op_features(const IndexerShape& s, const CpuKernelFacts& facts = {});

// An indexer record's op fields (records.hpp); the op's entry in op_registry.hpp.
struct IndexerOp {
  static constexpr OpKind kind = OpKind::indexer;
  static constexpr std::string_view name = "indexer";
  static constexpr bool phased = true;
  static constexpr OpVariant fitted_variant = OpVariant::none;
  // Its keys and queries are fp8 (dtype "fp8", the default and the only one).
  static constexpr DType default_dtype = DType::fp8;
  static constexpr std::string_view only_default_dtype = "an indexer's keys and queries are fp8 (as the engines cache them)";

  Phase phase = Phase::prefill;
  IndexerShape shape;

  OpClass op_class() const { return {kind, phase, OpVariant::none}; }
  OpFeatures features(DType, const CpuKernelFacts& facts = {}) const { return op_features(shape, facts); }
  static IndexerOp from_json(const JsonFields& f);
  void to_json(nlohmann::json& j) const;
  static FitSpec fit_spec(const OpClass& c, bool warm_cache);
};

}  // namespace mhacfg
