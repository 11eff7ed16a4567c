// The op shapes of one layer's attention core and indexer, as the counts and the time model see them.
#include "mhacfg/costmodel/counts.hpp"

namespace mhacfg {

std::int64_t indexer_query_input(const ModelSpec& m) {
  return m.attention.variant == AttentionVariant::mla && m.attention.mla.q_lora_rank > 0 ? m.attention.mla.q_lora_rank : m.d_model;
}

IndexerShape layer_indexer_shape(const ModelSpec& m, std::int64_t batch, std::int64_t q_len, std::int64_t kv_len) {
  const IndexerSpec& x = m.attention.indexer;
  return IndexerShape{batch, q_len, kv_len, x.num_heads, x.head_dim, x.topk};
}

AttentionShape layer_attention_shape(const ModelSpec& m, const LayerSpec& layer, std::int64_t batch,
                                     std::int64_t q_len, std::int64_t kv_len, bool decode) {
  const AttentionSpec& a = m.attention;
  AttentionShape s;
  s.batch = batch;
  s.q_len = q_len;
  s.kv_len = kv_len;
  s.num_q_heads = a.num_q_heads;
  s.num_kv_heads = layer_kv_heads(m, layer);
  s.head_dim = a.head_dim;
  s.v_head_dim = a.v_head_dim;
  s.causal = true;
  s.window = layer.window();
  s.chunk = layer.chunk();
  // Each query of a sparse model attends to the indexer's top k keys: as many pairs, and keys read, as a
  // window of k (validate() keeps windows and chunks away from sparse models); the cache keeps them all.
  if (a.sparse()) s.window = a.indexer.topk;
  if (m.attention.variant == AttentionVariant::mla && decode) {  // absorbed: attention over the cached latent
    s.kv_lora_rank = a.mla.kv_lora_rank;
    s.rope_head_dim = a.mla.rope_head_dim;
    s.num_kv_heads = 1;
    s.head_dim = s.qk_dim();
    s.v_head_dim = s.v_dim();
  }
  return s;
}

}  // namespace mhacfg
