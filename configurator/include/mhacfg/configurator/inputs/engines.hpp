// Serving-engine models: the shipped presets (profiles/engines/*.json compiled into the binary) and
// engine files written by calibrate from a user's own serving benchmarks.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

// The engine predictions describe unless --engine says otherwise.
inline constexpr const char* kDefaultEngine = "vllm";

std::vector<std::string> shipped_engine_names();
// A shipped engine's name (vllm, sglang, trtllm, none) or an engine JSON file.
EngineModel load_engine(const std::string& name_or_path, const std::string& field = "--engine");

}  // namespace mhacfg
