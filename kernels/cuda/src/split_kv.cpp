#include "split_kv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "combine.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cuda::detail {

namespace {

// Model constants, measured on the H200 (2026-11-30, mhacfg_cuda_speed's split sweeps, L2 flushed):
// - one block alone on an SM streams about 28 GB/s (MLA decode B64 at 2 splits: 128 blocks, 665 us;
//   decode B8 32/8 at 2 splits: 280 us), the bytes its pipeline keeps in flight over the latency;
// - an SM with two blocks reaches about 38 GB/s (MLA at 3 splits: 60 SMs with two blocks, 660 us);
// - all SMs busy: HBM, 4.5 TB/s (decode B64 32/8: 4.46-4.55 TB/s).
// The first model shared HBM bandwidth evenly over the blocks with a 50 GB/s cap per block: it rated
// 2 or 3 MLA splits as good as 4 (measured 3.6 against 4.4 TB/s) and 19 splits of decode B1 as good as
// 32 (2.67 against 2.77 TB/s), because an SM holding two blocks next to SMs holding one sets the time.
constexpr double kHbmBytesPerS = 4.5e12;
constexpr double kBlockBytesPerS = 28e9;
constexpr double kSmBytesPerS = 38e9;
constexpr double kWaveOverheadS = 1.0e-6;  // start, prologue fill, epilogue of a wave of blocks
constexpr double kCombineLaunchS = 2.0e-6; // second kernel (PDL hides part of it)
// One round of the combine's loads with its share of the block's reductions. Measured: the 128-thread,
// 4-splits-a-round combine took ~11 us for MQA B1's 128 splits (8 rounds; Nsight Compute, caches
// flushed), ~7 us inside the timed call with a warm L2: about 0.5-1 us a round.
constexpr double kCombineRoundS = 0.5e-6;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

SplitChoice shape_of(const SplitProblem& p, std::int64_t splits) {
  const std::int64_t chunk = ceil_div(ceil_div(p.kv_len, splits), p.tile_tokens) * p.tile_tokens;
  SplitChoice c;
  c.tokens_per_split = static_cast<int>(chunk);
  c.num_splits = static_cast<int>(ceil_div(p.kv_len, chunk));
  return c;
}

double modelled_seconds(const SplitProblem& p, const SplitChoice& c) {
  const std::int64_t sms = std::max(1, p.sm_count);
  const std::int64_t slots = sms * std::max(1, p.blocks_per_sm);
  const double chunk_bytes = static_cast<double>(c.tokens_per_split) * static_cast<double>(p.bytes_per_token);
  std::int64_t left = p.independent_blocks * c.num_splits;
  double t = 0;
  while (left > 0) {  // whole waves, then the last
    const std::int64_t wave = std::min(left, slots);
    const std::int64_t busiest = ceil_div(wave, sms);  // blocks on the most loaded SM
    const double sm_rate = std::min(static_cast<double>(busiest) * kBlockBytesPerS, kSmBytesPerS);
    const double wave_s = std::max(static_cast<double>(busiest) * chunk_bytes / sm_rate,
                                   static_cast<double>(wave) * chunk_bytes / kHbmBytesPerS);
    t += wave_s + kWaveOverheadS;
    left -= wave;
  }
  if (c.num_splits > 1)
    t += kCombineLaunchS + combine_rounds(c.num_splits, p.v_dim) * kCombineRoundS +
         static_cast<double>(p.independent_blocks * c.num_splits * p.partial_bytes_per_split) / kHbmBytesPerS;
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
