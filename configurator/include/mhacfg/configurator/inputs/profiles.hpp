// Shipped device profiles (profiles/*.json compiled into the binary) and profile lookup by name or
// file path.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

std::vector<std::string> shipped_profile_names();
// How a loaded profile predicts: as it is (a datasheet profile naming `transfer.from` takes that
// profile's fits, scaled), or as the bare datasheet roofline (--roofline).
enum class ProfileBasis { as_shipped, roofline };

// A shipped profile's name, or a path to a profile JSON file. `field` names the flag in errors.
// A profile whose transfer names another profile (shipped name or path) gets its scaled fits here.
Profile load_profile(const std::string& name_or_path, const std::string& field,
                     ProfileBasis basis = ProfileBasis::as_shipped);

}  // namespace mhacfg
