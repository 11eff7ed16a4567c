// The recommendation as a Report: JSON for scripts, tables and rationale for design reviews.
#pragma once

#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/configurator/report/report.hpp"

namespace mhacfg {

nlohmann::json candidate_json(const Candidate& c, const Recommendation& r);
Report recommend_report(const Recommendation& r);

}  // namespace mhacfg
