// Prefill attention, fp32, tiled with an online softmax (see prefill_attention.hpp for layouts).
//
// Work item = (sequence, KV head, block of query positions). The block's queries of all `group_size`
// query heads that share the KV head are stacked into one tile of rows (row r = position r / group,
// head r % group), so every K/V tile is loaded once for the whole group and both products run at GEMM
// size: S = Q_tile K_tile^T [rows, key_tile], O += P V_tile. Blocks are handed out heaviest first
// (causal: the last positions see the most keys) with dynamic scheduling.
//
// v1: key tiles are aligned to end at the block's last position, so only one tile per block
// straddles the causal diagonal (the masked waste is a triangle of the block, not of a key tile).
// Measured (mhacfg_kernels_bench --targets, 2 threads, ceiling and kernel alternating): 4096 x 4096
// causal, 32 heads, head_dim 128 runs at 0.88-0.94 of the Eigen SGEMM FLOP/s of the same round
// (61-64 vs 69-70 GFLOP/s on a loaded host, 134-151 vs 129-149 GFLOP/s on a quieter one).
#include "mhacfg/kernels/cpu/prefill_attention.hpp"

#include <algorithm>
#include <vector>

#include <Eigen/Core>

#include "attention_tiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cpu/tile_facts.hpp"
#include "shape_checks.hpp"

namespace mhacfg::kernels::cpu {

namespace {

// Rows (positions x group heads) per query tile and keys per key tile. Tile products at these sizes
// run at ~100 GFLOP/s on one Sapphire Rapids core, within ~10 % of a 2048^3 Eigen SGEMM.
constexpr std::int64_t kTargetRows = kTileFacts.prefill_tile_rows;
constexpr std::int64_t kKeyTile = kTileFacts.prefill_key_tile;

struct Layout {
  std::int64_t group = 1;          // query heads per KV head
  std::int64_t block_positions = 1;  // query positions per tile
  std::int64_t blocks = 1;         // query blocks per (sequence, KV head)
};

Layout layout_for(const AttentionShape& s) {
  Layout l;
  l.group = s.num_q_heads / s.num_kv_heads;
  l.block_positions = std::min(s.q_len, std::max<std::int64_t>(1, kTargetRows / l.group));
  l.blocks = (s.q_len + l.block_positions - 1) / l.block_positions;
  return l;
}

}  // namespace

std::string prefill_attention::unsupported_reason(const AttentionShape& s) {
  if (s.is_mla())
    return detail::field_reason("kv_lora_rank", s.kv_lora_rank,
                                "MLA runs only as absorbed decode on the CPU (mla_decode); prefill is MHA/GQA/MQA");
  return detail::common_attention_reason(s);
}

void prefill_attention::run(const PrefillAttentionParams& p) {
  using namespace detail;
  const AttentionShape& s = p.shape;
  if (std::string why = prefill_attention::unsupported_reason(s); !why.empty())
    throw InputError("prefill_attention: " + why);
  MHACFG_CHECK(p.q && p.k && p.v && p.o, "prefill_attention: null tensor");
  MHACFG_CHECK(p.threads >= 1, "prefill_attention: threads must be at least 1");

  const Layout lay = layout_for(s);
  const std::int64_t nq = s.num_q_heads, nkv = s.num_kv_heads, d = s.head_dim, dv = s.v_head_dim;
  const std::int64_t g = lay.group;
  const float scale = softmax_scale_or_default(p.softmax_scale, d);
  const KeyMask mask(s);
  const std::int64_t items = s.batch * nkv * lay.blocks;

  Eigen::setNbThreads(p.threads);  // tile products inside the parallel region stay single-threaded
#pragma omp parallel num_threads(p.threads)
  {
    FlushDenormals flush;
    RowMatrix q_tile(lay.block_positions * g, d);
    RowMatrix scores(lay.block_positions * g, kKeyTile);
    OnlineSoftmax state;
    std::vector<ColumnRange> valid;

#pragma omp for schedule(dynamic, 1)
    for (std::int64_t item = 0; item < items; ++item) {
      const std::int64_t block = lay.blocks - 1 - item % lay.blocks;  // heaviest first
      const std::int64_t hk = (item / lay.blocks) % nkv;
      const std::int64_t b = item / (lay.blocks * nkv);
      const std::int64_t q0 = block * lay.block_positions;
      const std::int64_t positions = std::min(lay.block_positions, s.q_len - q0);
      const std::int64_t rows = positions * g;

      // Q rows of this block's positions for the group's heads: g * d contiguous floats per position.
      for (std::int64_t i = 0; i < positions; ++i) {
        const float* src = p.q + ((b * s.q_len + q0 + i) * nq + hk * g) * d;
        Eigen::Map<Eigen::ArrayXf>(q_tile.row(i * g).data(), g * d) =
            Eigen::Map<const Eigen::ArrayXf>(src, g * d) * scale;
      }

      const std::int64_t first_pos = s.kv_len - s.q_len + q0;
      const std::int64_t last_pos = first_pos + positions - 1;
      const std::int64_t key_begin = mask.begin(first_pos);
      const std::int64_t key_end = mask.end(last_pos);
      const std::int64_t tiles = (key_end - key_begin + kKeyTile - 1) / kKeyTile;
      state.reset(rows, dv);
      const float* k_seq = p.k + (b * s.kv_len * nkv + hk) * d;
      const float* v_seq = p.v + (b * s.kv_len * nkv + hk) * dv;
      for (std::int64_t t = 0; t < tiles; ++t) {
        // Tiles end at key_end; the first one takes the remainder.
        const std::int64_t k1 = key_end - (tiles - 1 - t) * kKeyTile;
        const std::int64_t k0 = std::max(key_begin, k1 - kKeyTile);
        const std::int64_t cols = k1 - k0;
        const ConstRowMap k_tile = const_tile(k_seq + k0 * nkv * d, cols, d, nkv * d);
        const ConstRowMap v_tile = const_tile(v_seq + k0 * nkv * dv, cols, dv, nkv * dv);
        tile(scores.data(), rows, cols, kKeyTile).noalias() = q_tile.topRows(rows) * k_tile.transpose();
        const bool masked = visible_columns(mask, k0, cols, first_pos, g, rows, valid);
        state.update(scores.data(), kKeyTile, cols, masked ? valid.data() : nullptr, v_tile);
      }

      for (std::int64_t r = 0; r < rows; ++r) {
        float* dst = p.o + ((b * s.q_len + q0 + r / g) * nq + hk * g + r % g) * dv;
        Eigen::Map<Eigen::ArrayXf>(dst, dv) = Eigen::Map<const Eigen::ArrayXf>(state.output(r), dv) / state.sum(r);
      }
    }
  }
}

}  // namespace mhacfg::kernels::cpu
