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
struct SplitWorkspace {
  float* o_part = nullptr;
  float* lse = nullptr;
};
std::size_t split_workspace_bytes(std::int64_t batch, std::int64_t num_heads, std::int64_t num_splits,
                                  std::int64_t v_dim);
SplitWorkspace split_workspace(void* base, std::int64_t batch, std::int64_t num_heads, std::int64_t num_splits,
                               std::int64_t v_dim);

// o[b, h, :] (bf16, o + b * o_batch_stride + h * v_dim) from the partials. Launched with
// programmatic dependent launch so its launch overlaps the tail of the split kernel before it.
void launch_combine(const SplitWorkspace& ws, Bf16* o, std::int64_t o_batch_stride, int batch, int num_heads,
                    int num_splits, int v_dim, Stream stream);

}  // namespace mhacfg::kernels::cuda::detail
