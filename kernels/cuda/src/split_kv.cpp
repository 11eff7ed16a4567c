#include "split_kv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cuda::detail {

namespace {

// Model constants (leads, not measurements; the device run's split sweep tunes them).
constexpr double kHbmBytesPerS = 4.5e12;       // H200 streaming read, about the cuDNN decode figure
constexpr double kBlockMaxBytesPerS = 50e9;    // one block: ~64 KiB in flight over ~1.2 us latency
constexpr double kBlockOverheadS = 1.0e-6;     // start, prologue fill, epilogue of one block
constexpr double kCombineLaunchS = 2.0e-6;     // second kernel (PDL hides part of it)

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

SplitChoice shape_of(const SplitProblem& p, std::int64_t splits) {
  const std::int64_t chunk = ceil_div(ceil_div(p.kv_len, splits), p.tile_tokens) * p.tile_tokens;
  SplitChoice c;
  c.tokens_per_split = static_cast<int>(chunk);
  c.num_splits = static_cast<int>(ceil_div(p.kv_len, chunk));
  return c;
}

double modelled_seconds(const SplitProblem& p, const SplitChoice& c) {
  const double blocks = static_cast<double>(p.independent_blocks) * c.num_splits;
  const double slots = std::max(1, p.resident_blocks);
  const double waves = std::ceil(blocks / slots);
  const double concurrent = std::min(blocks, slots);
  const double per_block_bw = std::min(kBlockMaxBytesPerS, kHbmBytesPerS / concurrent);
  double t = waves * (static_cast<double>(c.tokens_per_split) * p.bytes_per_token / per_block_bw + kBlockOverheadS);
  if (c.num_splits > 1) t += kCombineLaunchS + blocks * p.partial_bytes_per_split / kHbmBytesPerS;
  return t;
}

}  // namespace

SplitChoice choose_splits(const SplitProblem& p, int forced) {
  MHACFG_CHECK(p.kv_len >= 1 && p.tile_tokens >= 1 && p.independent_blocks >= 1, "split problem out of range");
  const std::int64_t max_useful = std::min<std::int64_t>(p.max_splits, ceil_div(p.kv_len, p.tile_tokens));
  if (forced > 0) return shape_of(p, std::min<std::int64_t>(forced, max_useful));
  SplitChoice best = shape_of(p, 1);
  double best_t = modelled_seconds(p, best);
  for (std::int64_t s = 2; s <= max_useful; ++s) {
    const SplitChoice c = shape_of(p, s);
    if (c.num_splits == best.num_splits) continue;
    const double t = modelled_seconds(p, c);
    if (t < best_t * 0.99) {  // a split must win by more than the model's noise
      best = c;
      best_t = t;
    }
  }
  return best;
}

}  // namespace mhacfg::kernels::cuda::detail
