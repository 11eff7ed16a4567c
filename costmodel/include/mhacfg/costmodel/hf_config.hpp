// Hugging Face config.json import: each supported model_type's key names and implicit behaviour
// (defaults of its transformers Config class, biases, norms, windows, MoE layout) resolved into one
// ModelSpec.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

const std::vector<std::string_view>& supported_model_types();

// `where` names the source in error messages (a path or preset name). Throws InputError.
ModelSpec spec_from_hf_config(const nlohmann::json& config, const std::string& where);

// Reads and parses a config.json file, or a model folder's (named after the folder). Throws
// InputError naming the file.
ModelSpec load_hf_config(const std::string& path);

}  // namespace mhacfg
