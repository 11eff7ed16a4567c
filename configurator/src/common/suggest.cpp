#include "mhacfg/configurator/common/suggest.hpp"

#include <algorithm>

#include "mhacfg/costmodel/text.hpp"

namespace mhacfg {


std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(name, c);
    // A prefix of a longer name ("llama-3" for "llama-3-8b") is a strong hint.
    if (!name.empty() && c.compare(0, name.size(), name) == 0) d = std::min<std::size_t>(d, 1);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // Allow about a third of the name to be wrong.
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  return best_distance <= limit ? best : std::string();
}

std::string suggestion_suffix(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string best = closest_name(name, candidates);
  if (!best.empty()) return " (did you mean " + best + "?)";
  std::string list;
  for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
  return " (known: " + list + ")";
}

}  // namespace mhacfg
