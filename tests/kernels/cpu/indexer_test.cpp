// The lightning indexer's CPU kernel and its fp8 E4M3 storage: every code of the format, rounding
// against a brute-force nearest code, block quantisation, and the indexer against a float64
// reference of I(t, s) = sum_h w_h ReLU(q_h . k_s) on the same fp8 inputs: every selected position
// and score of every query checked, outputs poisoned before each run, decode and causal prefill,
// head widths of one and two scale blocks, several passes through the workspace, 1 and 2 threads.
#include "mhacfg/kernels/cpu/indexer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <functional>
#include <numeric>
#include <set>
#include <vector>

#include "mhacfg/costmodel/errors.hpp"
#include "../indexer_reference.hpp"
#include "reference.hpp"
#include "tolerances.hpp"

namespace mhacfg::kernels::cpu {
namespace {

TEST_CASE("fp8 E4M3 codes decode to the format's values", "[kernels][cpu][fp8]") {
  CHECK(fp8_e4m3_to_fp32(0x00) == 0.0f);
  CHECK(std::signbit(fp8_e4m3_to_fp32(0x80)));
  CHECK(fp8_e4m3_to_fp32(0x38) == 1.0f);              // exponent 7 (bias 7), mantissa 0
  CHECK(fp8_e4m3_to_fp32(0x39) == 1.125f);            // one mantissa step: 2^-3
  CHECK(fp8_e4m3_to_fp32(0xc0) == -2.0f);
  CHECK(fp8_e4m3_to_fp32(0x7e) == 448.0f);            // the largest finite value
  CHECK(fp8_e4m3_to_fp32(0x08) == std::ldexp(1.0f, -6));  // the smallest normal
  CHECK(fp8_e4m3_to_fp32(0x01) == std::ldexp(1.0f, -9));  // the smallest subnormal
  CHECK(fp8_e4m3_to_fp32(0x07) == 7.0f * std::ldexp(1.0f, -9));
  CHECK(std::isnan(fp8_e4m3_to_fp32(0x7f)));
  CHECK(std::isnan(fp8_e4m3_to_fp32(0xff)));
  // Every finite code round-trips, and the codes of one sign are in increasing order of value.
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;
    INFO("code " << c);
    CHECK(fp32_to_fp8_e4m3(fp8_e4m3_to_fp32(static_cast<fp8_e4m3>(c))) == c);
    if ((c & 0x7f) > 0) CHECK(std::fabs(fp8_e4m3_to_fp32(static_cast<fp8_e4m3>(c))) > std::fabs(fp8_e4m3_to_fp32(static_cast<fp8_e4m3>(c - 1))));
  }
}

TEST_CASE("fp32 to fp8 E4M3 rounds to the nearest code, ties to even, and saturates", "[kernels][cpu][fp8]") {
  // Brute force: the nearest finite code by value; of two equally near, the one with an even mantissa.
  const auto nearest = [](float x) {
    int best = -1;
    double best_d = std::numeric_limits<double>::infinity();
    for (int c = 0; c < 256; ++c) {
      if ((c & 0x7f) == 0x7f || std::signbit(x) != ((c & 0x80) != 0)) continue;
      const double d = std::fabs(static_cast<double>(fp8_e4m3_to_fp32(static_cast<fp8_e4m3>(c))) - x);
      if (d < best_d || (d == best_d && c % 2 == 0)) best = c, best_d = d;
    }
    return best;
  };
  std::vector<float> xs = test::random_values(4000, 5);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = std::ldexp(xs[i], static_cast<int>(i % 22) - 12);  // 2^-13 .. 2^9
  for (float mid : {1.0625f, 1.1875f, 3.0f * std::ldexp(1.0f, -10), 5.0f * std::ldexp(1.0f, -10), 432.0f}) {
    xs.push_back(mid);  // ties: halfway between neighbours (1 + 1/16: to 1; 1 + 3/16: to 1.25; subnormals; 432)
    xs.push_back(-mid);
  }
  for (float x : xs) {
    if (std::fabs(x) >= kFp8E4m3Max) continue;
    INFO("x = " << x);
    CHECK(static_cast<int>(fp32_to_fp8_e4m3(x)) == nearest(x));
  }
  CHECK(fp32_to_fp8_e4m3(1.0625f) == 0x38);
  CHECK(fp32_to_fp8_e4m3(1.1875f) == 0x3a);
  CHECK(fp32_to_fp8_e4m3(1000.0f) == 0x7e);
  CHECK(fp32_to_fp8_e4m3(-1e30f) == 0xfe);
  CHECK((fp32_to_fp8_e4m3(NAN) & 0x7f) == 0x7f);
}

TEST_CASE("fp8 block quantisation keeps every value within half a step", "[kernels][cpu][fp8]") {
  const std::int64_t rows = 3, dim = 200;  // two blocks per row, the second of 72 values
  std::vector<float> x = test::random_values(rows * dim, 9);
  for (std::int64_t c = 0; c < dim; ++c) x[static_cast<std::size_t>(dim + c)] *= 1e-3f;  // a row of small values
  std::vector<fp8_e4m3> codes(x.size());
  std::vector<float> scales(static_cast<std::size_t>(rows * 2));
  quantize_fp8_blocks(x.data(), rows, dim, codes.data(), scales.data());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t b = 0; b < 2; ++b) {
      float amax = 0;
      for (std::int64_t c = b * 128; c < std::min<std::int64_t>(dim, b * 128 + 128); ++c) amax = std::max(amax, std::fabs(x[r * dim + c]));
      CHECK(scales[r * 2 + b] == Approx(amax / kFp8E4m3Max).epsilon(1e-6));
      for (std::int64_t c = b * 128; c < std::min<std::int64_t>(dim, b * 128 + 128); ++c) {
        const double v = x[r * dim + c], got = fp8_e4m3_to_fp32(codes[r * dim + c]) * static_cast<double>(scales[r * 2 + b]);
        // 3 mantissa bits: half a step is 2^-4 of the value (normals), 2^-10 of the scale (subnormals).
        CHECK(std::fabs(got - v) <= std::max(std::fabs(v) / 16.0, std::ldexp(static_cast<double>(scales[r * 2 + b]), -10)) * (1 + 1e-6));
      }
    }
}

