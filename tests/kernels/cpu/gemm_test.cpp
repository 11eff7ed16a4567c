// gemm against float64, every element within the fp32 dot-product rounding bound.
#include "mhacfg/kernels/cpu/gemm.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "mhacfg/costmodel/errors.hpp"
#include "reference.hpp"
#include "tolerances.hpp"

namespace mhacfg::kernels::cpu {
namespace {

TEST_CASE("gemm matches float64 within the fp32 rounding bound", "[kernels][cpu][gemm]") {
  // m <= 16 takes the streaming path, larger m Eigen's GEMM.
  const GemmShape cases[] = {{1, 1, 1}, {7, 129, 33}, {8, 1000, 300}, {16, 200, 1000}, {17, 64, 64},
                             {129, 7, 300}, {1000, 96, 80}, {64, 576, 1}, {257, 255, 513}};
  for (const GemmShape& g : cases) {
    for (int threads : {1, 2}) {
      DYNAMIC_SECTION("m " << g.m << " n " << g.n << " k " << g.k << " threads " << threads) {
        const auto a = test::random_values(g.m * g.k, static_cast<std::uint32_t>(g.m + g.k));
        const auto b = test::random_values(g.k * g.n, static_cast<std::uint32_t>(g.n * 3 + g.k));
        std::vector<float> c(static_cast<std::size_t>(g.m * g.n), NAN);
        gemm::run({g, a.data(), b.data(), c.data(), threads});

        std::vector<double> want(c.size()), bound(c.size());
        for (std::int64_t i = 0; i < g.m; ++i)
          for (std::int64_t j = 0; j < g.n; ++j) {
            double sum = 0, abs_sum = 0;
            for (std::int64_t x = 0; x < g.k; ++x) {
              const double term = double(a[i * g.k + x]) * double(b[x * g.n + j]);
              sum += term;
              abs_sum += std::abs(term);
            }
            want[i * g.n + j] = sum;
            bound[i * g.n + j] = g.k * test::kFp32UnitRoundoff * abs_sum;
          }
        std::size_t failures = 0;
        for (std::size_t i = 0; i < c.size(); ++i)
          if (!(std::abs(c[i] - want[i]) <= bound[i])) ++failures;
        CHECK(failures == 0);
      }
    }
  }
}

TEST_CASE("gemm rejects empty shapes", "[kernels][cpu][gemm]") {
  CHECK(gemm::supports({4096, 4096, 4096}));
  CHECK_THAT(gemm::unsupported_reason({0, 4, 4}), Catch::Contains("m = 0"));
  CHECK_THAT(gemm::unsupported_reason({4, -1, 4}), Catch::Contains("n = -1"));
  CHECK_THAT(gemm::unsupported_reason({4, 4, 0}), Catch::Contains("k = 0"));
  CHECK_THROWS_AS(gemm::run({{4, 4, 0}, nullptr, nullptr, nullptr, 1}), InputError);
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
