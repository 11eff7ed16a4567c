// Linear attention's core (linear_attention.hpp): the convolution of a token block over every
// channel, then the recurrences of every (sequence, value head) over that block, in one OpenMP
// region. A recurrence walks its state row by row (head_k_dim rows of head_v_dim floats, contiguous
// so the inner loops vectorise): Gated DeltaNet in two passes per token (decay and S^T k; then the
// update k delta^T fused with the read S^T q, which needs the updated state), Mamba2 in one.
//
// v1 (2026-12-01, development VM, one thread, `mhacfg bench`): the convolution's SiLU through Eigen's
//     vectorised exp instead of one std::exp per channel made a 128-token Gated DeltaNet prefill of
//     Qwen3-Next's layer 17.2 -> 13.7 ms and the 64 x 64 shapes 34-39 % faster (the exp had been a
//     quarter of the time at 8192 channels); q and k norms as SIMD reductions. A bf16 state is
//     widened into a scratch copy, worked on, rounded back: widening and rounding each row as the
//     first and last token's passes reach it (no separate sweeps) measured no faster for Gated DeltaNet
//     and 10-15 % slower for Mamba2 (rows of 64), so the sweeps stayed. What remains slow: a bf16
//     decode step runs at ~0.3 of the read ceiling (conversion and scratch passes, not bytes).
#include "mhacfg/kernels/cpu/linear_attention.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "shape_checks.hpp"

namespace mhacfg::kernels::cpu {

namespace {

// Channels per unit of the convolution's work: 256 floats of each tap's weights and inputs.
constexpr std::int64_t kConvChannels = 256;
constexpr std::int64_t kMaxConvKernel = 64;

template <class T>
float load(T v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return bf16_to_fp32(v);
}

template <class T>
T store(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return fp32_to_bf16(v);
}

// x sigmoid(x) over n values in place, with Eigen's vectorised exp (a scalar std::exp per channel
// took a quarter of a Gated DeltaNet prefill's time at 8192 channels).
void silu(float* v, std::int64_t n) {
  Eigen::Map<Eigen::ArrayXf> a(v, n);
  a = a / (1.0f + (-a).exp());
}

template <class StateT>
class Run {
 public:
  explicit Run(const LinearAttentionParams<StateT>& p)
      : p_(p), s_(p.shape), conv_dim_(s_.conv_dim()), key_dim_(s_.num_k_heads * s_.head_k_dim),
        block_(std::min(s_.q_len, kLinearAttentionTokenBlock)),
        conv_out_(new float[static_cast<std::size_t>(mul(s_.batch, block_, conv_dim_, "linear attention workspace"))]) {}

  void operator()() {
    const std::int64_t chunks = (conv_dim_ + kConvChannels - 1) / kConvChannels;
    const std::int64_t units = s_.batch * s_.num_v_heads;
#pragma omp parallel num_threads(p_.threads)
    {
      // One state's fp32 copy (bf16 states) and the normalised q and k of one token.
      std::vector<float> scratch(static_cast<std::size_t>(
          (std::is_same_v<StateT, float> ? 0 : s_.head_k_dim * s_.head_v_dim) + 2 * s_.head_k_dim + s_.head_v_dim));
      for (std::int64_t t0 = 0; t0 < s_.q_len; t0 += block_) {
        const std::int64_t n = std::min(block_, s_.q_len - t0);
        const bool last = t0 + n == s_.q_len;
#pragma omp for schedule(static)
        for (std::int64_t u = 0; u < s_.batch * chunks; ++u) convolve(u / chunks, (u % chunks) * kConvChannels, t0, n, last);
#pragma omp for schedule(static)
        for (std::int64_t u = 0; u < units; ++u) recur(u / s_.num_v_heads, u % s_.num_v_heads, t0, n, scratch.data());
      }
    }
  }

