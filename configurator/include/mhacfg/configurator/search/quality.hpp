// Quality risk of an attention design relative to MHA, from published ablations (docs/quality-risk.md
// lists the sources and what each rule rests on). Risk is a level, not a predicted loss.
#pragma once

#include <string>
#include <string_view>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

enum class RiskLevel { none = 0, low = 1, medium = 2, high = 3 };
std::string_view to_string(RiskLevel r);

// How much risk --quality allows: conservative <= low, balanced <= medium, aggressive <= high.
enum class QualityTolerance { conservative, balanced, aggressive };
QualityTolerance parse_quality(std::string_view name);
std::string_view to_string(QualityTolerance q);
RiskLevel max_risk(QualityTolerance q);

struct QualityRisk {
  RiskLevel level = RiskLevel::none;
  std::string reason;  // one sentence naming the rule and its source
};

QualityRisk assess_quality(const AttentionSpec& a);

}  // namespace mhacfg
