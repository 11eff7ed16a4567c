// Overflow-checked integer arithmetic for exact counts. An overflow is the user's input being too
// large for an exact count, so it is reported as an InputError naming the quantity.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

[[noreturn]] void throw_overflow(const char* quantity);

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

}  // namespace mhacfg
