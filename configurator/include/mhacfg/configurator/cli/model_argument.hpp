// A model named on the command line: a preset, a config.json path or key=value model flags.
#pragma once

#include <string>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

// One model argument: a preset name, a config.json path, or "key=value,..." model flags
// (e.g. "model=llama-3-8b,kv-heads=4" or "d-model=4096,layers=32,heads=32,kv-heads=8").
ModelSpec resolve_model_argument(const std::string& arg);

}  // namespace mhacfg
