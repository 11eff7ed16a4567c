// bf16 GEMMs through cuBLASLt with fp32 accumulation: row-major C[m,n] = A[m,k] B[k,n], bf16 out.
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

// Owns a cuBLASLt handle, a 32 MiB workspace and the chosen algorithm per shape. One per thread.
class Runner {
 public:
  Runner();
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void run(const Params& p, Stream stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mhacfg::kernels::cuda::gemm
