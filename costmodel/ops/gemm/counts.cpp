// The GEMM op's counts.
#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/ops/gemm.hpp"

namespace mhacfg {

WideCount gemm_flops(const GemmShape& g) {
  const char* what = "GEMM FLOPs";
  return wide_mul(wide_mul(2, g.m, what), mul(g.n, g.k, what), what);  // C[m,n] += A[m,k] B[k,n]
}

std::int64_t gemm_bytes(const GemmShape& g, DType dtype) {
  const char* what = "GEMM bytes";
  // A in the dtype the GEMM multiplies in (engines quantise the activations of fp8 and fp4 GEMMs, with
  // their block scales; weight-only int4 reads bf16 activations), B as stored with its scales, C in the
  // output dtype.
  const std::int64_t a = stored_bytes(compute_dtype(dtype), mul(g.m, g.k, what), what);
  const std::int64_t b = stored_bytes(dtype, mul(g.k, g.n, what), what);
  const std::int64_t c = dtype_bytes(gemm_output_dtype(dtype), mul(g.m, g.n, what), what);
  return add(add(a, b, what), c, what);
}

}  // namespace mhacfg
