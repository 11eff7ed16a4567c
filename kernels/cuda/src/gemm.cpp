// bf16 GEMM through cuBLASLt (fp32 compute and scale, bf16 out). cuBLAS is column-major; a
// row-major C[m,n] = A[m,k] B[k,n] is the column-major C^T[n,m] = B^T[n,k] A^T[k,m], and a row-major
// matrix read column-major is its transpose, so the call passes B as cuBLAS's A and A as its B with
// no transposes. The heuristic's first algorithm is cached per shape (and pointer alignment).
//
// fp8 e4m3 GEMM (fp32 compute and scale, bf16 out, per-tensor fp32 scales on the device). cuBLASLt's
// fp8 kernels take only the "TN" format: NVIDIA's cublasLtMatmul documentation
// (https://docs.nvidia.com/cuda/cublas/index.html#cublasltmatmul, quoted in
// https://forums.developer.nvidia.com/t/why-is-tn-format-required-for-fp8-in-cublasltmatmul/292575):
// "To use FP8 kernels, the following set of requirements must be satisfied: A must be transposed and B
// non-transposed (The "TN" format)". PyTorch's fp8 _scaled_mm (pytorch/pytorch#108308, "CublasLT
// requires that the matrices be 16 byte aligned", read at
// https://android.googlesource.com/platform/external/pytorch/+/d5ff8ca4ef%5E%21) checks mat1's k and
// both of mat2's sizes to be multiples of 16; we ask the same and 16-byte aligned pointers.
// cublasLt.h (CUDA 13.0) documents CUBLASLT_MATMUL_DESC_A_SCALE_POINTER / B_SCALE_POINTER as "Device pointer to the scale factor value
// that converts data in matrix A [B] to the compute data type range", of the compute type (fp32). The
// mapping: the same column-major C^T[n,m] = op(cA)[n,k] op(cB)[k,m] as above, now with
//   cuBLAS A = our B^T, stored [n,k] row-major = column-major k x n (ld k), op T  -> n x k,
//   cuBLAS B = our A,   stored [m,k] row-major = column-major k x m (ld k), op N  -> k x m,
//   cuBLAS C = D = our C, [m,n] row-major = column-major n x m (ld n), bf16,
// so both operands are k-major (TN), cuBLAS's A scale is our b_scale and its B scale our a_scale.
// Both leading dimensions are k (fp8 bytes), hence k % 16 == 0; C's is n bf16s, and n % 16 == 0 keeps
// B^T's rows whole 16-byte multiples too (PyTorch's mat2 check above). m is free (m = 1: a decode step).
// NVIDIA's sample (CUDALibrarySamples, cuBLASLt/LtFp8Matmul) builds its descriptors the same way:
// layouts of the stored matrices (k rows for a transposed operand), scales set with the two attributes.
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

enum class Kind { bf16, fp8, fp8_fast_accum };

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLAS's A (= our B), B (= our A), C
  cublasLtMatmulAlgo_t algo{};
};

}  // namespace

struct Runner::Impl {
  cublasLtHandle_t handle = nullptr;
  DeviceBuffer workspace;
  // (kind, m, n, k, alignment of our a, our b (or b_t), c) -> plan
  std::map<std::tuple<Kind, std::int64_t, std::int64_t, std::int64_t, int, int, int>, Plan> plans;

  ~Impl() {
    for (auto& [key, p] : plans) {
      if (p.a) cublasLtMatrixLayoutDestroy(p.a);
      if (p.b) cublasLtMatrixLayoutDestroy(p.b);
      if (p.c) cublasLtMatrixLayoutDestroy(p.c);
      if (p.op) cublasLtMatmulDescDestroy(p.op);
    }
    if (handle) cublasLtDestroy(handle);
  }

