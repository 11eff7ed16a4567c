// cuBLASLt bf16 GEMM (src/gemm.cpp) against the float64 reference: row-major C = A B for shapes
// with small and odd m, n and k multiples of 8, and a shape that needs split-K-sized accumulation.
#include <catch2/catch.hpp>

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
