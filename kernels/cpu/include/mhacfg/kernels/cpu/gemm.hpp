// Projection GEMM on the CPU (fused QKV, O, MLA down/up projections): C[m,n] = A[m,k] B[k,n] in fp32
// through Eigen's GEMM with a fixed thread count. All matrices are row-major and densely packed.
#pragma once

#include <string>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg::kernels::cpu {

struct GemmParams {
  GemmShape shape;
  const float* a = nullptr;  // [m, k]
  const float* b = nullptr;  // [k, n]
  float* c = nullptr;        // [m, n], overwritten
  int threads = 1;
};

namespace gemm {

// Empty when the shape is supported; otherwise names the field and value.
std::string unsupported_reason(const GemmShape& s);
inline bool supports(const GemmShape& s) { return unsupported_reason(s).empty(); }

// Throws InputError for an unsupported shape. Sets Eigen's (process-wide) thread count to p.threads.
void run(const GemmParams& p);

}  // namespace gemm

}  // namespace mhacfg::kernels::cpu
