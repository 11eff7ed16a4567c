// An attention block as the harness's `attention_block` record times it: QKV projection (GEMM),
// attention (prefill or decode kernel), output projection (GEMM). Writing the new tokens' K/V into
// the cache is not done (a copy of q_len rows, negligible next to the rest).
#pragma once

#include <cstddef>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cuda/gemm.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::attention_block {

struct Params {
  int batch = 1;
  int q_len = 1;
  int kv_len = 1;
  int num_q_heads = 1;
  int num_kv_heads = 1;
  int head_dim = 128;
  int d_model = 4096;
  bool causal = true;
  float softmax_scale = 0;

  const Bf16* x = nullptr;      // [batch * q_len, d_model]
  const Bf16* w_qkv = nullptr;  // [d_model, (num_q_heads + 2 * num_kv_heads) * head_dim]
  const Bf16* w_o = nullptr;    // [num_q_heads * head_dim, d_model]
  // [batch, kv_len, num_kv_heads, head_dim]; read when kv_len > q_len (else K/V come from qkv).
  const Bf16* k_cache = nullptr;
  const Bf16* v_cache = nullptr;
  Bf16* qkv = nullptr;   // scratch [batch * q_len, (num_q_heads + 2 * num_kv_heads) * head_dim]
  Bf16* attn = nullptr;  // scratch [batch * q_len, num_q_heads * head_dim]
  Bf16* y = nullptr;     // [batch * q_len, d_model]
  void* workspace = nullptr;  // split-decode workspace, workspace_bytes(...) long
  std::size_t workspace_bytes = 0;
};

// `shape` is the block's attention; d_model the block's width.
std::string unsupported_reason(const AttentionShape& shape, std::int64_t d_model);
std::size_t workspace_bytes(const Params& p);  // decode's split workspace (0 for prefill)

void run(const Params& p, gemm::Runner& gemm, Stream stream);

}  // namespace mhacfg::kernels::cuda::attention_block
