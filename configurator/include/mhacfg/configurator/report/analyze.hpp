// `mhacfg analyze`: every exact count of one model under one workload (and, with a device profile,
// predicted times), as one Report.
#pragma once

#include <optional>

#include "mhacfg/configurator/common/describe.hpp"
#include "mhacfg/configurator/report/report.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

struct Profile;

Report analyze_report(const ModelSpec& m, const Workload& w, const Profile* profile);

}  // namespace mhacfg
