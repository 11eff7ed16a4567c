// How many pieces to cut each sequence's KV into (flash-decoding) so the grid fills the device,
// shared by decode and MLA decode. Host-only arithmetic; the device facts come in as numbers.
#pragma once

#include <cstdint>

namespace mhacfg::kernels::cuda::detail {

struct SplitProblem {
  std::int64_t independent_blocks = 1;  // blocks per split: batch * kv heads (decode) or head groups
  std::int64_t kv_len = 1;              // longest sequence
  int tile_tokens = 64;                 // a split is a whole number of tiles
  std::int64_t bytes_per_token = 0;     // K/V bytes one block reads per token
  int v_dim = 128;                      // output dims per head (the combine's row)
  std::int64_t partial_bytes_per_split = 0;  // partial O + LSE written and read back per block
  int sm_count = 1;
  int blocks_per_sm = 1;               // resident blocks of the kernel per SM (occupancy)
  int max_splits = 1024;
};

struct SplitChoice {
  int num_splits = 1;
  int tokens_per_split = 0;
};

// forced > 0: that many splits (rounded to whole tiles). Else the count with the least modelled
// time: waves of at most sm_count * blocks_per_sm blocks; in a wave the busiest SM holds
// ceil(blocks / sm_count) of them and streams their chunks at a rate capped per block and per SM, and
// the wave takes at least its bytes over HBM bandwidth; plus a fixed cost per wave and, when split,
// the combine launch, its load rounds and its partial-result traffic.
SplitChoice choose_splits(const SplitProblem& p, int forced);

}  // namespace mhacfg::kernels::cuda::detail
