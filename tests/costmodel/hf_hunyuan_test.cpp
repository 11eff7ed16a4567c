// Tencent's Hunyuan families of hf_hunyuan.cpp (hunyuan_v1_dense, hunyuan_v1_moe): layouts, defaults,
// refusals and counts on real config.json files (tests/fixtures/hf, sources in PUBLISHED.md).
#include <catch2/catch.hpp>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("hunyuan_v1_moe: Hunyuan-A13B's 64 experts, top 8, one shared MLP, q/k norms", "[hf_config][kv]") {
  const ModelSpec m = fixture("hunyuan-a13b-instruct");
  CHECK(m.attention.variant == AttentionVariant::gqa);
  CHECK(m.attention.num_kv_heads == 8);
  CHECK(m.attention.head_dim == 128);  // attention_head_dim; the file has no head_dim
  CHECK(m.attention.qk_norm);
  CHECK(m.tie_embeddings);
  CHECK(m.moe.num_routed_experts == 64);
  CHECK(m.moe.top_k == 8);
  CHECK(m.moe.expert_ffn_dim == 3072);
  CHECK(shared_ffn_width(m.moe) == 3072);
  for (const auto& l : m.layers) CHECK(l.moe());
  const ParamCounts p = count_params(m);
  CHECK(p.total == 80'393'183'232);  // the safetensors headers' total (PUBLISHED.md)
  CHECK(p.router == 32LL * 64 * 4096);
  // The card's "13B activated": 8 of the 64 experts and the shared MLP.
  CHECK(p.active == p.total - 32LL * 56 * 3 * 4096 * 3072);
  CHECK(p.active == 12'747'448'320);
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == 2 * 8 * 128 * 32 * 2);  // K and V, 8 heads of 128, 32 layers, bf16
}

TEST_CASE("hunyuan_v1_moe: per-layer lists, transformers' widths and the refused variants", "[hf_config]") {
  const std::int64_t total = count_params(fixture("hunyuan-a13b-instruct")).total;
  // One value instead of a list per layer, and a missing moe_intermediate_size (transformers' reading:
  // intermediate_size), give the same model.
  const ModelSpec scalar = edited("hunyuan-a13b-instruct", [](nlohmann::json& j) {
    j["moe_topk"] = 8;
    j["num_shared_expert"] = 1;
    j.erase("moe_intermediate_size");
  });
  CHECK(count_params(scalar).total == total);
  const ModelSpec null_width =
      edited("hunyuan-a13b-instruct", [](nlohmann::json& j) { j["moe_intermediate_size"] = nullptr; });
  CHECK(null_width.moe.expert_ffn_dim == 3072);  // vLLM's reading of null: intermediate_size
  // Without use_mixed_mlp_moe there is no shared MLP: 32 x 3 x 4096 x 3072 fewer.
  const ModelSpec unshared = edited("hunyuan-a13b-instruct", [](nlohmann::json& j) { j["use_mixed_mlp_moe"] = false; });
  CHECK(count_params(unshared).total == total - 32LL * 3 * 4096 * 3072);
  // Two shared experts: one MLP twice as wide.
  const ModelSpec two = edited("hunyuan-a13b-instruct", [](nlohmann::json& j) { j["num_shared_expert"] = 2; });
  CHECK(shared_ffn_width(two.moe) == 6144);
  CHECK_THROWS_WITH(
      edited("hunyuan-a13b-instruct", [](nlohmann::json& j) { j["moe_topk"][5] = 4; }),
      Catch::Contains("moe_topk[5] = 4: differs from layer 0's 8 (layers with different experts are not modelled)"));
  CHECK_THROWS_WITH(edited("hunyuan-a13b-instruct",
                           [](nlohmann::json& j) {
                             j["moe_topk"] = {8, 8};
                           }),
                    Catch::Contains("moe_topk = [8,8]: must give one value per layer (32)"));
  CHECK_THROWS_WITH(edited("hunyuan-a13b-instruct", [](nlohmann::json& j) { j["num_experts"] = 1; }),
                    Catch::Contains("num_experts = 1: must be at least 2 for hunyuan_v1_moe"));
  // Hunyuan-Large's cross-layer attention shares K/V between layers: refused, not miscounted.
  CHECK_THROWS_WITH(edited("hunyuan-a13b-instruct", [](nlohmann::json& j) { j["use_cla"] = true; }),
                    Catch::Contains("use_cla = true: cross-layer attention (cla_share_factor = 2"));
  // A factor of 1 shares nothing.
  const ModelSpec own = edited("hunyuan-a13b-instruct", [](nlohmann::json& j) {
    j["use_cla"] = true;
    j["cla_share_factor"] = 1;
  });
  CHECK(count_params(own).total == total);
}

TEST_CASE("hunyuan_v1_dense: Hy-MT2-7B, Hunyuan-7B's layout with q/k norms, tied", "[hf_config][kv]") {
  const ModelSpec m = fixture("hy-mt2-7b");
  CHECK(m.attention.num_q_heads == 32);
  CHECK(m.attention.num_kv_heads == 8);
  CHECK(m.attention.qk_norm);
  CHECK(m.moe.num_routed_experts == 0);
  const ParamCounts p = count_params(m);
  // No exact total is published (PUBLISHED.md); the closed form: 32 layers of q/k/v/o (4096 x 4096 twice,
  // 4096 x 1024 twice), the gated MLP (3 x 4096 x 14336), two norms and the q/k norms (2 x 128), the tied
  // embedding (128167 x 4096) and the final norm.
  const std::int64_t layer = 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 3LL * 4096 * 14336 + 2 * 4096 + 2 * 128;
  CHECK(p.total == 32 * layer + 128167LL * 4096 + 4096);
  CHECK(p.total == 7'504'568'320);  // the cards' "7B"
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == 2 * 8 * 128 * 32 * 2);
  // HunYuanDenseV1Config's defaults where the file is silent: KV heads as many as the heads, head_dim
  // hidden_size / heads, untied.
  const ModelSpec bare = edited("hy-mt2-7b", [](nlohmann::json& j) {
    for (const char* k :
         {"num_key_value_heads", "head_dim", "attention_head_dim", "tie_word_embeddings", "use_qk_norm"})
      j.erase(k);
  });
  CHECK(bare.attention.num_kv_heads == 32);
  CHECK(bare.attention.head_dim == 128);
  CHECK_FALSE(bare.tie_embeddings);
  CHECK(bare.attention.qk_norm);  // transformers always builds query_layernorm and key_layernorm
  const ModelSpec unnormed = edited("hy-mt2-7b", [](nlohmann::json& j) { j["use_qk_norm"] = false; });
  CHECK(count_params(unnormed).total == p.total - 32 * 2 * 128);
}
