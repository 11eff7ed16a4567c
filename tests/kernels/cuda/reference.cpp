#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "mhacfg/kernels/cpu/fp8.hpp"

namespace mhacfg::test {

std::vector<float> random_bf16_values(std::size_t n, std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = kernels::cuda::to_float(kernels::cuda::to_bf16(dist(rng)));
  return v;
}

DeviceBuffer upload_bf16(const std::vector<float>& values, std::size_t pad_elements) {
  std::vector<Bf16> bits(values.size() + pad_elements);
  for (std::size_t i = 0; i < values.size(); ++i) bits[i] = kernels::cuda::to_bf16(values[i]);
  DeviceBuffer buf(bits.size() * sizeof(Bf16));
  kernels::cuda::copy_to_device(buf.get(), bits.data(), bits.size() * sizeof(Bf16));
  return buf;
}

DeviceBuffer poisoned_bf16(std::size_t n) {
  DeviceBuffer buf(n * sizeof(Bf16));
  kernels::cuda::fill_bytes(buf.get(), kernels::cuda::kPoisonByte, n * sizeof(Bf16), nullptr);
  kernels::cuda::synchronize(nullptr);
  return buf;
}

std::vector<float> download_bf16(const DeviceBuffer& buf, std::size_t n) {
  std::vector<Bf16> bits(n);
  kernels::cuda::copy_to_host(bits.data(), buf.get(), n * sizeof(Bf16));
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = kernels::cuda::to_float(bits[i]);
  return out;
}

DeviceBuffer upload_i32(const std::vector<std::int32_t>& values) {
  DeviceBuffer buf(values.size() * sizeof(std::int32_t));
  kernels::cuda::copy_to_device(buf.get(), values.data(), values.size() * sizeof(std::int32_t));
  return buf;
}

std::vector<double> attention_reference(const AttentionProblem& p) {
  const int group = p.num_q_heads / p.num_kv_heads;
  std::vector<double> out(static_cast<std::size_t>(p.batch) * p.q_len * p.num_q_heads * p.v_dim, 0.0);
  std::vector<double> score;
  for (int b = 0; b < p.batch; ++b) {
    const int kv_len = p.kv_lens.at(b);
    for (int t = 0; t < p.q_len; ++t) {
      const int pos = kv_len - p.q_len + t;  // this query's position
      const int keys = p.causal ? std::min(kv_len, pos + 1) : kv_len;
      for (int h = 0; h < p.num_q_heads; ++h) {
        const int kvh = h / group;
        double* o = &out[((static_cast<std::size_t>(b) * p.q_len + t) * p.num_q_heads + h) * p.v_dim];
        if (keys <= 0) continue;  // no visible key: the kernels write zeros
        const float* q = p.q + b * p.q_batch_stride + t * p.q_token_stride + h * p.q_head_stride;
        score.assign(keys, 0.0);
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < keys; ++j) {
          const float* k = p.k + b * p.k_batch_stride + j * p.k_token_stride + kvh * p.k_head_stride;
          double s = 0;
          for (int d = 0; d < p.qk_dim; ++d) s += static_cast<double>(q[d]) * k[d];
          score[j] = s * p.scale;
          mx = std::max(mx, score[j]);
        }
        double sum = 0;
        for (int j = 0; j < keys; ++j) {
          score[j] = std::exp(score[j] - mx);
          sum += score[j];
        }
        for (int j = 0; j < keys; ++j) {
          const float* v = p.v + b * p.v_batch_stride + j * p.v_token_stride + kvh * p.v_head_stride;
          const double w = score[j] / sum;
          for (int d = 0; d < p.v_dim; ++d) o[d] += w * v[d];
        }
      }
    }
  }
  return out;
}

void gemm_reference(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::vector<double>& c, std::vector<double>& abs_sum) {
  c.assign(static_cast<std::size_t>(m * n), 0.0);
  abs_sum.assign(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const double x = a[i * k + kk];
      for (std::int64_t j = 0; j < n; ++j) {
        const double y = x * b[kk * n + j];
        c[i * n + j] += y;
        abs_sum[i * n + j] += std::abs(y);
      }
    }
}

double gemm_tolerance(double ref, double abs_sum, std::int64_t k) {
  return kGemmRelTol * std::abs(ref) + static_cast<double>(k) * std::ldexp(1.0, -24) * abs_sum + 1e-30;
}

std::size_t count_mismatches(const std::vector<float>& actual, const std::vector<double>& expected,
                             const std::vector<double>& tol, std::string& report) {
  std::ostringstream os;
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double err = std::abs(static_cast<double>(actual.at(i)) - expected[i]);
    if (!(err <= tol[i])) {  // NaN fails too
      if (bad < 8) os << "  [" << i << "] got " << actual[i] << ", want " << expected[i] << " (tol " << tol[i] << ")\n";
      ++bad;
    }
    if (err > worst || std::isnan(err)) worst = err;
  }
  os << "  max abs error " << worst << " over " << expected.size() << " elements, " << bad << " out of tolerance\n";
  report = os.str();
  return bad;
}

std::size_t count_mismatches(const std::vector<float>& actual, const std::vector<double>& expected, double tol,
                             std::string& report) {
  return count_mismatches(actual, expected, std::vector<double>(expected.size(), tol), report);
}

Fp8Tensor quantize_e4m3(std::size_t n, std::mt19937_64& rng, float range) {
  std::uniform_real_distribution<float> u(-range, range);
  std::vector<float> x(n);
  float amax = 0;
  for (float& v : x) {
    v = u(rng);
    amax = std::max(amax, std::fabs(v));
  }
  Fp8Tensor t;
  t.scale = amax / kernels::cpu::kFp8E4m3Max;
  t.codes.resize(n);
  t.values.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    t.codes[i] = kernels::cpu::fp32_to_fp8_e4m3(x[i] / t.scale);
    t.values[i] = kernels::cpu::fp8_e4m3_to_fp32(t.codes[i]) * t.scale;
  }
  return t;
}

}  // namespace mhacfg::test
