// Status checks for the CUDA runtime and cuBLAS: every call goes through one of these, and a
// failure throws mhacfg::RuntimeFailure with the library's error string, the call and file:line.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

namespace mhacfg::kernels::cuda::detail {

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line);

inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess) throw_cuda_error(e, expr, file, line);
}
inline void check_cublas(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) throw_cublas_error(s, expr, file, line);
}

}  // namespace mhacfg::kernels::cuda::detail

#define MHACFG_CUDA_CHECK(expr) ::mhacfg::kernels::cuda::detail::check_cuda((expr), #expr, __FILE__, __LINE__)
#define MHACFG_CUBLAS_CHECK(expr) ::mhacfg::kernels::cuda::detail::check_cublas((expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: launch-configuration errors surface here, not at the launch.
#define MHACFG_CUDA_CHECK_LAUNCH(what) \
  ::mhacfg::kernels::cuda::detail::check_cuda(cudaGetLastError(), (what), __FILE__, __LINE__)