  // Scale pointers (fp8) are set on the plan's descriptor before its heuristic and again before each call.
  const Plan& plan_for(Kind kind, std::int64_t m, std::int64_t n, std::int64_t k, const void* a, const void* b,
                       const void* c, const float* a_scale = nullptr, const float* b_scale = nullptr) {
    const int al_a = alignment_of(a), al_b = alignment_of(b), al_c = alignment_of(c);
    const auto key = std::make_tuple(kind, m, n, k, al_a, al_b, al_c);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    Plan pl;
    MHACFG_CUBLAS_CHECK(cublasLtMatmulDescCreate(&pl.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t no = CUBLAS_OP_N, tr = CUBLAS_OP_T;
    if (kind == Kind::bf16) {
      MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl.op, CUBLASLT_MATMUL_DESC_TRANSA, &no, sizeof no));
      MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl.op, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no));
      // Column-major views: cuBLAS A = our B as n x k (ld n); cuBLAS B = our A as k x m (ld k); C n x m.
      MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.a, CUDA_R_16BF, n, k, n));
      MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.b, CUDA_R_16BF, k, m, k));
    } else {
      // TN (file header): cuBLAS A = our B^T stored k x n (ld k), transposed; cuBLAS B = our A k x m (ld k).
      MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl.op, CUBLASLT_MATMUL_DESC_TRANSA, &tr, sizeof tr));
      MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl.op, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no));
      set_scales(pl.op, a_scale, b_scale);
      const std::int8_t fast = kind == Kind::fp8_fast_accum ? 1 : 0;
      MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(pl.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
      MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.a, CUDA_R_8F_E4M3, k, n, k));
      MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.b, CUDA_R_8F_E4M3, k, m, k));
    }
    MHACFG_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&pl.c, CUDA_R_16BF, n, m, n));

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
      throw RuntimeFailure(std::string("cuBLASLt has no ") + (kind == Kind::bf16 ? "bf16" : "fp8 e4m3") +
                           " algorithm for m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                           " at " + __FILE__ + ":" + std::to_string(__LINE__));
    }
    pl.algo = result.algo;
    return plans.emplace(key, pl).first->second;
  }

  // cuBLAS's A is our B (b_scale), its B our A (a_scale).
  static void set_scales(cublasLtMatmulDesc_t op, const float* a_scale, const float* b_scale) {
    MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale, sizeof b_scale));
    MHACFG_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale, sizeof a_scale));
  }
};

std::string unsupported_reason(const GemmShape& g) {
  if (g.m < 1 || g.n < 1 || g.k < 1) return "m, n and k must be positive";
  if (g.n % 8 != 0 || g.k % 8 != 0) return "n and k must be multiples of 8 (16-byte rows)";
  if (g.m > (1LL << 31) || g.n > (1LL << 31) || g.k > (1LL << 31)) return "m, n and k must be below 2^31";
  return "";
}

std::string unsupported_reason_fp8(const GemmShape& g) {
  if (g.m < 1 || g.n < 1 || g.k < 1) return "m, n and k must be positive";
  if (g.n % 16 != 0 || g.k % 16 != 0)
    return "n and k must be multiples of 16 (cuBLASLt's fp8 kernels: 16-byte rows of A and B^T)";
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
  const Plan& pl = impl_->plan_for(Kind::bf16, p.m, p.n, p.k, p.a, p.b, p.c);
  const float alpha = 1.f, beta = 0.f;
  MHACFG_CUBLAS_CHECK(cublasLtMatmul(impl_->handle, pl.op, &alpha, p.b, pl.a, p.a, pl.b, &beta, p.c, pl.c, p.c, pl.c,
                                     &pl.algo, impl_->workspace.get(), kWorkspaceBytes, stream));
}

void Runner::run(const Fp8Params& p, Stream stream) {
  const std::string shape = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
  const std::string why = unsupported_reason_fp8(GemmShape{p.m, p.n, p.k});
  if (!why.empty()) throw InputError("fp8 gemm shape", shape, why);
  if (!p.a || !p.b_t || !p.c || !p.a_scale || !p.b_scale)
    throw InputError("fp8 gemm", "null pointer", "a, b_t, c, a_scale and b_scale are required");
  for (const void* ptr : {static_cast<const void*>(p.a), static_cast<const void*>(p.b_t), static_cast<const void*>(p.c)})
    if (alignment_of(ptr) < 16) throw InputError("fp8 gemm", shape, "a, b_t and c must be 16-byte aligned (cuBLASLt fp8)");
  const Kind kind = p.fast_accum ? Kind::fp8_fast_accum : Kind::fp8;
  const Plan& pl = impl_->plan_for(kind, p.m, p.n, p.k, p.a, p.b_t, p.c, p.a_scale, p.b_scale);
  Impl::set_scales(pl.op, p.a_scale, p.b_scale);  // this call's tensors (the plan may be another's)
  const float alpha = 1.f, beta = 0.f;
  MHACFG_CUBLAS_CHECK(cublasLtMatmul(impl_->handle, pl.op, &alpha, p.b_t, pl.a, p.a, pl.b, &beta, p.c, pl.c, p.c, pl.c,
                                     &pl.algo, impl_->workspace.get(), kWorkspaceBytes, stream));
}

}  // namespace mhacfg::kernels::cuda::gemm
