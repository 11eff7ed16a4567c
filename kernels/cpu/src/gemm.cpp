// Projection GEMM, C = A B in fp32 on row-major matrices, with the thread count fixed by the params.
//
// v1: Eigen's OpenMP-parallel GEMM for every shape.
// v2: m <= kSkinnyRows (decode-time projections: a few tokens times a weight matrix) streams B's
//     rows through the register-blocked kernel of small_rows.hpp, threads splitting C's columns.
//     Eigen packs all of B for a handful of rows: [8, 4096] x [4096, 6144] ran at 2.4 GFLOP/s
//     (0.6 GB/s of B, 2 threads) against 70 GFLOP/s for 2048^3 in the same run.
#include "mhacfg/kernels/cpu/gemm.hpp"

#include <omp.h>

#include <algorithm>

#include <Eigen/Core>

#include "attention_tiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cpu/tile_facts.hpp"
#include "shape_checks.hpp"
#include "small_rows.hpp"

namespace mhacfg::kernels::cpu {

namespace {

constexpr std::int64_t kSkinnyRows = kTileFacts.skinny_gemm_rows;
// Rows of B per step: every column block of a thread's range is updated before the next rows, so B
// is read in address order.
constexpr std::int64_t kSkinnyDepthStep = 16;

void skinny_gemm(const GemmParams& p) {
  const GemmShape& s = p.shape;
#pragma omp parallel num_threads(p.threads)
  {
    detail::FlushDenormals flush;
    // Column ranges in whole 16-float vectors where possible.
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t per_thread = ((s.n + threads - 1) / threads + 15) / 16 * 16;
    const std::int64_t c0 = std::min(s.n, t * per_thread), c1 = std::min(s.n, c0 + per_thread);
    if (c1 > c0) {
      for (std::int64_t i = 0; i < s.m; ++i) std::fill(p.c + i * s.n + c0, p.c + i * s.n + c1, 0.0f);
      for (std::int64_t kb = 0; kb < s.k; kb += kSkinnyDepthStep)
        detail::small_rows_accumulate(p.a + kb, s.k, s.m, p.b + kb * s.n + c0, s.n,
                                      std::min(kSkinnyDepthStep, s.k - kb), c1 - c0, p.c + c0, s.n);
    }
  }
}

}  // namespace

std::string gemm::unsupported_reason(const GemmShape& s) {
  if (s.m < 1) return detail::field_reason("m", s.m, "must be at least 1");
  if (s.n < 1) return detail::field_reason("n", s.n, "must be at least 1");
  if (s.k < 1) return detail::field_reason("k", s.k, "must be at least 1");
  return {};
}

void gemm::run(const GemmParams& p) {
  if (std::string why = gemm::unsupported_reason(p.shape); !why.empty()) throw InputError("gemm: " + why);
  MHACFG_CHECK(p.a && p.b && p.c, "gemm: null matrix");
  MHACFG_CHECK(p.threads >= 1, "gemm: threads must be at least 1");
  const GemmShape& s = p.shape;
  if (s.m <= kSkinnyRows) {
    skinny_gemm(p);
    return;
  }
  Eigen::setNbThreads(p.threads);
  detail::FlushDenormals flush;
  detail::tile(p.c, s.m, s.n, s.n).noalias() =
      detail::const_tile(p.a, s.m, s.k, s.k) * detail::const_tile(p.b, s.k, s.n, s.n);
}

}  // namespace mhacfg::kernels::cpu
