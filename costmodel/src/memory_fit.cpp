#include "mhacfg/costmodel/memory_fit.hpp"

#include <algorithm>

namespace mhacfg {

std::int64_t MemoryFit::batch_within(std::int64_t cap) const { return unbounded ? cap : std::min(cap, max_batch); }

MemoryFit fit_memory(const ModelSpec& m, const Workload& w, const Profile& p, double fraction) {
  MemoryFit f;
  f.budget_bytes = double(p.spec.memory_bytes) * fraction;
  f.weights_bytes_per_gpu = served_weight_bytes_per_gpu(count_params(m), w);
  f.one_sequence = count_kv_cache(m, w.with_batch(1));
  f.ranks = w.dp_attention && w.tp > 1 ? w.tp : 1;
  f.kv_bytes_per_seq_on_gpu = double(f.one_sequence.bytes_per_gpu);
  f.kv_bytes_per_seq_per_gpu = f.kv_bytes_per_seq_on_gpu / double(f.ranks);
  const double room = f.budget_bytes - f.weights_bytes_per_gpu;
  if (room <= 0) return f;
  if (f.kv_bytes_per_seq_on_gpu <= 0) f.unbounded = true;
  else f.max_batch = f.ranks * static_cast<std::int64_t>(room / f.kv_bytes_per_seq_on_gpu);
  return f;
}

}  // namespace mhacfg
