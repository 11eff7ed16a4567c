// The flash-decoding combine: merges a sequence's per-split partial outputs by their log-sum-exp.
// Shared by decode and MLA decode.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::detail {

// Workspace of one split launch: o_part [batch, num_heads, num_splits, v_dim] fp32 (each split's
// output normalised by its own softmax sum) then lse [batch, num_heads, num_splits] fp32 (log2 of
// the split's softmax sum plus its running max, in the kernels' log2-scaled score units; -inf for an
// empty split).
// The combine kernel's shape: a block of kCombineThreads per (head, sequence); each thread merges 4
// dims of every `groups`-th split, kCombineUnroll splits loaded together. combine_rounds is the number
// of dependent load rounds a thread makes, which sets the combine's latency.
constexpr int kCombineThreads = 256;
constexpr int kCombineUnroll = 8;
constexpr int combine_groups(int v_dim) {
  const int lanes = v_dim / 4 < kCombineThreads ? v_dim / 4 : kCombineThreads;
  return lanes > 0 ? kCombineThreads / lanes : 1;
}
constexpr int combine_rounds(int num_splits, int v_dim) {
  const int per_round = combine_groups(v_dim) * kCombineUnroll;
  return ((num_splits + per_round - 1) / per_round) * ((v_dim / 4 + kCombineThreads - 1) / kCombineThreads);
}

struct SplitWorkspace {
  float* o_part = nullptr;
  float* lse = nullptr;
};
std::size_t split_workspace_bytes(std::int64_t batch, std::int64_t num_heads, std::int64_t num_splits,
                                  std::int64_t v_dim);
SplitWorkspace split_workspace(void* base, std::int64_t batch, std::int64_t num_heads, std::int64_t num_splits,
                               std::int64_t v_dim);

// Throws InputError naming `what` unless `workspace` holds `needed` bytes, 256-byte aligned (nothing
// is needed when `needed` is 0).
void require_workspace(const void* workspace, std::size_t bytes, std::size_t needed, const char* what);

// o[b, h, :] (bf16, o + b * o_batch_stride + h * v_dim) from the partials. Launched with
// programmatic dependent launch so its launch overlaps the tail of the split kernel before it.
void launch_combine(const SplitWorkspace& ws, Bf16* o, std::int64_t o_batch_stride, int batch, int num_heads,
                    int num_splits, int v_dim, Stream stream);

}  // namespace mhacfg::kernels::cuda::detail
