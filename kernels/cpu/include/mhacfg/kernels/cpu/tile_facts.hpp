// The facts mhacfg's CPU kernels publish about how they cut their work: row blocks and tiles. The
// kernels' loops are defined by these values, and the CPU time model counts with the same ones: a
// profile carries them as `cpu_kernel_facts` (costmodel's CpuKernelFacts, which defaults to these
// values), so the cost model learns a kernel's tiles from the kernel, never from its own constants.
#pragma once

#include <cstdint>

namespace mhacfg::kernels::cpu {

struct TileFacts {
  // Query rows are register-blocked row_block, then halves of it, down to 1 at a time (small_rows.hpp).
  std::int64_t row_block = 4;
  // GEMMs with at most this many rows stream B through the row blocks in place instead of packing it
  // for Eigen's blocked GEMM.
  std::int64_t skinny_gemm_rows = 16;
  // Decode runs up to this many query rows per KV head (q_len x group) through the row blocks, each
  // block re-reading the K/V tile; more rows go to Eigen's GEMM, which packs the tile once.
  std::int64_t decode_small_rows = 32;
  // Prefill stacks prefill_tile_rows / group positions of a GQA group's heads into one query tile and
  // multiplies it against key tiles of prefill_key_tile keys up to the tile's last position.
  std::int64_t prefill_tile_rows = 128;
  std::int64_t prefill_key_tile = 256;
  // The linear-attention kernel widens a bf16 state to fp32 and rounds it back once per block of this
  // many tokens.
  std::int64_t linear_token_block = 64;
  // The indexer multiplies query tiles (their heads as rows, at most indexer_tile_rows of them)
  // against key tiles of indexer_key_tile keys, dequantising each key tile once per query tile.
  std::int64_t indexer_tile_rows = 256;
  std::int64_t indexer_key_tile = 256;
};

inline constexpr TileFacts kTileFacts{};

// Queries of one indexer query tile: as many whole queries' heads as fill indexer_tile_rows rows.
inline constexpr std::int64_t indexer_tile_queries(std::int64_t num_heads) {
  return num_heads >= kTileFacts.indexer_tile_rows ? 1 : kTileFacts.indexer_tile_rows / (num_heads < 1 ? 1 : num_heads);
}

}  // namespace mhacfg::kernels::cpu
