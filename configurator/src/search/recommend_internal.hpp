// Helpers private to the recommender, shared by its search (recommend.cpp), its search space
// (recommend_space.cpp) and its explanations (recommend_explain.cpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/configurator/search/design.hpp"

namespace mhacfg {

// The objective's value for one candidate (lower is better); balanced is relative, see score().
double objective_value(const Candidate& c, Objective o);


// A rejected candidate with the rule it failed (stored beside the sentence that states the failure,
// so that the explanation groups rejections by rule rather than by the words of the sentence).
struct Rejected {
  Candidate candidate;
  Constraint constraint;
  std::string reason;
  std::vector<std::pair<std::string, double>> numbers;
};

// A Llama-style baseline: MHA with head_dim 128 (64 when 128 does not divide d_model), gated FFN of
// the Llama width rule, RMSNorm, untied embeddings.
ModelSpec baseline(std::int64_t d, std::int64_t layers, std::int64_t vocab);
// Every candidate of the search (recommend_space.cpp): each variant is enumerated; those outside
// --variants are evaluated only to be reported.
std::vector<ModelSpec> enumerate(const RecommendOptions& o, const Shape& shape);

// Writes each ranked design's rationale, ranks the Pareto list and picks the notable rejections.
// `designs` is the ranked list (one per variant and head_dim), `all` every feasible candidate.
void explain(Recommendation& r, std::vector<Candidate>& designs, const std::vector<Candidate>& all,
             std::vector<Rejected>& rejected);

// Ranking (recommend_rank.cpp). score: each candidate's objective value (balanced: the geometric mean
// of throughput and latency, each relative to the best). distinct_designs: one design per class, from
// candidates sorted best first; the others go to `rest`. tie_tolerance: the largest expected error
// among them. assign_tiers: designs within `tol` of the one before share a rank. mark_pareto: per GPU,
// KV per sequence, request latency and quality risk.
void score(std::vector<Candidate>& cs, Objective o);
std::vector<Candidate> distinct_designs(const std::vector<Candidate>& sorted, std::vector<Candidate>& rest);
double tie_tolerance(const std::vector<Candidate>& designs);
void assign_tiers(std::vector<Candidate>& designs, double tol);
void mark_pareto(std::vector<Candidate>& cs);

}  // namespace mhacfg
