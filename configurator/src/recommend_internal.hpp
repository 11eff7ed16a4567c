// Helpers shared by the recommender's search (recommend.cpp) and its explanations
// (recommend_explain.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mhacfg/configurator/recommend.hpp"
#include "mhacfg/configurator/report.hpp"

namespace mhacfg {

// "gqa 32q/8kv x 128", "mla 16q/latent 512+64 x 192/128".
std::string design_name(const AttentionSpec& a);
std::string billions(double v);
// The objective's value for one candidate (lower is better); balanced is relative, see score().
double objective_value(const Candidate& c, Objective o);
// The width that holds a candidate to the budget: the experts' in a model with MoE layers, else the
// dense FFN's; and its name in sentences ("expert FFN width", "FFN width").
bool absorbs_in_experts(const ModelSpec& m);
// The same attention design (variant, heads, head_dims, MLA ranks).
bool same_attention(const AttentionSpec& a, const AttentionSpec& b);
// The same design class, one of which the ranking lists: variant, head_dims and MLA ranks.
bool same_class(const AttentionSpec& a, const AttentionSpec& b);

// A Llama-style baseline: MHA with head_dim 128 (64 when 128 does not divide d_model), gated FFN of
// the Llama width rule, RMSNorm, untied embeddings.
ModelSpec baseline(std::int64_t d, std::int64_t layers, std::int64_t vocab);
// Every candidate of the search (recommend_space.cpp): each variant is enumerated; those outside
// --variants are evaluated only to be reported.
std::vector<ModelSpec> enumerate(const RecommendOptions& o, const Shape& shape);

// Writes each ranked design's rationale, ranks the Pareto list and picks the notable rejections.
// `designs` is the ranked list (one per variant and head_dim), `all` every feasible candidate.
void explain(Recommendation& r, std::vector<Candidate>& designs, const std::vector<Candidate>& all,
             std::vector<std::pair<Candidate, std::string>>& rejected);

}  // namespace mhacfg
