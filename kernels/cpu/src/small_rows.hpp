// Register-blocked products for tiles with few query rows (decode: q_len x group_size <= 16 rows),
// reading K/V rows in place, fp32 or bf16 (widened in registers). At such row counts Eigen's GEMM
// spends its time packing the K/V tile: it moves 4-6 G elements/s per Sapphire Rapids core at 2-8
// rows, below the 12.5 G bf16 elements/s that two cores' memory bandwidth delivers.
//
// Vectors are GCC/Clang vector extensions of 16 floats (one AVX-512 register; compilers split them
// on narrower SIMD); `a * b + c` in one expression is contracted to an FMA. Loops over the
// accumulators are do-while (callers guarantee one trip): with a zero-trip path GCC 12 keeps the
// accumulator arrays on the stack, which halved the score kernel. In L1/L2, one core, 4 rows,
// head_dim 128: scores 8.5-9.3 G elements/s, accumulate 9.4-12.7 (fp32 / bf16).
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "mhacfg/kernels/cpu/tile_facts.hpp"
#include "mhacfg/kernels/cpu/bf16.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mhacfg::kernels::cpu::detail {

// Rows are blocked 4, 2, 1 below (rows_of); the CPU cost model counts K/V passes the same way.
static_assert(kTileFacts.row_block == 4, "small_rows blocks 4, 2 and 1 rows");

typedef float f32x16 __attribute__((vector_size(64)));
typedef std::uint32_t u32x16 __attribute__((vector_size(64)));
typedef std::uint16_t u16x16 __attribute__((vector_size(32)));