// The shared inputs, float64 reference and selection check (tests/kernels/indexer_reference.hpp).
using Inputs = test::IndexerInputs;
using Scored = test::IndexerScored;
using Outputs = test::IndexerOutputs;
Inputs make_inputs(const IndexerShape& s, std::uint32_t seed) { return test::make_indexer_inputs(s, seed); }
Scored reference(const IndexerShape& s, const Inputs& in) { return test::indexer_reference(s, in); }
void check_selection(const IndexerShape& s, const Outputs& got, const Scored& want, bool ties = false) {
  test::check_indexer_selection(s, got, want, ties);
}

Outputs run_kernel(const IndexerShape& s, const Inputs& in, int threads) {
  Outputs out;
  out.indices.assign(static_cast<std::size_t>(s.batch * s.q_len * s.topk), 12345);  // poisoned
  out.scores.assign(out.indices.size(), NAN);
  IndexerParams p;
  p.shape = s;
  p.q = in.q.data();
  p.q_scale = in.q_scale.data();
  p.weights = in.weights.data();
  p.k = in.k.data();
  p.k_scale = in.k_scale.data();
  p.indices = out.indices.data();
  p.scores = out.scores.data();
  p.threads = threads;
  indexer::run(p);
  return out;
}

TEST_CASE("indexer selects the top-k of float64 scores: decode and causal prefill", "[kernels][cpu][indexer]") {
  const IndexerShape cases[] = {
      {3, 1, 700, 4, 128, 64},      // decode steps of 3 sequences, 3 key tiles
      {2, 1, 100, 8, 64, 128},      // fewer keys than topk: all of them, then -1
      {1, 37, 300, 8, 64, 16},      // prefill against a longer cache, query tiles of 32
      {1, 260, 260, 64, 128, 300},  // DeepSeek-V3.2's 64 heads of 128: tiles of 4 queries, 2 key tiles
      {2, 20, 40, 3, 200, 7},       // head_dim 200: two scale blocks, the second of 72
      {1, 40, 20000, 64, 8, 5},     // 20000 keys: 12 queries (3 tiles) per pass through the workspace, 4 passes
      {1, 3, 70000, 1, 8, 9},       // one query tile whose scores exceed the workspace
  };
  for (const IndexerShape& s : cases) {
    DYNAMIC_SECTION("batch " << s.batch << " q_len " << s.q_len << " kv_len " << s.kv_len << " heads " << s.num_heads << " x "
                             << s.head_dim << " topk " << s.topk) {
      const Inputs in = make_inputs(s, static_cast<std::uint32_t>(s.kv_len + 13 * s.num_heads));
      const Scored want = reference(s, in);
      for (int threads : {1, 2}) {
        INFO("threads " << threads);
        check_selection(s, run_kernel(s, in, threads), want);
      }
    }
  }
}