 private:
  // Channels [c0, c0 + kConvChannels) of sequence b for tokens t0 .. t0 + n - 1: SiLU(bias + the
  // taps over the last conv_kernel inputs), into the workspace; after the call's last block, the
  // last conv_kernel - 1 inputs into the conv state.
  void convolve(std::int64_t b, std::int64_t c0, std::int64_t t0, std::int64_t n, bool last) {
    const std::int64_t c1 = std::min(conv_dim_, c0 + kConvChannels), w = c1 - c0, K = s_.conv_kernel;
    const float* x = p_.x + b * s_.q_len * conv_dim_;
    StateT* cs = p_.conv_state + b * (K - 1) * conv_dim_;
    float widened[kConvChannels];
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t t = t0 + i;
      float* out = conv_out_.get() + (b * block_ + i) * conv_dim_ + c0;
      for (std::int64_t c = 0; c < w; ++c) out[c] = p_.conv_bias ? p_.conv_bias[c0 + c] : 0.0f;
      for (std::int64_t j = 0; j < K; ++j) {
        const std::int64_t tau = t - (K - 1) + j;  // this tap's input: a token of the call, or a kept one
        const float* wj = p_.conv_weight + j * conv_dim_ + c0;
        const float* in = nullptr;
        if (tau >= 0) {
          in = x + tau * conv_dim_ + c0;
        } else {
          const StateT* kept = cs + (K - 1 + tau) * conv_dim_ + c0;
          for (std::int64_t c = 0; c < w; ++c) widened[c] = load(kept[c]);
          in = widened;
        }
        for (std::int64_t c = 0; c < w; ++c) out[c] += wj[c] * in[c];
      }
      silu(out, w);
    }
    if (!last) return;
    // The new kept inputs: the last K - 1 of (kept, this call's tokens), oldest first. Rows move
    // forward in place (row r takes row r + q_len), so they are taken in increasing order.
    for (std::int64_t r = 0; r < K - 1; ++r) {
      const std::int64_t tau = s_.q_len - (K - 1) + r;
      StateT* dst = cs + r * conv_dim_ + c0;
      if (tau >= 0) {
        const float* src = x + tau * conv_dim_ + c0;
        for (std::int64_t c = 0; c < w; ++c) dst[c] = store<StateT>(src[c]);
      } else {
        const StateT* src = cs + (K - 1 + tau) * conv_dim_ + c0;
        std::copy_n(src, w, dst);
      }
    }
  }

  // Value head h of sequence b over tokens t0 .. t0 + n - 1.
  void recur(std::int64_t b, std::int64_t h, std::int64_t t0, std::int64_t n, float* scratch) {
    const std::int64_t dk = s_.head_k_dim, dv = s_.head_v_dim, cells = dk * dv;
    const std::int64_t kh = h / (s_.num_v_heads / s_.num_k_heads);
    StateT* stored = p_.state + (b * s_.num_v_heads + h) * cells;
    float* S = nullptr;
    float* qn = scratch;
    if constexpr (std::is_same_v<StateT, float>) {
      S = stored;
    } else {
      S = scratch;
      qn = scratch + cells;
      bf16_to_fp32(stored, S, cells);
    }
    float* kn = qn + dk;
    float* acc = kn + dk;  // S^T k, then delta (Gated DeltaNet)
    const bool mamba = s_.kind == LinearKind::mamba2, kda = s_.kind == LinearKind::kda;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t t = t0 + i, row = (b * s_.q_len + t) * s_.num_v_heads + h;
      const float* c = conv_out_.get() + (b * block_ + i) * conv_dim_;
      const float* q = c + kh * dk;
      const float* k = c + key_dim_ + kh * dk;
      const float* v = c + 2 * key_dim_ + h * dv;
      float* o = p_.o + row * dv;
      const float decay = kda ? 0.0f : std::exp(p_.decay[row]), beta = p_.beta[row];
      const float* channel_decay = kda ? p_.decay + row * dk : nullptr;  // KDA: log decay per key channel
      std::fill_n(o, dv, 0.0f);
      if (mamba) {  // h = decay h + dt B x^T; y = h^T C + D x
        for (std::int64_t r = 0; r < dk; ++r) {
          float* Sr = S + r * dv;
          const float bk = beta * k[r], cq = q[r];
#pragma omp simd
          for (std::int64_t j = 0; j < dv; ++j) {
            Sr[j] = decay * Sr[j] + bk * v[j];
            o[j] += cq * Sr[j];
          }
        }
        if (p_.skip) {
          const float d = p_.skip[h];
          for (std::int64_t j = 0; j < dv; ++j) o[j] += d * v[j];
        }
        continue;
      }
      normalise(q, qn, dk, 1.0f / std::sqrt(static_cast<float>(dk)));
      normalise(k, kn, dk, 1.0f);
      std::fill_n(acc, dv, 0.0f);
      for (std::int64_t r = 0; r < dk; ++r) {  // S = decay S (KDA: row r by its channel's decay); acc = S^T k
        float* Sr = S + r * dv;
        const float kr = kn[r], dr = kda ? std::exp(channel_decay[r]) : decay;
#pragma omp simd
        for (std::int64_t j = 0; j < dv; ++j) {
          Sr[j] *= dr;
          acc[j] += kr * Sr[j];
        }
      }
      for (std::int64_t j = 0; j < dv; ++j) acc[j] = beta * (v[j] - acc[j]);  // delta
      for (std::int64_t r = 0; r < dk; ++r) {  // S += k delta^T; o = S^T q
        float* Sr = S + r * dv;
        const float kr = kn[r], qr = qn[r];
#pragma omp simd
        for (std::int64_t j = 0; j < dv; ++j) {
          Sr[j] += kr * acc[j];
          o[j] += qr * Sr[j];
        }
      }
    }
    if constexpr (!std::is_same_v<StateT, float>) fp32_to_bf16(S, stored, cells);
  }

