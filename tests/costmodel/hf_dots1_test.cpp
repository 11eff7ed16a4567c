// rednote's dots.llm1 (dots1, hf_dots1.cpp): Qwen3's attention in DeepSeek-V3's MoE layers, on the released
// configuration (tests/fixtures/hf, source in PUBLISHED.md).
#include <catch2/catch.hpp>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("dots1: MHA with q/k norms, one dense layer then 128 experts, top 6, two shared", "[hf_config][kv]") {
  const ModelSpec m = fixture("dots.llm1.base");
  CHECK(m.attention.variant == AttentionVariant::mha);
  CHECK(m.attention.head_dim == 128);  // hidden_size / heads: the file has no head_dim
  CHECK(m.attention.qk_norm);
  CHECK_FALSE(m.layers[0].moe());
  for (std::size_t i = 1; i < m.layers.size(); ++i) CHECK(m.layers[i].moe());
  CHECK(shared_ffn_width(m.moe) == 2 * 1408);
  CHECK(m.moe.router_bias);
  for (const auto& l : m.layers) CHECK_FALSE(l.span.local());  // sliding_window null: every layer global
  const ParamCounts p = count_params(m);
  CHECK(p.total == 142'774'381'696);  // the Hub's safetensors total (PUBLISHED.md)
  CHECK(p.active == p.total - 61LL * 122 * 3 * 4096 * 1408);
  CHECK(p.active == 14'016'588'928);  // the card's "14B activated"
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == 2 * 32 * 128 * 62 * 2);  // MHA: every head's K and V
}

TEST_CASE("dots1: Dots1Config's defaults, its window rule and the keys without a default", "[hf_config]") {
  // sliding_window erased takes the class's 4096 on the layers from max_window_layers (62) on: none of 62.
  const ModelSpec defaulted = edited("dots.llm1.base", [](nlohmann::json& j) { j.erase("sliding_window"); });
  for (const auto& l : defaulted.layers) CHECK_FALSE(l.span.local());
  const ModelSpec windowed = edited("dots.llm1.base", [](nlohmann::json& j) {
    j["sliding_window"] = 4096;
    j["max_window_layers"] = 60;
  });
  CHECK_FALSE(windowed.layers[59].span.local());
  CHECK(windowed.layers[60].window() == 4096);
  CHECK(windowed.layers[61].window() == 4096);
  // v5's num_local_experts names the same experts.
  const ModelSpec v5 = edited("dots.llm1.base", [](nlohmann::json& j) {
    j["num_local_experts"] = j["n_routed_experts"];
    j.erase("n_routed_experts");
  });
  CHECK(count_params(v5).total == 142'774'381'696);
  for (const char* key : {"n_routed_experts", "n_shared_experts", "num_experts_per_tok"}) {
    INFO(key);
    CHECK_THROWS_WITH(edited("dots.llm1.base", [&](nlohmann::json& j) { j.erase(key); }),
                      Catch::Contains(std::string(key) + " = (missing): required key is missing"));
  }
}
