// "Did you mean ...?" for unknown names (subcommands, flags, presets, profiles), as ninja does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mhacfg {

// The candidate closest to `name` by edit distance, or empty when none is plausibly meant.
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean X?)" or " (known: a, b, c)" when nothing is close; for the end of an error message.
std::string suggestion_suffix(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace mhacfg
