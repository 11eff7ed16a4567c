// Op-level counts: attention pairs for every mask, window and chunk, FLOPs and bytes per op.
#include <catch2/catch.hpp>

#include <algorithm>

#include "mhacfg/costmodel/ops.hpp"

using namespace mhacfg;

namespace {
// Brute force: count (query, key) pairs that a causal/windowed/chunked mask leaves.
std::int64_t brute_pairs(std::int64_t q_len, std::int64_t kv_len, bool causal, std::int64_t window,
                         std::int64_t chunk = 0) {
  std::int64_t n = 0;
  for (std::int64_t qi = 0; qi < q_len; ++qi) {
    const std::int64_t pos = kv_len - q_len + qi;
    for (std::int64_t k = 0; k < kv_len; ++k) {
      if (causal && k > pos) continue;
      if (window > 0 && (causal ? pos - k >= window : std::abs(pos - k) >= window)) continue;
      if (chunk > 0 && k / chunk != pos / chunk) continue;
      ++n;
    }
  }
  return n;
}
}  // namespace

TEST_CASE("attention_pairs equals a brute-force count of the mask", "[ops]") {
  for (std::int64_t kv : {1, 2, 7, 64, 129, 300})
    for (std::int64_t q : {std::int64_t(1), std::int64_t(3), kv / 2 + 1, kv})
      for (std::int64_t w : {0, 1, 5, 64, 1000}) {
        if (q > kv) continue;
        INFO("q " << q << " kv " << kv << " window " << w);
        CHECK(attention_pairs(q, kv, true, w) == brute_pairs(q, kv, true, w));
      }
  CHECK(attention_pairs(100, 200, false, 0) == 20000);
}

TEST_CASE("chunked attention: pairs and keys read equal a brute-force walk of the mask", "[ops]") {
  for (std::int64_t kv : {1, 2, 7, 64, 129, 300})
    for (std::int64_t q : {std::int64_t(1), std::int64_t(3), kv / 2 + 1, kv})
      for (std::int64_t c : {1, 2, 5, 64, 128, 1000}) {
        if (q > kv) continue;
        INFO("q " << q << " kv " << kv << " chunk " << c);
        AttentionShape s;
        s.q_len = q;
        s.kv_len = kv;
        s.chunk = c;
        CHECK(attention_pairs(s) == brute_pairs(q, kv, true, 0, c));
        // The keys read run from the first key any query sees to the newest query.
        std::int64_t first = kv;
        for (std::int64_t pos = kv - q; pos < kv; ++pos)
          for (std::int64_t k = 0; k <= pos; ++k)
            if (k / c == pos / c) first = std::min(first, k);
        CHECK(attention_kv_tokens_read(s) == kv - first);
      }
  // Llama 4's 8192-token chunks over a 32768-token prefill: four chunks, each a causal triangle.
  AttentionShape s;
  s.q_len = s.kv_len = 32768;
  s.chunk = 8192;
  CHECK(attention_pairs(s) == 4 * (8192LL * 8193 / 2));
  // One decode step at position 20000 sees its chunk's 20000 - 16384 + 1 keys.
  s.q_len = 1;
  s.kv_len = 20001;
  CHECK(attention_pairs(s) == 3617);
  CHECK(attention_kv_tokens_read(s) == 3617);
  // A chunk at least as long as the sequence is full causal attention, however long the chunk.
  s.chunk = 1 << 20;
  CHECK(attention_pairs(s) == 20001);
  s.q_len = s.kv_len = 16;
  s.chunk = 5'000'000'000;
  CHECK(attention_pairs(s) == 16 * 17 / 2);
}

TEST_CASE("attention FLOPs and bytes", "[ops]") {
  AttentionShape s;
  s.batch = 2;
  s.q_len = 1;
  s.kv_len = 4096;
  s.num_q_heads = 32;
  s.num_kv_heads = 8;
  s.head_dim = s.v_head_dim = 128;
  CHECK(attention_flops(s) == 2LL * 32 * 4096 * (2 * 128 + 2 * 128));
  CHECK(attention_kv_bytes(s, DType::bf16) == 2LL * 4096 * 8 * 256 * 2);
  CHECK(attention_bytes(s, DType::bf16) == attention_kv_bytes(s, DType::bf16) + 2LL * 32 * 256 * 2);
  // MLA absorbed: one latent of 512 + 64 per token, read once.
  AttentionShape mla = s;
  mla.kv_lora_rank = 512;
  mla.rope_head_dim = 64;
  mla.num_q_heads = 16;
  CHECK(attention_kv_bytes(mla, DType::bf16) == 2LL * 4096 * 576 * 2);
  CHECK(attention_flops(mla) == 2LL * 16 * 4096 * (2 * 576 + 2 * 512));
  // A window caps the KV read.
  s.window = 1024;
  CHECK(attention_kv_tokens_read(s) == 1024);
}

