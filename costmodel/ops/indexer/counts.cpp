// The indexer op's counts: FLOPs of the scores and bytes moved.
#include <algorithm>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/ops/attention.hpp"
#include "mhacfg/costmodel/ops/indexer.hpp"

namespace mhacfg {

std::int64_t indexer_key_bytes(std::int64_t head_dim) {
  const std::int64_t scales = head_dim / 128 + (head_dim % 128 != 0);  // one fp32 scale per 128 values
  return add(head_dim, mul(4, scales, "indexer key bytes"), "indexer key bytes");
}

WideCount indexer_flops(const IndexerShape& s) {
  const char* what = "indexer FLOPs";
  const WideCount pairs = wide_mul(s.batch, attention_pairs(s.q_len, s.kv_len, true, 0), what);
  // q_h . k_s for every head: 2 * head_dim per pair per head; sum_h w_h ReLU(.): 2 per pair per head
  return wide_mul(pairs, mul(2, s.num_heads, add(s.head_dim, 1, what), what), what);
}

std::int64_t indexer_bytes(const IndexerShape& s) {
  const char* what = "indexer bytes";
  const std::int64_t keys = mul(s.batch, s.kv_len, indexer_key_bytes(s.head_dim), what);
  const std::int64_t queries = mul(s.batch, s.q_len, what);
  // Per query: num_heads fp8 queries with their scales and one fp32 weight per head in; indices out.
  const std::int64_t per_query = add(mul(s.num_heads, add(indexer_key_bytes(s.head_dim), 4, what), what),
                                     mul(4, std::min(s.topk, s.kv_len), what), what);
  return add(keys, mul(queries, per_query, what), what);
}

}  // namespace mhacfg
