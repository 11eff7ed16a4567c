// Tile building blocks shared by the CPU attention kernels: Eigen views of row-major tiles, the
// causal / sliding-window / chunked key mask, and the online softmax that folds one score tile into a running
// output (FlashAttention's rescaling: m = running max, l = running sum, O = unnormalised output).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "mhacfg/costmodel/ops.hpp"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace mhacfg::kernels::cpu::detail {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// A row-major tile inside a larger array: `rows` rows of `cols` floats, rows `stride` floats apart.
using RowMap = Eigen::Map<RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;
using ConstRowMap = Eigen::Map<const RowMatrix, Eigen::Unaligned, Eigen::OuterStride<>>;

inline ConstRowMap const_tile(const float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
  return ConstRowMap(data, rows, cols, Eigen::OuterStride<>(stride));
}
inline RowMap tile(float* data, std::int64_t rows, std::int64_t cols, std::int64_t stride) {
  return RowMap(data, rows, cols, Eigen::OuterStride<>(stride));
}

// Sets flush-to-zero and denormals-are-zero for the calling thread while alive: scores far below the
// row max exponentiate to denormals, and a denormal operand costs ~100 cycles in the P V product.
class FlushDenormals {
 public:
#if defined(__SSE__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

// Keys visible to a query at absolute position `pos` of a kv_len-token sequence.
struct KeyMask {
  bool causal = true;
  std::int64_t window = 0;  // 0: none; only with causal
  std::int64_t chunk = 0;   // 0: none; only with causal, never with a window
  std::int64_t kv_len = 0;

  explicit KeyMask(const AttentionShape& s) : causal(s.causal), window(s.window), chunk(s.chunk), kv_len(s.kv_len) {}
  KeyMask() = default;

  std::int64_t begin(std::int64_t pos) const { return causal ? first_visible_key(pos, window, chunk) : 0; }
  std::int64_t end(std::int64_t pos) const { return causal ? pos + 1 : kv_len; }
};

// Visible columns [begin, end) of one row of a score tile.
struct ColumnRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// Fills `out[r]` for the rows of a tile whose row r is a query at position first_pos + r / rows_per_position,
// against keys [k0, k0 + cols). Returns false (and leaves `out` unused) when every row sees every column.
inline bool visible_columns(const KeyMask& mask, std::int64_t k0, std::int64_t cols, std::int64_t first_pos,
                            std::int64_t rows_per_position, std::int64_t rows, std::vector<ColumnRange>& out) {
  const std::int64_t last_pos = first_pos + (rows - 1) / rows_per_position;
  if (mask.begin(last_pos) <= k0 && mask.end(first_pos) >= k0 + cols) return false;
  out.resize(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t pos = first_pos + r / rows_per_position;
    out[r].begin = std::clamp<std::int64_t>(mask.begin(pos) - k0, 0, cols);
    out[r].end = std::clamp<std::int64_t>(mask.end(pos) - k0, 0, cols);
  }
  return true;
}

// Running softmax state of `rows` query rows against a stream of key tiles.
class OnlineSoftmax {
 public:
  void reset(std::int64_t rows, std::int64_t v_dim) {
    rows_ = rows;
    if (o_.rows() < rows || o_.cols() != v_dim) o_.resize(std::max<std::int64_t>(rows, o_.rows()), v_dim);
    o_.topRows(rows).setZero();
    m_.assign(static_cast<std::size_t>(rows), -std::numeric_limits<float>::infinity());
    l_.assign(static_cast<std::size_t>(rows), 0.0f);
  }

  // Folds one tile's scores in: `s` holds the scaled scores [rows, cols] (rows `ld` floats apart) and
  // is overwritten with the unnormalised probabilities P; `valid` (or nullptr: all) gives the visible
  // columns of each row. The running output is rescaled; the caller then adds P V to output().
  void fold(float* s, std::int64_t ld, std::int64_t cols, const ColumnRange* valid) {
    for (std::int64_t r = 0; r < rows_; ++r) {
      float* row = s + r * ld;
      const std::int64_t b = valid ? valid[r].begin : 0;
      const std::int64_t e = valid ? valid[r].end : cols;
      if (b >= e) {  // nothing visible in this tile: the state is unchanged
        std::fill(row, row + cols, 0.0f);
        continue;
      }
      Eigen::Map<Eigen::ArrayXf> x(row + b, e - b);
      const float m_new = std::max(m_[r], x.maxCoeff());
      const float alpha = std::exp(m_[r] - m_new);  // 0 on the first visible tile (m = -inf)
      x = (x - m_new).exp();
      l_[r] = l_[r] * alpha + x.sum();
      m_[r] = m_new;
      if (alpha != 1.0f) o_.row(r) *= alpha;
      std::fill(row, row + b, 0.0f);
      std::fill(row + e, row + cols, 0.0f);
    }
  }

  // fold() and then O += P V with Eigen's GEMM; `v` is the tile's values [cols, v_dim].
  template <class VTile>
  void update(float* s, std::int64_t ld, std::int64_t cols, const ColumnRange* valid, const VTile& v) {
    fold(s, ld, cols, valid);
    o_.topRows(rows_).noalias() += tile(s, rows_, cols, ld) * v;
  }

  float* output() { return o_.data(); }  // [rows, v_dim], unnormalised
  std::int64_t rows() const { return rows_; }
  float max(std::int64_t r) const { return m_[r]; }
  float sum(std::int64_t r) const { return l_[r]; }
  const float* output(std::int64_t r) const { return o_.row(r).data(); }  // unnormalised

 private:
  std::int64_t rows_ = 0;
  RowMatrix o_;
  std::vector<float> m_, l_;
};

}  // namespace mhacfg::kernels::cpu::detail
