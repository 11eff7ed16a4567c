// Arcee's AFMoE (hf_afmoe.cpp) on Trinity-Nano-Preview's config.json: gated attention with q/k norms,
// four norms per layer, dense then sparse layers with a shared expert and the expert bias, three
// sliding layers to one global.
#include <catch2/catch.hpp>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("afmoe: Trinity-Nano's gated attention, dense and sparse layers and windows", "[hf_config][kv]") {
  const ModelSpec m = fixture("trinity-nano-preview");
  const ParamCounts p = count_params(m);
  const std::int64_t h = 1024, q = 8 * 128, kv = 2 * 128, f = 3072, width = 256, experts = 128;
  CHECK(m.family == "afmoe");
  CHECK(m.attention.output_gate);
  CHECK(m.attention.qk_norm);
  CHECK(m.norm.per_layer == 4);
  // q_proj, o_proj and gate_proj (hidden -> heads x head_dim), k_proj and v_proj, q_norm and k_norm.
  CHECK(p.attention_per_layer == 3 * h * q + 2 * h * kv + 2 * 128);
  // AfmoeDecoderLayer: num_dense_layers (2) dense MLPs of intermediate_size, then AfmoeMoE.
  CHECK_FALSE(m.layers[1].moe());
  CHECK(m.layers[2].moe());
  CHECK(m.ffn.ffn_dim == f);
  CHECK(m.moe.router_bias);  // expert_bias is an nn.Parameter (requires_grad=False)
  // The published total (PUBLISHED.md), module by module: embedding and head, 56 attention blocks with
  // four norms, the final norm, two dense MLPs, 54 MoE blocks (128 experts, one shared, router, bias).
  const std::int64_t expert = 3 * h * width;
  const std::int64_t moe = (experts + 1) * expert + experts * h + experts;
  CHECK(p.total == 2 * 200'192 * h + 56 * (p.attention_per_layer + 4 * h) + h + 2 * 3 * h * f + 54 * moe);
  CHECK(p.total == 6'120'003'328);
  // Active: eight routed experts and the shared one on sparse layers.
  CHECK(p.active == p.total - 54 * (experts - 8) * expert);
  // Every fourth layer is global, the others slide 2048 tokens: 14 layers hold the whole context.
  for (std::size_t i = 0; i < m.layers.size(); ++i) CHECK(m.layers[i].window() == ((i + 1) % 4 == 0 ? 0 : 2048));
  Workload w;
  w.context = 131072;
  CHECK(count_kv_cache(m, w).bytes_per_token_beyond_window == 14 * 2 * kv * 2);

  // layer_types, when given, decide; a null window leaves the sliding layers unwindowed.
  const ModelSpec typed = edited("trinity-nano-preview", [](nlohmann::json& j) {
    j["layer_types"] = nlohmann::json::array();
    for (int i = 0; i < 56; ++i) j["layer_types"].push_back(i % 2 ? "full_attention" : "sliding_attention");
  });
  CHECK(typed.layers[0].window() == 2048);
  CHECK(typed.layers[1].window() == 0);
  const ModelSpec unwindowed = edited("trinity-nano-preview", [](nlohmann::json& j) { j["sliding_window"] = nullptr; });
  CHECK(unwindowed.layers[0].window() == 0);
  // Missing keys take AfmoeConfig's defaults: one dense layer, two shared experts.
  const ModelSpec defaults = edited("trinity-nano-preview", [](nlohmann::json& j) {
    j.erase("num_dense_layers");
    j.erase("num_shared_experts");
  });
  CHECK(defaults.layers[1].moe());
  // Layer 1 becomes sparse (a MoE block for its MLP) and every MoE block holds one more shared expert.
  CHECK(count_params(defaults).total - p.total == (experts + 56) * expert + experts * h + experts - 3 * h * f);
  CHECK_THROWS_WITH(edited("trinity-nano-preview", [](nlohmann::json& j) { j["global_attn_every_n_layers"] = 0; }),
                    Catch::Contains("global_attn_every_n_layers = 0: must be positive"));
}
