// The lightning indexer on the CPU (see indexer.hpp): fp8 keys and queries dequantised to fp32 tiles,
// Eigen GEMMs of a query tile's heads against a key tile, the ReLU-weighted sum over heads, then a
// top-k selection per query.
#include "mhacfg/kernels/cpu/indexer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "shape_checks.hpp"

namespace mhacfg::kernels::cpu {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// n values of one row of codes, with their block scales, to fp32, in a loop the compiler vectorises
// (a table lookup per value ran at ~0.5 ns per value and made a narrow indexer's decode 2-5x slower
// per FLOP than a wide one's): the code's exponent and mantissa bits placed where an fp32's are read
// as an fp32 of exponent bias 127 and scaled by 2^(127 - 7), exactly fp8_e4m3_decode's value for
// normals and subnormals alike; the NaN codes stay NaN.
void dequantize(const fp8_e4m3* codes, const float* scales, std::int64_t n, float* out) {
  for (std::int64_t c0 = 0, blk = 0; c0 < n; c0 += kFp8ScaleBlock, ++blk) {
    const std::int64_t c1 = std::min(n, c0 + kFp8ScaleBlock);
    const float scale = scales[blk];
#pragma omp simd
    for (std::int64_t c = c0; c < c1; ++c) {
      const std::uint32_t b = codes[c], magnitude_bits = (b & 0x7fu) << 20;
      float magnitude;
      std::memcpy(&magnitude, &magnitude_bits, sizeof magnitude);
      magnitude = (b & 0x7fu) == 0x7fu ? std::numeric_limits<float>::quiet_NaN() : magnitude * 0x1p120f;
      const float value = (b & 0x80u) ? -magnitude : magnitude;
      out[c] = value * scale;
    }
  }
}

class Run {
 public:
  explicit Run(const IndexerParams& p)
      : p_(p), s_(p.shape), blocks_((s_.head_dim + kFp8ScaleBlock - 1) / kFp8ScaleBlock),
        tile_queries_(indexer_tile_queries(s_.num_heads)) {
    // Queries per pass: whole query tiles whose scores and dequantised queries fit the workspace, or one tile.
    const std::int64_t per_query = std::max(s_.kv_len, s_.num_heads * s_.head_dim);
    pass_queries_ = std::max(kIndexerWorkspaceFloats / per_query / tile_queries_, std::int64_t{1}) * tile_queries_;
    pass_queries_ = std::min(pass_queries_, s_.q_len);
    scores_.reset(new float[static_cast<std::size_t>(mul(pass_queries_, s_.kv_len, "indexer workspace"))]);
    queries_.reset(new float[static_cast<std::size_t>(mul(pass_queries_, s_.num_heads, s_.head_dim, "indexer workspace"))]);
  }

  void operator()() {
    const std::int64_t H = s_.num_heads, d = s_.head_dim;
#pragma omp parallel num_threads(p_.threads)
    {
      std::vector<float> keys(static_cast<std::size_t>(kTileFacts.indexer_key_tile * d));
      std::vector<float> products(static_cast<std::size_t>(tile_queries_ * H * kTileFacts.indexer_key_tile));
      std::vector<float> copy(static_cast<std::size_t>(s_.kv_len));  // a query's scores, for the selection
      for (std::int64_t b = 0; b < s_.batch; ++b)
        for (std::int64_t t0 = 0; t0 < s_.q_len; t0 += pass_queries_) {
          const std::int64_t n = std::min(pass_queries_, s_.q_len - t0);
#pragma omp for schedule(static)
          for (std::int64_t r = 0; r < n * H; ++r) {
            const std::int64_t row = (b * s_.q_len + t0) * H + r;
            dequantize(p_.q + row * d, p_.q_scale + row * blocks_, d, queries_.get() + r * d);
          }
          // (query tile, key tile) products; causal tiles end at their last query's last key.
          const std::int64_t tiles = (n + tile_queries_ - 1) / tile_queries_;
          const std::int64_t key_tiles = (s_.kv_len + kTileFacts.indexer_key_tile - 1) / kTileFacts.indexer_key_tile;
#pragma omp for schedule(dynamic)
          for (std::int64_t item = 0; item < tiles * key_tiles; ++item) {
            const std::int64_t qt = item / key_tiles, kt = item % key_tiles;
            const std::int64_t q0 = qt * tile_queries_, q1 = std::min(n, q0 + tile_queries_);
            const std::int64_t j0 = kt * kTileFacts.indexer_key_tile, end = visible(t0 + q1 - 1);
            if (j0 >= end) continue;
            score_tile(b, q0, q1, j0, std::min(end, j0 + kTileFacts.indexer_key_tile), t0, keys.data(), products.data());
          }
#pragma omp for schedule(dynamic, 8)
          for (std::int64_t i = 0; i < n; ++i) select(b, t0 + i, scores_.get() + i * s_.kv_len, copy.data());
        }
    }
  }

 private:
  // Keys query t (of the q_len last positions) sees.
  std::int64_t visible(std::int64_t t) const { return s_.kv_len - s_.q_len + t + 1; }

