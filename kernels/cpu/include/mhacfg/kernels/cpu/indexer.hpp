// DeepSeek Sparse Attention's lightning indexer on the CPU (ops.hpp's IndexerShape): for each query,
// the score of every key it may see, I(t, s) = sum_h w_h ReLU(q_h . k_s), and the positions of the
// topk best. This is DeepSeek-V3.2's inference code (model.py Indexer.forward, kernel.py fp8_index):
// queries and cached keys in fp8 E4M3 with one fp32 scale per 128 values (act_quant), the head
// weights w_h in fp32 (weights_proj's output with the softmax scale and 1 / sqrt(num_heads) folded
// in), a causal mask over the last q_len positions of kv_len, and the top min(topk, visible) keys: the
// set torch.topk picks, not its order (sparse attention kernels take the positions in any order, and
// in increasing order the gather reads the cache forward).
//
// Work: per query tile (indexer_tile_rows / num_heads queries of one sequence, all their heads as
// rows) and key tile (indexer_key_tile keys, tile_facts.hpp), the key tile is dequantised to fp32, multiplied
// against the tile's queries (an Eigen GEMM of rows x head_dim x keys), and ReLU-weighted-summed over
// the heads into each query's row of scores; a causal tile is computed whole up to its last query's
// last key and only the visible part is selected from. Then each query that sees more than topk keys
// selects: nth_element for the topk-th best score, a scan for the positions at or above it. Queries pass through a workspace of about kIndexerWorkspaceFloats scores.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cpu/fp8.hpp"
#include "mhacfg/kernels/cpu/tile_facts.hpp"

namespace mhacfg::kernels::cpu {

// Scores (and dequantised queries) held between the products and the selection: 1 MiB of fp32, so a
// pass's scores are selected from while still in L2. (16 MiB, allocated and zeroed per call, cost a
// prefill of 1536 tokens ~3 ms of fixed time per call.) A pass holds at least one query tile.
inline constexpr std::int64_t kIndexerWorkspaceFloats = std::int64_t{1} << 18;

// Scales: ceil(head_dim / kFp8ScaleBlock) per head of each query and per key.
struct IndexerParams {
  IndexerShape shape;
  const fp8_e4m3* q = nullptr;      // [batch, q_len, num_heads, head_dim]
  const float* q_scale = nullptr;   // [batch, q_len, num_heads, scale blocks]
  const float* weights = nullptr;   // [batch, q_len, num_heads]: w_h
  const fp8_e4m3* k = nullptr;      // [batch, kv_len, head_dim]: the cached keys
  const float* k_scale = nullptr;   // [batch, kv_len, scale blocks]
  // [batch, q_len, topk]: the positions of the topk best scores (of equal scores at the threshold, the
  // lower positions), in increasing order; a query that sees fewer than topk keys has them all, then -1.
  std::int32_t* indices = nullptr;
  float* scores = nullptr;          // [batch, q_len, topk]: the kept positions' scores (-inf after the last), or null
  int threads = 1;
};

namespace indexer {

// Empty when the shape is supported; otherwise one line naming the field and value.
std::string unsupported_reason(const IndexerShape& s);
inline bool supports(const IndexerShape& s) { return unsupported_reason(s).empty(); }

// Throws InputError for an unsupported shape.
void run(const IndexerParams& p);

}  // namespace indexer

}  // namespace mhacfg::kernels::cpu