  // out = in / sqrt(sum in^2 + eps) * scale.
  static void normalise(const float* in, float* out, std::int64_t d, float scale) {
    float ss = 0;
#pragma omp simd reduction(+ : ss)
    for (std::int64_t r = 0; r < d; ++r) ss += in[r] * in[r];
    const float f = scale / std::sqrt(ss + static_cast<float>(kLinearAttentionNormEps));
    for (std::int64_t r = 0; r < d; ++r) out[r] = in[r] * f;
  }

  const LinearAttentionParams<StateT>& p_;
  const LinearAttentionShape& s_;
  const std::int64_t conv_dim_, key_dim_, block_;
  std::unique_ptr<float[]> conv_out_;  // [batch, block, conv_dim]
};

template <class StateT>
void run_typed(const LinearAttentionParams<StateT>& p) {
  constexpr DType dtype = std::is_same_v<StateT, float> ? DType::fp32 : DType::bf16;
  if (std::string why = linear_attention::unsupported_reason(p.shape, dtype); !why.empty())
    throw InputError("linear_attention: " + why);
  MHACFG_CHECK(p.x && p.decay && p.beta && p.conv_weight && p.state && p.o, "linear_attention: null tensor");
  MHACFG_CHECK(p.conv_state || p.shape.conv_kernel == 1, "linear_attention: null conv state");
  MHACFG_CHECK(!p.skip || p.shape.kind == LinearKind::mamba2, "linear_attention: D is Mamba2's");
  MHACFG_CHECK(p.threads >= 1, "linear_attention: threads must be at least 1");
  Run<StateT> call(p);
  call();
}

}  // namespace

std::string linear_attention::unsupported_reason(const LinearAttentionShape& s, DType state_dtype) {
  using detail::field_reason;
  if (state_dtype != DType::fp32 && state_dtype != DType::bf16)
    return "dtype = " + std::string(to_string(state_dtype)) + ": CPU linear attention keeps its state in fp32 or bf16 only";
  if (s.kind == LinearKind::short_conv || s.kind == LinearKind::lightning)
    return "kind = " + std::string(to_string(s.kind)) + ": mhacfg's CPU linear-attention kernel runs gated_deltanet, kda and mamba2";
  if (s.batch < 1) return field_reason("batch", s.batch, "must be at least 1");
  if (s.q_len < 1) return field_reason("q_len", s.q_len, "must be at least 1");
  if (s.num_k_heads < 1) return field_reason("num_k_heads", s.num_k_heads, "must be at least 1");
  if (s.num_v_heads < 1) return field_reason("num_v_heads", s.num_v_heads, "must be at least 1");
  if (s.num_v_heads % s.num_k_heads != 0)
    return field_reason("num_k_heads", s.num_k_heads, "must divide num_v_heads = " + std::to_string(s.num_v_heads));
  if (s.head_k_dim < 1 || s.head_k_dim > detail::kMaxHeadDim)
    return field_reason("head_k_dim", s.head_k_dim, "must be in 1.." + std::to_string(detail::kMaxHeadDim));
  if (s.head_v_dim < 1 || s.head_v_dim > detail::kMaxHeadDim)
    return field_reason("head_v_dim", s.head_v_dim, "must be in 1.." + std::to_string(detail::kMaxHeadDim));
  if (s.conv_kernel < 1 || s.conv_kernel > kMaxConvKernel)
    return field_reason("conv_kernel", s.conv_kernel, "must be in 1.." + std::to_string(kMaxConvKernel));
  return {};
}

void linear_attention::run(const LinearAttentionParams<float>& p) { run_typed(p); }
void linear_attention::run(const LinearAttentionParams<bf16_bits>& p) { run_typed(p); }

}  // namespace mhacfg::kernels::cpu
