// bf16 conversions: round to nearest even on known bit patterns, exact widening, and the relative
// rounding bound on random values.
#include "mhacfg/kernels/cpu/bf16.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "reference.hpp"
#include "tolerances.hpp"

namespace mhacfg::kernels::cpu {
namespace {

float from_bits(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

TEST_CASE("fp32 to bf16 rounds to nearest, ties to even", "[kernels][cpu][bf16]") {
  CHECK(fp32_to_bf16(1.0f) == 0x3f80);
  CHECK(fp32_to_bf16(-2.0f) == 0xc000);
  CHECK(fp32_to_bf16(from_bits(0x3f808000u)) == 0x3f80);  // tie, kept bit even: stays
  CHECK(fp32_to_bf16(from_bits(0x3f818000u)) == 0x3f82);  // tie, kept bit odd: rounds up to even
  CHECK(fp32_to_bf16(from_bits(0x3f808001u)) == 0x3f81);  // just above the tie: up
  CHECK(fp32_to_bf16(from_bits(0x3f807fffu)) == 0x3f80);  // just below the tie: down
  CHECK(fp32_to_bf16(from_bits(0x7f7fffffu)) == 0x7f80);  // FLT_MAX rounds to +inf
  CHECK(fp32_to_bf16(std::numeric_limits<float>::infinity()) == 0x7f80);
  CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(from_bits(0x7f800001u)))));  // NaN payload in the low bits only
  CHECK(bf16_to_fp32(0x3f81) == from_bits(0x3f810000u));
}

TEST_CASE("bulk conversions agree with the scalar ones and stay within half a bf16 ulp", "[kernels][cpu][bf16]") {
  const auto x = test::random_values(1003, 7);
  std::vector<bf16_bits> h(x.size());
  std::vector<float> back(x.size());
  fp32_to_bf16(x.data(), h.data(), static_cast<std::int64_t>(x.size()));
  bf16_to_fp32(h.data(), back.data(), static_cast<std::int64_t>(x.size()));
  std::size_t failures = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (h[i] != fp32_to_bf16(x[i]) || back[i] != bf16_to_fp32(h[i])) ++failures;
    if (!(std::abs(back[i] - x[i]) <= test::kBf16RelativeRounding * std::abs(x[i]))) ++failures;
  }
  CHECK(failures == 0);
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
