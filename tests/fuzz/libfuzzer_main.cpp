// libFuzzer entry for one target, chosen at build time (MHACFG_FUZZ_TARGET).
#include <cstddef>
#include <cstdint>

#include "cli_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mhacfg::fuzz::run_target(MHACFG_FUZZ_TARGET, data, size);
  return 0;
}
