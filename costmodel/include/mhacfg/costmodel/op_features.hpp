// The time model's inputs for one op call (time_model.hpp says how each term enters the prediction).
// Each op kind computes them in its folder under costmodel/ops/.
#pragma once

#include "mhacfg/costmodel/cpu_kernel_facts.hpp"

namespace mhacfg {

struct OpFeatures {
  double flop = 0;
  double bytes = 0;
  double head_dim = 0;   // Q/K width (0 for GEMMs: no head_dim term)
  double causal = 0;     // 1 for a causal mask over more than one query
  double unit_flop = 0;  // FLOPs of the largest work unit
  double streams = 1;    // independent work units (A)
  double rows = 1;       // rows per pass (r)
  double softmax = 0;    // exponentials: query-key pairs x heads (E)
  double elements = 0;   // decode: K/V elements loaded, once per key and KV head (L)
  double masked_flop = 0;  // prefill: FLOPs mhacfg's CPU kernel spends on masked pairs (F_mask)
  double tile_elements = 0;  // prefill: (query tile, key tile) products of mhacfg's CPU kernel x the
                             // tile's rows x (d + d_v): work per key tile whatever its width (T)
  double widened = 0;    // decode: K/V elements stored narrower than fp32 (bf16), widened on load (L_w)
  double skinny_elements = 0;  // GEMM with m <= CpuKernelFacts::skinny_gemm_rows: B elements (k x n) the CPU
                               // skinny kernel streams per pass of its row blocks (L_s); else 0
  double resident_bytes = 0;  // bytes competing for a warm cache between calls (0: `bytes`)
  // The CPU kernels' facts a prediction counts passes with: the skinny GEMM's rows per register block,
  // and the rows beyond which decode packs K/V once for Eigen's GEMM (one pass).
  double skinny_row_block = 4;
  double small_rows_max = 32;
};

// `f` with the prediction's kernel facts taken from `facts`.
inline OpFeatures with_kernel_facts(OpFeatures f, const CpuKernelFacts& facts) {
  f.skinny_row_block = static_cast<double>(facts.row_block);
  f.small_rows_max = static_cast<double>(facts.decode_small_rows);
  return f;
}

}  // namespace mhacfg
