// Overflow-checked integer arithmetic for exact counts. An overflow is the user's input being too
// large for an exact count, so it is reported as an InputError naming the quantity.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

// OverflowError: `quantity` would not fit a `bits`-bit count.
[[noreturn]] void throw_overflow(const char* quantity, int bits = 64);

inline std::int64_t mul(std::int64_t a, std::int64_t b, const char* quantity) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow(quantity);
  return r;
}
inline std::int64_t add(std::int64_t a, std::int64_t b, const char* quantity) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow(quantity);
  return r;
}
inline std::int64_t mul(std::int64_t a, std::int64_t b, std::int64_t c, const char* quantity) {
  return mul(mul(a, b, quantity), c, quantity);
}

// An exact count wider than 64 bits (GCC's and Clang's 128-bit integer): FLOPs, which long contexts
// take past 2^63 (one layer's prefill attention at 16M tokens). Exact to 2^127 (1.7e38); beyond that an
// OverflowError, as for the 64-bit counts. docs/cost-model.md, "Counts".
__extension__ typedef __int128 WideCount;

inline WideCount wide_mul(WideCount a, WideCount b, const char* quantity) {
  WideCount r;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow(quantity, 128);
  return r;
}
inline WideCount wide_add(WideCount a, WideCount b, const char* quantity) {
  WideCount r;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow(quantity, 128);
  return r;
}
inline bool fits_int64(WideCount v) { return v >= INT64_MIN && v <= INT64_MAX; }
// A wide count that must fit 64 bits (one kernel call's FLOPs): OverflowError naming `quantity` otherwise.
inline std::int64_t narrow(WideCount v, const char* quantity) {
  if (!fits_int64(v)) throw_overflow(quantity);
  return static_cast<std::int64_t>(v);
}
// The count in decimal digits ("-" first when negative).
std::string to_string(WideCount v);

}  // namespace mhacfg
