// The read-ceiling kernel sums every element once, whatever the split into threads and streams.
#include "mhacfg/kernels/cpu/stream_read.hpp"

#include <catch2/catch.hpp>

#include <cmath>

#include "reference.hpp"

namespace mhacfg::kernels::cpu {
namespace {

TEST_CASE("stream_read_sum adds every element once", "[kernels][cpu][stream_read]") {
  // Counts below one vector per stream, whole vectors, and ragged tails after the streams.
  for (std::int64_t count : {0, 5, 127, 128, 129, 4096, 100003}) {
    const auto x = test::random_values(count, static_cast<std::uint32_t>(count + 3));
    double want = 0, magnitude = 0;
    for (float v : x) {
      want += v;
      magnitude += std::fabs(v);
    }
    for (int threads : {1, 2, 3}) {
      DYNAMIC_SECTION("count " << count << " threads " << threads) {
        const double got = stream_read_sum({x.data(), count, threads});
        // fp32 accumulators of at most `count` terms each: error below count * 2^-24 * sum |x|.
        CHECK(std::fabs(got - want) <= 1e-12 + magnitude * static_cast<double>(count) * 0x1p-24);
      }
    }
  }
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
