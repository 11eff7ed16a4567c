// cuBLASLt bf16 and fp8 GEMMs (src/gemm.cpp) against the float64 reference: row-major C = A B for
// shapes with small and odd m, n and k multiples of 8 (fp8: 16), and shapes that need split-K-sized
// accumulation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "mhacfg/kernels/cpu/fp8.hpp"
#include "mhacfg/kernels/cuda/gemm.hpp"
#include "reference.hpp"

namespace {

using namespace mhacfg;
using namespace mhacfg::test;
namespace gemm = mhacfg::kernels::cuda::gemm;

}  // namespace

TEST_CASE("cuBLASLt GEMM matches the float64 reference", "[cuda][sanitize][gemm]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 8, 8}, {77, 136, 264}, {256, 512, 1024}, {5, 4096, 128}, {33, 64, 4096}};
  gemm::Runner runner;
  std::uint64_t seed = 900;
  for (const Shape& s : shapes) {
    std::mt19937_64 rng(++seed);
    const auto a = random_bf16_values(static_cast<std::size_t>(s.m * s.k), rng, -1.f, 1.f);
    const auto b = random_bf16_values(static_cast<std::size_t>(s.k * s.n), rng, -1.f, 1.f);
    auto da = upload_bf16(a), db = upload_bf16(b);
    auto dc = poisoned_bf16(static_cast<std::size_t>(s.m * s.n));
    runner.run(gemm::Params{s.m, s.n, s.k, da.as<kernels::cuda::Bf16>(), db.as<kernels::cuda::Bf16>(),
                            dc.as<kernels::cuda::Bf16>()},
               nullptr);
    kernels::cuda::synchronize(nullptr);
    const auto c = download_bf16(dc, static_cast<std::size_t>(s.m * s.n));
    std::vector<double> ref, abs_sum;
    gemm_reference(a, b, s.m, s.n, s.k, ref, abs_sum);
    std::vector<double> tol(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) tol[i] = gemm_tolerance(ref[i], abs_sum[i], s.k);
    std::string report;
    const std::size_t bad = count_mismatches(c, ref, tol, report);
    INFO("m " << s.m << " n " << s.n << " k " << s.k << "\n" << report);
    CHECK(bad == 0);
  }
}

TEST_CASE("GEMM says which shapes it does not run", "[cuda][gemm]") {
  CHECK(gemm::unsupported_reason(GemmShape{3, 16, 24}).empty());
  CHECK(!gemm::unsupported_reason(GemmShape{3, 17, 24}).empty());
  CHECK(!gemm::unsupported_reason(GemmShape{3, 16, 20}).empty());
  CHECK(!gemm::unsupported_reason(GemmShape{0, 16, 16}).empty());
}

// fp8 e4m3 GEMM (src/gemm.cpp, cuBLASLt's TN fp8 path): fresh random values quantised on the host to
// e4m3 with per-tensor scales (amax / 448, as a per-tensor fp8 checkpoint stores them), converted by
// kernels/cpu/fp8.hpp (the project's one e4m3 conversion); the float64 reference multiplies the
// dequantised values (code x scale), so quantisation itself is no error here, only the GEMM's.
namespace {

struct Fp8Tensor {
  std::vector<kernels::cpu::fp8_e4m3> codes;
  float scale = 1;
  std::vector<float> values;  // codes[i] x scale: what the GEMM multiplies
};

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

// Tolerance of one fp8 GEMM output: bf16 output rounding (relative 2^-9, taken as 2^-8, as for bf16)
// plus an accumulation allowance of 2^-9 sum|a b| (2^-7 with fast accumulation). cuBLASLt does not
// state the width of the fp8 tensor-core accumulator, only that it is promoted "periodically" unless
// CUBLASLT_MATMUL_DESC_FAST_ACCUM is set (cublasLt.h), so the allowance is generous; on these inputs a
// transposed operand or a missing scale errs by ~10x more (|C| ~ sqrt(k) E|ab| against k E|ab| / 512).
double fp8_gemm_tolerance(double ref, double abs_sum, bool fast_accum) {
  return kGemmRelTol * std::abs(ref) + std::ldexp(1.0, fast_accum ? -7 : -9) * abs_sum + 1e-30;
}

}  // namespace

