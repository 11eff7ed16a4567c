// Shipped device profiles (profiles/*.json compiled into the binary) and profile lookup by name or
// file path.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/embedded.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

std::vector<std::string> shipped_profile_names();
// How a loaded profile predicts: as it is (a datasheet profile naming `transfer.from` takes that
// profile's fits, scaled), or as the bare datasheet roofline (--roofline).
enum class ProfileBasis { as_shipped, roofline };

// A shipped profile's name, or a path to a profile JSON file. `field` names the flag in errors.
// The rule every shipped-or-file argument follows (profiles, engines): a shipped name wins over a file
// of that name in the working directory; ./NAME or a path with '/' or ending .json reads the file.
// `what` names the kind in the "unknown ..." error.
nlohmann::json load_named_json(const std::string& name_or_path, const std::string& field,
                               const std::vector<EmbeddedFile>& shipped, const std::string& what);
// A profile whose transfer names another profile (shipped name or path) gets its scaled fits here.
Profile load_profile(const std::string& name_or_path, const std::string& field,
                     ProfileBasis basis = ProfileBasis::as_shipped);

}  // namespace mhacfg
