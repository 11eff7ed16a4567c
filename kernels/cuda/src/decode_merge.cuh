// The split merge inside the decode grid, run by decode_attention.cu's kernel after its grid barrier.
// Included only by decode_attention.cu: its names live in that file's unnamed namespace.
#pragma once

#include <cstdint>

#include "decode_args.cuh"
#include "device_utils.cuh"

namespace mhacfg::kernels::cuda::decode {
namespace {

// This warp's index over the whole grid and the grid's number of warps (the merges stride by it).
struct GridWarps {
  std::int64_t index;
  std::int64_t count;
};
__device__ inline GridWarps grid_warps() {
  const std::int64_t block =
      blockIdx.x + static_cast<std::int64_t>(gridDim.x) * (blockIdx.y + static_cast<std::int64_t>(gridDim.y) * blockIdx.z);
  return {block * kWarps + (threadIdx.x >> 5), static_cast<std::int64_t>(gridDim.x) * gridDim.y * gridDim.z * kWarps};
}

// The split merge inside the decode grid (a.fused): after every block has written its partial O and
// log-sum-exp, one warp per (row, 4 output dims) merges that row's splits, lanes over the splits.
// Replaces the combine kernel when asked (Params::fused_merge) and the grid fits on the device at once
// (one wave). On the H200 the second kernel cost about as long as the split kernel for MQA at batch 1
// (~8-9 us of ~20); merged here MQA took 17.8 us (run 10). That version read a lane's splits one at a
// time, the partial after the weight it depended on: two L2 round trips per split, eight for MQA's 128
// splits, on the path between the grid barrier and the kernel's end. Now a lane issues the loads of
// kMergeBatch splits (their lse and partials, which do not depend on each other) before it uses any,
// and folds them into a running (max, sum, O) rescaled per round like the online softmax: one round
// trip per 256 splits. Not measured yet (written in a session without a device).
// With few splits (batch 8, 4 splits) this mapping idles most lanes and lost to the combine kernel:
// merge_splits_by_row (lanes over the output dims) takes such grids.
constexpr int kMergeBatch = 8;  // splits a lane loads before it uses any

__device__ inline void scale(float4& a, float s) {
  a.x *= s;
  a.y *= s;
  a.z *= s;
  a.w *= s;
}
__device__ inline void add_scaled(float4& a, float w, const float4& v) {
  a.x += w * v.x;
  a.y += w * v.y;
  a.z += w * v.z;
  a.w += w * v.w;
}

template <int D>
__device__ void merge_splits(const Args& a) {
  constexpr int kChunks = D / 4;  // float4 chunks of a row
  const int lane = threadIdx.x & 31;
  const GridWarps gw = grid_warps();
  const std::int64_t nwarps = gw.count, first = gw.index;
  const std::int64_t rows = static_cast<std::int64_t>(gridDim.z) * a.num_q_heads;  // gridDim.z = batch
  const int S = a.num_splits;
  for (std::int64_t u = first; u < rows * kChunks; u += nwarps) {
    const std::int64_t row = u / kChunks;
    const int c = static_cast<int>(u % kChunks);
    const float* l = a.lse + row * S;
    const float* part = a.o_part + row * S * D + c * 4;
    float mx = -INFINITY, sum = 0.f;  // this lane's splits so far
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int s0 = 0; s0 < S; s0 += 32 * kMergeBatch) {
      float ls[kMergeBatch];
      float4 p[kMergeBatch];
#pragma unroll
      for (int j = 0; j < kMergeBatch; ++j) {
        const int s = s0 + lane + 32 * j;
        const int sc = s < S ? s : S - 1;  // in bounds; a split past the end weighs 0 below
        ls[j] = l[sc];
        p[j] = *reinterpret_cast<const float4*>(part + static_cast<std::int64_t>(sc) * D);
        if (s >= S) ls[j] = -INFINITY;
      }
      float m_new = mx;
#pragma unroll
      for (int j = 0; j < kMergeBatch; ++j) m_new = fmaxf(m_new, ls[j]);
      if (m_new == -INFINITY) continue;  // only empty splits so far
      const float alpha = exp2f(mx - m_new);  // 0 while mx is -inf (sum and acc are 0 then)
      sum *= alpha;
      scale(acc, alpha);
#pragma unroll
      for (int j = 0; j < kMergeBatch; ++j) {
        const float w = exp2f(ls[j] - m_new);
        if (w > 0.f) {  // an empty split's partial was never written (it may hold NaN): never multiply it
          sum += w;
          add_scaled(acc, w, p[j]);
        }
      }
      mx = m_new;
    }
    // The lanes' running merges into one: rescale each to the warp's max, then sum.
    float wmx = mx;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) wmx = fmaxf(wmx, __shfl_xor_sync(0xffffffffu, wmx, o));
    const float f = mx == -INFINITY ? 0.f : exp2f(mx - wmx);
    sum *= f;
    scale(acc, f);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      sum += __shfl_xor_sync(0xffffffffu, sum, o);
      acc.x += __shfl_xor_sync(0xffffffffu, acc.x, o);
      acc.y += __shfl_xor_sync(0xffffffffu, acc.y, o);
      acc.z += __shfl_xor_sync(0xffffffffu, acc.z, o);
      acc.w += __shfl_xor_sync(0xffffffffu, acc.w, o);
    }
    if (lane == 0) {
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const std::int64_t b = row / a.num_q_heads, h = row % a.num_q_heads;
      *reinterpret_cast<uint2*>(a.o + b * a.o_batch_stride + h * D + c * 4) =
          make_uint2(detail::pack_bf16x2(acc.x * inv, acc.y * inv), detail::pack_bf16x2(acc.z * inv, acc.w * inv));
    }
  }
}

