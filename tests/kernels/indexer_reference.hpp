// The lightning indexer's test inputs, float64 reference and selection check, shared by the CPU and
// CUDA kernels' tests (both meet mhacfg/kernels/cpu/indexer.hpp's contract): fresh random fp8
// inputs, I(t, s) = sum_h w_h ReLU(q_h . k_s) in float64 on the dequantised values with a per-score
// rounding bound, and a check of every query's selection against it that tolerates near-ties at the
// threshold and nothing else.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "cpu/reference.hpp"
#include "cpu/tolerances.hpp"
#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cpu/fp8.hpp"

namespace mhacfg::kernels::cpu::test {

struct IndexerInputs {
  std::vector<fp8_e4m3> q, k;
  std::vector<float> q_scale, k_scale, weights;
};

inline IndexerInputs make_indexer_inputs(const IndexerShape& s, std::uint32_t seed) {
  const std::int64_t blocks = (s.head_dim + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
  const std::int64_t q_rows = s.batch * s.q_len * s.num_heads, k_rows = s.batch * s.kv_len;
  IndexerInputs in;
  in.q.resize(static_cast<std::size_t>(q_rows * s.head_dim));
  in.k.resize(static_cast<std::size_t>(k_rows * s.head_dim));
  in.q_scale.resize(static_cast<std::size_t>(q_rows * blocks));
  in.k_scale.resize(static_cast<std::size_t>(k_rows * blocks));
  const std::vector<float> q = random_values(q_rows * s.head_dim, seed);
  std::vector<float> k = random_values(k_rows * s.head_dim, seed + 1);
  for (std::int64_t r = 0; r < k_rows; ++r)  // keys of different norms, as after a LayerNorm with learnt weights
    for (std::int64_t c = 0; c < s.head_dim; ++c) k[r * s.head_dim + c] *= 0.25f + static_cast<float>(r % 7) / 4.0f;
  quantize_fp8_blocks(q.data(), q_rows, s.head_dim, in.q.data(), in.q_scale.data());
  quantize_fp8_blocks(k.data(), k_rows, s.head_dim, in.k.data(), in.k_scale.data());
  in.weights = random_values(s.batch * s.q_len * s.num_heads, seed + 2);  // of both signs, as weights_proj's
  return in;
}

struct IndexerScored {
  std::vector<double> score, bound;  // [batch, q_len, kv_len]: I(t, s) and its rounding bound
};

// fp32's dot-product bound over the head_dim terms of each head and the num_heads terms of the sum
// (and the dequantisation's rounding): the CPU kernel's arithmetic.
inline double fp32_indexer_relative_bound(const IndexerShape& s) {
  return kFp32UnitRoundoff * static_cast<double>(s.head_dim + s.num_heads + 4);
}

// I(t, s) in float64 on the dequantised values; bound = relative x sum_h |w_h| sum_c |q_hc k_sc|
// (+1e-30), `relative` the kernel's error per unit of that magnitude.
inline IndexerScored indexer_reference(const IndexerShape& s, const IndexerInputs& in, double relative) {
  const std::int64_t H = s.num_heads, d = s.head_dim, blocks = (d + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
  const auto value = [&](const std::vector<fp8_e4m3>& codes, const std::vector<float>& scales, std::int64_t row, std::int64_t c) {
    return static_cast<double>(fp8_e4m3_to_fp32(codes[row * d + c])) * scales[row * blocks + c / kFp8ScaleBlock];
  };
  IndexerScored out;
  out.score.assign(static_cast<std::size_t>(s.batch * s.q_len * s.kv_len), 0.0);
  out.bound = out.score;
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t t = 0; t < s.q_len; ++t)
      for (std::int64_t j = 0; j < s.kv_len; ++j) {
        double score = 0, magnitude = 0;
        for (std::int64_t h = 0; h < H; ++h) {
          const std::int64_t qrow = (b * s.q_len + t) * H + h, krow = b * s.kv_len + j;
          double dot = 0, abs_dot = 0;
          for (std::int64_t c = 0; c < d; ++c) {
            const double p = value(in.q, in.q_scale, qrow, c) * value(in.k, in.k_scale, krow, c);
            dot += p;
            abs_dot += std::fabs(p);
          }
          const double w = in.weights[static_cast<std::size_t>(qrow)];
          score += w * std::max(dot, 0.0);
          magnitude += std::fabs(w) * abs_dot;
        }
        out.score[static_cast<std::size_t>((b * s.q_len + t) * s.kv_len + j)] = score;
        out.bound[static_cast<std::size_t>((b * s.q_len + t) * s.kv_len + j)] = relative * magnitude + 1e-30;
      }
  return out;
}
inline IndexerScored indexer_reference(const IndexerShape& s, const IndexerInputs& in) {
  return indexer_reference(s, in, fp32_indexer_relative_bound(s));
}

struct IndexerOutputs {
  std::vector<std::int32_t> indices;
  std::vector<float> scores;
};

// Every query's selection against the reference: positions visible and increasing, each kept score
// its position's, the kept scores (sorted) the reference's best ones rank by rank (so the set is the
// best one up to near-ties), and where the reference's topk-th and next best are apart by more than
// the rounding, exactly the reference's set; all visible keys when there are at most topk; past
// them, -1 and -inf. `ties`: inputs made of exact ties (no threshold is apart). Returns the number
// of queries whose set was checked exactly.
inline std::size_t check_indexer_selection(const IndexerShape& s, const IndexerOutputs& got, const IndexerScored& want,
                                           bool ties = false) {
  std::size_t exact_sets = 0;
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t t = 0; t < s.q_len; ++t) {
      INFO("batch " << b << " query " << t);
      const std::int64_t visible = s.kv_len - s.q_len + t + 1, k = std::min(s.topk, visible);
      const std::size_t base = static_cast<std::size_t>((b * s.q_len + t) * s.kv_len);
      const double* score = want.score.data() + base;
      const double bound = *std::max_element(want.bound.begin() + static_cast<std::ptrdiff_t>(base),
                                             want.bound.begin() + static_cast<std::ptrdiff_t>(base + static_cast<std::size_t>(visible)));
      const std::int32_t* idx = got.indices.data() + (b * s.q_len + t) * s.topk;
      const float* val = got.scores.data() + (b * s.q_len + t) * s.topk;
      for (std::int64_t j = k; j < s.topk; ++j) {
        REQUIRE(idx[j] == -1);
        REQUIRE(val[j] == -std::numeric_limits<float>::infinity());
      }
      std::vector<double> kept;
      for (std::int64_t j = 0; j < k; ++j) {
        REQUIRE(idx[j] >= 0);
        REQUIRE(idx[j] < visible);
        if (j > 0) REQUIRE(idx[j] > idx[j - 1]);
        REQUIRE(std::fabs(val[j] - score[idx[j]]) <= bound);
        kept.push_back(val[j]);
      }
      if (k == visible) {  // every key: increasing positions below `visible`, as many as there are
        ++exact_sets;
        continue;
      }
      std::vector<double> best(score, score + visible);
      std::sort(best.begin(), best.end(), std::greater<double>());
      std::sort(kept.begin(), kept.end(), std::greater<double>());
      for (std::int64_t j = 0; j < k; ++j) REQUIRE(std::fabs(kept[static_cast<std::size_t>(j)] - best[static_cast<std::size_t>(j)]) <= 2 * bound);
      if (best[static_cast<std::size_t>(k - 1)] - best[static_cast<std::size_t>(k)] > 4 * bound) {
        for (std::int64_t j = 0; j < k; ++j) REQUIRE(score[idx[j]] >= best[static_cast<std::size_t>(k - 1)]);
        ++exact_sets;
      }
    }
  if (!ties) CHECK(exact_sets > 0);  // random scores are mostly apart: the sets themselves were checked
  return exact_sets;
}

}  // namespace mhacfg::kernels::cpu::test
