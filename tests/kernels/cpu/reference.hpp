// Test helpers for the CPU kernels: attention shapes and their description, fresh random inputs, a
// float64 reference attention, and an element-wise comparison that checks every output element and
// reports the worst one.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cpu/bf16.hpp"

namespace mhacfg::kernels::cpu::test {

// An attention shape of the kernels' tests (v_head_dim 0: head_dim).
inline AttentionShape shape(std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t nq, std::int64_t nkv,
                            std::int64_t head_dim, bool causal, std::int64_t window = 0, std::int64_t v_head_dim = 0) {
  AttentionShape s;
  s.batch = batch;
  s.q_len = q_len;
  s.kv_len = kv_len;
  s.num_q_heads = nq;
  s.num_kv_heads = nkv;
  s.head_dim = head_dim;
  s.v_head_dim = v_head_dim > 0 ? v_head_dim : head_dim;
  s.causal = causal;
  s.window = window;
  return s;
}

// The shape with Llama 4's chunked attention: each query sees the keys of its chunk.
inline AttentionShape chunked(AttentionShape s, std::int64_t chunk) {
  s.chunk = chunk;
  return s;
}

inline std::string describe(const AttentionShape& s) {
  return "batch " + std::to_string(s.batch) + " q_len " + std::to_string(s.q_len) + " kv_len " +
         std::to_string(s.kv_len) + " heads " + std::to_string(s.num_q_heads) + "/" + std::to_string(s.num_kv_heads) +
         " head_dim " + std::to_string(s.head_dim) + "/" + std::to_string(s.v_head_dim) +
         (s.causal ? " causal" : " non-causal") + " window " + std::to_string(s.window) + " chunk " +
         std::to_string(s.chunk);
}

// Uniform in [-1, 1): never all zeros, never constant.
inline std::vector<float> random_values(std::int64_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

inline std::vector<bf16_bits> to_bf16(const std::vector<float>& v) {
  std::vector<bf16_bits> out(v.size());
  fp32_to_bf16(v.data(), out.data(), static_cast<std::int64_t>(v.size()));
  return out;
}

// The values a bf16 cache holds, widened back (what the kernel computes with).
inline std::vector<double> bf16_as_double(const std::vector<bf16_bits>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = bf16_to_fp32(v[i]);
  return out;
}

// Attention in float64. q [batch, q_len, num_q_heads, head_dim], k [batch, kv_len, num_kv_heads,
// head_dim], v [batch, kv_len, num_kv_heads, v_head_dim] -> [batch, q_len, num_q_heads, v_head_dim].
// Queries are the last q_len positions; causal queries see keys at or before their position, and
// with a window only the last `window` of those, with chunks only those of the query's chunk.
inline std::vector<double> reference_attention(const AttentionShape& s, const std::vector<double>& q,
                                               const std::vector<double>& k, const std::vector<double>& v,
                                               double scale) {
  const std::int64_t nq = s.num_q_heads, nkv = s.num_kv_heads, d = s.head_dim, dv = s.v_head_dim;
  const std::int64_t g = nq / nkv;
  std::vector<double> out(static_cast<std::size_t>(s.batch * s.q_len * nq * dv), 0.0);
  std::vector<double> p(static_cast<std::size_t>(s.kv_len));
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t i = 0; i < s.q_len; ++i)
      for (std::int64_t h = 0; h < nq; ++h) {
        const std::int64_t pos = s.kv_len - s.q_len + i, hk = h / g;
        const std::int64_t t_end = s.causal ? pos + 1 : s.kv_len;
        std::int64_t t_begin = 0;
        if (s.causal && s.window > 0) t_begin = std::max<std::int64_t>(0, pos - s.window + 1);
        if (s.causal && s.chunk > 0) t_begin = (pos / s.chunk) * s.chunk;
        const double* qr = &q[((b * s.q_len + i) * nq + h) * d];
        double m = -INFINITY;
        for (std::int64_t t = t_begin; t < t_end; ++t) {
          const double* kr = &k[((b * s.kv_len + t) * nkv + hk) * d];
          double dot = 0;
          for (std::int64_t x = 0; x < d; ++x) dot += qr[x] * kr[x];
          p[t] = dot * scale;
          m = std::max(m, p[t]);
        }
        double sum = 0;
        for (std::int64_t t = t_begin; t < t_end; ++t) sum += (p[t] = std::exp(p[t] - m));
        double* o = &out[((b * s.q_len + i) * nq + h) * dv];
        for (std::int64_t t = t_begin; t < t_end; ++t) {
          const double* vr = &v[((b * s.kv_len + t) * nkv + hk) * dv];
          for (std::int64_t x = 0; x < dv; ++x) o[x] += p[t] / sum * vr[x];
        }
      }
  return out;
}

// Checks |actual[i] - expected[i]| <= tolerance for every element; on failure names the count and
// the worst element.
inline void check_every_element(const std::vector<float>& actual, const std::vector<double>& expected,
                                double tolerance) {
  REQUIRE(actual.size() == expected.size());
  if (actual.empty()) return;  // nothing to compare (a conv state of a 1-tap kernel): the sizes agree
  std::size_t failures = 0, worst = 0;
  double worst_err = -1;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double err = std::abs(static_cast<double>(actual[i]) - expected[i]);
    if (!(err <= tolerance)) ++failures;  // NaN counts as a failure
    if (!(err <= worst_err)) {
      worst_err = err;
      worst = i;
    }
  }
  std::ostringstream what;
  what << failures << " of " << actual.size() << " elements off by more than " << tolerance << "; worst ["
       << worst << "]: got " << actual[worst] << ", want " << expected[worst] << " (error " << worst_err << ")";
  INFO(what.str());
  CHECK(failures == 0);
}

}  // namespace mhacfg::kernels::cpu::test
