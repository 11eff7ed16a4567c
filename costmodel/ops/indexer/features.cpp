// The indexer op's time-model features, and the work decomposition of mhacfg's CPU indexer they
// count with (keys dequantised per query tile, scores the top-k selection scans).
#include <algorithm>

#include "mhacfg/costmodel/ops/attention.hpp"
#include "mhacfg/costmodel/ops/indexer.hpp"

namespace mhacfg {

double cpu_indexer_keys_dequantised(const IndexerShape& s, const CpuKernelFacts& facts) {
  const std::int64_t tile = facts.indexer_tile_queries(s.num_heads);
  double keys = 0;
  for (std::int64_t q1 = std::min(tile, s.q_len);; q1 = std::min(q1 + tile, s.q_len)) {
    keys += static_cast<double>(s.kv_len - s.q_len + q1);  // the tile's last query sees these
    if (q1 == s.q_len) break;
  }
  return keys * static_cast<double>(s.batch) * static_cast<double>(s.head_dim);
}

double cpu_indexer_scores_selected(const IndexerShape& s) {
  // Query t sees kv_len - q_len + t + 1 keys: the counts from lo = max(kv_len - q_len + 1, topk + 1) to kv_len.
  const double lo = static_cast<double>(std::max(s.kv_len - s.q_len + 1, s.topk + 1)), hi = static_cast<double>(s.kv_len);
  if (lo > hi) return 0.0;
  return static_cast<double>(s.batch) * (lo + hi) * (hi - lo + 1) / 2.0;
}

OpFeatures op_features(const IndexerShape& s, const CpuKernelFacts& facts) {
  OpFeatures f;
  f.flop = static_cast<double>(indexer_flops(s));
  f.bytes = static_cast<double>(indexer_bytes(s));
  f.head_dim = static_cast<double>(s.head_dim);
  const std::int64_t tile = std::min(s.q_len, facts.indexer_tile_queries(s.num_heads));
  const double pairs = static_cast<double>(s.batch) * static_cast<double>(attention_pairs(s.q_len, s.kv_len, true, 0));
  const double query_tiles = static_cast<double>((s.q_len + tile - 1) / tile);
  const double key_tiles = static_cast<double>((s.kv_len + facts.indexer_key_tile - 1) / facts.indexer_key_tile);
  f.streams = static_cast<double>(s.batch) * query_tiles * key_tiles;
  f.rows = static_cast<double>(tile * s.num_heads);
  f.unit_flop = static_cast<double>(tile * std::min(s.kv_len, facts.indexer_key_tile)) * 2.0 *
                static_cast<double>(s.num_heads) * static_cast<double>(s.head_dim + 1);
  f.softmax = pairs * static_cast<double>(s.num_heads);
  f.elements = cpu_indexer_keys_dequantised(s, facts);
  f.tile_elements = cpu_indexer_scores_selected(s);
  return with_kernel_facts(f, facts);
}

}  // namespace mhacfg
