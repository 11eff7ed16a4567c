// The attention block (src/attention_block.cpp: QKV GEMM, attention, O GEMM) against a float64
// reference that rounds the two intermediates (qkv, attention output) to bf16 as the device does.
// Covers prefill with K/V from the QKV output, prefill over a longer cache, and split decode.
#include <catch2/catch.hpp>

#include <cmath>

#include "mhacfg/kernels/cuda/attention_block.hpp"
#include "reference.hpp"

namespace {

using namespace mhacfg;
using namespace mhacfg::test;
namespace block = mhacfg::kernels::cuda::attention_block;

std::vector<float> round_bf16(const std::vector<double>& x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = kernels::cuda::to_float(kernels::cuda::to_bf16(static_cast<float>(x[i])));
  return out;
}

void check_block(int batch, int q_len, int kv_len, int nq, int nkv, int d, int d_model, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t tokens = static_cast<std::int64_t>(batch) * q_len;
  const std::int64_t qkv_w = static_cast<std::int64_t>(nq + 2 * nkv) * d;
  const std::int64_t attn_w = static_cast<std::int64_t>(nq) * d;
  const float w1 = 1.f / std::sqrt(static_cast<float>(d_model)), w2 = 1.f / std::sqrt(static_cast<float>(attn_w));
  const auto x = random_bf16_values(static_cast<std::size_t>(tokens * d_model), rng, -1.f, 1.f);
  const auto wqkv = random_bf16_values(static_cast<std::size_t>(d_model * qkv_w), rng, -2 * w1, 2 * w1);
  const auto wo = random_bf16_values(static_cast<std::size_t>(attn_w * d_model), rng, -2 * w2, 2 * w2);
  const bool cache = kv_len > q_len;
  const std::int64_t cache_elems = cache ? static_cast<std::int64_t>(batch) * kv_len * nkv * d : 0;
  const auto kc = random_bf16_values(static_cast<std::size_t>(cache_elems), rng, -1.f, 1.f);
  const auto vc = random_bf16_values(static_cast<std::size_t>(cache_elems), rng, -1.f, 1.f);

  auto dx = upload_bf16(x), dwqkv = upload_bf16(wqkv), dwo = upload_bf16(wo);
  auto dkc = upload_bf16(kc, 64), dvc = upload_bf16(vc, 64);
  auto dqkv = poisoned_bf16(static_cast<std::size_t>(tokens * qkv_w));
  auto dattn = poisoned_bf16(static_cast<std::size_t>(tokens * attn_w));
  auto dy = poisoned_bf16(static_cast<std::size_t>(tokens * d_model));
  block::Params p;
  p.batch = batch;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.num_q_heads = nq;
  p.num_kv_heads = nkv;
  p.head_dim = d;
  p.d_model = d_model;
  p.causal = true;
  p.softmax_scale = 1.f / std::sqrt(static_cast<float>(d));
  p.x = dx.as<kernels::cuda::Bf16>();
  p.w_qkv = dwqkv.as<kernels::cuda::Bf16>();
  p.w_o = dwo.as<kernels::cuda::Bf16>();
  p.k_cache = dkc.as<kernels::cuda::Bf16>();
  p.v_cache = dvc.as<kernels::cuda::Bf16>();
  p.qkv = dqkv.as<kernels::cuda::Bf16>();
  p.attn = dattn.as<kernels::cuda::Bf16>();
  p.y = dy.as<kernels::cuda::Bf16>();
  kernels::cuda::DeviceBuffer ws(block::workspace_bytes(p));
  p.workspace = ws.get();
  p.workspace_bytes = ws.bytes();
  kernels::cuda::gemm::Runner runner;
  block::run(p, runner, nullptr);
  kernels::cuda::synchronize(nullptr);
  const auto y = download_bf16(dy, static_cast<std::size_t>(tokens * d_model));

  // Reference with the device's bf16 intermediates.
  std::vector<double> qkv_ref, unused, y_ref, y_abs;
  gemm_reference(x, wqkv, tokens, qkv_w, d_model, qkv_ref, unused);
  const auto qkv = round_bf16(qkv_ref);
  AttentionProblem ap;
  ap.batch = batch;
  ap.q_len = q_len;
  ap.num_q_heads = nq;
  ap.num_kv_heads = nkv;
  ap.qk_dim = ap.v_dim = d;
  ap.causal = true;
  ap.scale = 1.0 / std::sqrt(static_cast<double>(d));
  ap.kv_lens.assign(batch, kv_len);
  ap.q = qkv.data();
  ap.q_batch_stride = qkv_w * q_len;
  ap.q_token_stride = qkv_w;
  ap.q_head_stride = d;
  if (cache) {
    ap.k = kc.data();
    ap.v = vc.data();
    ap.k_token_stride = ap.v_token_stride = static_cast<std::int64_t>(nkv) * d;
    ap.k_batch_stride = ap.v_batch_stride = ap.k_token_stride * kv_len;
  } else {
    ap.k = qkv.data() + attn_w;
    ap.v = qkv.data() + attn_w + static_cast<std::int64_t>(nkv) * d;
    ap.k_token_stride = ap.v_token_stride = qkv_w;
    ap.k_batch_stride = ap.v_batch_stride = qkv_w * q_len;
  }
  ap.k_head_stride = ap.v_head_stride = d;
  const auto attn = round_bf16(attention_reference(ap));
  gemm_reference(attn, wo, tokens, d_model, attn_w, y_ref, y_abs);

  // y's tolerance: the O GEMM's own (rounding + accumulation) plus the attention error carried
  // through |w_o| (each attention output within 2 x kAttentionTol, the factor 2 for the one-ulp
  // differences in q, k, v that the device's own qkv rounding may have).
  std::vector<double> tol(y_ref.size());
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t j = 0; j < d_model; ++j) {
      double w_abs = 0;
      for (std::int64_t kk = 0; kk < attn_w; ++kk) w_abs += std::abs(wo[kk * d_model + j]);
      const std::size_t i = static_cast<std::size_t>(t * d_model + j);
      tol[i] = gemm_tolerance(y_ref[i], y_abs[i], attn_w) + 2 * kAttentionTol * w_abs;
    }
  std::string report;
  const std::size_t bad = count_mismatches(y, y_ref, tol, report);
  INFO("batch " << batch << " q_len " << q_len << " kv_len " << kv_len << " heads " << nq << "/" << nkv << " d " << d
                << " d_model " << d_model << "\n"
                << report);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("attention block matches the float64 reference", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  check_block(2, 70, 70, 4, 2, 64, 128, 1001);    // prefill, K/V from the QKV output
  check_block(2, 30, 90, 8, 2, 128, 256, 1002);   // prefill over a longer cache
  check_block(3, 1, 300, 8, 2, 128, 256, 1003);   // decode over the cache (split)
}

TEST_CASE("attention block says which shapes it does not run", "[cuda]") {
  AttentionShape s;
  s.q_len = 1;
  s.kv_len = 100;
  s.num_q_heads = 8;
  s.num_kv_heads = 2;
  s.head_dim = 128;
  s.v_head_dim = 128;
  CHECK(block::unsupported_reason(s, 1024).empty());
  CHECK(!block::unsupported_reason(s, 1001).empty());
  AttentionShape m = s;
  m.kv_lora_rank = 512;
  m.rope_head_dim = 64;
  CHECK(!block::unsupported_reason(m, 1024).empty());
}
