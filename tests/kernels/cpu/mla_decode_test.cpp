// mla_decode against a float64 reference (the latent as K, its first kv_lora_rank dims as V):
// 16 and 128 query heads, fp32 and bf16 latents, q_len 1..4, small ranks to keep the test fast.
#include "mhacfg/kernels/cpu/mla_decode.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "mhacfg/costmodel/errors.hpp"
#include "reference.hpp"
#include "tolerances.hpp"

namespace mhacfg::kernels::cpu {
namespace {

AttentionShape mla_shape(std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t heads,
                         std::int64_t rank, std::int64_t rope, bool causal) {
  AttentionShape s;
  s.batch = batch;
  s.q_len = q_len;
  s.kv_len = kv_len;
  s.num_q_heads = heads;
  s.num_kv_heads = 1;
  s.kv_lora_rank = rank;
  s.rope_head_dim = rope;
  s.head_dim = rank + rope;
  s.v_head_dim = rank;
  s.causal = causal;
  return s;
}

// The reference sees MLA as MQA: K = the latent [batch, kv_len, 1, rank + rope], V = its first rank dims.
std::vector<double> reference_mla(const AttentionShape& s, const std::vector<double>& q, const std::vector<double>& latent) {
  const std::int64_t dim = s.qk_dim();
  std::vector<double> v(static_cast<std::size_t>(s.batch * s.kv_len * s.kv_lora_rank));
  for (std::int64_t t = 0; t < s.batch * s.kv_len; ++t)
    for (std::int64_t x = 0; x < s.kv_lora_rank; ++x) v[t * s.kv_lora_rank + x] = latent[t * dim + x];
  return test::reference_attention(s, q, latent, v, 1.0 / std::sqrt(static_cast<double>(dim)));
}

template <class LatentT>
std::vector<float> run_mla(const AttentionShape& s, const std::vector<float>& q, const std::vector<LatentT>& latent,
                           int threads) {
  std::vector<float> o(static_cast<std::size_t>(s.batch * s.q_len * s.num_q_heads * s.kv_lora_rank), NAN);
  MlaDecodeParams<LatentT> p;
  p.shape = s;
  p.q = q.data();
  p.latent = latent.data();
  p.o = o.data();
  p.threads = threads;
  mla_decode::run(p);
  return o;
}

TEST_CASE("MLA decode matches float64 for fp32 and bf16 latents", "[kernels][cpu][mla]") {
  const AttentionShape cases[] = {
      mla_shape(1, 1, 1, 16, 32, 16, false),
      mla_shape(1, 1, 129, 16, 64, 32, false),
      mla_shape(2, 2, 1500, 16, 48, 16, true),   // several chunks, q_len 2
      mla_shape(1, 4, 1100, 128, 32, 16, true),  // 128 heads, q_len 4
      mla_shape(1, 3, 77, 128, 64, 0, false),    // no rope part, non-causal
  };
  for (const AttentionShape& s : cases) {
    DYNAMIC_SECTION("batch " << s.batch << " q_len " << s.q_len << " kv_len " << s.kv_len << " heads "
                             << s.num_q_heads << " rank " << s.kv_lora_rank << "+" << s.rope_head_dim) {
      const std::uint32_t seed = static_cast<std::uint32_t>(s.kv_len * 13 + s.num_q_heads + s.q_len);
      const auto q = test::random_values(s.batch * s.q_len * s.num_q_heads * s.qk_dim(), seed);
      const auto latent = test::random_values(s.batch * s.kv_len * s.qk_dim(), seed + 1);
      const auto qd = test::to_double(q);

      test::check_every_element(run_mla(s, q, latent, 2), reference_mla(s, qd, test::to_double(latent)),
                                test::kFp32AttentionTol);
      test::check_every_element(run_mla(s, q, latent, 1), reference_mla(s, qd, test::to_double(latent)),
                                test::kFp32AttentionTol);

      const auto latent16 = test::to_bf16(latent);
      const auto o16 = run_mla(s, q, latent16, 2);
      test::check_every_element(o16, reference_mla(s, qd, test::bf16_as_double(latent16)), test::kFp32AttentionTol);
      test::check_every_element(o16, reference_mla(s, qd, test::to_double(latent)), test::kBf16StorageTol);
    }
  }
}

TEST_CASE("MLA decode rejects what it cannot run", "[kernels][cpu][mla]") {
  CHECK(mla_decode::supports(mla_shape(1, 1, 4096, 128, 512, 64, false), DType::bf16));
  CHECK(mla_decode::supports(mla_shape(1, 8, 4096, 16, 512, 64, true), DType::fp32));
  CHECK_THAT(mla_decode::unsupported_reason(mla_shape(1, 9, 100, 16, 512, 64, true), DType::fp32),
             Catch::Contains("q_len = 9"));
  CHECK_THAT(mla_decode::unsupported_reason(mla_shape(1, 1, 100, 16, 512, 64, true), DType::int8),
             Catch::Contains("dtype = int8"));
  CHECK_THAT(mla_decode::unsupported_reason(mla_shape(1, 1, 100, 16, 4000, 64, true), DType::fp32),
             Catch::Contains("kv_lora_rank = 4000"));
  AttentionShape gqa = mla_shape(1, 1, 100, 16, 0, 0, true);
  gqa.head_dim = gqa.v_head_dim = 128;
  CHECK_THAT(mla_decode::unsupported_reason(gqa, DType::fp32), Catch::Contains("kv_lora_rank = 0"));
  std::vector<float> q(16 * 128, 0.5f), latent(100 * 128, 0.5f);
  CHECK_THROWS_AS(run_mla(gqa, q, latent, 1), InputError);
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