// The same merge for few splits (num_splits <= kRowMergeMaxSplits): one warp per row, lanes over the
// row's float4 chunks of output dims, every lane reading all the splits' lse and its chunks of their
// partials in one round of loads (no shuffles). With 4 splits the mapping above keeps 4 of a warp's 32
// lanes busy; on the H200 (run 10) it made the fused merge lose to the combine kernel at batch 8 (4.09
// against 4.18 TB/s). This mapping is not measured yet (no device in the sessions that wrote it).
constexpr int kRowMergeMaxSplits = 8;

template <int D>
__device__ void merge_splits_by_row(const Args& a) {
  constexpr int kChunks = D / 4;                 // float4 chunks of a row
  constexpr int kPerLane = (kChunks + 31) / 32;  // 1 up to head_dim 128, 2 at 256
  const int lane = threadIdx.x & 31;
  const GridWarps gw = grid_warps();
  const std::int64_t nwarps = gw.count, first = gw.index;
  const std::int64_t rows = static_cast<std::int64_t>(gridDim.z) * a.num_q_heads;  // gridDim.z = batch
  const int S = a.num_splits;
  for (std::int64_t row = first; row < rows; row += nwarps) {
    const float* l = a.lse + row * S;
    const float* part = a.o_part + row * S * D;
    float ls[kRowMergeMaxSplits];
    float4 p[kRowMergeMaxSplits][kPerLane];
#pragma unroll
    for (int s = 0; s < kRowMergeMaxSplits; ++s) {
      const int sc = s < S ? s : S - 1;  // in bounds; a split past the end weighs 0 below
      ls[s] = s < S ? l[sc] : -INFINITY;
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) {
        const int c = min(lane + 32 * j, kChunks - 1);  // lanes past the row re-read its last chunk
        p[s][j] = *reinterpret_cast<const float4*>(part + static_cast<std::int64_t>(sc) * D + c * 4);
      }
    }
    float mx = -INFINITY;
#pragma unroll
    for (int s = 0; s < kRowMergeMaxSplits; ++s) mx = fmaxf(mx, ls[s]);
    float sum = 0.f;
    float4 acc[kPerLane];
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) acc[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (mx != -INFINITY) {
#pragma unroll
      for (int s = 0; s < kRowMergeMaxSplits; ++s) {
        const float w = exp2f(ls[s] - mx);
        if (w > 0.f) {  // an empty split's partial was never written (it may hold NaN): never multiply it
          sum += w;
#pragma unroll
          for (int j = 0; j < kPerLane; ++j) add_scaled(acc[j], w, p[s][j]);
        }
      }
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    const std::int64_t b = row / a.num_q_heads, h = row % a.num_q_heads;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int c = lane + 32 * j;
      if (c >= kChunks) continue;
      *reinterpret_cast<uint2*>(a.o + b * a.o_batch_stride + h * D + c * 4) =
          make_uint2(detail::pack_bf16x2(acc[j].x * inv, acc[j].y * inv), detail::pack_bf16x2(acc[j].z * inv, acc[j].w * inv));
    }
  }
}

// Merges the splits after the grid barrier with the mapping that suits their number.
template <int D>
__device__ void merge_in_grid(const Args& a) {
  if (a.num_splits <= kRowMergeMaxSplits) merge_splits_by_row<D>(a);
  else merge_splits<D>(a);
}

}  // namespace
}  // namespace mhacfg::kernels::cuda::decode
