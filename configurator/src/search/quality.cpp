#include "mhacfg/configurator/search/quality.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>

#include "mhacfg/configurator/search/precedents.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

std::string_view to_string(RiskLevel r) {
  switch (r) {
    case RiskLevel::none: return "none";
    case RiskLevel::low: return "low";
    case RiskLevel::medium: return "medium";
    case RiskLevel::high: return "high";
    case RiskLevel::very_high: return "very_high";
  }
  MHACFG_CHECK(false, "unknown RiskLevel");
}

QualityTolerance parse_quality(std::string_view name) {
  if (name == "conservative") return QualityTolerance::conservative;
  if (name == "balanced") return QualityTolerance::balanced;
  if (name == "aggressive") return QualityTolerance::aggressive;
  throw InputError("--quality", std::string(name), "unknown quality tolerance (expected conservative, balanced or aggressive)");
}

std::string_view to_string(QualityTolerance q) {
  switch (q) {
    case QualityTolerance::conservative: return "conservative";
    case QualityTolerance::balanced: return "balanced";
    case QualityTolerance::aggressive: return "aggressive";
  }
  MHACFG_CHECK(false, "unknown QualityTolerance");
}

RiskLevel max_risk(QualityTolerance q) {
  switch (q) {
    case QualityTolerance::conservative: return RiskLevel::low;
    case QualityTolerance::balanced: return RiskLevel::medium;
    case QualityTolerance::aggressive: return RiskLevel::high;
  }
  MHACFG_CHECK(false, "unknown QualityTolerance");
}

namespace {

// The fewest keys per query a sparse design was validated with: DeepSeek-V3.2-Exp selects 2048 and
// matched its dense twin (docs/quality-risk.md, "deepseek-v3.2-exp").
constexpr std::int64_t kValidatedTopk = 2048;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string size_text(double params) {
  if (params >= 1e12) return fixed(params / 1e12, 1) + "T";
  if (params >= 1e9) return fixed(params / 1e9, params >= 1e10 ? 0 : 1) + "B";
  return fixed(params / 1e6, 0) + "M";
}

std::string family_text(AttentionVariant v) { return v == AttentionVariant::mla ? "MLA" : "MHA/GQA/MQA"; }

// Levels for a shortfall of `factor` (> 1) below what shipped: one up to 2x, two beyond.
int shortfall_steps(double factor) { return factor <= 2.0 + 1e-9 ? 1 : 2; }

// The base level: the variant's standing in the ablations that trained it against MHA (0 for MHA,
// else 1), with its rule.
int variant_rule(AttentionVariant v, std::vector<RiskRule>& rules) {
  switch (v) {
    case AttentionVariant::mha:
      rules.push_back({"variant", 0, {}, "MHA is the baseline"});
      break;
    case AttentionVariant::gqa:
      rules.push_back({"variant", 0, {"deepseek-v2-d1", "llama2-a2.1", "ainslie2023"},
                   "GQA scored below MHA at 7B (DeepSeek-V2 App. D.1) and comparably at 30B (Llama 2 App. A.2.1)"});
      break;
    case AttentionVariant::mqa:
      rules.push_back({"variant", 0, {"deepseek-v2-d1", "llama2-a2.1", "shazeer2019", "ainslie2023"},
                   "MQA scored below MHA and GQA at 7B and 30B (DeepSeek-V2 App. D.1; Llama 2 App. A.2.1), slightly below "
                   "MHA in Shazeer 2019"});
      break;
    case AttentionVariant::mla:
      rules.push_back({"variant", 0, {"deepseek-v2-d2"},
                   "MLA scored above MHA at 16B and 250B MoE in DeepSeek-V2 App. D.2, the one published comparison"});
      break;
  }
  return v == AttentionVariant::mha ? 0 : 1;
}

// The sentence: the rules that raised the level, else the base rule with the envelope and sparse ones.
std::string risk_sentence(const std::vector<RiskRule>& rules) {
  std::string why;
  for (const RiskRule& r : rules)
    if (r.steps > 0) why += (why.empty() ? "" : "; ") + r.text;
  if (why.empty()) {
    why = rules.front().text;
    for (const RiskRule& r : rules)
      if (r.id == "envelope" || r.id == "sparse-topk") why += "; " + r.text;
  }
  return why;
}

}  // namespace

