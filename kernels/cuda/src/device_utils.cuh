// Device building blocks shared by the attention kernels: cp.async copies into XOR-swizzled shared
// memory, ldmatrix, mma.sync m16n8k16 (bf16 in, fp32 accumulate), fast exp2, PDL wait.
//
// Fragment layouts (PTX ISA, mma.m16n8k16, g = lane / 4, t = lane % 4):
//   A 16x16 (row):   a0 = (g, 2t..2t+1)  a1 = (g+8, 2t..)  a2 = (g, 8+2t..)  a3 = (g+8, 8+2t..)
//   B 16x8  (col):   b0 = (k 2t..2t+1, n g)                b1 = (k 8+2t.., n g)
//   C 16x8  (fp32):  c0,c1 = (g, 2t..2t+1)                 c2,c3 = (g+8, 2t..2t+1)
// The C fragments of two adjacent n-tiles are, packed to bf16, exactly one A fragment: that is how
// P = softmax(S) feeds P V without leaving registers (FlashAttention-2).
//
// Shared-memory tiles hold rows of `RC` 16-byte chunks (RC = row elements / 8, a multiple of 8).
// Chunk c of row r lives at chunk c ^ (r % 8): the 8 rows one ldmatrix phase reads (same logical
// chunk) then hit 8 different 16-byte bank groups, so ldmatrix and cp.async are conflict-free.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace mhacfg::kernels::cuda::detail {

using bf16 = __nv_bfloat16;

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Byte offset of chunk `chunk` of row `row` in a swizzled tile of RC chunks per row.
template <int RC>
__device__ __forceinline__ std::uint32_t swz(int row, int chunk) {
  static_assert(RC % 8 == 0, "swizzled rows need a multiple of 8 chunks");
  return static_cast<std::uint32_t>(row * (RC * 16) + ((chunk ^ (row & 7)) << 4));
}

// ldmatrix addresses for a lane that reads row `row` (+ multiples of 8 rows) at chunks
// c0 + 2 * kk + c (c0 a multiple of 8, c in {0, 1}), kk and the row steps unrolled at compile time.
// Because rows advance in steps of 8 the swizzle term depends only on kk % 4, so 4 registers hold
// every address and each ldmatrix is "base[kk % 4] + immediate" (without this the compiler hoists one
// register per (kk, row step) out of the main loop, which spilled the first build).
template <int RC>
struct SwizzleCursor {
  std::uint32_t base[4];
  __device__ __forceinline__ SwizzleCursor(int row, int c0, int c) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      base[j] = static_cast<std::uint32_t>(row * (RC * 16) + ((c0 + ((2 * j + c) ^ (row & 7))) << 4));
  }
  // Byte offset of (row + 8 * row8, chunk c0 + 2 * kk + c); kk and row8 must be compile-time.
  __device__ __forceinline__ std::uint32_t at(int kk, int row8) const {
    return base[kk & 3] + static_cast<std::uint32_t>((kk >> 2) * 128 + row8 * 8 * RC * 16);
  }
};

// 16-byte asynchronous copy global -> shared, bypassing L1. When !valid nothing is read and the 16
// bytes are zero-filled (src must still be a mapped address: callers pass a safe one).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a * b for one m16n8k16 tile (bf16 inputs, fp32 accumulators).
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats to a bf16 pair (round to nearest even); `lo` lands in the low half (lower column).
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

// 2^x with the SFU (ex2.approx, relative error ~2^-22); 2^-inf = +0.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// Programmatic dependent launch: wait until the preceding kernel in the stream has completed and
// its memory is visible. A no-op when the kernel was launched without the PDL attribute.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Programmatic dependent launch, the other side: from here on the next kernel of the stream (the
// split-KV combine, launched with the PDL attribute) may be scheduled, once every block of this grid
// has passed this point, so its launch overlaps this grid's last wave instead of following it; it
// still waits in grid_dependency_wait until this grid has finished. A no-op without a PDL dependent.
__device__ __forceinline__ void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Hides a value from the optimiser so address arithmetic that depends on it stays where it is
// written (inside the main loop) instead of being hoisted into registers that live across it.
__device__ __forceinline__ std::int64_t opaque(std::int64_t x) {
  asm volatile("" : "+l"(x));
  return x;
}

// Copies `ROWS` rows of RC chunks into a swizzled tile with THREADS threads. Row r (< valid_rows)
// comes from src + r * row_stride; rows >= valid_rows are zero-filled from `safe` (any mapped
// address). Every thread calls it (it only issues cp.async; commit separately).
template <int ROWS, int RC, int THREADS>
__device__ __forceinline__ void load_tile_async(std::uint32_t dst, const bf16* src, std::int64_t row_stride,
                                                int valid_rows, const bf16* safe, int tid) {
  constexpr int kChunks = ROWS * RC;
  static_assert(kChunks % THREADS == 0, "tile chunks must divide evenly among the threads");
  const std::int64_t stride = opaque(row_stride);
  if constexpr (THREADS % RC == 0) {
    // Each thread owns one chunk column and every kRowStep-th row: one running pointer.
    constexpr int kRowStep = THREADS / RC;
    const int r0 = tid / RC, c = tid % RC;
    const bf16* p = src + r0 * stride + c * 8;
    const std::int64_t step = kRowStep * stride;
#pragma unroll
    for (int i = 0; i < kChunks / THREADS; ++i) {
      const int r = r0 + i * kRowStep;
      const bool ok = r < valid_rows;
      cp_async_16(dst + swz<RC>(r, c), ok ? p : safe, ok);
      p += step;
    }
  } else {
#pragma unroll
    for (int i = 0; i < kChunks / THREADS; ++i) {
      const int idx = tid + i * THREADS;
      const int r = idx / RC;
      const int c = idx % RC;
      const bool ok = r < valid_rows;
      cp_async_16(dst + swz<RC>(r, c), ok ? src + r * stride + c * 8 : safe, ok);
    }
  }
}

}  // namespace mhacfg::kernels::cuda::detail
