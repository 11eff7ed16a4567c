// Shipped model presets: real Hugging Face config.json files compiled into the binary
// (configurator/models/*.json).
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

std::vector<std::string> model_preset_names();
// Throws InputError naming --model, with "did you mean", for an unknown name.
ModelSpec load_model_preset(const std::string& name);

}  // namespace mhacfg
