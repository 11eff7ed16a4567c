// The CPU kernels' published tiles (tile_facts.hpp) and what the cost model assumes of a profile
// without cpu_kernel_facts (CpuKernelFacts' defaults) are the same numbers: otherwise every shipped
// CPU profile would predict with tiles the kernels no longer use.
#include <catch2/catch.hpp>

#include "mhacfg/costmodel/cpu_kernel_facts.hpp"
#include "mhacfg/kernels/cpu/tile_facts.hpp"

TEST_CASE("the cost model's default CPU kernel facts are the ones the kernels publish", "[kernels][cpu]") {
  const mhacfg::kernels::cpu::TileFacts k = mhacfg::kernels::cpu::kTileFacts;
  const mhacfg::CpuKernelFacts c;
  CHECK(c.row_block == k.row_block);
  CHECK(c.skinny_gemm_rows == k.skinny_gemm_rows);
  CHECK(c.decode_small_rows == k.decode_small_rows);
  CHECK(c.prefill_tile_rows == k.prefill_tile_rows);
  CHECK(c.prefill_key_tile == k.prefill_key_tile);
  CHECK(c.linear_token_block == k.linear_token_block);
  CHECK(c.indexer_tile_rows == k.indexer_tile_rows);
  CHECK(c.indexer_key_tile == k.indexer_key_tile);
  for (std::int64_t heads : {1, 4, 64, 128, 255, 256, 300})
    CHECK(c.indexer_tile_queries(heads) == mhacfg::kernels::cpu::indexer_tile_queries(heads));
}
