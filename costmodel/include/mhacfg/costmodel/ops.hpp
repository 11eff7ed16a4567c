// FLOP and byte counts of single operations (one attention call, one GEMM). The model-level counts,
// the kernels' benchmarks and the time model all count through these functions.
#pragma once

#include <cstdint>

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

// C[m,n] = A[m,k] B[k,n].
struct GemmShape {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
};
std::int64_t gemm_flops(const GemmShape& g);  // 2 * m * n * k
std::int64_t gemm_bytes(const GemmShape& g, DType dtype);  // A and B read, C written, once each

}  // namespace mhacfg
