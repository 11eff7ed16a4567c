// Data files compiled into the binary (model presets, shipped device profiles).
#pragma once

#include <string_view>
#include <vector>

namespace mhacfg {

struct EmbeddedFile {
  std::string_view name;     // file name without its .json extension
  std::string_view content;
};

}  // namespace mhacfg
