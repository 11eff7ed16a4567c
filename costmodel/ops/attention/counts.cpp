// The attention op's counts: query-key pairs under every mask, FLOPs and bytes.
#include <algorithm>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/ops/attention.hpp"

namespace mhacfg {

namespace {
// Sum of min(p + 1, w) for p in [a, b]: keys visible to causal queries at positions a..b.
std::int64_t causal_window_sum(std::int64_t a, std::int64_t b, std::int64_t w) {
  if (b < a) return 0;
  // Positions p < w - 1 see p + 1 keys; positions p >= w - 1 see w keys.
  const std::int64_t split = std::clamp<std::int64_t>(w - 1, a, b + 1);  // first position capped at w
  std::int64_t sum = 0;
  if (split > a) {  // p + 1 summed over [a, split - 1]
    const std::int64_t n = split - a;
    // (a + 1) + ... + split, as n * (a + 1 + split) / 2 with the even factor halved first.
    const std::int64_t s = a + 1 + split;
    sum = (n % 2 == 0) ? mul(n / 2, s, "attention pairs") : mul(n, s / 2, "attention pairs");
  }
  if (b + 1 > split) sum = add(sum, mul(b + 1 - split, w, "attention pairs"), "attention pairs");
  return sum;
}

// Sum of p % c + 1 for p in [0, n): keys visible to causal queries at positions 0..n-1 in chunks of c.
std::int64_t causal_chunk_prefix(std::int64_t n, std::int64_t c) {
  c = std::min(c, std::max<std::int64_t>(n, 1));  // a chunk longer than the positions is one triangle
  const auto triangle = [](std::int64_t k) {  // 1 + ... + k, the even factor halved first
    return k % 2 == 0 ? mul(k / 2, k + 1, "attention pairs") : mul(k, (k + 1) / 2, "attention pairs");
  };
  return add(mul(n / c, triangle(c), "attention pairs"), triangle(n % c), "attention pairs");
}
}  // namespace

std::int64_t attention_pairs(std::int64_t q_len, std::int64_t kv_len, bool causal, std::int64_t window,
                             std::int64_t chunk) {
  const std::int64_t w = window > 0 ? window : kv_len;
  if (!causal) return mul(q_len, std::min(kv_len, w), "attention pairs");
  // Queries are the last q_len positions of kv_len tokens: positions kv_len - q_len .. kv_len - 1.
  if (window <= 0 && chunk > 0) return causal_chunk_prefix(kv_len, chunk) - causal_chunk_prefix(kv_len - q_len, chunk);
  return causal_window_sum(kv_len - q_len, kv_len - 1, w);
}

std::int64_t attention_pairs(const AttentionShape& s) {
  return attention_pairs(s.q_len, s.kv_len, s.causal, s.window, s.chunk);
}

WideCount attention_flops(const AttentionShape& s) {
  const char* what = "attention FLOPs";
  const WideCount pairs = wide_mul(attention_pairs(s), mul(s.batch, s.num_q_heads, what), what);
  // S = Q K^T : 2 * qk_dim per (query, key) pair per head
  const WideCount qk = wide_mul(mul(2, s.qk_dim(), what), pairs, what);
  // O = P V   : 2 * v_dim per pair per head
  const WideCount pv = wide_mul(mul(2, s.v_dim(), what), pairs, what);
  return wide_add(qk, pv, what);
}

std::int64_t attention_kv_tokens_read(const AttentionShape& s) {
  if (s.window <= 0 && s.chunk <= 0) return s.kv_len;
  // From the first key the oldest query sees to the newest query.
  return s.kv_len - first_visible_key(s.kv_len - s.q_len, s.window, s.chunk);
}

std::int64_t attention_kv_elements(const AttentionShape& s) {
  const std::int64_t tokens = mul(s.batch, attention_kv_tokens_read(s), "attention bytes");
  // MLA: one latent per token serves as K and (its first kv_lora_rank dims) as V.
  const std::int64_t per_token =
      s.is_mla() ? s.qk_dim() : mul(s.num_kv_heads, s.head_dim + s.v_head_dim, "attention bytes");
  return mul(tokens, per_token, "attention bytes");
}

std::int64_t attention_kv_bytes(const AttentionShape& s, DType dtype) {
  return dtype_bytes(dtype, attention_kv_elements(s), "attention bytes");
}

std::int64_t attention_bytes(const AttentionShape& s, DType dtype) {
  const std::int64_t q_rows = mul(s.batch, s.q_len, s.num_q_heads, "attention bytes");
  const std::int64_t q_elems = mul(q_rows, s.qk_dim(), "attention bytes");
  const std::int64_t o_elems = mul(q_rows, s.v_dim(), "attention bytes");
  return add(attention_kv_bytes(s, dtype),
             dtype_bytes(dtype, add(q_elems, o_elems, "attention bytes"), "attention bytes"),
             "attention bytes");
}

std::int64_t attention_tile_rows(std::int64_t head_dim) { return head_dim > 128 ? 64 : 128; }

}  // namespace mhacfg
