#include "mhacfg/configurator/calibrate/calibration_grid.hpp"

namespace mhacfg {

namespace {

MeasurementRecord attention(Phase phase, std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t nq,
                            std::int64_t nkv, std::int64_t hd, bool causal, DType dtype) {
  MeasurementRecord r;
  r.shape = AttentionOp{phase, AttentionShape{batch, q_len, kv_len, nq, nkv, hd, hd, causal, 0, 0, 0}};
  r.dtype = dtype;
  r.json = record_to_json(r);
  return r;
}

MeasurementRecord mla(std::int64_t batch, std::int64_t kv_len, std::int64_t nq, std::int64_t rank, DType dtype) {
  MeasurementRecord r;
  r.shape = AttentionOp{Phase::decode, AttentionShape{batch, 1, kv_len, nq, 1, rank + 64, rank, false, 0, rank, 64}};
  r.dtype = dtype;
  r.json = record_to_json(r);
  return r;
}

MeasurementRecord gemm(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
  MeasurementRecord r;
  r.shape = GemmOp{GemmShape{m, n, k}};
  r.dtype = dtype;
  r.json = record_to_json(r);
  return r;
}

MeasurementRecord linear(LinearKind kind, std::int64_t batch, std::int64_t q_len, std::int64_t kh, std::int64_t vh,
                         std::int64_t dk, std::int64_t dv, DType state) {
  MeasurementRecord r;
  r.shape = LinearAttentionOp{q_len == 1 ? Phase::decode : Phase::prefill, LinearAttentionShape{batch, q_len, kh, vh, dk, dv, 4, kind}};
  r.dtype = state;
  r.json = record_to_json(r);
  return r;
}

// Linear attention's cores on the CPU: the layers of Qwen3-Next (Gated
// DeltaNet, 16 key / 32 value heads of 128, and its halves under tp 2), Nemotron-H (Mamba2, 8 groups,
// 128 heads of 64, d_state 128) and Granite 4.0-H (one group), and narrower ones; decode steps from
// one sequence (the state in cache) to batches whose states stream from memory, fp32 and bf16 states;
// prefills of 64-1024 tokens (the state stays in cache, the work is the recurrence).
void add_linear_cpu(std::vector<MeasurementRecord>& g, bool quick) {
  const LinearKind gdn = LinearKind::gated_deltanet, m2 = LinearKind::mamba2;
  const DType f32 = DType::fp32, bf = DType::bf16;
  for (std::int64_t batch : quick ? std::vector<std::int64_t>{1, 8} : std::vector<std::int64_t>{1, 4, 16}) {
    g.push_back(linear(gdn, batch, 1, 16, 32, 128, 128, bf));
    g.push_back(linear(m2, batch, 1, 8, 128, 128, 64, bf));
  }
  g.push_back(linear(gdn, 8, 1, 16, 32, 128, 128, f32));
  g.push_back(linear(gdn, 2, 1, 8, 16, 128, 128, f32));
  g.push_back(linear(gdn, 32, 1, 4, 8, 64, 64, bf));
  g.push_back(linear(gdn, 1, 1, 4, 8, 64, 64, f32));
  g.push_back(linear(m2, 4, 1, 1, 128, 128, 64, f32));
  g.push_back(linear(m2, 16, 1, 8, 64, 64, 64, bf));
  g.push_back(linear(gdn, 4, 1, 8, 8, 128, 256, bf));
  // fp32 states: the Mamba2 step walks its state once, Gated DeltaNet's twice, and neither widens.
  g.push_back(linear(m2, 1, 1, 8, 128, 128, 64, f32));
  g.push_back(linear(m2, 16, 1, 8, 64, 64, 64, f32));
  g.push_back(linear(gdn, 4, 1, 16, 32, 128, 128, f32));
  g.push_back(linear(m2, 8, 1, 2, 48, 128, 96, f32));
  // fp32 states beyond the cache (40 and 64 MiB): without them a 34 MiB Mamba2 decode (held-out set 5)
  // was extrapolated and predicted 20-36 % fast.
  g.push_back(linear(gdn, 40, 1, 8, 16, 128, 128, f32));
  g.push_back(linear(m2, 64, 1, 8, 64, 64, 64, f32));
  if (!quick) {
    g.push_back(linear(gdn, 2, 1, 12, 24, 128, 128, f32));
    g.push_back(linear(gdn, 8, 1, 8, 16, 128, 128, bf));
    g.push_back(linear(m2, 2, 1, 1, 128, 128, 64, bf));
    g.push_back(linear(m2, 64, 1, 2, 32, 64, 64, bf));
    g.push_back(linear(gdn, 1, 1, 2, 4, 256, 128, f32));
  }
  g.push_back(linear(gdn, 1, 128, 16, 32, 128, 128, f32));
  g.push_back(linear(gdn, 1, 256, 8, 16, 128, 128, bf));
  g.push_back(linear(gdn, 1, 1024, 4, 8, 64, 64, f32));
  g.push_back(linear(gdn, 2, 256, 4, 8, 64, 64, f32));
  g.push_back(linear(m2, 1, 128, 8, 128, 128, 64, bf));
  g.push_back(linear(m2, 1, 512, 1, 32, 128, 64, f32));
  g.push_back(linear(m2, 1, 64, 8, 64, 64, 64, f32));
  g.push_back(linear(m2, 1, 256, 1, 64, 128, 64, f32));
  g.push_back(linear(gdn, 1, 192, 8, 16, 96, 128, f32));
  if (!quick) {
    g.push_back(linear(m2, 1, 256, 1, 32, 128, 64, bf));
    g.push_back(linear(gdn, 1, 64, 16, 32, 128, 128, bf));
    g.push_back(linear(gdn, 1, 512, 2, 4, 128, 128, f32));
    g.push_back(linear(m2, 2, 256, 2, 32, 64, 64, bf));
    g.push_back(linear(gdn, 1, 300, 4, 8, 128, 256, f32));
    // KDA (Kimi Linear: 32 heads of 128 for keys and values alike) has classes of its own: decode
    // steps from one sequence to states beyond the cache, fp32 and bf16; prefills of 64-1024 tokens.
    const LinearKind kda = LinearKind::kda;
    for (std::int64_t batch : {1, 4, 16}) g.push_back(linear(kda, batch, 1, 32, 32, 128, 128, bf));
    g.push_back(linear(kda, 8, 1, 32, 32, 128, 128, f32));
    g.push_back(linear(kda, 2, 1, 16, 16, 128, 128, f32));
    g.push_back(linear(kda, 32, 1, 8, 8, 64, 64, bf));
    g.push_back(linear(kda, 1, 1, 8, 8, 64, 64, f32));
    g.push_back(linear(kda, 4, 1, 16, 16, 64, 128, bf));
    g.push_back(linear(kda, 40, 1, 16, 16, 128, 128, f32));
    g.push_back(linear(kda, 64, 1, 16, 16, 64, 64, bf));
    g.push_back(linear(kda, 8, 1, 16, 16, 128, 128, bf));
    g.push_back(linear(kda, 2, 1, 12, 12, 128, 128, f32));
    g.push_back(linear(kda, 1, 128, 32, 32, 128, 128, f32));
    g.push_back(linear(kda, 1, 256, 16, 16, 128, 128, bf));
    g.push_back(linear(kda, 1, 1024, 8, 8, 64, 64, f32));
    g.push_back(linear(kda, 2, 256, 8, 8, 64, 64, f32));
    g.push_back(linear(kda, 1, 64, 32, 32, 128, 128, bf));
    g.push_back(linear(kda, 1, 512, 4, 4, 128, 128, f32));
    g.push_back(linear(kda, 1, 192, 16, 16, 96, 128, f32));
    g.push_back(linear(kda, 1, 300, 8, 8, 128, 256, f32));
  }
}

MeasurementRecord indexer(std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t heads, std::int64_t head_dim,
                          std::int64_t topk) {
  MeasurementRecord r;
  r.shape = IndexerOp{q_len == 1 ? Phase::decode : Phase::prefill, IndexerShape{batch, q_len, kv_len, heads, head_dim, topk}};
  r.dtype = DType::fp8;
  r.json = record_to_json(r);
  return r;
}

// The lightning indexer on the CPU: DeepSeek-V3.2's 64 heads of 128 and GLM-5's 32, and
// narrower ones down to 4 heads of 64, where the per-key work (dequantising the fp8 keys, the
// selection) outweighs the products; decode steps over 512 to 128k keys at batch 1-32, prefills of
// 128-1536 tokens and one against a longer cache; topk from 64 to beyond the keys.
void add_indexer_cpu(std::vector<MeasurementRecord>& g, bool quick) {
  for (auto [batch, kv, heads, dim, topk] : {std::tuple{1, 8192, 64, 128, 2048}, std::tuple{1, 32768, 64, 128, 2048},
                                             std::tuple{1, 32768, 32, 128, 2048}, std::tuple{4, 4096, 32, 128, 2048},
                                             std::tuple{16, 1024, 64, 128, 2048}, std::tuple{4, 8192, 64, 64, 1024},
                                             std::tuple{8, 2048, 16, 64, 256}, std::tuple{2, 16384, 8, 128, 512},
                                             std::tuple{1, 65536, 4, 64, 1024}, std::tuple{32, 512, 32, 128, 128}})
    g.push_back(indexer(batch, 1, kv, heads, dim, topk));
  for (auto [batch, q, kv, heads, dim, topk] : {std::tuple{1, 512, 512, 64, 128, 2048}, std::tuple{1, 128, 128, 64, 128, 2048},
                                                std::tuple{1, 1024, 1024, 16, 128, 256}, std::tuple{1, 256, 1536, 32, 128, 512},
                                                std::tuple{1, 768, 768, 32, 64, 512}, std::tuple{2, 384, 384, 8, 64, 64},
                                                std::tuple{1, 1536, 1536, 4, 128, 128}})
    g.push_back(indexer(batch, q, kv, heads, dim, topk));
  if (quick) return;
  g.push_back(indexer(1, 1, 131072, 16, 128, 2048));
  g.push_back(indexer(2, 1, 65536, 64, 128, 2048));
  g.push_back(indexer(3, 1, 12288, 16, 128, 2048));
  g.push_back(indexer(1, 1, 4096, 128, 128, 512));
  g.push_back(indexer(4, 256, 256, 16, 128, 128));
  g.push_back(indexer(1, 64, 4096, 64, 128, 2048));
  g.push_back(indexer(1, 512, 2048, 16, 128, 1024));
  g.push_back(indexer(1, 1024, 1024, 64, 64, 2048));
}

// Attention prefill on the CPU: head_dim 64/128/256, groups 1/4 (K/V tiles are shared across a
// group), causal and not, short to long.
void add_prefill_cpu(std::vector<MeasurementRecord>& g, bool quick) {
  const DType f32 = DType::fp32;
  const std::vector<std::int64_t> lens = quick ? std::vector<std::int64_t>{256, 1024}
                                               : std::vector<std::int64_t>{256, 512, 1024, 1536};
  for (std::int64_t len : lens)
    for (auto [nq, nkv, hd] : {std::tuple{8, 8, 64}, std::tuple{8, 2, 64}, std::tuple{8, 2, 128}, std::tuple{4, 1, 256}}) {
      g.push_back(attention(Phase::prefill, 1, len, len, nq, nkv, hd, true, f32));
      if (len <= 512) g.push_back(attention(Phase::prefill, 1, len, len, nq, nkv, hd, false, f32));
    }
  for (auto [nq, nkv, hd] : {std::tuple{8, 8, 64}, std::tuple{8, 2, 128}})
    g.push_back(attention(Phase::prefill, 1, 768, 768, nq, nkv, hd, false, f32));
  g.push_back(attention(Phase::prefill, 2, 384, 384, 16, 16, 64, true, f32));
  // head_dim 256 in groups of 2: without it, 8 query / 4 KV heads at 300 tokens (held-out set 2)
  // was predicted 14-17 % fast from the group-4 head_dim-256 shapes alone.
  g.push_back(attention(Phase::prefill, 1, 256, 256, 8, 4, 256, false, f32));
  {  // a sliding window (keys [pos - 383, pos])
    MeasurementRecord w = attention(Phase::prefill, 1, 1024, 1024, 8, 2, 64, true, f32);
    w.attention().window = 384;
    w.json = record_to_json(w);
    g.push_back(w);
  }
  if (!quick) g.push_back(attention(Phase::prefill, 2, 512, 512, 16, 2, 128, true, f32));
}

// Attention decode on the CPU: batch 1..8, KV 1k..16k, groups 1/2/4/8/16, head_dim 64/128/256, fp32
// and bf16 KV, in cache and well beyond it.
void add_decode_cpu(std::vector<MeasurementRecord>& g, bool quick) {
  const DType f32 = DType::fp32;
  // --quick measures the same shapes as the full grid at half the batch (calls of at most ~16 ms
  // instead of ~35): with the 23 decode records it had before, its nine decode parameters were
  // unstable (held-out medians 2.7-6.0 % over eleven runs on the development VM).
  for (std::int64_t kv : {1024, 4096, 16384})
    for (std::int64_t batch : quick ? std::vector<std::int64_t>{1, 2} : std::vector<std::int64_t>{1, 4})
      for (auto [nq, nkv, hd] : {std::tuple{16, 16, 64}, std::tuple{32, 8, 128}, std::tuple{32, 4, 128}, std::tuple{8, 1, 256}})
        g.push_back(attention(Phase::decode, kv == 1024 ? 4 * batch : batch, 1, kv, nq, nkv, hd, false, f32));
  for (std::int64_t kv : {2048, 8192}) {
    g.push_back(attention(Phase::decode, 2, 1, kv, 32, 16, 64, false, f32));  // groups of 2
    g.push_back(attention(Phase::decode, 4, 1, kv, 16, 2, 128, false, f32));
    g.push_back(attention(Phase::decode, 1, 1, kv, 32, 4, 64, false, f32));
  }
  g.push_back(attention(Phase::decode, 2, 1, 4096, 16, 1, 128, false, f32));  // groups of 16
  g.push_back(attention(Phase::decode, 1, 1, 8192, 32, 2, 64, false, f32));
  g.push_back(attention(Phase::decode, 2, 1, 8192, 32, 1, 128, false, f32));  // MQA: 32 rows
  g.push_back(attention(Phase::decode, 2, 1, 6144, 24, 4, 128, false, f32));  // groups of 6
  g.push_back(attention(Phase::decode, 2, 1, 4096, 28, 4, 128, false, f32));  // 7: blocks of 4, 2 and 1 rows
  g.push_back(attention(Phase::decode, 4, 1, 8192, 32, 8, 128, false, DType::bf16));  // bf16 KV storage
  g.push_back(attention(Phase::decode, 4, 1, 2048, 16, 4, 128, false, DType::bf16));  // bf16 near the cache's size
  g.push_back(attention(Phase::decode, 1, 1, 32768, 32, 8, 128, false, DType::bf16));
  // Odd KV-head counts: token rows of 3 KB (6 KV heads x 128, 12 x 64) and 5 KV heads in bf16.
  g.push_back(attention(Phase::decode, 2, 1, 4096, 24, 6, 128, false, f32));
  g.push_back(attention(Phase::decode, 2, 1, 4096, 48, 12, 64, false, f32));
  g.push_back(attention(Phase::decode, 1, 1, 8192, 20, 5, 128, false, DType::bf16));
  // Several query positions (speculative decoding): 4 x group 4 = 16 rows, and bf16 at 2 x 8.
  g.push_back(attention(Phase::decode, 2, 4, 4096, 32, 8, 128, true, f32));
  g.push_back(attention(Phase::decode, 1, 2, 8192, 16, 2, 128, true, DType::bf16));
}

// MLA absorbed decode on the CPU: latent 512 (+64) and 256, 16 and 128 heads.
void add_mla_cpu(std::vector<MeasurementRecord>& g, bool quick) {
  const DType f32 = DType::fp32;
  for (std::int64_t kv : {1024, 8192})
    for (std::int64_t nq : {16, 128}) g.push_back(mla(kv == 1024 ? 4 : 1, kv, nq, 512, f32));
  g.push_back(mla(2, 4096, 16, 256, f32));
  g.push_back(mla(1, 2048, 64, 512, f32));
  g.push_back(mla(2, 4096, 32, 512, f32));
  if (!quick) {
    g.push_back(mla(8, 2048, 16, 512, f32));
    g.push_back(mla(1, 16384, 32, 256, f32));
  }
}

// GEMMs of projection shapes on the CPU: decode (m small) to prefill (m large), up to ~2 GFLOP.
// m = 1, 4 and 16 run the skinny kernel (one, one and four passes over B), from 64 on Eigen's.
void add_gemm_cpu(std::vector<MeasurementRecord>& g, bool quick) {
  const DType f32 = DType::fp32;
  for (std::int64_t m : {1, 4, 16, 64, 256, 1024})
    for (auto [n, k] : {std::pair{1024, 1024}, std::pair{3072, 1024}, std::pair{1024, 4096}, std::pair{4096, 2048}})
      if (2 * m * n * k <= (std::int64_t{1} << 31) + 1) g.push_back(gemm(m, n, k, f32));
  g.push_back(gemm(32, 3072, 1024, f32));  // Eigen's GEMM at its fewest rows: it packs B for 32
  // The skinny kernel at 2 (one 2-row pass), 8 (two passes) and 12 rows (three), and streaming
  // weights far beyond the cache (100 MB and 67 MB, a d_model-4096 block's QKV and O).
  for (std::int64_t m : {2, 8, 12}) g.push_back(gemm(m, 3072, 1024, f32));
  g.push_back(gemm(1, 6144, 4096, f32));
  g.push_back(gemm(4, 4096, 4096, f32));
  g.push_back(gemm(2048, 512, 1024, f32));
  if (!quick)
    for (std::int64_t m : {2, 8, 128, 512}) g.push_back(gemm(m, 2048, 2048, f32));
}

// The lightning indexer on the GPU (mhacfg's CUDA kernel: fp8 mma scores, radix top-k): DeepSeek-V3.2's
// 64 heads of 128, GLM-5's 32 and 16 heads of 64; decode steps over 2k-128k keys at batch 1-64 (the fp8
// keys streamed from HBM), prefills of 1k-8k tokens and chunked prefills against a longer cache
// (tensor-core bound), topk 256-2048 and one beyond the keys. Sized for an H200: every call under ~2 ms.
void add_indexer_cuda(std::vector<MeasurementRecord>& g) {
  for (std::int64_t kv : {4096, 32768, 131072})
    for (std::int64_t batch : {1, 8, 64}) g.push_back(indexer(batch, 1, kv, 64, 128, 2048));
  for (auto [batch, kv, heads, dim, topk] : {std::tuple{1, 32768, 32, 128, 2048}, std::tuple{16, 16384, 32, 128, 2048},
                                             std::tuple{64, 8192, 32, 128, 2048}, std::tuple{8, 65536, 16, 64, 2048},
                                             std::tuple{32, 4096, 16, 64, 256}, std::tuple{4, 16384, 64, 128, 512},
                                             std::tuple{64, 2048, 64, 128, 2048}})
    g.push_back(indexer(batch, 1, kv, heads, dim, topk));
  for (auto [batch, q, kv, heads, topk] : {std::tuple{1, 1024, 1024, 64, 2048}, std::tuple{1, 2048, 2048, 64, 2048},
                                           std::tuple{1, 4096, 4096, 64, 2048}, std::tuple{1, 8192, 8192, 64, 2048},
                                           std::tuple{2, 2048, 2048, 64, 2048}, std::tuple{1, 512, 8192, 64, 2048},
                                           std::tuple{1, 2048, 32768, 64, 2048}, std::tuple{1, 256, 16384, 64, 2048},
                                           std::tuple{1, 4096, 4096, 32, 2048}, std::tuple{4, 1024, 1024, 32, 2048},
                                           std::tuple{1, 8192, 8192, 32, 2048}, std::tuple{2, 4096, 4096, 16, 1024}})
    g.push_back(indexer(batch, q, kv, heads, 128, topk));
  g.push_back(indexer(1, 2048, 2048, 16, 64, 512));
  g.push_back(indexer(1, 1024, 4096, 32, 64, 256));
}

// The CUDA grid: attention prefill and decode (bf16 and fp8 KV), MLA decode, bf16 and fp8 GEMMs, linear
// attention's decode step and the lightning indexer.
std::vector<MeasurementRecord> cuda_grid() {
  std::vector<MeasurementRecord> g;
  const DType bf = DType::bf16;
  for (std::int64_t len : {1024, 4096, 16384})
    for (auto [nq, nkv, hd] : {std::tuple{32, 8, 128}, std::tuple{16, 16, 64}, std::tuple{16, 4, 256}, std::tuple{64, 8, 128}})
      for (bool causal : {true, false})
        g.push_back(attention(Phase::prefill, len == 1024 ? 4 : 1, len, len, nq, nkv, hd, causal, bf));
  for (std::int64_t kv : {1024, 8192, 32768})
    for (std::int64_t batch : {1, 8, 64})
      for (auto [nq, nkv, hd] : {std::tuple{32, 8, 128}, std::tuple{32, 1, 128}, std::tuple{16, 2, 128}, std::tuple{16, 16, 64},
                                 std::tuple{16, 2, 256}})
        g.push_back(attention(Phase::decode, batch, 1, kv, nq, nkv, hd, false, bf));
  for (std::int64_t kv : {4096, 32768})
    for (std::int64_t batch : {1, 8, 64})
      for (std::int64_t nq : {16, 128}) g.push_back(mla(batch, kv, nq, 512, bf));
  // GEMMs: decode-sized m (weights streamed) to prefill-sized (compute-bound), with m = 256 where the
  // output tiles fill under two waves, and one 512 MiB weight matrix (a 70B-class MLP) so the
  // streaming rate is pinned above the 168 MB of the next largest.
  for (std::int64_t m : {1, 64, 256, 1024, 8192})
    for (auto [n, k] : {std::pair{6144, 4096}, std::pair{4096, 4096}, std::pair{2560, 2048}, std::pair{10240, 8192},
                        std::pair{16384, 16384}})
      g.push_back(gemm(m, n, k, bf));
  // fp8 e4m3 GEMMs (cuBLASLt, per-tensor scales, bf16 out; class gemm/fp8): the same spread of shapes,
  // decode-sized m (fp8 weights streamed at half bf16's bytes) to compute-bound, and 8192^3 (the speed
  // tool's bar row). Every n and k is a multiple of 16, as cuBLASLt's fp8 kernels need.
  for (std::int64_t m : {1, 64, 256, 1024, 8192})
    for (auto [n, k] : {std::pair{6144, 4096}, std::pair{4096, 4096}, std::pair{2560, 2048}, std::pair{10240, 8192},
                        std::pair{16384, 16384}})
      g.push_back(gemm(m, n, k, DType::fp8));
  g.push_back(gemm(8192, 8192, 8192, DType::fp8));
  // Decode over an fp8 (e4m3) KV cache (class attention/decode/fp8; mhacfg's kernel runs head_dim 64
  // and 128): the bf16 decode grid's lengths and batches at group sizes 4, 32 (MQA) and 1.
  for (std::int64_t kv : {1024, 8192, 32768})
    for (std::int64_t batch : {1, 8, 64})
      for (auto [nq, nkv, hd] : {std::tuple{32, 8, 128}, std::tuple{32, 1, 128}, std::tuple{16, 16, 64}})
        g.push_back(attention(Phase::decode, batch, 1, kv, nq, nkv, hd, false, DType::fp8));
  // Linear attention's decode step (mhacfg's CUDA kernel has no prefill: engines run it chunked):
  // Qwen3-Next's Gated DeltaNet layer and its tp-2 half, Nemotron-H's and Granite 4.0-H's Mamba2
  // layers, from one sequence (a few blocks on 132 SMs) to 256 (hundreds of MiB of state).
  for (std::int64_t batch : {1, 8, 64, 256}) {
    g.push_back(linear(LinearKind::gated_deltanet, batch, 1, 16, 32, 128, 128, bf));
    g.push_back(linear(LinearKind::mamba2, batch, 1, 8, 128, 128, 64, bf));
  }
  for (std::int64_t batch : {4, 32, 128}) {
    g.push_back(linear(LinearKind::gated_deltanet, batch, 1, 8, 16, 128, 128, bf));
    g.push_back(linear(LinearKind::mamba2, batch, 1, 1, 64, 128, 64, bf));
  }
  g.push_back(linear(LinearKind::gated_deltanet, 16, 1, 4, 8, 64, 64, bf));
  g.push_back(linear(LinearKind::mamba2, 512, 1, 2, 32, 64, 128, bf));
  add_indexer_cuda(g);
  return g;
}

}  // namespace

MeasurementRecord speed_check_prefill(GridDevice device) {
  if (device == GridDevice::cpu) return attention(Phase::prefill, 1, 2048, 2048, 16, 4, 128, true, DType::fp32);
  return attention(Phase::prefill, 4, 4096, 4096, 32, 8, 128, true, DType::bf16);
}

MeasurementRecord speed_check_decode(GridDevice device) {
  // CPU: 4 x 32768 tokens x 8 KV heads x 256 values x 4 bytes = 1 GiB of fp32 KV (> 256 MiB).
  if (device == GridDevice::cpu) return attention(Phase::decode, 4, 1, 32768, 32, 8, 128, false, DType::fp32);
  return attention(Phase::decode, 64, 1, 32768, 32, 8, 128, false, DType::bf16);
}

std::vector<MeasurementRecord> calibration_grid(GridDevice device, bool quick) {
  if (device != GridDevice::cpu) return cuda_grid();
  // Every call stays near or under ~25 ms on one core: on shared machines whose other tenants
  // slow every core for ~80 ms of each ~200 ms, longer calls never run clean (see bench.hpp).
  std::vector<MeasurementRecord> g;
  add_prefill_cpu(g, quick);
  add_decode_cpu(g, quick);
  add_mla_cpu(g, quick);
  add_gemm_cpu(g, quick);
  add_linear_cpu(g, quick);
  add_indexer_cpu(g, quick);
  return g;
}

}  // namespace mhacfg