#include "mhacfg/configurator/common/format.hpp"

#include <cmath>
#include <cstdio>

namespace mhacfg {

std::string fmt_int(WideCount v) {
  const std::string digits = to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  // Beyond 1e15 fixed notation is unreadable (and past 1e63 would not fit): scientific instead.
  std::snprintf(buf, sizeof buf, std::fabs(v) < 1e15 ? "%.*f" : "%.*e", decimals, v);
  return buf;
}

std::string fmt_si(double v, std::string_view unit) {
  static const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  double a = std::fabs(v);
  while (a >= 1000.0 && i < 6) {
    a /= 1000.0;
    v /= 1000.0;
    ++i;
  }
  const int decimals = a >= 100 ? 1 : 2;
  return fmt_fixed(v, i == 0 && v == std::floor(v) ? 0 : decimals) + " " + prefixes[i] + std::string(unit);
}

std::string fmt_count(double v) {
  static const char* suffixes[] = {"", " K", " M", " B", " T"};
  int i = 0;
  while (std::fabs(v) >= 1000.0 && i < 4) {
    v /= 1000.0;
    ++i;
  }
  if (i == 0) return fmt_fixed(v, 0);
  return fmt_fixed(v, std::fabs(v) >= 100 ? 1 : 2) + suffixes[i];
}

std::string fmt_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024.0 && i < 5) {
    bytes /= 1024.0;
    ++i;
  }
  if (i == 0 || bytes == std::floor(bytes)) return fmt_fixed(bytes, 0) + " " + units[i];
  return fmt_fixed(bytes, std::fabs(bytes) >= 100 ? 1 : 2) + " " + units[i];
}

std::string fmt_ms(double ms) {
  if (ms >= 1000) return fmt_fixed(ms / 1000.0, 2) + " s";
  if (ms >= 100) return fmt_fixed(ms, 0) + " ms";
  if (ms >= 10) return fmt_fixed(ms, 1) + " ms";
  if (ms >= 0.1) return fmt_fixed(ms, 3) + " ms";
  return fmt_fixed(ms * 1000.0, 1) + " us";
}
std::string billions(double v) {
  char buf[48];
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2f B", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.1f M", v / 1e6);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace mhacfg
