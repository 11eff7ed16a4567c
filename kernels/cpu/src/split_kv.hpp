// The split-KV (flash-decoding) engine shared by decode_attention and mla_decode.
//
// A problem has `kv_heads` head groups; each group's query rows (q_len positions x rows_per_position
// query heads, row r = position r / rows_per_position) attend over that group's K/V. Work item =
// (sequence, chunk of the KV length): per key tile it runs every head group (small groups sweep the
// tile in steps of kSweepKeys keys kSweepStride apart, every head per step), folds the scores into
// one online softmax per group, and writes the chunk's partial (max, sum, unnormalised output). A
// combine pass merges the chunks. Chunks are sized so that even batch 1 gives every thread several
// items.
//
// Products: up to `small_rows` query rows use the register-blocked kernels of small_rows.hpp, which
// read fp32 or bf16 rows in place; more rows (MLA's 16-128 heads, large GQA groups) use Eigen's GEMM
// on fp32 tiles (bf16 tiles widened into a per-thread buffer first).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "attention_tiles.hpp"
#include "mhacfg/kernels/cpu/bf16.hpp"
#include "small_rows.hpp"

namespace mhacfg::kernels::cpu::detail {

struct SplitKvProblem {
  std::int64_t batch = 1;
  std::int64_t q_len = 1;
  std::int64_t kv_len = 1;
  std::int64_t kv_heads = 1;           // head groups with their own K/V (MLA: 1)
  std::int64_t rows_per_position = 1;  // query heads per group (MLA: num_q_heads)
  std::int64_t qk_dim = 1;
  std::int64_t v_dim = 1;
  std::int64_t tile_tokens = 256;  // keys per tile
  std::int64_t small_rows = 16;    // up to this many rows per head group: small_rows.hpp, else Eigen
  KeyMask mask;
  float scale = 1;
  int threads = 1;
};

// Where K and V rows live, in elements of KvT. Head group h, token t of sequence b starts at
// k + b * k_seq + t * k_token + h * k_head (likewise V).
template <class KvT>
struct KvSource {
  const KvT* k = nullptr;
  const KvT* v = nullptr;
  std::int64_t k_seq = 0, k_token = 0, k_head = 0;
  std::int64_t v_seq = 0, v_token = 0, v_head = 0;
  bool v_in_k = false;  // V is the first v_dim columns of K (MLA's latent): widened once
};

// Keys of one head per step of the small-rows sweep. Software prefetch of the next steps on top of
// the sweep measured no gain (bf16 8.5 vs 8.8 GB/s, one thread, same run).
inline constexpr std::int64_t kSweepKeys = 16;

// Keys apart within one step of the sweep: step j of a 256-key tile scores keys j, j + 16, ..., j + 240,
// so a step reads 16 rows 16 tokens apart whatever a token's row width. One core streams several
// regions side by side faster than one: in address order, 1-3 KB token rows (16 keys = one 16-48 KB
// run) read at 9-12 GB/s and 4 KB rows (16 pages per step) at 15-17; swept 16 apart all widths read at
// 17-18 GB/s (one thread of the development VM, ~100 MB of fp32 K/V, group 4; docs/cost-model.md).
inline constexpr std::int64_t kSweepStride = 16;

// Items per thread that dynamic scheduling balances over; chunks shorter than kMinChunkTokens cost
// more in combine and per-item setup than they gain.
inline constexpr std::int64_t kItemsPerThread = 4;
inline constexpr std::int64_t kMinChunkTokens = 512;

inline std::int64_t split_kv_chunks(std::int64_t batch, std::int64_t tokens, int threads) {
  const std::int64_t wanted = (kItemsPerThread * threads + batch - 1) / batch;
  return std::max<std::int64_t>(1, std::min(wanted, tokens / kMinChunkTokens));
}

// Widens n rows of `dim` elements (rows `stride` apart) into a dense fp32 buffer.
template <class KvT>
void widen_rows(const KvT* rows, std::int64_t stride, std::int64_t n, std::int64_t dim, std::vector<float>& out) {
  out.resize(static_cast<std::size_t>(n * dim));
  for (std::int64_t t = 0; t < n; ++t) bf16_to_fp32(rows + t * stride, out.data() + t * dim, dim);
}

// One thread's share of run_split_kv: its scaled query rows, score tile, softmax states and widening
// buffers, and the work item (sequence, chunk) it runs.
template <class KvT>
class SplitKvWorker {
 public:
  SplitKvWorker(const SplitKvProblem& p, const KvSource<KvT>& src)
      : p_(p), src_(src), g_(p.rows_per_position), heads_(p.kv_heads), rows_(p.q_len * p.rows_per_position),
        first_pos_(p.kv_len - p.q_len), small_(rows_ <= p.small_rows), q_rows_(heads_ * rows_, p.qk_dim),
        scores_(small_ ? heads_ * rows_ : rows_, p.tile_tokens), state_(static_cast<std::size_t>(heads_)) {}