TEST_CASE("GEMM counts", "[ops]") {
  const GemmShape g{128, 6144, 4096};
  CHECK(gemm_flops(g) == 2LL * 128 * 6144 * 4096);
  CHECK(gemm_bytes(g, DType::bf16) == 2LL * (128 * 4096 + 4096 * 6144 + 128 * 6144));
}

TEST_CASE("linear attention counts: a Qwen3-Next Gated DeltaNet layer and a Nemotron-H Mamba2 layer", "[ops]") {
  // Qwen3-Next: 16 key / 32 value heads of 128, a 4-tap convolution over 2 x 2048 + 4096 = 8192 channels.
  const LinearAttentionShape gdn{2, 3, 16, 32, 128, 128, 4, LinearKind::gated_deltanet};
  CHECK(gdn.conv_dim() == 8192);
  CHECK(linear_recurrence_products(LinearKind::gated_deltanet) == 3);
  CHECK(linear_attention_flops(gdn) == 2LL * 3 * (6 * 32 * 128 * 128 + 2 * 8192 * 4));
  CHECK(linear_attention_state_elements(gdn) == 2LL * (32 * 128 * 128 + 8192 * 3));
  // Per token: the 8192 convolution inputs, beta and the decay per value head, the 4096-wide output.
  CHECK(linear_attention_input_elements_per_token(gdn) == 8192 + 64);
  CHECK(linear_attention_bytes(gdn, DType::bf16) == 2LL * (2 * 2 * (32 * 128 * 128 + 8192 * 3) + 6 * (8192 + 64 + 4096)));
  // Nemotron-H: 8 groups of B and C (d_state 128), 128 heads of 64, dt per head; two products.
  const LinearAttentionShape m2{1, 1, 8, 128, 128, 64, 4, LinearKind::mamba2};
  CHECK(m2.conv_dim() == 2 * 8 * 128 + 128 * 64);
  CHECK(linear_attention_flops(m2) == 4LL * 128 * 128 * 64 + 2LL * 10240 * 4);
  CHECK(linear_attention_bytes(m2, DType::fp32) == 4LL * (2 * (128 * 128 * 64 + 10240 * 3) + 10240 + 128 + 128 * 64));
  // Kimi Linear's KDA: Gated DeltaNet's three products; per token beta per head and a decay per key
  // channel of every head (32 x 128) beside the 3 x 4096 convolution inputs.
  const LinearAttentionShape kda{1, 1, 32, 32, 128, 128, 4, LinearKind::kda};
  CHECK(linear_recurrence_products(LinearKind::kda) == 3);
  CHECK(linear_attention_flops(kda) == 6LL * 32 * 128 * 128 + 2LL * 12288 * 4);
  CHECK(linear_attention_input_elements_per_token(kda) == 12288 + 32 + 32 * 128);
  CHECK(to_string(LinearKind::kda) == "kda");
}

TEST_CASE("linear attention counts: MiniMax's lightning attention, recurrent in decode and blocked in prefill", "[ops]") {
  // MiniMax-Text-01: 64 heads of 128, no convolution, blocks of 256.
  const LinearAttentionShape step{3, 1, 64, 64, 128, 128, 0, LinearKind::lightning, 256};
  CHECK(linear_recurrence_products(LinearKind::lightning) == 2);
  CHECK(linear_attention_flops(step) == 3LL * 2 * 2 * 64 * 128 * 128);  // k^T v and q S per head
  CHECK(linear_attention_state_elements(step) == 3LL * 64 * 128 * 128);  // no kept convolution inputs
  CHECK(linear_attention_input_elements_per_token(step) == 3 * 64 * 128);  // q, k, v; the decay is fixed
  // Prefill: walk the blocks as MiniMaxLightningAttention does, summing each block's products.
  for (const std::int64_t q_len : {2, 255, 256, 257, 1000}) {
    LinearAttentionShape s = step;
    s.q_len = q_len;
    s.head_v_dim = 64;  // unequal key and value widths keep the two intra-block products apart
    WideCount walked = 0;
    for (std::int64_t start = 0; start < q_len; start += 256) {
      const std::int64_t b = std::min<std::int64_t>(256, q_len - start);
      walked += WideCount(2) * b * b * 128;    // Q K^T within the block
      walked += WideCount(2) * b * b * 64;     // (Q K^T * decay) V
      walked += WideCount(2) * b * 128 * 64;   // (Q * decay) S: the state carried in
      walked += WideCount(2) * b * 128 * 64;   // (K * decay)^T V: the state carried out
    }
    CHECK(to_string(linear_attention_flops(s)) == to_string(walked * 3 * 64));
  }
  CHECK(to_string(LinearKind::lightning) == "lightning");
  CHECK(LinearAttentionOp{Phase::prefill, step}.op_class().to_string() == "linear_attention/prefill/lightning");
  CHECK_FALSE(OpClass::parse("linear_attention/prefill/lightning"));  // no profile or record holds it
}
