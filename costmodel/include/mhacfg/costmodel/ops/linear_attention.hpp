// The linear-attention op: one call of a linear-attention layer's core (Gated DeltaNet, Mamba2, KDA,
// short convolution, lightning attention). Its shape, counts, the facts of mhacfg's CPU kernel its time
// model counts with, its features and its record fields (costmodel/ops/linear_attention/).
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/op_class.hpp"
#include "mhacfg/costmodel/op_features.hpp"

namespace mhacfg {

struct FitSpec;

// Linear attention's kinds (model_spec.hpp's LinearAttentionSpec says which models use which). KDA
// (Kimi Delta Attention) is Gated DeltaNet with a decay per key channel instead of per head. A short
// convolution (LFM2's gated conv block) is the core without a recurrence: num_v_heads channels of
// head_v_dim 1, head_k_dim 0 (no key width, no recurrent state), only the convolution and its state.
// Lightning attention (MiniMax-Text-01, MiniMax-M1) is linear attention with a fixed decay per head and
// no convolution (conv_kernel 0): per token S = lambda S + k^T v, o = q S; prefill runs it in blocks of
// block_size tokens (softmax-free attention within a block, the state across blocks).
enum class LinearKind { gated_deltanet, mamba2, kda, short_conv, lightning };
std::string_view to_string(LinearKind k);

// One call of a linear-attention layer's core for `batch` sequences of q_len new tokens each (1: a
// decode step): the causal depthwise convolution over the q, k and v channels (conv_dim = 2 x
// num_k_heads x head_k_dim + num_v_heads x head_v_dim wide, conv_kernel taps) and the recurrence of
// each value head over its head_k_dim x head_v_dim state, in the recurrent form. Each value head reads
// the q and k of key head h / (num_v_heads / num_k_heads). Mamba2 maps onto it with B = k, C = q,
// x = v, groups = key heads and d_state = head_k_dim.
struct LinearAttentionShape {
  std::int64_t batch = 1;
  std::int64_t q_len = 1;
  std::int64_t num_k_heads = 1;
  std::int64_t num_v_heads = 1;
  std::int64_t head_k_dim = 128;
  std::int64_t head_v_dim = 128;
  std::int64_t conv_kernel = 4;  // 0: no convolution (lightning)
  LinearKind kind = LinearKind::gated_deltanet;
  std::int64_t block_size = 0;  // lightning's prefill blocks; 0 for the other kinds

  std::int64_t conv_dim() const;  // overflow-checked
};

// FLOPs per token and value head of the recurrence: Gated DeltaNet's (and KDA's) S^T k, k delta^T and
// S^T q are 3 products of head_k_dim x head_v_dim (6 dk dv FLOPs); Mamba2's update x B^T and read h C
// are 2, and so are lightning attention's k^T v and q S.
std::int64_t linear_recurrence_products(LinearKind k);
// FLOPs of the call: per token, the recurrence of every value head and 2 x conv_kernel per
// convolution channel (gates, norms and the decay's scaling are per-head or per-element work, not
// counted). Lightning attention with q_len > 1 is counted in its blocked (prefill) form instead, as
// transformers' MiniMaxLightningAttention and the MiniMax-01 paper's Lightning Attention compute it:
// per block of b <= block_size tokens and head, the intra-block Q K^T and its product with V (2 b^2
// head_k_dim + 2 b^2 head_v_dim, the whole b x b block, its upper half masked by the decay), and per
// token the read of the carried state (q S) and its update (k^T v): the 2 recurrence products.
// Exact and wide.
WideCount linear_attention_flops(const LinearAttentionShape& s);
// State elements the call reads and writes: per sequence, every value head's recurrent state and the
// convolution's last conv_kernel - 1 inputs.
std::int64_t linear_attention_state_elements(const LinearAttentionShape& s);
// Inputs of one token: the convolution's channels and the gates (Gated DeltaNet: beta and the decay
// per value head; KDA: beta per value head and the decay per key channel of each; Mamba2: dt per head).
std::int64_t linear_attention_input_elements_per_token(const LinearAttentionShape& s);
// Minimum bytes moved: the state read and written once, each token's inputs read and output
// (num_v_heads x head_v_dim) written once, all in `dtype`.
std::int64_t linear_attention_bytes(const LinearAttentionShape& s, DType dtype);

// The CPU linear-attention kernel walks each value head's state once per token for Mamba2 (update and
// read fused) and twice for Gated DeltaNet (decay and S^T k; then the update and S^T q), and widens a
// bf16 state to fp32 and rounds it back once per block of facts.linear_token_block tokens.
// (Lightning attention, which no kernel of mhacfg's runs, is counted as one pass: update and read fused.)
inline constexpr std::int64_t cpu_linear_state_passes(LinearKind k) {
  return k == LinearKind::mamba2 || k == LinearKind::lightning ? 1 : 2;
}

// Linear attention's core: its units are the (sequence, value head) recurrences, each a chain of
// q_len dependent steps over its state; `dtype` is the state's. L counts the recurrent state's elements
// walked (per token, cpu_linear_state_passes), L_w those widened and rounded back (bf16 states).
OpFeatures op_features(const LinearAttentionShape& s, DType dtype, const CpuKernelFacts& facts = {});

// A linear_attention record's op fields (records.hpp; dtype: the state's); the op's entry in
// op_registry.hpp. Mamba2's groups are num_k_heads, its d_state head_k_dim, its head_dim head_v_dim.
struct LinearAttentionOp {
  static constexpr OpKind kind = OpKind::linear_attention;
  static constexpr std::string_view name = "linear_attention";
  static constexpr bool phased = true;
  // KDA has classes of its own (imported timings: mhacfg's kernels do not implement it); so have a short
  // convolution, which no profile fits (its roofline is a few microseconds), and lightning attention,
  // which no kernel of mhacfg's runs and no profile fits yet: neither is a record's kind.
  static constexpr OpVariant fitted_variant = OpVariant::kda;
  static constexpr DType default_dtype = DType::bf16;
  static constexpr std::string_view only_default_dtype = "";

  Phase phase = Phase::prefill;
  LinearAttentionShape shape;

  OpClass op_class() const;
  OpFeatures features(DType dtype, const CpuKernelFacts& facts = {}) const { return op_features(shape, dtype, facts); }
  static LinearAttentionOp from_json(const JsonFields& f);
  void to_json(nlohmann::json& j) const;
  static FitSpec fit_spec(const OpClass& c, bool warm_cache);
};

}  // namespace mhacfg