  // Keys [t_begin, t_end) of sequence b, every head group; q as in run_split_kv.
  void run_item(const float* q, std::int64_t b, std::int64_t t_begin, std::int64_t t_end) {
    load_queries(q, b);
    for (std::int64_t t0 = t_begin; t0 < t_end; t0 += p_.tile_tokens) {
      const std::int64_t n = std::min(p_.tile_tokens, t_end - t0);
      const bool masked = visible_columns(p_.mask, t0, n, first_pos_, g_, rows_, valid_);
      const ColumnRange* vis = masked ? valid_.data() : nullptr;
      const KvT* k_tile = src_.k + b * src_.k_seq + t0 * src_.k_token;
      const KvT* v_tile = src_.v + b * src_.v_seq + t0 * src_.v_token;
      if (small_) {
        small_tile(k_tile, v_tile, n, masked, vis);
      } else {
        gemm_tile(k_tile, v_tile, n, vis);
      }
    }
  }

  // Writes the item's (max, sum, unnormalised output) of head group h, row r.
  void store(std::int64_t h, std::int64_t r, float* m, float* l, float* out) const {
    *m = state_[h].max(r);
    *l = state_[h].sum(r);
    std::copy_n(state_[h].output(r), p_.v_dim, out);
  }

 private:
  void load_queries(const float* q, std::int64_t b) {
    const std::int64_t nq = heads_ * g_;
    for (std::int64_t h = 0; h < heads_; ++h) {
      for (std::int64_t i = 0; i < p_.q_len; ++i) {
        const float* from = q + ((b * p_.q_len + i) * nq + h * g_) * p_.qk_dim;
        Eigen::Map<Eigen::ArrayXf>(q_rows_.row(h * rows_ + i * g_).data(), g_ * p_.qk_dim) =
            Eigen::Map<const Eigen::ArrayXf>(from, g_ * p_.qk_dim) * p_.scale;
      }
      state_[h].reset(rows_, p_.v_dim);
    }
  }

  // Key order: the tile's first 16 S keys as S columns of stride S (keys j, j + S, ..., j + 15 S for
  // j = 0 .. S - 1; S = 16 for a whole tile, less for a chunk's last partial one, so that every step
  // still has kSweepKeys keys), then any remaining keys in address order. Every step runs all heads
  // on its keys; the scores are stored in this order and P V reads V in the same order. Masked tiles
  // keep address order (the visible columns are ranges of it).
  void small_tile(const KvT* k_tile, const KvT* v_tile, std::int64_t n, bool masked, const ColumnRange* vis) {
    const std::int64_t tile_tokens = p_.tile_tokens;
    const std::int64_t stride = masked ? 1 : std::clamp<std::int64_t>(n / kSweepKeys, 1, kSweepStride);
    const std::int64_t strided = std::min(n, stride * kSweepKeys);
    auto sweep = [&](auto&& step) {
      for (std::int64_t j = 0; j < stride; ++j)
        for (std::int64_t h = 0; h < heads_; ++h) step(h, j, j * kSweepKeys, std::min(kSweepKeys, strided), stride);
      for (std::int64_t kb = strided; kb < n; kb += kSweepKeys)
        for (std::int64_t h = 0; h < heads_; ++h) step(h, kb, kb, std::min(kSweepKeys, n - kb), 1);
    };
    sweep([&](std::int64_t h, std::int64_t key, std::int64_t col, std::int64_t keys, std::int64_t step_stride) {
      small_rows_scores(q_rows_.row(h * rows_).data(), p_.qk_dim, rows_, k_tile + key * src_.k_token + h * src_.k_head,
                        step_stride * src_.k_token, keys, p_.qk_dim, scores_.data() + h * rows_ * tile_tokens + col,
                        tile_tokens);
    });
    for (std::int64_t h = 0; h < heads_; ++h) state_[h].fold(scores_.data() + h * rows_ * tile_tokens, tile_tokens, n, vis);
    sweep([&](std::int64_t h, std::int64_t key, std::int64_t col, std::int64_t keys, std::int64_t step_stride) {
      small_rows_accumulate(scores_.data() + h * rows_ * tile_tokens + col, tile_tokens, rows_,
                            v_tile + key * src_.v_token + h * src_.v_head, step_stride * src_.v_token, keys, p_.v_dim,
                            state_[h].output(), p_.v_dim);
    });
  }

