// The recommender's test inputs: a shape or an HF fixture as options, and the search on their target.
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

inline mhacfg::Recommendation rec(mhacfg::RecommendOptions o) {
  return mhacfg::recommend(o, mhacfg::load_profile(o.target, "--target"));
}

inline mhacfg::RecommendOptions shape(std::int64_t d, std::int64_t layers, std::int64_t seq) {
  mhacfg::RecommendOptions o;
  o.d_model = d;
  o.layers = layers;
  o.workload = o.workload.serving(seq);
  return o;
}

inline mhacfg::RecommendOptions of_model(const std::string& fixture, std::int64_t seq) {
  mhacfg::RecommendOptions o;
  o.base = mhacfg::load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + fixture + ".json");
  o.workload = o.workload.serving(seq);
  o.target = "h200-sxm-cudnn";
  return o;
}
