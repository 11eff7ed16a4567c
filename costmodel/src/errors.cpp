#include "mhacfg/costmodel/errors.hpp"

#include "mhacfg/costmodel/checked.hpp"

namespace mhacfg {

std::string escaped(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string shown_value(const std::string& value) {
  if (value.size() <= kShownValueChars) return escaped(value);
  std::size_t cut = kShownValueChars;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return escaped(value.substr(0, cut)) + "... (" + std::to_string(value.size()) + " bytes)";
}

void invariant_failed(const char* expr, const char* file, int line, const std::string& what) {
  throw std::logic_error(std::string(file) + ":" + std::to_string(line) + ": invariant (" + expr +
                         ") failed: " + what);
}

void throw_overflow(const char* quantity, int bits) {
  throw OverflowError(std::string(quantity) + " would overflow a " + std::to_string(bits) +
                      "-bit count; the inputs are too large");
}

std::string to_string(WideCount v) {
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u > 0);
  return negative ? "-" + digits : digits;
}

}  // namespace mhacfg