  // Many rows per head group: Eigen's GEMM on fp32 tiles (bf16 widened first).
  void gemm_tile(const KvT* k_tile, const KvT* v_tile, std::int64_t n, const ColumnRange* vis) {
    for (std::int64_t h = 0; h < heads_; ++h) {
      const KvT* k = k_tile + h * src_.k_head;
      const KvT* v = v_tile + h * src_.v_head;
      const auto qmap = q_rows_.middleRows(h * rows_, rows_);
      auto s = tile(scores_.data(), rows_, n, p_.tile_tokens);
      if constexpr (std::is_same_v<KvT, float>) {
        s.noalias() = qmap * const_tile(k, n, p_.qk_dim, src_.k_token).transpose();
        state_[h].update(scores_.data(), p_.tile_tokens, n, vis, const_tile(v, n, p_.v_dim, src_.v_token));
      } else {
        widen_rows(k, src_.k_token, n, p_.qk_dim, k_wide_);
        s.noalias() = qmap * const_tile(k_wide_.data(), n, p_.qk_dim, p_.qk_dim).transpose();
        if (src_.v_in_k) {
          state_[h].update(scores_.data(), p_.tile_tokens, n, vis, const_tile(k_wide_.data(), n, p_.v_dim, p_.qk_dim));
        } else {
          widen_rows(v, src_.v_token, n, p_.v_dim, v_wide_);
          state_[h].update(scores_.data(), p_.tile_tokens, n, vis, const_tile(v_wide_.data(), n, p_.v_dim, p_.v_dim));
        }
      }
    }
  }

  const SplitKvProblem& p_;
  const KvSource<KvT>& src_;
  const std::int64_t g_, heads_, rows_, first_pos_;
  const bool small_;
  RowMatrix q_rows_;  // row h * rows + r, scaled
  RowMatrix scores_;  // small: every head's tile
  std::vector<OnlineSoftmax> state_;
  std::vector<ColumnRange> valid_;
  std::vector<float> k_wide_, v_wide_;  // bf16 tiles widened for Eigen
};

// Every chunk's partial (max, sum, unnormalised output) of (sequence, chunk, head group, row).
struct SplitKvPartials {
  std::int64_t chunks, heads, rows, v_dim;
  std::vector<float> m, l, o;
  SplitKvPartials(std::int64_t batch, std::int64_t chunks_, std::int64_t heads_, std::int64_t rows_, std::int64_t v_dim_)
      : chunks(chunks_), heads(heads_), rows(rows_), v_dim(v_dim_), m(static_cast<std::size_t>(batch * chunks_ * heads_ * rows_)),
        l(m.size()), o(m.size() * static_cast<std::size_t>(v_dim_)) {}
  std::int64_t at(std::int64_t b, std::int64_t c, std::int64_t h, std::int64_t r) const {
    return ((b * chunks + c) * heads + h) * rows + r;
  }

  // O = sum_c exp(m_c - m) O_c / sum_c exp(m_c - m) l_c for one (sequence, head group, row). Every row
  // sees at least one key, so m is finite; chunks a row cannot see have l_c = 0 and are skipped.
  void combine(std::int64_t b, std::int64_t h, std::int64_t r, float* out_row) const {
    float mx = -std::numeric_limits<float>::infinity();
    for (std::int64_t c = 0; c < chunks; ++c) mx = std::max(mx, m[at(b, c, h, r)]);
    Eigen::Map<Eigen::ArrayXf> out(out_row, v_dim);
    out.setZero();
    float sum = 0;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t i = at(b, c, h, r);
      if (l[i] == 0.0f) continue;
      const float w = std::exp(m[i] - mx);
      sum += w * l[i];
      out += w * Eigen::Map<const Eigen::ArrayXf>(o.data() + i * v_dim, v_dim);
    }
    out /= sum;
  }
};

// q: [batch, q_len, kv_heads * rows_per_position, qk_dim]; o: [batch, q_len, same heads, v_dim].
template <class KvT>
void run_split_kv(const SplitKvProblem& p, const float* q, float* o, const KvSource<KvT>& src) {
  const std::int64_t g = p.rows_per_position, heads = p.kv_heads, nq = heads * g, rows = p.q_len * g;
  const std::int64_t key_begin = p.mask.begin(p.kv_len - p.q_len);
  const std::int64_t chunks = split_kv_chunks(p.batch, p.kv_len - key_begin, p.threads);
  const std::int64_t chunk_len = (p.kv_len - key_begin + chunks - 1) / chunks;
  SplitKvPartials part(p.batch, chunks, heads, rows, p.v_dim);

#pragma omp parallel num_threads(p.threads)
  {
    FlushDenormals flush;
    SplitKvWorker<KvT> worker(p, src);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t item = 0; item < p.batch * chunks; ++item) {
      const std::int64_t b = item / chunks, c = item % chunks;
      const std::int64_t t_begin = key_begin + c * chunk_len;
      worker.run_item(q, b, t_begin, std::min(p.kv_len, t_begin + chunk_len));
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t at = part.at(b, c, h, r);
          worker.store(h, r, &part.m[at], &part.l[at], part.o.data() + at * p.v_dim);
        }
    }
#pragma omp for schedule(static)
    for (std::int64_t row = 0; row < p.batch * heads * rows; ++row) {
      const std::int64_t b = row / (heads * rows), h = (row / rows) % heads, r = row % rows;
      part.combine(b, h, r, o + ((b * p.q_len + r / g) * nq + h * g + r % g) * p.v_dim);
    }
  }
}

}  // namespace mhacfg::kernels::cpu::detail
