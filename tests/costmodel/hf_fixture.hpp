// The HF import tests' fixtures: tests/fixtures/hf's real config.json files, as read or edited.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg::testing {

inline ModelSpec fixture(const std::string& name) {
  return load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + name + ".json");
}

// A fixture's JSON with `edit` applied (keys erased or set), resolved as if read from a file.
inline ModelSpec edited(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(read_file(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + name + ".json", "fixture"));
  edit(j);
  return spec_from_hf_config(j, name);
}

}  // namespace mhacfg::testing
