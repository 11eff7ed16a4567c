// Linear attention's core on the CPU: the causal depthwise convolution over the q, k and v channels
// with SiLU, then each value head's recurrence over its head_k_dim x head_v_dim state, token by token
// (the recurrent form that costmodel counts, ops.hpp). Three kinds:
// - gated_deltanet (Qwen3-Next, transformers' torch_recurrent_gated_delta_rule with the q/k L2 norm
//   in the kernel): q and k L2-normalised (eps 1e-6), q scaled by 1 / sqrt(head_k_dim), then per token
//   S = exp(g) S;  delta = beta (v - S^T k);  S += k delta^T;  o = S^T q.
// - kda (Kimi Linear's Kimi Delta Attention, flash-linear-attention's recurrent KDA with the q/k L2
//   norm in the kernel): Gated DeltaNet with a decay per key channel, S = Diag(exp(g)) S.
// - mamba2 (Mamba2's SSD step, B = k, C = q, x = v, dt = beta, dt x A = decay):
//   h = exp(dt A) h + dt B x^T;  y = h^T C + D x.
// The state is stored in fp32 or bf16 and computed on in fp32: a bf16 state is widened once per
// block of kLinearAttentionTokenBlock tokens and rounded back after it (a decode step rounds once,
// as engines that keep the state in bf16 between steps do). The convolution's last inputs are kept
// in the same dtype. Units of work are (sequence, value head) pairs, split over the threads; the
// convolution of each token block runs first, split over sequences and channel ranges.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cpu/bf16.hpp"
#include "mhacfg/kernels/cpu/tile_facts.hpp"

namespace mhacfg::kernels::cpu {

// Tokens per block: the convolution's outputs of one block wait in a workspace of batch x block x
// conv_dim floats, and a bf16 state is rounded once per block.
// (The time model counts with it: TileFacts::linear_token_block.)
inline constexpr std::int64_t kLinearAttentionTokenBlock = kTileFacts.linear_token_block;
// The L2 norm's epsilon (transformers' l2norm: x / sqrt(sum x^2 + eps)).
inline constexpr double kLinearAttentionNormEps = 1e-6;

// StateT: float, or bf16_bits for a bf16 state. Channels of x and of the convolution are q
// (num_k_heads x head_k_dim), then k (the same), then v (num_v_heads x head_v_dim).
template <class StateT>
struct LinearAttentionParams {
  LinearAttentionShape shape;
  const float* x = nullptr;            // [batch, q_len, conv_dim]: the in projection's q, k, v, before the convolution
  const float* decay = nullptr;        // [batch, q_len, num_v_heads] (KDA: x head_k_dim): log of the decay per step (<= 0)
  const float* beta = nullptr;         // [batch, q_len, num_v_heads]: Gated DeltaNet's beta; Mamba2's dt
  const float* conv_weight = nullptr;  // [conv_kernel, conv_dim]: tap conv_kernel - 1 multiplies the newest input
  const float* conv_bias = nullptr;    // [conv_dim] or null
  const float* skip = nullptr;         // Mamba2's D [num_v_heads] or null (Gated DeltaNet: must be null)
  StateT* state = nullptr;             // [batch, num_v_heads, head_k_dim, head_v_dim], read and updated
  StateT* conv_state = nullptr;        // [batch, conv_kernel - 1, conv_dim]: the last inputs, oldest first; updated
  float* o = nullptr;                  // [batch, q_len, num_v_heads, head_v_dim], overwritten
  int threads = 1;
};

namespace linear_attention {

// Empty when the shape and state dtype (fp32 or bf16) are supported; otherwise one line naming the
// field and value.
std::string unsupported_reason(const LinearAttentionShape& s, DType state_dtype);
inline bool supports(const LinearAttentionShape& s, DType state_dtype) {
  return unsupported_reason(s, state_dtype).empty();
}

// Throws InputError for an unsupported shape.
void run(const LinearAttentionParams<float>& p);
void run(const LinearAttentionParams<bf16_bits>& p);

}  // namespace linear_attention

}  // namespace mhacfg::kernels::cpu
