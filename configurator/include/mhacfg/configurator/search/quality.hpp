// Quality risk of an attention design relative to MHA, keyed on what the evidence is about: the KV
// capacity per layer relative to d_model, head_dim, the variant and how the design sits among the
// released models of its scale (docs/quality-risk.md quotes each source). A level, not a predicted loss.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

// very_high: two or more rules raise the level together (risks compound).
enum class RiskLevel { none = 0, low = 1, medium = 2, high = 3, very_high = 4 };
std::string_view to_string(RiskLevel r);

// How much risk --quality allows: conservative <= low, balanced <= medium, aggressive <= high.
enum class QualityTolerance { conservative, balanced, aggressive };
QualityTolerance parse_quality(std::string_view name);
std::string_view to_string(QualityTolerance q);
RiskLevel max_risk(QualityTolerance q);

// One rule that applied: its id, the levels it added (0 for the base and the rules that only cap or
// inform), the source ids it rests on (the anchors of docs/quality-risk.md) and what it found.
struct RiskRule {
  std::string id;
  int steps = 0;
  std::vector<std::string> sources;
  std::string text;
};

struct QualityRisk {
  RiskLevel level = RiskLevel::none;
  std::string reason;             // one sentence: the deciding rules and the nearest shipped design
  std::string precedent;          // the nearest released model ("Llama-3-8B")
  std::string precedent_design;   // its attention design ("gqa 32q/8kv x 128")
  bool inside_envelope = false;   // within what released models of its scale ship
  // Released models of its family and scale (the envelope's members) that keep no more KV capacity
  // than it does: 1 means a single model ships anything this lean (Falcon-7B for MQA at 7B), many
  // means common practice. The ranking may prefer well-supported designs among equal levels.
  int precedent_support = 0;
  int envelope_members = 0;
  std::vector<RiskRule> rules;
};

QualityRisk assess_quality(const ModelSpec& m);

}  // namespace mhacfg
