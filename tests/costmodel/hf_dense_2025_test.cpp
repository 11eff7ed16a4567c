// The 2025 dense families of hf_dense_2025.cpp against published totals of real config.json files
// (tests/fixtures/hf/PUBLISHED.md).
#include <catch2/catch.hpp>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("vaultgemma: Gemma 2's layers without the post-norms", "[hf_config]") {
  const ModelSpec v = fixture("vaultgemma-1b");
  CHECK(v.family == "vaultgemma");
  REQUIRE(v.num_layers() == 26);
  CHECK(v.norm.per_layer == 2);
  CHECK(v.tie_embeddings);  // Gemma2Config's default; the file leaves the key out
  CHECK(v.attention.variant == AttentionVariant::mha);
  for (const auto& l : v.layers) CHECK(l.full_attention());  // layer_types: every layer full_attention
  const ParamCounts p = count_params(v);
  // q, k and v 1024 x 1152, o 1152 x 1024; the gated MLP 3 x 1152 x 6912; input and pre-FFN norms.
  CHECK(p.attention_per_layer == 4LL * 1024 * 1152);
  CHECK(p.total == 256000LL * 1152 + 26 * (4LL * 1024 * 1152 + 3LL * 1152 * 6912 + 2 * 1152) + 1152);
  CHECK(p.total == 1'038'741'120);  // the Hub's safetensors total
  // Without layer_types, Gemma2Config's alternation: sliding_window on the even layers.
  const ModelSpec alternating = edited("vaultgemma-1b", [](nlohmann::json& j) { j.erase("layer_types"); });
  for (std::size_t i = 0; i < 26; ++i) CHECK(alternating.layers[i].window() == (i % 2 == 0 ? 512 : 0));
  // The same file read as Gemma 2 counts the two norms per layer VaultGemma deletes.
  const ModelSpec gemma2 = edited("vaultgemma-1b", [](nlohmann::json& j) { j["model_type"] = "gemma2"; });
  CHECK(count_params(gemma2).total - p.total == 26 * 2 * 1152);
}
