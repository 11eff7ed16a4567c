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
struct EngineModel;

// With a profile, the predicted kernel times and, with an engine (its costs beyond the kernels), the
// served times: TTFT of one request at the prompt, TPOT at the batch and context.
Report analyze_report(const ModelSpec& m, const Workload& w, const Profile* profile, const EngineModel* engine = nullptr);

}  // namespace mhacfg
