// The op features the time model reads: the CPU prefill kernel's pairs and key tiles, register-block
// passes over K/V, and whether a GEMM packs B.
#include <catch2/catch.hpp>

#include <algorithm>

#include "mhacfg/costmodel/time_model.hpp"

using namespace mhacfg;

TEST_CASE("CPU prefill: the pairs and key tiles its query tiles compute, masked ones included, match a walk of the tiles", "[fit][model]") {
  // The kernel (kernels/cpu/src/prefill_attention.cpp): tiles of prefill_tile_rows / group
  // positions, each against keys [begin(first position), last position + 1). The walk counts pairs
  // per query head, and rows x key tiles as the kernel's key loop makes them: tiles of
  // prefill_key_tile keys end at the block's last visible key, the first one takes what is left.
  struct Walked {
    double pairs = 0, rows_x_tiles = 0;
  };
  auto walk = [](const AttentionShape& s) {
    const std::int64_t group = s.num_q_heads / s.num_kv_heads;
    const std::int64_t block = std::min(s.q_len, std::max<std::int64_t>(1, CpuKernelFacts{}.prefill_tile_rows / group));
    Walked w;
    for (std::int64_t first = 0; first < s.q_len; first += block) {
      const std::int64_t n = std::min(block, s.q_len - first);
      const std::int64_t p0 = s.kv_len - s.q_len + first, p1 = p0 + n - 1;
      std::int64_t begin = 0;
      if (s.causal && s.window > 0) begin = std::max<std::int64_t>(0, p0 - s.window + 1);
      if (s.causal && s.chunk > 0) begin = p0 / s.chunk * s.chunk;
      const std::int64_t end = s.causal ? p1 + 1 : s.kv_len;
      w.pairs += double(n) * double(end - begin);
      for (std::int64_t k1 = end; k1 > begin; k1 -= CpuKernelFacts{}.prefill_key_tile) w.rows_x_tiles += double(n * group);
    }
    return w;
  };
  for (auto [q, kv, nq, nkv, causal, window, chunk] :
       {std::tuple{768, 768, 8, 2, true, 0, 0}, std::tuple{1000, 1000, 8, 8, true, 0, 0},
        std::tuple{300, 1200, 12, 4, true, 0, 0}, std::tuple{513, 513, 28, 4, true, 0, 0},
        std::tuple{2048, 2048, 32, 8, true, 256, 0}, std::tuple{700, 900, 7, 1, true, 100, 0},
        std::tuple{384, 384, 8, 8, false, 0, 0}, std::tuple{5, 5, 256, 1, true, 0, 0},
        std::tuple{2048, 2048, 40, 8, true, 0, 512}, std::tuple{700, 1000, 8, 2, true, 0, 300},
        // The tiles counted in groups or in closed form: windows with a prefix, wider than the prompt or
        // narrower than a tile, partial last tiles with and without a mask.
        std::tuple{1000, 5000, 8, 2, true, 300, 0}, std::tuple{100, 100, 8, 8, true, 4096, 0},
        std::tuple{1000, 1000, 4, 4, true, 64, 0}, std::tuple{500, 700, 8, 2, false, 0, 0},
        std::tuple{1000, 3000, 8, 2, true, 0, 0}, std::tuple{4097, 4097, 1, 1, true, 1, 0}}) {
    const AttentionShape s{1, q, kv, nq, nkv, 128, 128, causal, window, 0, 0, chunk};
    CAPTURE(q, kv, nq, nkv, causal, window, chunk);
    const Walked w = walk(s);
    CHECK(cpu_prefill_pairs_computed(s) == w.pairs);
    CHECK(cpu_prefill_tile_rows(s) == w.rows_x_tiles);
    if (q > kDecodeMaxQueries) CHECK(op_features(s, DType::fp32).tile_elements == w.rows_x_tiles * nkv * (128 + 128));
    const double exact = double(attention_pairs(s));
    const OpFeatures f = op_features(s, DType::fp32);
    CHECK(f.masked_flop == Approx(f.flop * (w.pairs / exact - 1)).margin(1e-6 * f.flop));
    if (!causal) CHECK(f.masked_flop == 0);
  }
  // Group 1 tiles 128 positions (8 tiles of 128 x 127 / 2 masked pairs per head), group 4 tiles 32
  // (32 tiles of 32 x 31 / 2): the same useful work, 127 / 31 times the masked work.
  const OpFeatures g1 = op_features(AttentionShape{1, 1024, 1024, 8, 8, 128, 128, true, 0, 0, 0}, DType::fp32);
  const OpFeatures g4 = op_features(AttentionShape{1, 1024, 1024, 8, 2, 128, 128, true, 0, 0, 0}, DType::fp32);
  CHECK(g1.flop == g4.flop);
  CHECK(g1.masked_flop == Approx(g4.masked_flop * 127.0 / 31.0));
}

TEST_CASE("register blocks of 4, 2 and 1 rows re-read K/V once per block", "[fit][model]") {
  CHECK(row_passes(1, 4) == 1);
  CHECK(row_passes(4, 4) == 1);
  CHECK(row_passes(7, 4) == 3);   // 4 + 2 + 1
  CHECK(row_passes(8, 4) == 2);
  CHECK(row_passes(12, 4) == 3);
  CHECK(row_passes(16, 4) == 4);
  CHECK(row_passes(7, 0) == 1);   // no blocking: one pass
}

TEST_CASE("GEMM features: a blocked GEMM packs B per call, the skinny CPU GEMM reads it in place", "[fit][model]") {
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows, 3072, 1024}, DType::fp32).elements == 0);
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows + 1, 3072, 1024}, DType::fp32).elements == 3072.0 * 1024.0);
  CHECK(op_features(GemmShape{4096, 3072, 1024}, DType::fp32).elements == 3072.0 * 1024.0);
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows, 3072, 1024}, DType::fp32).skinny_elements == 3072.0 * 1024.0);
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows + 1, 3072, 1024}, DType::fp32).skinny_elements == 0);
}
