#include "mhacfg/costmodel/errors.hpp"

#include "mhacfg/costmodel/checked.hpp"

namespace mhacfg {

std::string shown_value(const std::string& value) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (out.size() >= kShownValueChars) {
      out += "... (" + std::to_string(value.size()) + " bytes)";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void invariant_failed(const char* expr, const char* file, int line, const std::string& what) {
  throw std::logic_error(std::string(file) + ":" + std::to_string(line) + ": invariant (" + expr +
                         ") failed: " + what);
}

void throw_overflow(const char* quantity) {
  throw InputError(std::string(quantity) + " would overflow a 64-bit count; the inputs are too large");
}

}  // namespace mhacfg
