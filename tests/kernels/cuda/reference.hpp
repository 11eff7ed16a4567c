// Helpers of the [cuda] tests: bf16 data shared bit-exactly by host and device, float64 references
// of attention and GEMM, and the element-wise comparison (every element, named tolerances).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "mhacfg/kernels/cuda/bench.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

// A [cuda] test body starts with this: without a device it warns, prints the skip marker and returns.
// Catch2 2.13 has no SKIP, so the test passes; CTest reports it as Skipped because the marker matches
// the SKIP_REGULAR_EXPRESSION that tests/kernels/cuda/CMakeLists.txt gives every discovered test.
#define MHACFG_REQUIRE_CUDA_DEVICE()                            \
  do {                                                          \
    if (::mhacfg::kernels::cuda_device_count() == 0) {          \
      WARN("no CUDA device");                                   \
      std::cout << MHACFG_TEST_SKIPPED_MARKER << std::endl;     \
      return;                                                   \
    }                                                           \
  } while (0)
// Printed by a test that did not run; its first word is the SKIP_REGULAR_EXPRESSION of CMakeLists.txt.
#define MHACFG_TEST_SKIPPED_MARKER "MHACFG_TEST_SKIPPED: no CUDA device"

namespace mhacfg::test {

using kernels::cuda::Bf16;
using kernels::cuda::DeviceBuffer;

// Values drawn uniformly from [lo, hi) and rounded to bf16, so the reference sees exactly what the
// device sees. Never zeros-only; a fresh engine per test gives fresh data.
std::vector<float> random_bf16_values(std::size_t n, std::mt19937_64& rng, float lo, float hi);

// bf16 upload; the buffer is `pad_elements` longer than the data (to catch reads past the end with
// the sanitizer, not by luck).
DeviceBuffer upload_bf16(const std::vector<float>& values, std::size_t pad_elements = 0);
// A bf16 output of n elements, filled with NaN (0xFFFF) so unwritten elements fail the check.
DeviceBuffer poisoned_bf16(std::size_t n);
std::vector<float> download_bf16(const DeviceBuffer& buf, std::size_t n);
DeviceBuffer upload_i32(const std::vector<std::int32_t>& values);

// Attention in float64. Queries are the last q_len positions of each sequence's kv_lens[b] tokens.
// Element (b, t, h, d) of q is q[b * q_batch_stride + t * q_token_stride + h * q_head_stride + d];
// k and v likewise with their own token and head strides. Output: [batch, q_len, num_q_heads, v_dim].
struct AttentionProblem {
  int batch = 1;
  int q_len = 1;
  int num_q_heads = 1;
  int num_kv_heads = 1;
  int qk_dim = 128;
  int v_dim = 128;
  bool causal = false;
  double scale = 1.0;
  std::vector<int> kv_lens;  // one per sequence
  const float* q = nullptr;
  std::int64_t q_batch_stride = 0, q_token_stride = 0, q_head_stride = 0;
  const float* k = nullptr;
  std::int64_t k_batch_stride = 0, k_token_stride = 0, k_head_stride = 0;
  const float* v = nullptr;
  std::int64_t v_batch_stride = 0, v_token_stride = 0, v_head_stride = 0;
};
std::vector<double> attention_reference(const AttentionProblem& p);

// C[m, n] = A[m, k] B[k, n] in float64, and sum_k |A[i, k] B[k, j]| (for the accumulation bound).
void gemm_reference(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::vector<double>& c, std::vector<double>& abs_sum);

// Tolerances (absolute unless named otherwise), each with its reason:
// Attention: P is rounded to bf16 before P V (relative 2^-9 per weight, so at most 2^-9 max|v| in O)
// and O is rounded to bf16 (2^-9 |O| <= 2^-9 max|v|); fp32 accumulation and ex2.approx add < 1e-5.
// The tests draw |v| <= 1, so the bound is 2^-8; the tolerance is twice that.
constexpr double kAttentionTol = 2.0 * (1.0 / 512 + 1.0 / 512);
// GEMM: bf16 output rounding (relative 2^-9, taken as 2^-8) plus the fp32 accumulation bound
// k * 2^-24 * sum|a b| (any summation order cuBLASLt picks, split-K included).
constexpr double kGemmRelTol = 1.0 / 256;
double gemm_tolerance(double ref, double abs_sum, std::int64_t k);

// Compares every element: |actual - expected| <= tol[i] (NaN fails). Returns the number of
// failures and describes the first few in `report`.
std::size_t count_mismatches(const std::vector<float>& actual, const std::vector<double>& expected,
                             const std::vector<double>& tol, std::string& report);
std::size_t count_mismatches(const std::vector<float>& actual, const std::vector<double>& expected, double tol,
                             std::string& report);

// fp8 e4m3 inputs: fresh uniform values in [-range, range) quantised per tensor as fp8 checkpoints and
// vLLM's fp8 KV cache store them (scale = amax / 448, code = e4m3(x / scale), value = code x scale),
// converted by kernels/cpu/fp8.hpp, the project's one e4m3 conversion. `values` are what a kernel
// multiplies (the dequantised codes), so the float64 references see exactly the device's inputs.
struct Fp8Tensor {
  std::vector<std::uint8_t> codes;
  float scale = 1;
  std::vector<float> values;  // codes[i] x scale
};
Fp8Tensor quantize_e4m3(std::size_t n, std::mt19937_64& rng, float range);

}  // namespace mhacfg::test
