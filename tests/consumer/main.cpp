// Uses the installed library: exact counts of a preset and a recommendation, checked against the
// published Llama-3-8B figures and the recommender's contract.
#include <iostream>

#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/costmodel/counts.hpp"

int main() {
  const mhacfg::ModelSpec m = mhacfg::load_model_preset("llama-3-8b");
  const mhacfg::ModelCounts c = mhacfg::count_model(m, mhacfg::Workload{});
  if (c.params.total != 8'030'261'248LL || c.kv_cache.bytes_per_token != 131'072) {
    std::cerr << "wrong counts: " << c.params.total << " " << c.kv_cache.bytes_per_token << "\n";
    return 1;
  }
  mhacfg::RecommendOptions o;
  o.d_model = 4096;
  o.layers = 32;
  const mhacfg::Recommendation r = mhacfg::recommend(o, mhacfg::load_profile("h100-sxm", "target"));
  if (r.ranked.empty() || r.ranked.front().rationale.empty()) {
    std::cerr << "no recommendation\n";
    return 1;
  }
  std::cout << "consumer: llama-3-8b " << c.params.total << " params; recommended "
            << r.ranked.front().spec.attention.num_q_heads << "q/" << r.ranked.front().spec.attention.num_kv_heads
            << "kv x " << r.ranked.front().spec.attention.head_dim << "\n";
  return 0;
}
