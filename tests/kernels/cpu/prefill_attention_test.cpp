// prefill_attention against a float64 reference: every head_dim the issue names, MHA/GQA/MQA,
// causal and not, sliding windows, and lengths that are not multiples of any tile.
#include "mhacfg/kernels/cpu/prefill_attention.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "mhacfg/costmodel/errors.hpp"
#include "reference.hpp"
#include "tolerances.hpp"

namespace mhacfg::kernels::cpu {
namespace {

using test::chunked;
using test::describe;
using test::shape;

void check_prefill(const AttentionShape& s, int threads) {
  const std::uint32_t seed = static_cast<std::uint32_t>(s.q_len * 7919 + s.kv_len * 31 + s.head_dim);
  const auto q = test::random_values(s.batch * s.q_len * s.num_q_heads * s.head_dim, seed);
  const auto k = test::random_values(s.batch * s.kv_len * s.num_kv_heads * s.head_dim, seed + 1);
  const auto v = test::random_values(s.batch * s.kv_len * s.num_kv_heads * s.v_head_dim, seed + 2);
  std::vector<float> o(static_cast<std::size_t>(s.batch * s.q_len * s.num_q_heads * s.v_head_dim), NAN);

  PrefillAttentionParams p;
  p.shape = s;
  p.q = q.data();
  p.k = k.data();
  p.v = v.data();
  p.o = o.data();
  p.threads = threads;
  prefill_attention::run(p);

  const auto want = test::reference_attention(s, test::to_double(q), test::to_double(k), test::to_double(v),
                                              1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  test::check_every_element(o, want, test::kFp32AttentionTol);
}

TEST_CASE("prefill attention matches float64 for every head_dim, grouping and mask", "[kernels][cpu][prefill]") {
  const AttentionShape cases[] = {
      shape(1, 129, 129, 4, 4, 64, true),              // MHA, one row past a tile
      shape(1, 129, 129, 8, 2, 80, false),             // GQA, non-causal
      shape(1, 7, 300, 6, 1, 96, true),                // MQA, short queries after a prefix
      shape(1, 1000, 1000, 4, 2, 128, true),           // GQA, long, not a tile multiple
      shape(1, 300, 300, 2, 1, 256, true, 100),        // MQA, sliding window
      shape(1, 1, 1, 1, 1, 128, true),                 // the smallest problem
      shape(2, 257, 513, 8, 8, 64, true, 64),          // batch 2, window, prefix
      shape(1, 33, 1000, 8, 1, 64, false),             // MQA non-causal, many keys
      shape(1, 129, 129, 32, 4, 64, true),             // group of 8 (16 positions per block)
      shape(1, 200, 200, 4, 4, 96, true, 500),         // window longer than the sequence
      shape(1, 50, 80, 2, 2, 80, true, 1),             // window of 1: each query sees itself
      shape(1, 65, 65, 4, 2, 96, true, 0, 64),         // v_head_dim != head_dim
      shape(1, 1000, 1000, 2, 2, 80, false),           // long non-causal
      chunked(shape(1, 1000, 1000, 8, 2, 128, true), 300),  // chunks: query tiles across their boundaries
      chunked(shape(2, 257, 513, 4, 1, 64, true), 100),     // MQA, batch 2, chunks, a prefix
      chunked(shape(1, 200, 200, 4, 4, 96, true), 1),       // chunks of 1: each query sees itself
  };
  for (const AttentionShape& s : cases) {
    for (int threads : {1, 2}) {
      DYNAMIC_SECTION(describe(s) << " threads " << threads) { check_prefill(s, threads); }
    }
  }
}

TEST_CASE("prefill attention rejects what it cannot run", "[kernels][cpu][prefill]") {
  AttentionShape mla = shape(1, 16, 16, 16, 1, 576, true);
  mla.kv_lora_rank = 512;
  mla.rope_head_dim = 64;
  CHECK_THAT(prefill_attention::unsupported_reason(mla), Catch::Contains("kv_lora_rank = 512"));
  CHECK_THAT(prefill_attention::unsupported_reason(shape(1, 8, 8, 4, 4, 64, false, 16)),
             Catch::Contains("window = 16"));
  CHECK_THAT(prefill_attention::unsupported_reason(shape(1, 8, 8, 4, 4, 64, true, -1)), Catch::Contains("window = -1"));
  CHECK_THAT(prefill_attention::unsupported_reason(shape(1, 8, 8, 6, 4, 64, true)), Catch::Contains("num_kv_heads = 4"));
  CHECK_THAT(prefill_attention::unsupported_reason(shape(1, 9, 8, 4, 4, 64, true)), Catch::Contains("q_len = 9"));
  CHECK_THAT(prefill_attention::unsupported_reason(shape(1, 8, 8, 4, 4, 2048, true)), Catch::Contains("head_dim = 2048"));
  CHECK_THAT(prefill_attention::unsupported_reason(shape(0, 8, 8, 4, 4, 64, true)), Catch::Contains("batch = 0"));
  CHECK_THAT(prefill_attention::unsupported_reason(chunked(shape(1, 8, 8, 4, 4, 64, false), 4)),
             Catch::Contains("chunk = 4: chunked attention needs causal = true"));
  CHECK_THAT(prefill_attention::unsupported_reason(chunked(shape(1, 8, 8, 4, 4, 64, true, 2), 4)),
             Catch::Contains("chunk = 4: cannot be combined with window = 2"));
  CHECK_THAT(prefill_attention::unsupported_reason(chunked(shape(1, 8, 8, 4, 4, 64, true), -3)), Catch::Contains("chunk = -3"));
  for (std::int64_t head_dim : {64, 80, 96, 128, 256}) CHECK(prefill_attention::supports(shape(1, 7, 129, 8, 2, head_dim, true)));

  PrefillAttentionParams p;
  p.shape = shape(1, 8, 8, 4, 4, 64, false, 16);
  CHECK_THROWS_AS(prefill_attention::run(p), InputError);
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
