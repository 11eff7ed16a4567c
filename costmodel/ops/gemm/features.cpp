// The GEMM op's time-model features: output tiles as units, and the weight elements mhacfg's CPU
// kernels pack (blocked GEMM) or stream in place (skinny GEMM).
#include "mhacfg/costmodel/ops/gemm.hpp"

namespace mhacfg {

OpFeatures op_features(const GemmShape& g, DType dtype, const CpuKernelFacts& facts) {
  OpFeatures f;
  f.flop = static_cast<double>(gemm_flops(g));
  f.bytes = static_cast<double>(gemm_bytes(g, dtype));
  f.streams = static_cast<double>(((g.m + 127) / 128) * ((g.n + 127) / 128));  // 128x128 output tiles
  f.rows = static_cast<double>(g.m);
  // Weight (B) elements a blocked GEMM packs on every call, a cost per call that few rows cannot
  // amortise; the CPU kernels' skinny GEMM (m <= facts.skinny_gemm_rows) reads B in place instead.
  f.elements = g.m > facts.skinny_gemm_rows ? static_cast<double>(g.k) * static_cast<double>(g.n) : 0.0;
  // The skinny kernel (kernels/cpu/src/gemm.cpp) streams B through register blocks of 4, 2 and 1
  // rows: one load of B feeds a block's FMAs, so its time follows the loads, not the FLOPs.
  f.skinny_elements = g.m > facts.skinny_gemm_rows ? 0.0 : static_cast<double>(g.k) * static_cast<double>(g.n);
  return with_kernel_facts(f, facts);
}

}  // namespace mhacfg
