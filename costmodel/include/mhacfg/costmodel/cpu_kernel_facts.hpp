// What the CPU time model knows about mhacfg's CPU kernels: the row blocks and tiles they cut their
// work into, as the kernels publish them (their TileFacts). A profile carries them as
// `cpu_kernel_facts`; a profile without them (every profile written before the kernels published
// facts, and every GPU profile) gets these defaults, the values the kernels have had since they were
// calibrated, so its predictions do not change.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace mhacfg {

struct CpuKernelFacts {
  std::int64_t row_block = 4;            // query rows per register block (then halves of it, down to 1)
  std::int64_t skinny_gemm_rows = 16;    // GEMMs with at most these rows stream B in place
  std::int64_t decode_small_rows = 32;   // decode rows per KV head run through the row blocks
  std::int64_t prefill_tile_rows = 128;  // query rows of a prefill tile (positions x group)
  std::int64_t prefill_key_tile = 256;   // keys per prefill key tile
  std::int64_t linear_token_block = 64;  // tokens per block of the linear-attention state's widening
  std::int64_t indexer_tile_rows = 256;  // query-head rows of an indexer query tile
  std::int64_t indexer_key_tile = 256;   // keys per indexer key tile

  // Queries of one indexer query tile: as many whole queries' heads as fill indexer_tile_rows rows.
  std::int64_t indexer_tile_queries(std::int64_t num_heads) const {
    return num_heads >= indexer_tile_rows ? 1 : indexer_tile_rows / (num_heads < 1 ? 1 : num_heads);
  }
};

// Every field is a positive integer; absent fields keep their defaults. Throws InputError naming
// `where` and the field.
CpuKernelFacts cpu_kernel_facts_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json cpu_kernel_facts_to_json(const CpuKernelFacts& f);

}  // namespace mhacfg
