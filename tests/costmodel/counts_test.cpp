// Counts against hand derivations: KV cache with windows, chunks and tensor parallelism, FLOPs per matmul,
// bytes per decode step, and overflow handling.
#include <catch2/catch.hpp>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;

namespace {
ModelSpec fixture(const std::string& name) { return load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + name + ".json"); }

// A small custom GQA model: d 512, 4 layers, 8 q heads, 2 kv heads of 64, gated FFN 1536, vocab 1000.
ModelSpec small() {
  ModelSpec m;
  m.name = "small";
  m.d_model = 512;
  m.vocab_size = 1000;
  m.layers.assign(4, LayerSpec{});
  m.attention = AttentionSpec{AttentionVariant::gqa, 8, 2, 64, 64, false, false, false, false, false, false, {}};
  m.ffn = FfnSpec{FfnKind::gated, 1536, false};
  validate(m);
  return m;
}
}  // namespace

TEST_CASE("parameter breakdown of a small GQA model", "[counts]") {
  const ParamCounts p = count_params(small());
  const std::int64_t attn = 512 * 512 + 2 * 512 * 128 + 512 * 512;  // q, k, v, o
  CHECK(p.attention_per_layer == attn);
  CHECK(p.attention == 4 * attn);
  CHECK(p.ffn == 4 * 3 * 512 * 1536);
  CHECK(p.norms == 4 * 2 * 512 + 512);
  CHECK(p.embedding == 1000 * 512);
  CHECK(p.lm_head == 1000 * 512);
  CHECK(p.total == p.embedding + p.lm_head + p.attention + p.ffn + p.norms);
  CHECK(p.active == p.total);
}

TEST_CASE("KV bytes: per token, totals, dtypes", "[counts][kv]") {
  const ModelSpec m = small();
  Workload w;
  w.batch = 3;
  w.context = 1000;
  for (auto [dt, bits] : {std::pair{DType::fp32, 32}, {DType::bf16, 16}, {DType::fp8, 8}, {DType::int4, 4}}) {
    w.kv_dtype = dt;
    const KvCacheCounts kv = count_kv_cache(m, w);
    // K and V: 2 heads x 64 each, 4 layers; int4 adds its groups' scales (20 bits per 128 elements).
    const std::int64_t scales = dt == DType::int4 ? 1 : 0;
    CHECK(kv.bytes_per_token == 4 * 2 * 128 * bits / 8 + scales * 1024 / 128 * 20 / 8);
    CHECK(kv.bytes_total == 3LL * 1000 * 4 * 2 * 128 * bits / 8 + scales * 3LL * 1000 * 1024 / 128 * 20 / 8);
  }
}

