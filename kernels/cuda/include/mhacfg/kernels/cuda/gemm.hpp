// bf16 GEMMs through cuBLASLt with fp32 accumulation: row-major C[m,n] = A[m,k] B[k,n], bf16 out; and
// fp8 e4m3 GEMMs (per-tensor fp32 scales, fp32 compute, bf16 out), whose B is given transposed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda::gemm {

struct Params {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  const Bf16* a = nullptr;  // [m, k] row-major, contiguous
  const Bf16* b = nullptr;  // [k, n] row-major, contiguous
  Bf16* c = nullptr;        // [m, n] row-major, contiguous
};

// n and k must be multiples of 8 (16-byte rows for cuBLASLt's bf16 kernels).
std::string unsupported_reason(const GemmShape& shape);

// fp8: row-major C[m,n] = (a_scale A[m,k]) (b_scale B[k,n]) with A and B in e4m3 and B stored
// transposed, B^T[n,k] row-major (k-major: the [out_features, in_features] layout engines keep fp8
// weights in), because cuBLASLt's fp8 kernels take only k-major operands (gemm.cpp). Scales are device
// pointers to one fp32 each. fast_accum: cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM (products summed
// without periodic promotion to fp32; faster, less accurate); off by default.
struct Fp8Params {
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  const Fp8E4m3* a = nullptr;    // [m, k] row-major, contiguous
  const Fp8E4m3* b_t = nullptr;  // [n, k] row-major, contiguous (B transposed)
  const float* a_scale = nullptr;  // device, 1 float
  const float* b_scale = nullptr;  // device, 1 float
  Bf16* c = nullptr;               // [m, n] row-major, contiguous
  bool fast_accum = false;
};

// fp8: k and n must be multiples of 16 (16-byte rows of A and B^T; PyTorch's scaled_mm asks the same).
std::string unsupported_reason_fp8(const GemmShape& shape);

// Owns a cuBLASLt handle, a 32 MiB workspace and the chosen algorithm per shape. One per thread.
class Runner {
 public:
  Runner();
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void run(const Params& p, Stream stream);
  void run(const Fp8Params& p, Stream stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mhacfg::kernels::cuda::gemm
