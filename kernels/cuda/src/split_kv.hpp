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
  std::int64_t partial_bytes_per_split = 0;  // partial O + LSE written and read back per block
  int resident_blocks = 1;             // sm_count * blocks per SM
  int max_splits = 1024;
};

struct SplitChoice {
  int num_splits = 1;
  int tokens_per_split = 0;
};

// forced > 0: that many splits (rounded to whole tiles). Else the count with the least modelled
// time: waves of blocks each streaming its chunk at its share of HBM bandwidth (capped per block),
// a fixed cost per block and, when split, the combine launch and its partial-result traffic.
SplitChoice choose_splits(const SplitProblem& p, int forced);

}  // namespace mhacfg::kernels::cuda::detail
