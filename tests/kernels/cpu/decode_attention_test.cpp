// decode_attention against a float64 reference: fp32 and bf16 caches, q_len 1..4, every head_dim
// the issue names, MHA/GQA/MQA, windows, and KV lengths that are not multiples of any tile or chunk.
#include "mhacfg/kernels/cpu/decode_attention.hpp"

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

struct Inputs {
  std::vector<float> q, k, v;
};

Inputs make_inputs(const AttentionShape& s) {
  const std::uint32_t seed = static_cast<std::uint32_t>(s.q_len * 131 + s.kv_len * 17 + s.head_dim + s.num_kv_heads);
  return {test::random_values(s.batch * s.q_len * s.num_q_heads * s.head_dim, seed),
          test::random_values(s.batch * s.kv_len * s.num_kv_heads * s.head_dim, seed + 1),
          test::random_values(s.batch * s.kv_len * s.num_kv_heads * s.v_head_dim, seed + 2)};
}

template <class KvT>
std::vector<float> run_decode(const AttentionShape& s, const std::vector<float>& q, const std::vector<KvT>& k,
                              const std::vector<KvT>& v, int threads) {
  std::vector<float> o(static_cast<std::size_t>(s.batch * s.q_len * s.num_q_heads * s.v_head_dim), NAN);
  DecodeAttentionParams<KvT> p;
  p.shape = s;
  p.q = q.data();
  p.k = k.data();
  p.v = v.data();
  p.o = o.data();
  p.threads = threads;
  decode_attention::run(p);
  return o;
}

const AttentionShape kCases[] = {
    shape(1, 1, 1, 4, 4, 128, false),       // a single key
    shape(1, 1, 7, 8, 8, 64, false),        // MHA
    shape(2, 1, 129, 8, 2, 80, false),      // GQA, batch 2
    shape(1, 2, 1000, 6, 1, 96, true),      // MQA, q_len 2 causal
    shape(1, 3, 2500, 8, 2, 128, true),     // several chunks (split-KV combine), q_len 3
    shape(3, 4, 700, 4, 1, 256, true, 300), // window, q_len 4, batch 3
    shape(1, 4, 1500, 4, 4, 64, false),     // q_len 4 non-causal
    shape(1, 2, 3000, 4, 2, 64, true, 5),   // a tiny window: one chunk sees everything, others nothing
    shape(1, 4, 1000, 32, 4, 96, true),     // 32 rows per group: the most the register blocks take
    shape(1, 3, 900, 48, 4, 96, true),      // 36 rows per group: the Eigen path
    shape(1, 1, 300, 2, 1, 72, false),      // a head_dim that is not a multiple of 16
    shape(2, 3, 500, 6, 2, 100, true),      // 9 rows (blocks of 4, 4, 1) and a ragged head_dim
    shape(2, 1, 1337, 12, 3, 64, false),    // whole tiles swept in stride order, a ragged last tile
    chunked(shape(1, 4, 2500, 8, 2, 128, true), 2498),  // queries on both sides of a chunk boundary
    chunked(shape(2, 1, 3000, 4, 1, 64, true), 1024),   // MQA, the last chunk's 952 keys
};

TEST_CASE("decode attention with an fp32 cache matches float64", "[kernels][cpu][decode]") {
  for (const AttentionShape& s : kCases) {
    for (int threads : {1, 2}) {
      DYNAMIC_SECTION(describe(s) << " threads " << threads) {
        const Inputs in = make_inputs(s);
        const auto o = run_decode(s, in.q, in.k, in.v, threads);
        const auto want = test::reference_attention(s, test::to_double(in.q), test::to_double(in.k),
                                                    test::to_double(in.v), 1.0 / std::sqrt(double(s.head_dim)));
        test::check_every_element(o, want, test::kFp32AttentionTol);
      }
    }
  }
}

TEST_CASE("decode attention with a bf16 cache matches float64", "[kernels][cpu][decode][bf16]") {
  for (const AttentionShape& s : kCases) {
    DYNAMIC_SECTION(describe(s)) {
      const Inputs in = make_inputs(s);
      const auto k16 = test::to_bf16(in.k), v16 = test::to_bf16(in.v);
      const auto o = run_decode(s, in.q, k16, v16, 2);
      const double scale = 1.0 / std::sqrt(double(s.head_dim));
      // The arithmetic, on exactly the values the cache holds:
      test::check_every_element(
          o, test::reference_attention(s, test::to_double(in.q), test::bf16_as_double(k16), test::bf16_as_double(v16), scale),
          test::kFp32AttentionTol);
      // The storage rounding, against the unrounded values:
      test::check_every_element(
          o, test::reference_attention(s, test::to_double(in.q), test::to_double(in.k), test::to_double(in.v), scale),
          test::kBf16StorageTol);
    }
  }
}

TEST_CASE("decode attention rejects what it cannot run", "[kernels][cpu][decode]") {
  CHECK_THAT(decode_attention::unsupported_reason(shape(1, 9, 100, 4, 4, 64, true), DType::fp32),
             Catch::Contains("q_len = 9"));
  CHECK_THAT(decode_attention::unsupported_reason(shape(1, 1, 100, 4, 4, 64, true), DType::fp16),
             Catch::Contains("dtype = fp16"));
  CHECK_THAT(decode_attention::unsupported_reason(shape(1, 2, 100, 4, 4, 64, false, 8), DType::bf16),
             Catch::Contains("window = 8"));
  CHECK_THAT(decode_attention::unsupported_reason(chunked(shape(1, 2, 100, 4, 4, 64, false), 8), DType::bf16),
             Catch::Contains("chunk = 8"));
  CHECK_THAT(decode_attention::unsupported_reason(shape(1, 1, 100, 4, 3, 64, true), DType::fp32),
             Catch::Contains("num_kv_heads = 3"));
  AttentionShape mla = shape(1, 1, 100, 16, 1, 576, false);
  mla.kv_lora_rank = 512;
  mla.rope_head_dim = 64;
  CHECK_THAT(decode_attention::unsupported_reason(mla, DType::bf16), Catch::Contains("kv_lora_rank = 512"));
  for (std::int64_t head_dim : {64, 80, 96, 128, 256})
    for (std::int64_t q_len = 1; q_len <= kMaxDecodeQLen; ++q_len)
      CHECK(decode_attention::supports(shape(1, q_len, 1000, 32, 8, head_dim, true), DType::bf16));

  const AttentionShape bad = shape(1, 9, 100, 4, 4, 64, true);
  std::vector<float> q(9 * 4 * 64, 0.5f), kv(100 * 4 * 64, 0.5f), o(9 * 4 * 64);
  CHECK_THROWS_AS(run_decode(bad, q, kv, kv, 1), InputError);
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
