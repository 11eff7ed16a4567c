// Small text helpers the inputs share: how far one name is from another (for "did you mean").
#pragma once

#include <cstddef>
#include <string_view>

namespace mhacfg {

// Levenshtein distance (insertions, deletions, substitutions each cost one), case-sensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace mhacfg
