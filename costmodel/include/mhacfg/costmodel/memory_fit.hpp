// How many sequences fit on one GPU beside the weights: the one memory rule that recommend, compare,
// analyze and the plots apply. Weights are held per GPU as the engines shard them
// (served_weight_bytes_per_gpu); each sequence holds its KV cache (and a hybrid model's state) per GPU
// at the workload's context.
#pragma once

#include <cstdint>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/model_spec.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

struct MemoryFit {
  double budget_bytes = 0;              // the device's memory x the fraction given, per GPU
  double weights_bytes_per_gpu = 0;
  KvCacheCounts one_sequence;           // the cache of one sequence at the workload's context and tp
  // The GPUs that each hold whole sequences of their own: the tp ranks under attention data parallel
  // (a sequence's cache lives on the rank that serves it), else 1 (every GPU holds its share of each).
  std::int64_t ranks = 1;
  double kv_bytes_per_seq_on_gpu = 0;   // what one sequence takes on a GPU that holds it
  double kv_bytes_per_seq_per_gpu = 0;  // the same spread over the ranks: the share a sequence costs each GPU
  // Sequences that fit beside the weights: 0 when not one does; a multiple of `ranks`. A model that
  // caches nothing (FFN blocks only) is not bounded by memory while its weights fit: `unbounded`, and
  // max_batch is 0.
  std::int64_t max_batch = 0;
  bool unbounded = false;

  // Per GPU at `batch` sequences: the fullest rank holds ceil(batch / ranks) of them.
  double bytes_at(std::int64_t batch) const {
    return weights_bytes_per_gpu + double((batch + ranks - 1) / ranks) * kv_bytes_per_seq_on_gpu;
  }
  // max_batch, or `cap` when memory does not bound the batch; never above `cap`.
  std::int64_t batch_within(std::int64_t cap) const;
};

// `fraction` of the device's memory holds the weights and the KV cache (recommend and compare leave the
// rest to activations and the engine: 0.9 by default; analyze asks whether the memory holds them: 1).
MemoryFit fit_memory(const ModelSpec& m, const Workload& w, const Profile& p, double fraction);

}  // namespace mhacfg