  // Queries [q0, q1) of the pass starting at query t0 of sequence b against keys [j0, j1).
  void score_tile(std::int64_t b, std::int64_t q0, std::int64_t q1, std::int64_t j0, std::int64_t j1, std::int64_t t0,
                  float* keys, float* products) {
    const std::int64_t H = s_.num_heads, d = s_.head_dim, nk = j1 - j0, rows = (q1 - q0) * H;
    for (std::int64_t j = j0; j < j1; ++j) {
      const std::int64_t key = b * s_.kv_len + j;
      dequantize(p_.k + key * d, p_.k_scale + key * blocks_, d, keys + (j - j0) * d);
    }
    Eigen::Map<const RowMatrix> Q(queries_.get() + q0 * H * d, rows, d);
    Eigen::Map<const RowMatrix> K(keys, nk, d);
    Eigen::Map<RowMatrix> P(products, rows, nk);
    P.noalias() = Q * K.transpose();
    for (std::int64_t i = q0; i < q1; ++i) {
      float* out = scores_.get() + i * s_.kv_len + j0;
      const float* w = p_.weights + (b * s_.q_len + t0 + i) * H;
      std::fill_n(out, nk, 0.0f);
      for (std::int64_t h = 0; h < H; ++h) {
        const float wh = w[h];
        const float* row = products + ((i - q0) * H + h) * nk;
#pragma omp simd
        for (std::int64_t j = 0; j < nk; ++j) out[j] += wh * std::max(row[j], 0.0f);
      }
    }
  }

  // Query t of sequence b: the positions of the topk best of its visible scores, in increasing order.
  // All of them when it sees at most topk keys; otherwise the topk-th best score (nth_element on a
  // copy, NaN read as -inf) is the threshold, and a scan keeps what beats it, then what ties it, the
  // lower positions first, until topk are kept.
  void select(std::int64_t b, std::int64_t t, const float* scores, float* copy) const {
    const std::int64_t n = visible(t), k = std::min(s_.topk, n);
    const std::int64_t row = (b * s_.q_len + t) * s_.topk;
    std::int32_t* indices = p_.indices + row;
    float* kept = p_.scores ? p_.scores + row : nullptr;
    const auto clean = [](float x) { return std::isnan(x) ? -std::numeric_limits<float>::infinity() : x; };
    if (k == n) {
      for (std::int64_t j = 0; j < n; ++j) indices[j] = static_cast<std::int32_t>(j);
      if (kept) std::copy_n(scores, n, kept);
    } else {
      for (std::int64_t j = 0; j < n; ++j) copy[j] = clean(scores[j]);
      std::nth_element(copy, copy + (k - 1), copy + n, std::greater<float>());
      const float threshold = copy[k - 1];
      std::int64_t above = 0;  // scores that beat the threshold: every one of them is kept
      for (std::int64_t j = 0; j < n; ++j) above += clean(scores[j]) > threshold;
      std::int64_t ties = k - above, m = 0;
      for (std::int64_t j = 0; j < n && m < k; ++j) {
        const float x = clean(scores[j]);
        if (x > threshold || (x == threshold && ties-- > 0)) {
          indices[m] = static_cast<std::int32_t>(j);
          if (kept) kept[m] = scores[j];
          ++m;
        }
      }
    }
    for (std::int64_t j = k; j < s_.topk; ++j) {
      indices[j] = -1;
      if (kept) kept[j] = -std::numeric_limits<float>::infinity();
    }
  }

  const IndexerParams& p_;
  const IndexerShape& s_;
  const std::int64_t blocks_, tile_queries_;
  std::int64_t pass_queries_ = 1;
  std::unique_ptr<float[]> scores_;   // [pass queries, kv_len]
  std::unique_ptr<float[]> queries_;  // [pass queries, num_heads, head_dim], dequantised
};

}  // namespace

std::string indexer::unsupported_reason(const IndexerShape& s) {
  using detail::field_reason;
  if (s.batch < 1) return field_reason("batch", s.batch, "must be at least 1");
  if (s.q_len < 1) return field_reason("q_len", s.q_len, "must be at least 1");
  if (s.kv_len < 1) return field_reason("kv_len", s.kv_len, "must be at least 1");
  if (s.q_len > s.kv_len)
    return field_reason("q_len", s.q_len,
                        "must not exceed kv_len = " + std::to_string(s.kv_len) + " (queries are the last q_len positions)");
  if (s.kv_len > std::numeric_limits<std::int32_t>::max())
    return field_reason("kv_len", s.kv_len, "key positions are int32 (at most 2147483647)");
  if (s.num_heads < 1) return field_reason("num_heads", s.num_heads, "must be at least 1");
  if (s.num_heads > kTileFacts.indexer_tile_rows)
    return field_reason("num_heads", s.num_heads, "must be at most " + std::to_string(kTileFacts.indexer_tile_rows) + " (one query's heads fill a tile)");
  if (s.head_dim < 1 || s.head_dim > detail::kMaxHeadDim)
    return field_reason("head_dim", s.head_dim, "must be in [1, " + std::to_string(detail::kMaxHeadDim) + "]");
  if (s.topk < 1) return field_reason("topk", s.topk, "must be at least 1");
  const char* what = "indexer buffers";
  mul(mul(s.batch, s.kv_len, what), s.head_dim, what);  // overflow-checked
  mul(mul(s.batch, s.q_len, what), std::max(s.topk, mul(s.num_heads, s.head_dim, what)), what);
  return {};
}

void indexer::run(const IndexerParams& p) {
  if (std::string why = indexer::unsupported_reason(p.shape); !why.empty()) throw InputError("indexer: " + why);
  MHACFG_CHECK(p.q && p.q_scale && p.weights && p.k && p.k_scale && p.indices, "indexer: null tensor");
  MHACFG_CHECK(p.threads >= 1, "indexer: threads must be at least 1");
  Eigen::setNbThreads(1);  // the products run inside the parallel region, one thread each
  Run call(p);
  call();
}

}  // namespace mhacfg::kernels::cpu
