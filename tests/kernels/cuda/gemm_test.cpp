// cuBLASLt bf16 and fp8 GEMMs (src/gemm.cpp) against the float64 reference: row-major C = A B for
// shapes with small and odd m, n and k multiples of 8 (fp8: 16), and shapes that need split-K-sized
// accumulation.
#include <catch2/catch.hpp>

#include <cmath>

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
// e4m3 with per-tensor scales (quantize_e4m3, reference.hpp: amax / 448, kernels/cpu/fp8.hpp's
// conversion); the float64 reference multiplies the dequantised values (code x scale), so
// quantisation itself is no error here, only the GEMM's.
namespace {

// Tolerance of one fp8 GEMM output: bf16 output rounding (relative 2^-9, taken as 2^-8, as for bf16)
// plus an accumulation allowance of 2^-9 sum|a b| (2^-7 with fast accumulation). cuBLASLt does not
// state the width of the fp8 tensor-core accumulator, only that it is promoted "periodically" unless
// CUBLASLT_MATMUL_DESC_FAST_ACCUM is set (cublasLt.h), so the allowance is generous. It still catches
// a transposed operand or a lost scale: on these uniform inputs a typical |C| is sqrt(k) r_a r_b / 3
// against an allowance of k r_a r_b / 2048 (fast: / 512), 10-40x apart here (fast, k = 2048: ~4x), and
// a wrong operand errs by about |C| in most elements.
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
