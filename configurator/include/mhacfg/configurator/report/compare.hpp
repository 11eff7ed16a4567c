// `mhacfg compare`: two or more models side by side under one workload and target, with deltas
// against the first.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/configurator/common/defaults.hpp"
#include "mhacfg/configurator/report/report.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

struct CompareOptions {
  std::vector<std::string> models;
  Workload workload;
  std::string target = defaults::target;
  double memory_fraction = defaults::memory_fraction;
  EngineModel engine;  // adds each model's served TTFT and TPOT unless it is `none` (kernels only)
};

Report compare_report(const CompareOptions& o, const std::vector<ModelSpec>& models, const Profile& profile);

}  // namespace mhacfg
