// Weight bytes one GPU holds to serve a model: each component (attention, FFN, the rest) in its dtype
// with its quantisation scales, split as the engines shard it under tensor parallelism.
#include <algorithm>

#include "mhacfg/costmodel/counts.hpp"

namespace mhacfg {

double served_weight_bytes_per_gpu(const ParamCounts& p, const Workload& w) {
  const double tp = double(w.tp);
  // Of attention, what every GPU holds whole: a sparse model's indexers and MLA's down-projections.
  const double attention_whole = double(p.replicated - p.router - p.norms);
  const double kv = p.kv_projection > 0 ? double(p.kv_projection) / double(std::min(w.tp, p.kv_heads)) : 0.0;
  const double attention = (double(p.attention - p.kv_projection) - attention_whole + double(p.linear_attention)) / tp +
                           kv + attention_whole;
  const double ffn = double(p.ffn) / tp;
  const double rest = double(p.embedding + p.lm_head + p.vision) / tp + double(p.router + p.norms);
  return (attention * storage_bits_per_element(w.attention_weights()) + ffn * storage_bits_per_element(w.ffn_weights()) +
          rest * storage_bits_per_element(w.weight_dtype)) / 8.0;
}

double served_weight_bytes_per_gpu(const ParamCounts& p, DType weight_dtype, std::int64_t tp) {
  Workload w;
  w.weight_dtype = weight_dtype;
  w.tp = tp;
  return served_weight_bytes_per_gpu(p, w);
}

}  // namespace mhacfg
