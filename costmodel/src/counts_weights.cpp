// Weight bytes one GPU holds to serve a model: each component (attention, FFN, the rest) in its dtype
// with its quantisation scales, split as the engines shard it under tensor parallelism.
#include <algorithm>

#include "mhacfg/costmodel/counts.hpp"

namespace mhacfg {

double served_weight_bytes_per_gpu(const ParamCounts& p, const Workload& w) {
  const double tp = double(w.tp);
  // Of attention, what every GPU holds whole: a sparse model's indexers and MLA's down-projections.
  const double attention_whole = double(p.replicated - p.router - p.norms);
  const double split_attention = double(p.attention - p.kv_projection) - attention_whole + double(p.linear_attention);
  // Each layer's K/V projections split over min(tp, its KV heads) GPUs.
  double kv_split = 0.0;
  for (const ParamCounts::KvProjection& g : p.kv_projections) kv_split += double(g.params) / double(std::min(w.tp, g.kv_heads));
  // Attention data parallel: every GPU runs every head for its own requests, so holds the attention whole.
  const double attention =
      w.dp_attention ? split_attention + double(p.kv_projection) + attention_whole
                     : split_attention / tp +
                           (p.kv_projection > 0 ? kv_split : 0.0) +
                           attention_whole;
  // Expert parallel: the routed experts split whole over ep GPUs; dense and shared FFNs stay split by tp.
  const double routed_split = w.ep > 1 ? double(w.ep) : tp;
  const double ffn = double(p.ffn - p.routed_experts) / tp + double(p.routed_experts) / routed_split;
  const double rest = double(p.embedding + p.lm_head + p.vision) / tp + double(p.router + p.norms);
  const double bits = attention * storage_bits_per_element(w.attention_weights()) +
                      ffn * storage_bits_per_element(w.ffn_weights()) + rest * storage_bits_per_element(w.weight_dtype);
  return bits / 8.0 / double(w.pp);  // pipeline stages hold 1/pp of the layers (the ends as an even share)
}

double served_weight_bytes_per_gpu(const ParamCounts& p, DType weight_dtype, std::int64_t tp) {
  Workload w;
  w.weight_dtype = weight_dtype;
  w.tp = tp;
  return served_weight_bytes_per_gpu(p, w);
}

}  // namespace mhacfg
