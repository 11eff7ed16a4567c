// `mhacfg compare`: two or more models side by side under one workload and target, with deltas
// against the first.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/configurator/report.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

// One model argument: a preset name, a config.json path, or "key=value,..." model flags
// (e.g. "model=llama-3-8b,kv-heads=4" or "d-model=4096,layers=32,heads=32,kv-heads=8").
ModelSpec resolve_model_argument(const std::string& arg);

struct CompareOptions {
  std::vector<std::string> models;
  Workload workload;
  std::string target = "h100-sxm";
  double memory_fraction = 0.9;
};

Report compare_report(const CompareOptions& o, const std::vector<ModelSpec>& models, const Profile& profile);

}  // namespace mhacfg
