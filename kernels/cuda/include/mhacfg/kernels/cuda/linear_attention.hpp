// Linear attention's decode step on the GPU (a hybrid model's Gated DeltaNet or Mamba2 layer, one new
// token per sequence): the causal depthwise convolution over q, k and v with SiLU, then every value
// head's recurrence over its head_k_dim x head_v_dim state, read and written once, in bf16. The math is
// the CPU kernel's (mhacfg/kernels/cpu/linear_attention.hpp: channel order q, k, v; value head h reads
// key head h / (num_v_heads / num_k_heads); Mamba2 with B = k, C = q, x = v, dt = beta). Prefill is
// not here: engines run it chunked on tensor cores (FLA, SSD), a different kernel from this recurrence.
// Design and expected speed: src/linear_attention.cu's header. Not yet run on a device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::linear_attention {

struct Params {
  LinearAttentionShape shape;         // q_len 1
  const Bf16* x = nullptr;            // [batch, conv_dim]: the new token's q, k, v before the convolution
  const float* decay = nullptr;       // [batch, num_v_heads]: log of the state's decay (<= 0)
  const float* beta = nullptr;        // [batch, num_v_heads]: Gated DeltaNet's beta; Mamba2's dt
  const Bf16* conv_weight = nullptr;  // [conv_kernel, conv_dim]: tap conv_kernel - 1 on the new input
  const Bf16* conv_bias = nullptr;    // [conv_dim] or null
  const float* skip = nullptr;        // Mamba2's D [num_v_heads] or null
  Bf16* state = nullptr;              // [batch, num_v_heads, head_k_dim, head_v_dim], updated in place
  Bf16* conv_state = nullptr;         // [batch, conv_kernel - 1, conv_dim], oldest first; updated
  Bf16* o = nullptr;                  // [batch, num_v_heads, head_v_dim]
  void* workspace = nullptr;          // workspace_bytes(shape): the convolution's fp32 outputs
  std::size_t workspace_bytes = 0;
};

// Empty when supported; else one line naming the field and value.
std::string unsupported_reason(const LinearAttentionShape& shape);
std::size_t workspace_bytes(const LinearAttentionShape& shape);

// Two launches on `stream`: the convolution, then the recurrences. Throws InputError for an
// unsupported shape or a short workspace.
void run(const Params& p, Stream stream);

}  // namespace mhacfg::kernels::cuda::linear_attention
