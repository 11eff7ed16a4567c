// Shipped model presets: real Hugging Face config.json files compiled into the binary
// (configurator/models/*.json and the checked configs of tests/fixtures/hf).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

// A preset's name is its Hugging Face repository's name in lower case, without the organisation, with
// the version the repository names (mistral-7b-v0.1, not mistral-7b).
struct ModelPreset {
  std::string name;
  std::string source;                       // the repository whose config.json it is ("mistralai/Mistral-7B-v0.1")
  std::optional<std::int64_t> max_context;  // the config's max_position_embeddings (GPT-2: n_positions), if stated
};

// Every preset, in name order.
std::vector<ModelPreset> model_presets();
std::vector<std::string> model_preset_names();
// A name --model takes besides the presets' own: of one preset, an alias (mixtral-8x7b means
// mixtral-8x7b-v0.1); of several releases that count differently, refused with their names (mistral-7b).
struct PresetAlias {
  std::string name;
  std::vector<std::string> presets;
};
std::vector<PresetAlias> model_preset_aliases();
// The preset a name or alias means; throws InputError naming --model for an unknown name (with "did you
// mean") and for a name of several releases (listing them). The spec's name is the preset's own.
ModelSpec load_model_preset(const std::string& name);

}  // namespace mhacfg
