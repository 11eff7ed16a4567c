// DeepSeek Sparse Attention's lightning indexer on the GPU (costmodel's IndexerShape), under the CPU
// kernel's contract (mhacfg/kernels/cpu/indexer.hpp): queries and cached keys in fp8 E4M3 with one
// fp32 scale per 128 values, fp32 head weights w_h, I(t, s) = sum_h w_h ReLU(q_h . k_s) over the keys
// query t sees (causal over the last q_len positions of kv_len), and per query the positions of the
// min(topk, visible) best scores in increasing order (of scores equal at the threshold, the lower
// positions; NaN scores rank as -inf), then -1. Two launches per pass: the scores on fp8 tensor cores
// into a workspace, then a radix select per query. Design and expected speed: src/indexer.cu's header
// and kernels/cuda/NOTES.md. Compiled for sm_90a; not yet run on a device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::indexer {

// Layouts are the CPU kernel's (head_dim <= 128: one scale per row).
struct Params {
  IndexerShape shape;
  const std::uint8_t* q = nullptr;   // [batch, q_len, num_heads, head_dim] fp8 E4M3 codes
  const float* q_scale = nullptr;    // [batch, q_len, num_heads]
  const float* weights = nullptr;    // [batch, q_len, num_heads]: w_h
  const std::uint8_t* k = nullptr;   // [batch, kv_len, head_dim] fp8 E4M3 codes: the cached keys
  const float* k_scale = nullptr;    // [batch, kv_len]
  std::int32_t* indices = nullptr;   // [batch, q_len, topk]
  float* scores = nullptr;           // [batch, q_len, topk]: the kept positions' scores (-inf after), or null
  void* workspace = nullptr;         // workspace_bytes(shape, pass_budget): one pass's fp32 scores
  std::size_t workspace_bytes = 0;
  std::size_t pass_budget = 0;       // bytes of scores per pass; 0: kMaxWorkspaceBytes (tests pass less)
};

// Empty when the shape is supported; otherwise one line naming the field and value.
std::string unsupported_reason(const IndexerShape& s);
inline bool supports(const IndexerShape& s) { return unsupported_reason(s).empty(); }

// The fp32 scores of one pass: [sequences, queries, kv_len] of the shape, as many whole sequences (or
// else query tiles of one sequence) as fit `pass_budget` bytes, and at least one query tile. Passes run
// in order, so the workspace holds the last pass's scores after run() (for the tests).
inline constexpr std::size_t kMaxWorkspaceBytes = std::size_t{256} << 20;
std::size_t workspace_bytes(const IndexerShape& s, std::size_t pass_budget = kMaxWorkspaceBytes);

// Launches on `stream` (two per pass). Throws InputError for an unsupported shape or a short workspace.
void run(const Params& p, Stream stream);

// For the harness: n fp8 E4M3 codes of finite values in [-1, 1) (never NaN), and n floats uniform in
// [lo, hi), from a counter-based hash of (seed, index).
void fill_random_fp8(std::uint8_t* codes, std::size_t n, std::uint64_t seed, Stream stream);
void fill_random_f32(float* data, std::size_t n, std::uint64_t seed, float lo, float hi, Stream stream);

}  // namespace mhacfg::kernels::cuda::indexer