inline f32x16 load16(const float* p) {
  f32x16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline f32x16 load16(const bf16_bits* p) {
#if defined(__AVX512F__)
  // GCC splits __builtin_convertvector into 256-bit halves (5 instructions instead of 1).
  // GCC 12's avx512fintrin.h passes `__m512i __Y = __Y;` (_mm512_undefined_epi32) to these two
  // intrinsics, which -Wuninitialized reports once they are inlined here (fixed in GCC 13's header).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
#pragma GCC diagnostic pop
#else
  u16x16 h;
  std::memcpy(&h, p, sizeof h);
  return reinterpret_cast<f32x16>(__builtin_convertvector(h, u32x16) << 16);
#endif
}
inline float load1(const float* p) { return *p; }
inline float load1(const bf16_bits* p) { return bf16_to_fp32(*p); }
inline void store16(float* p, f32x16 v) { std::memcpy(p, &v, sizeof v); }

// out[i] = horizontal sum of a[i], for 16 vectors: a transpose-and-add network (15 adds, 30
// two-source shuffles) instead of 16 separate horizontal sums.
inline f32x16 reduce16(const f32x16 (&a)[16]) {
  f32x16 t1[8], t2[4], t3[2];
  for (int j = 0; j < 8; ++j)  // t1[j] = [a[j] partials x8 | a[j + 8] partials x8]
    t1[j] = __builtin_shufflevector(a[j], a[j + 8], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
            __builtin_shufflevector(a[j], a[j + 8], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  for (int j = 0; j < 4; ++j)  // t2[j] = groups of 4: a[j], a[j + 4], a[j + 8], a[j + 12]
    t2[j] = __builtin_shufflevector(t1[j], t1[j + 4], 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27) +
            __builtin_shufflevector(t1[j], t1[j + 4], 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int j = 0; j < 2; ++j)  // t3[j] = pairs: a[j], a[j + 2], ..., a[j + 14]
    t3[j] = __builtin_shufflevector(t2[j], t2[j + 2], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29) +
            __builtin_shufflevector(t2[j], t2[j + 2], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
  return __builtin_shufflevector(t3[0], t3[1], 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30) +
         __builtin_shufflevector(t3[0], t3[1], 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
}

inline float hsum(f32x16 v) {
  float lanes[16];
  store16(lanes, v);
  float sum = 0;
  for (float x : lanes) sum += x;
  return sum;
}

// Scores of RB query rows against KB = 16 / RB keys: s[r * ld_s + t] = q_r . k_t over dim. The
// accumulator of (row r, key t) is acc[r * KB + t], so after reduce16 each row's KB scores are
// adjacent lanes and leave with one store.
template <int RB, class KvT>
inline void score_block(const float* q, std::int64_t ld_q, const KvT* k, std::int64_t ld_k, std::int64_t dim,
                        float* s, std::int64_t ld_s) {
  constexpr int KB = 16 / RB;
  f32x16 acc[16];
  for (f32x16& a : acc) a = f32x16{};
  const std::int64_t vec_dim = dim & ~std::int64_t{15};
  std::int64_t x = 0;
  do {  // dim >= 16 (callers check): no zero-trip path, so the accumulators stay in registers
    f32x16 qv[RB];
    for (int r = 0; r < RB; ++r) qv[r] = load16(q + r * ld_q + x);
    for (int t = 0; t < KB; ++t) {
      const f32x16 kv = load16(k + t * ld_k + x);
      for (int r = 0; r < RB; ++r) acc[r * KB + t] = qv[r] * kv + acc[r * KB + t];
    }
  } while ((x += 16) < vec_dim);
  float out[16];
  store16(out, reduce16(acc));
  for (std::int64_t x = vec_dim; x < dim; ++x)  // dims past the last multiple of 16
    for (int t = 0; t < KB; ++t)
      for (int r = 0; r < RB; ++r) out[r * KB + t] += q[r * ld_q + x] * load1(k + t * ld_k + x);
  for (int r = 0; r < RB; ++r) std::memcpy(s + r * ld_s, out + r * KB, KB * sizeof(float));
}

// Scores of RB rows against one key (the keys after the last full block).
template <int RB, class KvT>
inline void score_key(const float* q, std::int64_t ld_q, const KvT* k, std::int64_t dim, float* s, std::int64_t ld_s) {
  f32x16 acc[RB];
  for (f32x16& a : acc) a = f32x16{};
  const std::int64_t vec_dim = dim & ~std::int64_t{15};
  for (std::int64_t x = 0; x < vec_dim; x += 16) {
    const f32x16 kv = load16(k + x);
    for (int r = 0; r < RB; ++r) acc[r] = load16(q + r * ld_q + x) * kv + acc[r];
  }
  for (int r = 0; r < RB; ++r) {
    float sum = hsum(acc[r]);
    for (std::int64_t x = vec_dim; x < dim; ++x) sum += q[r * ld_q + x] * load1(k + x);
    s[r * ld_s] = sum;
  }
}

// s [rows, n] = Q [rows, dim] K[n, dim]^T; rows ld_q, ld_k, ld_s elements apart.
template <class KvT>
void small_rows_scores(const float* q, std::int64_t ld_q, std::int64_t rows, const KvT* k, std::int64_t ld_k,
                       std::int64_t n, std::int64_t dim, float* s, std::int64_t ld_s) {
  std::int64_t r = 0;
  auto rows_of = [&](auto rb) {
    constexpr int RB = decltype(rb)::value, KB = 16 / RB;
    for (; r + RB <= rows; r += RB) {
      std::int64_t t = 0;
      if (dim >= 16)
        for (; t + KB <= n; t += KB) score_block<RB>(q + r * ld_q, ld_q, k + t * ld_k, ld_k, dim, s + r * ld_s + t, ld_s);
      for (; t < n; ++t) score_key<RB>(q + r * ld_q, ld_q, k + t * ld_k, dim, s + r * ld_s + t, ld_s);
    }
  };
  rows_of(std::integral_constant<int, 4>{});
  rows_of(std::integral_constant<int, 2>{});
  rows_of(std::integral_constant<int, 1>{});
}

// o[r, c0 : c0 + 16 * CB] += sum_t p[r, t] v[t, c0 : c0 + 16 * CB] for RB rows.
template <int RB, int CB, class KvT>
inline void accumulate_block(const float* p, std::int64_t ld_p, const KvT* v, std::int64_t ld_v, std::int64_t n,
                             float* o, std::int64_t ld_o) {
  f32x16 acc[RB][CB];
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) acc[r][c] = load16(o + r * ld_o + 16 * c);
  std::int64_t t = 0;
  do {  // n >= 1: no zero-trip path, so the accumulators stay in registers
    f32x16 vv[CB];
    for (int c = 0; c < CB; ++c) vv[c] = load16(v + t * ld_v + 16 * c);
    for (int r = 0; r < RB; ++r) {
      const float pr = p[r * ld_p + t];
      for (int c = 0; c < CB; ++c) acc[r][c] = pr * vv[c] + acc[r][c];
    }
  } while (++t < n);
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) store16(o + r * ld_o + 16 * c, acc[r][c]);
}

// O [rows, dim] += P [rows, n] V [n, dim].
template <class KvT>
void small_rows_accumulate(const float* p, std::int64_t ld_p, std::int64_t rows, const KvT* v, std::int64_t ld_v,
                           std::int64_t n, std::int64_t dim, float* o, std::int64_t ld_o) {
  if (n <= 0) return;
  std::int64_t r = 0;
  auto rows_of = [&](auto rb) {
    constexpr int RB = decltype(rb)::value;
    for (; r + RB <= rows; r += RB) {
      std::int64_t c = 0;
      for (; c + 64 <= dim; c += 64) accumulate_block<RB, 4>(p + r * ld_p, ld_p, v + c, ld_v, n, o + r * ld_o + c, ld_o);
      for (; c + 16 <= dim; c += 16) accumulate_block<RB, 1>(p + r * ld_p, ld_p, v + c, ld_v, n, o + r * ld_o + c, ld_o);
      for (; c < dim; ++c)
        for (int rr = 0; rr < RB; ++rr) {
          float sum = o[(r + rr) * ld_o + c];
          for (std::int64_t t = 0; t < n; ++t) sum += p[(r + rr) * ld_p + t] * load1(v + t * ld_v + c);
          o[(r + rr) * ld_o + c] = sum;
        }
    }
  };
  rows_of(std::integral_constant<int, 4>{});
  rows_of(std::integral_constant<int, 2>{});
  rows_of(std::integral_constant<int, 1>{});
}

}  // namespace mhacfg::kernels::cpu::detail
