// fp8 E4M3 storage for the lightning indexer's keys and queries on the CPU, the format DeepSeek's
// inference code and the engines cache them in (torch.float8_e4m3fn): 1 sign bit, 4 exponent bits
// (bias 7), 3 mantissa bits, subnormals, no infinities, 0x7f / 0xff NaN, largest finite 448.
// fp8 -> fp32 is exact (a table of the 256 codes); fp32 -> fp8 rounds to nearest, ties to even, and
// saturates at +-448 (block quantisation scales every block to at most 448, so it never does there).
// Compute is always fp32: a CPU has no fp8 arithmetic, fp8 only quarters the bytes read.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace mhacfg::kernels::cpu {

using fp8_e4m3 = std::uint8_t;

inline constexpr float kFp8E4m3Max = 448.0f;
// Values per fp32 scale in block-quantised tensors (DeepSeek's act_quant block_size).
inline constexpr std::int64_t kFp8ScaleBlock = 128;

inline float fp8_e4m3_decode(fp8_e4m3 b) {
  const int sign = b >> 7, exponent = (b >> 3) & 0xf, mantissa = b & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return NAN;
  const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)  // subnormal: m x 2^-9
                                        : std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  return sign ? -magnitude : magnitude;
}

// The 256 codes' values, once.
inline const std::array<float, 256>& fp8_e4m3_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b) t[static_cast<std::size_t>(b)] = fp8_e4m3_decode(static_cast<fp8_e4m3>(b));
    return t;
  }();
  return table;
}

inline float fp8_e4m3_to_fp32(fp8_e4m3 b) { return fp8_e4m3_table()[b]; }

inline fp8_e4m3 fp32_to_fp8_e4m3(float x) {
  const fp8_e4m3 sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return sign | 0x7f;
  const float a = std::fabs(x);
  if (a == 0.0f) return sign;
  if (a >= kFp8E4m3Max) return sign | 0x7e;
  int e = 0;
  std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1): the leading bit is 2^(e - 1)
  const int exponent = std::max(e - 1, -6);  // below 2^-6 the step stays 2^-9 (subnormals)
  // a in units of the step 2^(exponent - 3), exact in fp32; nearbyint rounds ties to even.
  const int units = static_cast<int>(std::nearbyint(std::ldexp(a, 3 - exponent)));
  if (exponent == -6 && units < 8) return sign | static_cast<fp8_e4m3>(units);  // subnormal (or 0)
  // units in [8, 16]: 16 carries into the next exponent with mantissa 0.
  const int biased = exponent + 7 + (units >> 4), mantissa = units == 16 ? 0 : units - 8;
  const int code = std::min((biased << 3) | mantissa, 0x7e);  // rounding up past 448 saturates
  return sign | static_cast<fp8_e4m3>(code);
}

// Block quantisation as DeepSeek's act_quant (scale = amax / 448 per block of kFp8ScaleBlock values
// of each row, amax at least 1e-4): rows x dim values in, rows x dim codes and rows x
// ceil(dim / kFp8ScaleBlock) scales out; the last block of a row may be shorter.
inline void quantize_fp8_blocks(const float* x, std::int64_t rows, std::int64_t dim, fp8_e4m3* codes, float* scales) {
  const std::int64_t blocks = (dim + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      const std::int64_t c0 = blk * kFp8ScaleBlock, c1 = std::min(dim, c0 + kFp8ScaleBlock);
      float amax = 1e-4f;
      for (std::int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x[r * dim + c]));
      const float scale = amax / kFp8E4m3Max;
      scales[r * blocks + blk] = scale;
      for (std::int64_t c = c0; c < c1; ++c) codes[r * dim + c] = fp32_to_fp8_e4m3(x[r * dim + c] / scale);
    }
}

}  // namespace mhacfg::kernels::cpu
