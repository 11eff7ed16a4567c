// FLOP and byte counts of single operations (one attention call, one GEMM). The model-level counts,
// the kernels' benchmarks and the time model all count through these functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "mhacfg/costmodel/dtype.hpp"

namespace mhacfg {

// One attention call over `batch` sequences. Queries are the last q_len positions of a sequence of
// kv_len tokens. With kv_lora_rank > 0 it is MLA in the absorbed form: every head attends over one
// shared latent of kv_lora_rank + rope_head_dim per token (K), whose first kv_lora_rank dims are V;
// head_dim, v_head_dim and num_kv_heads are then ignored.
struct AttentionShape {
  std::int64_t batch = 1;
  std::int64_t q_len = 1;
  std::int64_t kv_len = 1;
  std::int64_t num_q_heads = 1;
  std::int64_t num_kv_heads = 1;
  std::int64_t head_dim = 128;
  std::int64_t v_head_dim = 128;
  bool causal = true;
  std::int64_t window = 0;  // 0: no sliding window
  std::int64_t kv_lora_rank = 0;
  std::int64_t rope_head_dim = 0;
  // 0: none. Chunked local attention (Llama 4): a query at position p sees the keys of its own chunk,
  // [p - p % chunk, p]. At most one of window and chunk is set, and either only with causal.
  std::int64_t chunk = 0;

  bool is_mla() const { return kv_lora_rank > 0; }
  std::int64_t qk_dim() const { return is_mla() ? kv_lora_rank + rope_head_dim : head_dim; }
  std::int64_t v_dim() const { return is_mla() ? kv_lora_rank : v_head_dim; }
  std::int64_t kv_heads() const { return is_mla() ? 1 : num_kv_heads; }
};

// The first key a causal query at position `pos` sees: pos - window + 1 (from 0) with a sliding
// window, the start of its chunk with chunked attention, else 0. Keys end at the query itself.
inline std::int64_t first_visible_key(std::int64_t pos, std::int64_t window, std::int64_t chunk) {
  if (window > 0) return pos >= window ? pos - window + 1 : 0;
  if (chunk > 0) return pos - pos % chunk;
  return 0;
}

// Query-key pairs that are computed (unmasked) for one sequence and one head: exact for causal masks,
// sliding windows and chunks (not the half-square convention of FlashAttention's reports).
std::int64_t attention_pairs(std::int64_t q_len, std::int64_t kv_len, bool causal, std::int64_t window,
                             std::int64_t chunk = 0);
// The same for a shape's q_len, kv_len, mask, window and chunk.
std::int64_t attention_pairs(const AttentionShape& s);

// Matmul FLOPs (a multiply-add is 2) of the attention core: S = Q K^T and O = P V, per query head.
std::int64_t attention_flops(const AttentionShape& s);

// KV positions a query block touches: all kv_len, or only those inside the window or the chunks.
std::int64_t attention_kv_tokens_read(const AttentionShape& s);

// Minimum bytes moved: Q and K/V read once (the MLA latent once), O written once.
std::int64_t attention_bytes(const AttentionShape& s, DType dtype);

// K/V elements read once: per token, K and V of every KV head (MLA: the latent).
std::int64_t attention_kv_elements(const AttentionShape& s);
// K/V bytes read (the figure bandwidth is quoted on).
std::int64_t attention_kv_bytes(const AttentionShape& s, DType dtype);

// Linear attention's kinds (model_spec.hpp's LinearAttentionSpec says which models use which). KDA
// (Kimi Delta Attention) is Gated DeltaNet with a decay per key channel instead of per head. A short
// convolution (LFM2's gated conv block) is the core without a recurrence: num_v_heads channels of
// head_v_dim 1, head_k_dim 0 (no key width, no recurrent state), only the convolution and its state.
enum class LinearKind { gated_deltanet, mamba2, kda, short_conv };
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
  std::int64_t conv_kernel = 4;
  LinearKind kind = LinearKind::gated_deltanet;

  std::int64_t conv_dim() const;  // overflow-checked
};

// FLOPs per token and value head of the recurrence: Gated DeltaNet's (and KDA's) S^T k, k delta^T and
// S^T q are 3 products of head_k_dim x head_v_dim (6 dk dv FLOPs); Mamba2's update x B^T and read h C
// are 2.
std::int64_t linear_recurrence_products(LinearKind k);
// FLOPs of the call: per token, the recurrence of every value head and 2 x conv_kernel per
// convolution channel (gates, norms and the decay's scaling are per-head or per-element work, not
// counted).
std::int64_t linear_attention_flops(const LinearAttentionShape& s);
// State elements the call reads and writes: per sequence, every value head's recurrent state and the
// convolution's last conv_kernel - 1 inputs.
std::int64_t linear_attention_state_elements(const LinearAttentionShape& s);
// Inputs of one token: the convolution's channels and the gates (Gated DeltaNet: beta and the decay
// per value head; KDA: beta per value head and the decay per key channel of each; Mamba2: dt per head).
std::int64_t linear_attention_input_elements_per_token(const LinearAttentionShape& s);
// Minimum bytes moved: the state read and written once, each token's inputs read and output
// (num_v_heads x head_v_dim) written once, all in `dtype`.
std::int64_t linear_attention_bytes(const LinearAttentionShape& s, DType dtype);

// DeepSeek Sparse Attention's lightning indexer (model_spec.hpp's IndexerSpec) for `batch` sequences:
// each of the q_len queries (the last q_len positions of kv_len tokens) scores every key it may see,
// causally, with num_heads heads of head_dim, I(t, s) = sum_h w_h ReLU(q_h . k_s), and keeps the topk
// best for the attention. Keys are held as the engines hold them (DeepSeek's inference code, vLLM,
// SGLang, TensorRT-LLM): fp8 with one fp32 scale per 128 values, the queries likewise.
struct IndexerShape {
  std::int64_t batch = 1;
  std::int64_t q_len = 1;
  std::int64_t kv_len = 1;
  std::int64_t num_heads = 64;
  std::int64_t head_dim = 128;
  std::int64_t topk = 2048;
};
// Bytes of one cached indexer key: head_dim fp8 values and a 4-byte scale per 128 of them (132 at 128).
std::int64_t indexer_key_bytes(std::int64_t head_dim);
// FLOPs of the scores: per (query, visible key) pair, q_h . k for every head (2 x num_heads x head_dim)
// and the weighted sum over the heads (2 x num_heads). Selecting the top k is not a matmul.
std::int64_t indexer_flops(const IndexerShape& s);
// Minimum bytes moved: every key read once per sequence, the queries and the fp32 head weights read,
// min(topk, kv_len) int32 indices written per query.
std::int64_t indexer_bytes(const IndexerShape& s);

// C[m,n] = A[m,k] B[k,n].
struct GemmShape {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
};
std::int64_t gemm_flops(const GemmShape& g);  // 2 * m * n * k
std::int64_t gemm_bytes(const GemmShape& g, DType dtype);  // A and B read, C written, once each

}  // namespace mhacfg
