// Shipped device profiles (profiles/*.json compiled into the binary) and profile lookup by name or
// file path.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

std::vector<std::string> shipped_profile_names();
// A shipped profile's name, or a path to a profile JSON file. `field` names the flag in errors.
Profile load_profile(const std::string& name_or_path, const std::string& field);

}  // namespace mhacfg
