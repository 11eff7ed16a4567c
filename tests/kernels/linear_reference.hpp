// The float64 reference of linear attention's core, shared by the CPU and CUDA kernels' tests: the
// causal depthwise convolution with SiLU, then each value head's recurrence (Gated DeltaNet: q and k
// L2-normalised, q scaled by 1 / sqrt(head_k_dim); S = exp(g) S; delta = beta (v - S^T k);
// S += k delta^T; o = S^T q. KDA: the same with row i of S decayed by exp(g_i), one g per key
// channel. Mamba2: h = exp(dt A) h + dt B x^T; y = h^T C + D x), written from those
// definitions and the layouts of mhacfg/kernels/cpu/linear_attention.hpp, not from either kernel.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg::test {

// A call's inputs as the kernel reads them (bf16 tensors as their exact values). conv_b and skip may
// be empty (no bias, no D).
struct LinearInputs {
  std::vector<float> x, decay, beta, conv_w, conv_b, skip, state, conv_state;
};

struct LinearResult {
  std::vector<double> o, state, conv_state;
};

// Round to nearest even at bf16 (8 significant bits), through fp32 as the kernels do.
inline double round_bf16(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return v;  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

// `round_block` > 0: the state is a bf16 state, rounded after every round_block tokens and at the
// end, and the kept convolution inputs are stored in bf16. 0: fp32 storage, nothing rounded.
inline LinearResult linear_attention_reference(const LinearAttentionShape& s, const LinearInputs& in,
                                               std::int64_t round_block, double norm_eps = 1e-6) {
  using Vec = std::vector<double>;
  const std::int64_t dk = s.head_k_dim, dv = s.head_v_dim, K = s.conv_kernel, C = s.conv_dim();
  const std::int64_t key_dim = s.num_k_heads * dk, ratio = s.num_v_heads / s.num_k_heads;
  const bool mamba = s.kind == LinearKind::mamba2, kda = s.kind == LinearKind::kda, bf16_state = round_block > 0;
  LinearResult r;
  r.o.assign(static_cast<std::size_t>(s.batch * s.q_len * s.num_v_heads * dv), 0.0);
  r.state.assign(in.state.begin(), in.state.end());
  r.conv_state.assign(in.conv_state.begin(), in.conv_state.end());
  const auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  for (std::int64_t b = 0; b < s.batch; ++b) {
    // Every input of the sequence, the kept ones first.
    std::vector<Vec> inputs;
    for (std::int64_t j = 0; j < K - 1; ++j)
      inputs.emplace_back(r.conv_state.begin() + (b * (K - 1) + j) * C, r.conv_state.begin() + (b * (K - 1) + j + 1) * C);
    for (std::int64_t t = 0; t < s.q_len; ++t)
      inputs.emplace_back(in.x.begin() + (b * s.q_len + t) * C, in.x.begin() + (b * s.q_len + t + 1) * C);
    for (std::int64_t t = 0; t < s.q_len; ++t) {
      Vec c(static_cast<std::size_t>(C));
      for (std::int64_t ch = 0; ch < C; ++ch) {
        double acc = in.conv_b.empty() ? 0.0 : in.conv_b[ch];
        for (std::int64_t j = 0; j < K; ++j) acc += double(in.conv_w[j * C + ch]) * inputs[t + j][ch];
        c[ch] = silu(acc);
      }
      for (std::int64_t h = 0; h < s.num_v_heads; ++h) {
        const std::int64_t kh = h / ratio, row = (b * s.q_len + t) * s.num_v_heads + h;
        Vec q(c.begin() + kh * dk, c.begin() + (kh + 1) * dk);
        Vec k(c.begin() + key_dim + kh * dk, c.begin() + key_dim + (kh + 1) * dk);
        const Vec v(c.begin() + 2 * key_dim + h * dv, c.begin() + 2 * key_dim + (h + 1) * dv);
        double* S = &r.state[(b * s.num_v_heads + h) * dk * dv];
        double* o = &r.o[row * dv];
        const double decay = kda ? 0.0 : std::exp(double(in.decay[row])), beta = in.beta[row];
        if (mamba) {
          for (std::int64_t i = 0; i < dk; ++i)
            for (std::int64_t j = 0; j < dv; ++j) S[i * dv + j] = decay * S[i * dv + j] + beta * k[i] * v[j];
          for (std::int64_t j = 0; j < dv; ++j) {
            for (std::int64_t i = 0; i < dk; ++i) o[j] += S[i * dv + j] * q[i];
            if (!in.skip.empty()) o[j] += double(in.skip[h]) * v[j];
          }
        } else {
          const auto l2 = [&](Vec& u, double scale) {
            double ss = 0;
            for (double e : u) ss += e * e;
            for (double& e : u) e *= scale / std::sqrt(ss + norm_eps);
          };
          l2(q, 1.0 / std::sqrt(double(dk)));
          l2(k, 1.0);
          for (std::int64_t i = 0; i < dk; ++i) {
            const double di = kda ? std::exp(double(in.decay[row * dk + i])) : decay;
            for (std::int64_t j = 0; j < dv; ++j) S[i * dv + j] *= di;
          }
          Vec delta(static_cast<std::size_t>(dv));
          for (std::int64_t j = 0; j < dv; ++j) {
            double sk = 0;
            for (std::int64_t i = 0; i < dk; ++i) sk += S[i * dv + j] * k[i];
            delta[j] = beta * (v[j] - sk);
          }
          for (std::int64_t i = 0; i < dk; ++i)
            for (std::int64_t j = 0; j < dv; ++j) S[i * dv + j] += k[i] * delta[j];
          for (std::int64_t j = 0; j < dv; ++j)
            for (std::int64_t i = 0; i < dk; ++i) o[j] += S[i * dv + j] * q[i];
        }
      }
      const bool block_end = bf16_state && ((t + 1) % round_block == 0 || t + 1 == s.q_len);
      if (block_end)
        for (std::int64_t i = b * s.num_v_heads * dk * dv; i < (b + 1) * s.num_v_heads * dk * dv; ++i)
          r.state[i] = round_bf16(r.state[i]);
    }
    for (std::int64_t j = 0; j < K - 1; ++j)  // the last K - 1 inputs
      for (std::int64_t ch = 0; ch < C; ++ch) {
        const double v = inputs[s.q_len + j][ch];
        r.conv_state[(b * (K - 1) + j) * C + ch] = bf16_state ? round_bf16(v) : v;
      }
  }
  return r;
}

}  // namespace mhacfg::test
