// Decode attention (q_len 1) over a bf16 or fp8 (e4m3, per-tensor scales) KV cache: GQA-packed,
// split-KV (flash-decoding), with a log-sum-exp combine when a sequence is split. MHA and MQA are GQA
// with group sizes 1 and num_q_heads. Design and expected speed: src/decode_attention.cu's header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::decode {

// Strides are in elements; within a row the head_dim elements of one head are contiguous and heads
// are adjacent (head stride = head_dim).
struct Params {
  int batch = 1;
  int num_q_heads = 1;
  int num_kv_heads = 1;
  int head_dim = 128;  // = v_head_dim
  int kv_len = 1;      // every sequence's length, or the longest when kv_lens is set
  const std::int32_t* kv_lens = nullptr;  // device [batch] lengths in [0, kv_len], or null
  float softmax_scale = 0;                // usually 1 / sqrt(head_dim)

  const Bf16* q = nullptr;  // [batch, num_q_heads, head_dim]
  std::int64_t q_batch_stride = 0;
  const Bf16* k = nullptr;  // [batch, kv_capacity, num_kv_heads, head_dim]
  const Bf16* v = nullptr;  // same layout and strides as k
  // fp8 KV cache (e4m3, as vLLM stores it with --kv-cache-dtype fp8): fp8_kv set, k8 and v8 instead
  // of k and v, same layout and strides (in elements, which are bytes; multiples of 16); a value is its
  // code times the tensor's fp32 scale (k_scale, v_scale). head_dim 64 and 128 (unsupported_reason_fp8).
  bool fp8_kv = false;
  const Fp8E4m3* k8 = nullptr;
  const Fp8E4m3* v8 = nullptr;
  float k_scale = 1.f;
  float v_scale = 1.f;
  std::int64_t kv_batch_stride = 0;
  std::int64_t kv_token_stride = 0;
  Bf16* o = nullptr;  // [batch, num_q_heads, head_dim]
  std::int64_t o_batch_stride = 0;

  int num_splits = 0;  // KV splits per sequence; 0: chosen for the device (see plan)
  // true: merge the splits inside the split kernel (a grid barrier, cooperative launch) when its grid
  // fits on the device at once. Off by default: on the H200 it took MQA batch 1 from 20.6 to 17.8 us
  // and 32q/8kv batch 1 from 48.8 to 46.7 us, but batch 8 at 4 splits from 257 to 263 us (its merge,
  // one warp per 4 output dims with lanes over the splits, idles 28 of 32 lanes there), and the
  // shipped H200 profile was calibrated with the combine kernel (kernels/cuda/NOTES.md).
  bool fused_merge = false;
  void* workspace = nullptr;  // device memory of at least plan(...).workspace_bytes, 256-byte aligned
  std::size_t workspace_bytes = 0;
};

// Empty when the kernel runs this shape, else the reason. Ignores batch size limits of the record
// path's memory; run() checks pointers, strides and the workspace.
std::string unsupported_reason(const AttentionShape& shape);
// The same for an fp8 (e4m3) KV cache: head_dim 64 and 128.
std::string unsupported_reason_fp8(const AttentionShape& shape);

struct Plan {
  int num_splits = 1;        // splits actually launched (chunks are whole 64-token tiles)
  int tokens_per_split = 0;  // multiple of 64
  std::size_t workspace_bytes = 0;  // 0 when num_splits == 1
  bool fused = false;               // splits merged inside the split kernel (see Params::fused_merge)
};
// The split plan for p on the current device (p.num_splits > 0 forces the split count, rounded to
// whole tiles).
Plan plan(const Params& p);

// Enqueues the decode kernel (and the combine kernel when split) on `stream`. Throws InputError
// for an unsupported shape or bad argument, RuntimeFailure for a CUDA error.
void run(const Params& p, Stream stream);

}  // namespace mhacfg::kernels::cuda::decode