TEST_CASE("Llama-3-8B KV cache and the published figures", "[counts][kv]") {
  Workload w;
  w.context = 8192;
  const KvCacheCounts kv = count_kv_cache(fixture("llama-3-8b"), w);
  CHECK(kv.bytes_per_token == 131'072);
  CHECK(kv.bytes_total == 131'072LL * 8192);
}

TEST_CASE("tensor parallelism splits, replicates or rejects KV heads", "[counts][kv][tp]") {
  const ModelSpec m = fixture("llama-3-70b");  // 64 q heads, 8 kv heads
  Workload w;
  w.context = 4096;
  w.tp = 4;
  KvCacheCounts kv = count_kv_cache(m, w);
  CHECK(kv.kv_heads_per_gpu == 2);
  CHECK(kv.replication == 1);
  CHECK(kv.bytes_per_gpu == kv.bytes_total / 4);
  w.tp = 16;  // a multiple of 8: each KV head lives on 2 GPUs
  kv = count_kv_cache(m, w);
  CHECK(kv.kv_heads_per_gpu == 1);
  CHECK(kv.replication == 2);
  CHECK(kv.bytes_per_gpu == kv.bytes_total / 8);
  w.tp = 3;
  CHECK_THROWS_WITH(count_kv_cache(m, w), "tp = 3: must divide num_q_heads = 64");
  ModelSpec odd = small();  // 8 q heads, 2 kv heads
  odd.attention.num_q_heads = 12;
  odd.attention.num_kv_heads = 4;
  w.tp = 6;
  CHECK_THROWS_WITH(count_kv_cache(odd, w), "tp = 6: must divide num_kv_heads = 4 or be a multiple of it");
  // An MLA latent is held whole on every GPU.
  w.tp = 8;
  const KvCacheCounts mla = count_kv_cache(fixture("deepseek-v2-lite"), w);
  CHECK(mla.bytes_per_gpu == mla.bytes_total);
  CHECK(mla.replication == 8);
}

TEST_CASE("served weights under tp: K/V projections split over at most the KV heads, norms whole", "[counts][tp]") {
  // Llama-3-70B: 80 layers of K and V projections, 8192 -> 8 x 128 each. Up to tp 8 each GPU holds
  // 8 / tp of its heads; at tp 16 every GPU still holds one whole head (two GPUs per head, as the
  // cache), so the K/V weights per GPU are an eighth, not a sixteenth; the norms are whole everywhere.
  const ModelSpec m = fixture("llama-3-70b");
  const ParamCounts p = count_params(m);
  const std::int64_t kv = 80LL * 2 * 8192 * 8 * 128;
  CHECK(p.kv_projection == kv);
  REQUIRE(p.kv_projections.size() == 1);  // every layer's KV heads are the model's
  CHECK(p.kv_projections[0].kv_heads == 8);
  CHECK(p.kv_projections[0].params == kv);
  CHECK(p.replicated == p.norms);
  CHECK(p.norms == (80LL * 2 + 1) * 8192);
  const double rest = double(p.total - kv - p.norms);
  CHECK(served_weight_bytes_per_gpu(p, DType::bf16, 1) == Approx(2.0 * double(p.total)));
  CHECK(served_weight_bytes_per_gpu(p, DType::bf16, 4) == Approx(2.0 * (rest / 4 + double(kv) / 4 + double(p.norms))));
  CHECK(served_weight_bytes_per_gpu(p, DType::bf16, 16) == Approx(2.0 * (rest / 16 + double(kv) / 8 + double(p.norms))));
  // MLA has no K/V projection of its own: its kv_a is replicated whole.
  const ParamCounts lite = count_params(fixture("deepseek-v2-lite"));
  CHECK(lite.kv_projection == 0);
  CHECK(lite.replicated == 27LL * (2048 * 576 + 512) + lite.router + lite.norms);  // no q_lora_rank: q_proj is split
}

TEST_CASE("prefill FLOPs: every matmul, exact causal pairs", "[counts][flops]") {
  const ModelSpec m = small();
  Workload w;
  w.batch = 2;
  w.prompt_len = 100;
  const FlopCounts f = count_flops(m, w);
  const std::int64_t tokens = 200;
  // Q, K, V, O projections: 2 x tokens x weights, 4 layers.
  CHECK(f.prefill.projections == 2 * tokens * (512 * 512 + 2 * 512 * 128 + 512 * 512) * 4);
  // Causal: 100 * 101 / 2 pairs per head; QK^T and PV each 2 x 64 per pair; 8 heads, 2 sequences.
  CHECK(f.prefill.attention_core == 4LL * 2 * 8 * (100 * 101 / 2) * (2 * 64 + 2 * 64));
  CHECK(f.prefill.ffn == 2 * tokens * 3 * 512 * 1536 * 4);
  CHECK(f.prefill.lm_head == 2 * 2 * 512 * 1000);  // last position of each sequence
  CHECK(f.prefill.total == f.prefill.projections + f.prefill.attention_core + f.prefill.ffn + f.prefill.lm_head);
}

TEST_CASE("decode FLOPs per token and windows capping the pairs", "[counts][flops]") {
  ModelSpec m = small();
  Workload w;
  w.context = 5000;
  FlopCounts f = count_flops(m, w);
  CHECK(f.decode_per_token.attention_core == 4LL * 8 * 5000 * 256);
  for (auto& l : m.layers) l.span = Span::window(1024);
  f = count_flops(m, w);
  CHECK(f.decode_per_token.attention_core == 4LL * 8 * 1024 * 256);
  w.prompt_len = 3000;
  f = count_flops(m, w);
  // Per sequence and head: 1024 * 1025 / 2 pairs for the first 1024 queries, then 1024 each.
  CHECK(f.prefill.attention_core == 4LL * 8 * (1024LL * 1025 / 2 + (3000 - 1024) * 1024LL) * 256);
}

TEST_CASE("chunked layers: the cache holds a chunk, queries see their chunk's keys", "[counts][kv][flops]") {
  ModelSpec m = small();
  // Llama 4's pattern: three chunked layers, then one of full attention.
  for (std::size_t i = 0; i < 3; ++i) m.layers[i].span = Span::chunk(1024);
  Workload w;
  w.context = 5000;
  w.prompt_len = 3000;
  const KvCacheCounts kv = count_kv_cache(m, w);
  CHECK(kv.bytes_per_token == 4 * 2 * 128 * 2);
  CHECK(kv.bytes_per_token_beyond_window == 1 * 2 * 128 * 2);  // the full layer only
  CHECK(kv.layer_tokens == 3 * 1024 + 5000);
  const FlopCounts f = count_flops(m, w);
  // Decode at context 5000: position 4999 sees keys 4096..4999 in the chunked layers.
  CHECK(f.decode_per_token.attention_core == 8LL * (3 * 904 + 5000) * 256);
  // Prefill of 3000: chunks of 1024, 1024 and 952 tokens, each a causal triangle; the full layer 3000.
  const std::int64_t chunked_pairs = 2 * (1024LL * 1025 / 2) + 952LL * 953 / 2;
  CHECK(f.prefill.attention_core == 8LL * (3 * chunked_pairs + 3000LL * 3001 / 2) * 256);
  // A decode step reads the current chunk's 904 keys there, though the cache holds 1024.
  const ModelCounts c = count_model(m, w);
  CHECK(c.bytes.kv_read == (3 * 904 + 5000) * 2 * 128 * 2);
  m.layers[1].span = Span::chunk(-2);
  CHECK_THROWS_WITH(validate(m), "layers[1].chunk = -2: must not be negative");
}

TEST_CASE("MLA decode is counted absorbed, prefill decompressed", "[counts][flops]") {
  const ModelSpec m = fixture("deepseek-v2-lite");  // 16 heads, latent 512 + rope 64, nope 128, v 128
  Workload w;
  w.context = 4096;
  w.prompt_len = 1024;
  const FlopCounts f = count_flops(m, w);
  // Absorbed: each head scores 576-wide latents and sums 512-wide values over the context.
  CHECK(f.decode_per_token.attention_core == 27LL * 16 * 4096 * (2 * 576 + 2 * 512));
  // Decompressed: Q/K of 192, V of 128 per head, causal pairs.
  CHECK(f.prefill.attention_core == 27LL * 16 * (1024LL * 1025 / 2) * (2 * 192 + 2 * 128));
  // Projections per token are the same in both forms (W_UK and W_UV are kv_b's weights).
  CHECK(f.prefill.projections == 1024 * f.decode_per_token.projections);
}

TEST_CASE("GQA does not reduce attention-core FLOPs", "[counts][flops]") {
  ModelSpec mha = small();
  mha.attention.num_kv_heads = 8;
  mha.attention.variant = AttentionVariant::mha;
  ModelSpec mqa = small();
  mqa.attention.num_kv_heads = 1;
  mqa.attention.variant = AttentionVariant::mqa;
  Workload w;
  CHECK(count_flops(mha, w).decode_per_token.attention_core == count_flops(mqa, w).decode_per_token.attention_core);
  CHECK(count_kv_cache(mha, w).bytes_per_token == 8 * count_kv_cache(mqa, w).bytes_per_token);
}

TEST_CASE("decode bytes: weights once, KV read and written", "[counts][bytes]") {
  const ModelSpec m = small();
  Workload w;
  w.batch = 4;
  w.context = 1000;
  const ModelCounts c = count_model(m, w);
  const ParamCounts& p = c.params;
  // Weights other than the embedding table, the untied head, and 4 embedding rows, at 2 bytes.
  CHECK(c.bytes.weights == 2 * (p.total - p.embedding + 4 * 512));
  CHECK(c.bytes.kv_read == c.kv_cache.bytes_total);
  CHECK(c.bytes.kv_written == 4 * c.kv_cache.bytes_per_token);
  CHECK(c.bytes.step == c.bytes.weights + c.bytes.kv_read + c.bytes.kv_written);
  CHECK(c.bytes.per_token == c.bytes.step / 4);
  CHECK(c.bytes.arithmetic_intensity == Approx(double(c.flops.decode_step) / double(c.bytes.step)));
}

TEST_CASE("MoE decode reads the expected distinct experts", "[counts][bytes]") {
  const ModelSpec m = fixture("mixtral-8x7b");
  Workload w;
  w.batch = 1;
  CHECK(count_model(m, w).bytes.experts_read == Approx(2.0));
  w.batch = 64;  // 8 (1 - (6/8)^64): essentially every expert
  CHECK(count_model(m, w).bytes.experts_read == Approx(8.0 * (1.0 - std::pow(0.75, 64))));
}

TEST_CASE("counts that would overflow are input errors", "[counts][errors]") {
  ModelSpec m = fixture("deepseek-v3");
  Workload w;
  w.batch = 4'000'000'000LL;
  w.context = 4'000'000'000LL;
  CHECK_THROWS_AS(count_model(m, w), InputError);
  CHECK_THROWS_WITH(count_model(m, w), Catch::Contains("would overflow"));
}

TEST_CASE("FLOP counts past 2^63 are exact 128-bit integers", "[counts][flops][errors]") {
  // Llama-3-8B at 10M and 64M tokens (10 x 2^20, 64 x 2^20): 32 layers of 32 query heads of 128, 41,943,040
  // attention and 3 x 4096 x 14336 FFN weights a layer, vocabulary 128256.
  const ModelSpec m = fixture("llama-3-8b");
  for (const std::int64_t n : {10LL << 20, 64LL << 20}) {
    INFO("tokens " << n);
    const Workload w = Workload{}.serving(n);
    const FlopCounts f = count_flops(m, w);
    const WideCount pairs = WideCount(n) * (n + 1) / 2;  // causal: position p sees p + 1 keys
    const WideCount core = 32 * WideCount(32) * (2 * 128 + 2 * 128) * pairs;
    const WideCount projections = 2 * WideCount(n) * 41'943'040 * 32;
    const WideCount ffn = 2 * WideCount(n) * (3LL * 4096 * 14336) * 32;
    const WideCount lm_head = 2LL * 4096 * 128256;
    CHECK(to_string(f.prefill.attention_core) == to_string(core));
    CHECK(to_string(f.prefill.projections) == to_string(projections));
    CHECK(to_string(f.prefill.ffn) == to_string(ffn));
    CHECK(to_string(f.prefill.total) == to_string(core + projections + ffn + lm_head));
    CHECK(f.prefill.total > WideCount(INT64_MAX));
    // Decode: one token against n keys, every layer and head.
    CHECK(to_string(f.decode_per_token.attention_core) == to_string(32 * WideCount(32) * 512 * n));
  }
  CHECK(to_string(count_flops(m, Workload{}.serving(10LL << 20)).prefill.attention_core) == "28823040363950243840");
  // A causal prompt whose pairs per head pass 2^63 (2^33 tokens), or tokens in all that do: input errors.
  CHECK_THROWS_WITH(count_flops(m, Workload{}.serving(1LL << 33)), "attention pairs would overflow a 64-bit count; the inputs are too large");
  Workload many = Workload{}.serving(1LL << 31);
  many.batch = 1LL << 62;
  CHECK_THROWS_WITH(count_flops(m, many), "FLOP count would overflow a 64-bit count; the inputs are too large");
}

TEST_CASE("spec validation names the field", "[counts][errors]") {
  ModelSpec m = small();
  m.attention.num_kv_heads = 3;
  CHECK_THROWS_WITH(validate(m), "num_kv_heads = 3: must divide num_q_heads = 8");
  m = small();
  m.attention.variant = AttentionVariant::mha;
  CHECK_THROWS_WITH(validate(m), "variant = mha: 8 query heads with 2 KV heads is gqa");
  m = small();
  m.d_model = 0;
  CHECK_THROWS_WITH(validate(m), "d_model = 0: must be positive");
  Workload w;
  w.batch = 0;
  CHECK_THROWS_WITH(validate(w), "batch = 0: must be positive");
}

TEST_CASE("a hybrid model: linear-attention layers count their own weights and hold a fixed state", "[counts][kv][errors]") {
  // small() with its first 3 layers Gated DeltaNet (2 key heads, 4 value heads of 32, a convolution of 4).
  ModelSpec m = small();
  m.linear = LinearAttentionSpec{2, 4, 32, 32, 4};
  for (int i = 0; i < 3; ++i) m.layers[static_cast<std::size_t>(i)].mixer = Mixer::linear;
  validate(m);
  const ParamCounts dense = count_params(small());
  const ParamCounts p = count_params(m);
  // key_dim 64, value_dim 128, conv_dim 256: in_proj 512 x (2 x 64 + 2 x 128 + 2 x 4), out_proj 128 x 512,
  // conv 256 x 4, dt_bias and A_log 4 each, the norm 32.
  CHECK(p.linear_attention_per_layer == 512 * 392 + 128 * 512 + 256 * 4 + 8 + 32);
  CHECK(p.attention == dense.attention_per_layer);
  CHECK(p.total == dense.total - 3 * dense.attention_per_layer + 3 * p.linear_attention_per_layer);
  Workload w;
  w.batch = 3;
  w.context = 1000;
  const KvCacheCounts kv = count_kv_cache(m, w);
  CHECK(kv.bytes_per_token == 2 * 64 * 2 * 2);  // one softmax layer's K and V
  CHECK(kv.layer_tokens == 1000);
  CHECK(kv.state_bytes_per_layer == (4 * 32 * 32 + 256 * 3) * 2);
  CHECK(kv.bytes_total == 3 * (1000 * 512 + 3 * kv.state_bytes_per_layer));
  // A step: the softmax layer's projections and the linear layers' in and out projections per token.
  const FlopCounts f = count_flops(m, w);
  CHECK(f.decode_per_token.projections == 2 * (dense.attention_per_layer + 3 * (512 * 392 + 128 * 512)));
  CHECK(f.decode_per_token.attention_core == 2 * 2 * 8 * 64 * 1000 + 3 * (6 * 4 * 32 * 32 + 2 * 256 * 4));
  // Input errors name the field.
  ModelSpec bad = m;
  bad.layers[0].span = Span::window(128);
  CHECK_THROWS_WITH(validate(bad), "layers[0].window = 128: a linear-attention layer has no window or chunk");
  bad = m;
  bad.linear.num_k_heads = 3;
  CHECK_THROWS_WITH(validate(bad), "linear_num_key_heads = 3: must divide linear_num_value_heads = 4");
  bad = m;
  bad.linear.conv_kernel = 0;
  CHECK_THROWS_WITH(validate(bad), "linear_conv_kernel_dim = 0: must be positive");
  // Under tp 4 each GPU holds one of the 4 value heads' states and, replicated, one of the 2 key heads'
  // convolution inputs (as vLLM holds Mamba2's single group on every GPU).
  w.tp = 4;
  const KvCacheCounts kv4 = count_kv_cache(m, w);
  CHECK(linear_attention_state_elements_per_gpu(m, 4) == 32 * 32 + (2 * 32 + 32) * 3);
  CHECK(kv4.bytes_per_gpu == 3 * (1000 * 512 / 2 + 3 * (32 * 32 + (2 * 32 + 32) * 3) * 2));
  w.tp = 8;  // 8 query heads split, 2 KV heads replicate; 4 value heads cannot split 8 ways
  CHECK_THROWS_WITH(count_kv_cache(m, w), "tp = 8: must divide linear_num_value_heads = 4");
  ModelSpec odd = m;
  odd.linear.num_k_heads = 3;
  odd.linear.num_v_heads = 6;
  w.tp = 2;
  CHECK_THROWS_WITH(count_kv_cache(odd, w), "tp = 2: must divide linear_num_key_heads = 3 or be a multiple of it");
  ModelSpec gated_mla = fixture("deepseek-v2-lite");
  gated_mla.attention.output_gate = true;
  CHECK_THROWS_WITH(validate(gated_mla), "output_gate = true: a gate on the attention output is not modelled for MLA");
}

TEST_CASE("a linear-attention layer's share of one GPU: value heads split, a single Mamba2 group replicated", "[counts][linear]") {
  // Granite-4.0-H-Small: 128 Mamba2 heads of 64, one group of B and C with d_state 128, 4 taps.
  const ModelSpec m = fixture("granite-4.0-h-small");
  const LinearAttentionShape whole = layer_linear_attention_shape(m, 1, 1);
  CHECK(whole.num_k_heads == 1);
  CHECK(whole.num_v_heads == 128);
  const LinearAttentionShape shard = layer_linear_attention_shape(m, 2, 1, 4);
  CHECK(shard.batch == 2);
  CHECK(shard.num_k_heads == 1);  // the group is held on every GPU
  CHECK(shard.num_v_heads == 32);
  // The shard's state: its 32 heads' recurrent state and the convolution inputs of its own channels
  // (B and C whole, a quarter of x); its FLOPs those of its channels, so 4 shards count the replicated
  // group's convolution 4 times: more than a quarter of the layer's FLOPs.
  CHECK(linear_attention_state_elements_per_gpu(m, 4) == 32 * 128 * 64 + (2 * 128 + 32 * 64) * 3);
  CHECK(linear_attention_flops(layer_linear_attention_shape(m, 1, 1, 4)) ==
        4 * 32 * 128 * 64 + 2 * (2 * 128 + 32 * 64) * 4);
  CHECK(4 * linear_attention_flops(layer_linear_attention_shape(m, 1, 1, 4)) > linear_attention_core_flops(m, 1, 1));
}

TEST_CASE("an nvfp4 or int4 KV cache counts its block scales, an fp8 one its elements alone", "[counts][dtype]") {
  // Llama-3-8B: 32 layers x 8 KV heads x (128 + 128) = 65536 elements a token.
  const ModelSpec m = fixture("llama-3-8b");
  Workload w;
  w.kv_dtype = DType::fp8;
  CHECK(count_kv_cache(m, w).bytes_per_token == 65536);  // per-tensor scales: none per token
  w.kv_dtype = DType::nvfp4;
  CHECK(count_kv_cache(m, w).bytes_per_token == 65536 / 2 + 65536 / 16);  // + one E4M3 byte per 16
  CHECK(count_kv_cache(m, w).bytes_per_token_per_layer == 2048 / 2 + 2048 / 16);
  w.kv_dtype = DType::int4;
  CHECK(count_kv_cache(m, w).bytes_per_token == 65536 / 2 + 65536 / 128 * 20 / 8);  // fp16 scale + 4-bit zero per 128
}

TEST_CASE("a decode step reads each component's weights in its dtype", "[counts][dtype]") {
  const ModelSpec m = fixture("llama-3-8b");
  Workload w;
  w.batch = 1;
  const ModelCounts bf16 = count_model(m, w);
  w.ffn_weight_dtype = DType::mxfp4;
  const ModelCounts mixed = count_model(m, w);
  const double ffn = double(bf16.params.ffn);
  CHECK(double(bf16.bytes.weights - mixed.bytes.weights) == Approx(ffn * (2.0 - 4.25 / 8.0)).margin(1));
  // Unset component dtypes leave every existing count as it was.
  Workload plain;
  plain.batch = 1;
  plain.attention_weight_dtype = DType::bf16;
  CHECK(count_model(m, plain).bytes.weights == bf16.bytes.weights);
}
