// Number formatting shared by every output: tables, rationales and notes read numbers the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mhacfg/costmodel/checked.hpp"

namespace mhacfg {

std::string fmt_int(WideCount v);                    // 8,030,261,248 (every digit of a 128-bit count)
std::string fmt_si(double v, std::string_view unit); // 8.03 G<unit>
std::string fmt_count(double v);                     // 8.03 B, 525.3 M (parameters, tokens)
std::string fmt_bytes(double bytes);                 // 128 KiB, 4.00 GiB
std::string fmt_fixed(double v, int decimals);
std::string fmt_ms(double ms);                       // 0.153 ms, 12.4 ms, 1.53 s
std::string billions(double v);                      // a parameter count: 6.74 B, 133.5 M (not 0.13 B), 5000

}  // namespace mhacfg
