// The GEMM op's counts.
#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/ops/gemm.hpp"

namespace mhacfg {

std::int64_t gemm_flops(const GemmShape& g) {
  return mul(2 * g.m, g.n, g.k, "GEMM FLOPs");  // C[m,n] += A[m,k] B[k,n]
}

std::int64_t gemm_bytes(const GemmShape& g, DType dtype) {
  const std::int64_t elems = add(add(mul(g.m, g.k, "GEMM bytes"), mul(g.k, g.n, "GEMM bytes"), "GEMM bytes"),
                                 mul(g.m, g.n, "GEMM bytes"), "GEMM bytes");
  return dtype_bytes(dtype, elems, "GEMM bytes");
}

}  // namespace mhacfg