TEST_CASE("cuBLASLt fp8 e4m3 GEMM matches the float64 reference on the dequantised inputs", "[cuda][sanitize][gemm]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  struct Shape {
    std::int64_t m, n, k;
    bool fast_accum;
  };
  // m = 1 and 5: decode steps; odd m; n and k multiples of 16; k = 4096 for a long accumulation.
  const Shape shapes[] = {{1, 16, 16, false},    {77, 144, 272, false}, {256, 512, 1024, false},
                          {5, 4096, 128, false}, {33, 64, 4096, false}, {128, 256, 2048, true}};
  gemm::Runner runner;
  std::uint64_t seed = 2800;
  for (const Shape& s : shapes) {
    std::mt19937_64 rng(++seed);
    const Fp8Tensor a = quantize_e4m3(static_cast<std::size_t>(s.m * s.k), rng, 3.0f);    // [m, k]
    const Fp8Tensor bt = quantize_e4m3(static_cast<std::size_t>(s.n * s.k), rng, 0.5f);   // [n, k]: B transposed
    std::vector<float> b(static_cast<std::size_t>(s.k * s.n));                            // [k, n] for the reference
    for (std::int64_t j = 0; j < s.n; ++j)
      for (std::int64_t kk = 0; kk < s.k; ++kk) b[kk * s.n + j] = bt.values[j * s.k + kk];
    kernels::cuda::DeviceBuffer da(a.codes.size()), db(bt.codes.size()), dscales(2 * sizeof(float));
    kernels::cuda::copy_to_device(da.get(), a.codes.data(), a.codes.size());
    kernels::cuda::copy_to_device(db.get(), bt.codes.data(), bt.codes.size());
    const float scales[2] = {a.scale, bt.scale};
    kernels::cuda::copy_to_device(dscales.get(), scales, sizeof scales);
    auto dc = poisoned_bf16(static_cast<std::size_t>(s.m * s.n));
    gemm::Fp8Params p;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.a = da.as<kernels::cuda::Fp8E4m3>();
    p.b_t = db.as<kernels::cuda::Fp8E4m3>();
    p.a_scale = dscales.as<float>();
    p.b_scale = dscales.as<float>() + 1;
    p.c = dc.as<kernels::cuda::Bf16>();
    p.fast_accum = s.fast_accum;
    runner.run(p, nullptr);
    kernels::cuda::synchronize(nullptr);
    const auto c = download_bf16(dc, static_cast<std::size_t>(s.m * s.n));
    std::vector<double> ref, abs_sum;
    gemm_reference(a.values, b, s.m, s.n, s.k, ref, abs_sum);
    std::vector<double> tol(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) tol[i] = fp8_gemm_tolerance(ref[i], abs_sum[i], s.fast_accum);
    std::string report;
    const std::size_t bad = count_mismatches(c, ref, tol, report);
    INFO("m " << s.m << " n " << s.n << " k " << s.k << (s.fast_accum ? " fast accumulation" : "") << "\n" << report);
    CHECK(bad == 0);
  }
}

TEST_CASE("fp8 GEMM says which shapes it does not run, and the harness runs fp8 GEMM records", "[cuda][gemm]") {
  CHECK(gemm::unsupported_reason_fp8(GemmShape{1, 4096, 4096}).empty());
  CHECK(gemm::unsupported_reason_fp8(GemmShape{3, 16, 16}).empty());
  CHECK(gemm::unsupported_reason_fp8(GemmShape{3, 16, 24}).find("multiples of 16") != std::string::npos);  // k
  CHECK(!gemm::unsupported_reason_fp8(GemmShape{3, 24, 16}).empty());                                      // n
  CHECK(!gemm::unsupported_reason_fp8(GemmShape{0, 16, 16}).empty());
  MeasurementRecord r;
  r.shape = GemmOp{GemmShape{64, 6144, 4096}};
  r.dtype = DType::fp8;
  CHECK(r.op_class() == "gemm/fp8");
  CHECK(kernels::cuda_unsupported_reason(r).empty());
  r.shape = GemmOp{GemmShape{64, 6144, 4104}};  // k = 4104: a multiple of 8, not of 16
  CHECK(kernels::cuda_unsupported_reason(r).find("multiples of 16") != std::string::npos);
  r.dtype = DType::nvfp4;
  CHECK(kernels::cuda_unsupported_reason(r).find("nvfp4") != std::string::npos);
}
