#include "mhacfg/costmodel/errors.hpp"

#include "mhacfg/costmodel/checked.hpp"

namespace mhacfg {

void invariant_failed(const char* expr, const char* file, int line, const std::string& what) {
  throw std::logic_error(std::string(file) + ":" + std::to_string(line) + ": invariant (" + expr +
                         ") failed: " + what);
}

void throw_overflow(const char* quantity) {
  throw InputError(std::string(quantity) + " would overflow a 64-bit count; the inputs are too large");
}

}  // namespace mhacfg
