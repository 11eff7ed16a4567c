// The split-KV planner (src/split_kv.cpp): host arithmetic, so it runs everywhere the CUDA code
// builds. The expected counts are the fastest of the split sweeps measured on the H200 (2026-11-30,
// mhacfg_cuda_speed, L2 flushed, medians of 20 calls; kernels/cuda/NOTES.md has the tables).
#include <catch2/catch.hpp>

#include "combine.hpp"
#include "split_kv.hpp"

namespace {

using mhacfg::kernels::cuda::detail::choose_splits;
using mhacfg::kernels::cuda::detail::SplitChoice;
using mhacfg::kernels::cuda::detail::SplitProblem;

// H200: 132 SMs; decode at head_dim 128 with up to 16 query heads per KV head and the MLA kernel both
// fit two blocks per SM.
SplitProblem decode_d128(std::int64_t batch, std::int64_t kv_heads, std::int64_t kv_len, int group) {
  SplitProblem p;
  p.independent_blocks = batch * kv_heads;
  p.kv_len = kv_len;
  p.tile_tokens = 64;
  p.bytes_per_token = 2 * 128 * 2;
  p.v_dim = 128;
  p.partial_bytes_per_split = static_cast<std::int64_t>(group) * (128 + 1) * 4 * 2;
  p.sm_count = 132;
  p.blocks_per_sm = 2;
  return p;
}

SplitProblem mla_16_heads(std::int64_t batch, std::int64_t kv_len) {
  SplitProblem p;
  p.independent_blocks = batch;
  p.kv_len = kv_len;
  p.tile_tokens = 32;
  p.bytes_per_token = 576 * 2;
  p.v_dim = 512;
  p.partial_bytes_per_split = 16 * (512 + 1) * 4 * 2;
  p.sm_count = 132;
  p.blocks_per_sm = 2;
  return p;
}

}  // namespace

TEST_CASE("the split planner picks the measured fastest split counts of the H200 sweeps", "[cuda][split]") {
  // decode 32q/8kv B64 L32768: 1 split 4.57 TB/s, 2: 4.47, 4: 4.53.
  CHECK(choose_splits(decode_d128(64, 8, 32768, 4), 0).num_splits == 1);
  // decode 32q/8kv B1 L32768: 8 splits 2.33 TB/s, 12: 2.57, 16: 2.62, 19: 2.67, 24: 2.62, 32: 2.77, 47: 2.53.
  CHECK(choose_splits(decode_d128(1, 8, 32768, 4), 0).num_splits == 32);
  // MLA 16 heads B64 L32768: 2 splits 3.63 TB/s, 3: 3.66, 4: 4.37, 6: 3.46, 8: 4.30.
  CHECK(choose_splits(mla_16_heads(64, 32768), 0).num_splits == 4);
  // decode 32q/8kv B8 L32768: 2 splits (one block per SM) 3.83 TB/s beat 3 (some SMs with two) 3.48.
  const int b8 = choose_splits(decode_d128(8, 8, 32768, 4), 0).num_splits;
  CHECK(b8 != 3);
}

TEST_CASE("split plans cover the sequence in whole tiles", "[cuda][split]") {
  for (std::int64_t kv_len : {1, 63, 64, 65, 1000, 4096, 32768, 131071}) {
    for (int forced : {0, 1, 7, 12, 1024}) {
      const SplitProblem p = decode_d128(1, 1, kv_len, 32);
      const SplitChoice c = choose_splits(p, forced);
      INFO("kv_len " << kv_len << ", forced " << forced);
      CHECK(c.num_splits >= 1);
      CHECK(c.tokens_per_split % p.tile_tokens == 0);
      CHECK(static_cast<std::int64_t>(c.num_splits) * c.tokens_per_split >= kv_len);
      CHECK(static_cast<std::int64_t>(c.num_splits - 1) * c.tokens_per_split < kv_len);  // no empty split
      if (forced > 0) CHECK(c.num_splits <= forced);
    }
  }
}

TEST_CASE("the combine's load rounds follow its thread layout", "[cuda][split]") {
  using mhacfg::kernels::cuda::detail::combine_rounds;
  CHECK(combine_rounds(1, 128) == 1);
  CHECK(combine_rounds(64, 128) == 1);   // 8 groups of 32 threads, 8 splits each per round
  CHECK(combine_rounds(65, 128) == 2);
  CHECK(combine_rounds(128, 64) == 1);   // 16 groups of 16 threads
  CHECK(combine_rounds(16, 512) == 1);   // 2 groups of 128 threads
  CHECK(combine_rounds(17, 512) == 2);
  CHECK(combine_rounds(8, 2048) == 2);   // one group of 256 threads, two passes over the dims
}