TEST_CASE("indexer keeps the lower positions of tied scores", "[kernels][cpu][indexer]") {
  const IndexerShape s{2, 3, 600, 4, 64, 10};
  Inputs in = make_inputs(s, 3);
  // Values whose products and sums fp32 holds exactly (a few mantissa bits, scales of 1), so equal
  // keys score exactly equal whatever order the products sum in; every key of sequence 0 the same:
  // all its scores tie, and each query takes positions 0..9 in order.
  const float values[] = {0.25f, -0.5f, 0.75f, 1.0f, -1.5f, 0.5f, -1.0f, 2.0f};
  for (std::size_t i = 0; i < in.q.size(); ++i) in.q[i] = fp32_to_fp8_e4m3(values[(i * 7 + 3) % 8]);
  for (std::size_t i = 0; i < in.k.size(); ++i) in.k[i] = fp32_to_fp8_e4m3(values[(i * 5 + i / 64) % 8]);
  std::fill(in.q_scale.begin(), in.q_scale.end(), 1.0f);
  std::fill(in.k_scale.begin(), in.k_scale.end(), 1.0f);
  for (std::size_t i = 0; i < in.weights.size(); ++i) in.weights[i] = values[(i * 3) % 8];
  for (std::int64_t j = 1; j < s.kv_len; ++j) std::copy_n(in.k.begin(), s.head_dim, in.k.begin() + j * s.head_dim);
  const Outputs got = run_kernel(s, in, 2);
  for (std::int64_t t = 0; t < s.q_len; ++t)
    for (std::int64_t j = 0; j < s.topk; ++j) CHECK(got.indices[static_cast<std::size_t>(t * s.topk + j)] == j);
  // Sequence 1's keys repeat their values with a short period: many exact ties there too. Every kept
  // score is at least every dropped one, and of the dropped ones that tie the lowest kept score, none
  // comes before a kept one of that score.
  const Scored want = reference(s, in);
  for (std::int64_t t = s.q_len; t < 2 * s.q_len; ++t) {
    const double* score = want.score.data() + t * s.kv_len;
    const std::int32_t* idx = got.indices.data() + t * s.topk;
    const std::set<std::int32_t> kept(idx, idx + s.topk);
    double lowest = std::numeric_limits<double>::infinity();
    std::int32_t last_at_lowest = -1;
    for (std::int32_t j : kept) lowest = std::min(lowest, score[j]);
    for (std::int32_t j : kept)
      if (score[j] == lowest) last_at_lowest = std::max(last_at_lowest, j);
    const std::int64_t visible = s.kv_len - s.q_len + (t - s.q_len) + 1;
    for (std::int32_t j = 0; j < visible; ++j) {
      if (kept.count(j)) continue;
      CHECK(score[j] <= lowest);
      if (score[j] == lowest) CHECK(j > last_at_lowest);
    }
  }
  check_selection(s, got, want, true);
}

TEST_CASE("indexer refuses shapes it cannot run, naming the field", "[kernels][cpu][indexer]") {
  const IndexerShape ok{1, 1, 64, 8, 128, 16};
  CHECK(indexer::unsupported_reason(ok).empty());
  auto s = ok;
  s.q_len = 65;
  CHECK(indexer::unsupported_reason(s).rfind("q_len = 65: must not exceed kv_len = 64", 0) == 0);
  s = ok;
  s.num_heads = 257;
  CHECK(indexer::unsupported_reason(s).rfind("num_heads = 257", 0) == 0);
  s = ok;
  s.head_dim = 0;
  CHECK(indexer::unsupported_reason(s).rfind("head_dim = 0", 0) == 0);
  s = ok;
  s.topk = 0;
  CHECK(indexer::unsupported_reason(s).rfind("topk = 0", 0) == 0);
  s = ok;
  s.kv_len = std::int64_t{1} << 31;
  CHECK(indexer::unsupported_reason(s).rfind("kv_len = 2147483648", 0) == 0);
  IndexerParams p;
  p.shape = ok;
  p.shape.batch = 0;
  CHECK_THROWS_AS(indexer::run(p), InputError);
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
