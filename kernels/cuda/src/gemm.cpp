// bf16 GEMM through cuBLASLt (fp32 compute and scale, bf16 out). cuBLAS is column-major; a
// row-major C[m,n] = A[m,k] B[k,n] is the column-major C^T[n,m] = B^T[n,k] A^T[k,m], and a row-major
// matrix read column-major is its transpose, so the call passes B as cuBLAS's A and A as its B with
// no transposes. The heuristic's first algorithm is cached per shape (and pointer alignment).
#include "mhacfg/kernels/cuda/gemm.hpp"

#include <map>
#include <tuple>

#include "check.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cuda::gemm {

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

int alignment_of(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  int a = 256;
  while (a > 2 && v % a != 0) a /= 2;
  return a;
}

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLAS's A (= our B), B (= our A), C
  cublasLtMatmulAlgo_t algo{};
};

}  // namespace

struct Runner::Impl {
  cublasLtHandle_t handle = nullptr;
  DeviceBuffer workspace;
  // (m, n, k, alignment of a, b, c) -> plan
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int, int, int>, Plan> plans;

  ~Impl() {
    for (auto& [key, p] : plans) {
      if (p.a) cublasLtMatrixLayoutDestroy(p.a);
      if (p.b) cublasLtMatrixLayoutDestroy(p.b);
      if (p.c) cublasLtMatrixLayoutDestroy(p.c);
      if (p.op) cublasLtMatmulDescDestroy(p.op);
    }
    if (handle) cublasLtDestroy(handle);
  }

  const Plan& plan_for(const Params& p) {
    const int al_a = alignment_of(p.a), al_b = alignment_of(p.b), al_c = alignment_of(p.c);
    const auto key = std::make_tuple(p.m, p.n, p.k, al_a, al_b, al_c);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    Plan pl;
    MHACFG_CUBLAS_CHECK(cublasLtMatmulDescCreate(&pl.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t no = CUBLAS_OP_N;
    MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl.op, CUBLASLT_MATMUL_DESC_TRANSA, &no, sizeof no));
    MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl.op, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no));
    // Column-major views: cuBLAS A = our B as n x k (ld n); cuBLAS B = our A as k x m (ld k); C n x m.
    MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.a, CUDA_R_16BF, p.n, p.k, p.n));
    MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.b, CUDA_R_16BF, p.k, p.m, p.k));
    MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.c, CUDA_R_16BF, p.n, p.m, p.n));

    cublasLtMatmulPreference_t pref = nullptr;
    MHACFG_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = kWorkspaceBytes;
    const std::uint32_t ua = static_cast<std::uint32_t>(al_b), ub = static_cast<std::uint32_t>(al_a),
                        uc = static_cast<std::uint32_t>(al_c);
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &ua, sizeof ua);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ub, sizeof ub);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &uc, sizeof uc);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &uc, sizeof uc);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(handle, pl.op, pl.a, pl.b, pl.c, pl.c, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    auto destroy = [&] {
      cublasLtMatrixLayoutDestroy(pl.a);
      cublasLtMatrixLayoutDestroy(pl.b);
      cublasLtMatrixLayoutDestroy(pl.c);
      cublasLtMatmulDescDestroy(pl.op);
    };
    if (st != CUBLAS_STATUS_SUCCESS) {
      destroy();
      MHACFG_CUBLAS_CHECK(st);
    }
    if (found == 0) {
      destroy();
      throw RuntimeFailure("cuBLASLt has no bf16 algorithm for m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
                           " k=" + std::to_string(p.k) + " at " + __FILE__ + ":" + std::to_string(__LINE__));
    }
    pl.algo = result.algo;
    return plans.emplace(key, pl).first->second;
  }
};

std::string unsupported_reason(const GemmShape& g) {
  if (g.m < 1 || g.n < 1 || g.k < 1) return "m, n and k must be positive";
  if (g.n % 8 != 0 || g.k % 8 != 0) return "n and k must be multiples of 8 (16-byte rows)";
  if (g.m > (1LL << 31) || g.n > (1LL << 31) || g.k > (1LL << 31)) return "m, n and k must be below 2^31";
  return "";
}

Runner::Runner() : impl_(std::make_unique<Impl>()) {
  MHACFG_CUBLAS_CHECK(cublasLtCreate(&impl_->handle));
  impl_->workspace = DeviceBuffer(kWorkspaceBytes);
}

Runner::~Runner() = default;

void Runner::run(const Params& p, Stream stream) {
  const std::string why = unsupported_reason(GemmShape{p.m, p.n, p.k});
  if (!why.empty()) throw InputError("gemm shape", std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k), why);
  if (!p.a || !p.b || !p.c) throw InputError("gemm", "null pointer", "a, b and c are required");
  const Plan& pl = impl_->plan_for(p);
  const float alpha = 1.f, beta = 0.f;
  MHACFG_CUBLAS_CHECK(cublasLtMatmul(impl_->handle, pl.op, &alpha, p.b, pl.a, p.a, pl.b, &beta, p.c, pl.c, p.c, pl.c,
                                     &pl.algo, impl_->workspace.get(), kWorkspaceBytes, stream));
}

}  // namespace mhacfg::kernels::cuda::gemm