QualityRisk assess_quality(const ModelSpec& m) {
  const DesignPoint d = design_point(m);
  const Envelope env = envelope_at(d);
  const Precedent& near = nearest_precedent(d);
  QualityRisk q;
  q.precedent = near.name;
  q.precedent_design = near.design();
  q.inside_envelope = inside_envelope(d);
  q.envelope_members = static_cast<int>(env.members.size());
  for (const Precedent* p : env.members) q.precedent_support += design_point(*p).kv_ratio <= d.kv_ratio * (1 + 1e-9);

  const int base = variant_rule(d.variant, q.rules);

  int steps = 0, factors = 0;
  const std::string band = size_text(env.params_lo) + "-" + size_text(env.params_hi);
  // KV capacity below the least any released model of the family ships at this scale.
  if (env.least_kv && d.kv_ratio < env.min_kv_ratio * (1 - 1e-9)) {
    const double factor = env.min_kv_ratio / d.kv_ratio;
    const int s = shortfall_steps(factor);
    steps += s;
    ++factors;
    q.rules.push_back({"kv-capacity", s, {"precedents", "ainslie2023", "deepseek-v2-d1"},
                       "KV capacity " + fixed(d.kv_ratio, 3) + " x d_model is " + fixed(factor, 1) +
                           "x below common practice for released " + family_text(d.variant) + " models of " + band + " (" +
                           fixed(env.min_kv_ratio, 3) + ", " + env.least_kv->name + "'s: " + std::to_string(env.kv_support) +
                           " of the " + std::to_string(env.kv_sample) + " nearest in size ship at or below it)"});
  }
  // Narrow heads: below the narrowest shipped at this scale, one level per halving (two at most).
  if (d.head_dim < env.min_head_dim) {
    const int s = std::min(2, static_cast<int>(std::ceil(std::log2(double(env.min_head_dim) / double(d.head_dim)) - 1e-9)));
    steps += s;
    ++factors;
    q.rules.push_back({"head-dim-narrow", s, {"bhojanapalli2020", "shazeer2019", "precedents"},
                       "head_dim " + std::to_string(d.head_dim) + " is below the narrowest released at " + band + " (" +
                           std::to_string(env.min_head_dim) + "): small heads bottleneck each head's rank"});
  }
  // Wide heads: wider than any released at this scale (fewer, wider heads); no ablation, a judgement.
  if (d.head_dim > env.max_head_dim) {
    steps += 1;
    ++factors;
    q.rules.push_back({"head-dim-wide", 1, {"precedents"},
                       "head_dim " + std::to_string(d.head_dim) + " is wider than any released at " + band + " (" +
                           std::to_string(env.max_head_dim) + "; a judgement from the table, no ablation)"});
  }
  // Off scale: no released model of the family within 4x of its size (MLA at 1B, whose nearest
  // released MLA model is 16B); the envelope had to borrow larger or smaller models' practice.
  double nearest_scale = std::numeric_limits<double>::infinity();
  for (const Precedent* p : env.members) nearest_scale = std::min(nearest_scale, std::fabs(std::log2(p->params_total / d.params)));
  if (!env.members.empty() && nearest_scale > 2.0) {
    steps += 1;
    ++factors;
    q.rules.push_back({"off-scale", 1, {"precedents"},
                       "no released " + family_text(d.variant) + " model lies within 4x of its size (the envelope is " + band +
                           "; a judgement from the table: practice at other scales is extrapolated)"});
  }
  if (d.index_topk > 0) {
    if (d.index_topk < kValidatedTopk) {
      steps += 1;
      ++factors;
      q.rules.push_back({"sparse-topk", 1, {"deepseek-v3.2-exp"},
                         "sparse attention over the top " + std::to_string(d.index_topk) + " keys is below the " +
                             std::to_string(kValidatedTopk) + " DeepSeek-V3.2-Exp validated"});
    } else {
      q.rules.push_back({"sparse-topk", 0, {"deepseek-v3.2-exp"},
                         "sparse attention over the top " + std::to_string(d.index_topk) +
                             " keys: top 2048 matched dense attention in DeepSeek-V3.2-Exp"});
    }
  }
  if (q.inside_envelope)
    q.rules.push_back({"envelope", 0, {"precedents"},
                       "inside what released " + family_text(d.variant) + " models of " + band + " ship (" +
                           std::to_string(q.precedent_support) + " of " + std::to_string(env.members.size()) +
                           " keep no more KV)"});

  // One factor tops out at high; very_high needs two that compound.
  const int cap = factors >= 2 ? static_cast<int>(RiskLevel::very_high) : static_cast<int>(RiskLevel::high);
  q.level = static_cast<RiskLevel>(std::min(cap, base + steps));

  q.reason = risk_sentence(q.rules) + "; nearest released design: " + near.name + " (" + q.precedent_design + ")";
  return q;
}

}  // namespace mhacfg
