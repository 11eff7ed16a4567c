// BitNet (hf_bitnet.cpp) against the published total of BitNet b1.58 2B4T's config.json
// (tests/fixtures/hf/PUBLISHED.md).
#include <catch2/catch.hpp>

#include <algorithm>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("bitnet: Llama's layers with BitNet's sub-norms", "[hf_config]") {
  const ModelSpec b = fixture("bitnet-b1.58-2b-4t");
  CHECK(b.family == "bitnet");
  REQUIRE(b.num_layers() == 30);
  CHECK(b.attention.variant == AttentionVariant::gqa);
  CHECK(b.attention.num_kv_heads == 5);
  CHECK(b.attention.head_dim == 128);  // hidden_size / heads
  CHECK(b.tie_embeddings);
  CHECK(b.attention.output_norm);
  CHECK(b.ffn.inner_norm);
  CHECK(b.ffn.kind == FfnKind::gated);
  for (const auto& l : b.layers) CHECK(l.full_attention());
  const ParamCounts p = count_params(b);
  // q and o 2560 x 2560, k and v 2560 x 640; attn_sub_norm over the 2560-wide attention output.
  CHECK(p.attention_per_layer == 2LL * 2560 * 2560 + 2LL * 2560 * 640 + 2560);
  // gate, up and down of 6912, and ffn_sub_norm over the 6912-wide intermediate.
  CHECK(p.ffn == 30 * (3LL * 2560 * 6912 + 6912));
  CHECK(p.norms == 30 * 2LL * 2560 + 2560);
  CHECK(p.total == 128256LL * 2560 + p.attention + p.ffn + p.norms);  // the head tied to the embedding
  CHECK(p.total == 2'412'820'480);  // the GGUF's parameter count (PUBLISHED.md)
  // K and V of 5 heads of 128 in every layer, bf16.
  CHECK(count_kv_cache(b, Workload{}).bytes_per_token == 30 * 5 * 2 * 128 * 2);
  // The file read as Llama has no sub-norms: 2560 + 6912 fewer per layer.
  const ModelSpec llama = edited("bitnet-b1.58-2b-4t", [](nlohmann::json& j) { j["model_type"] = "llama"; });
  CHECK(p.total - count_params(llama).total == 30 * (2560 + 6912));
  // The packed ternary weights are not a dtype mhacfg counts in: said so.
  CHECK(std::any_of(b.notes.begin(), b.notes.end(), [](const std::string& n) { return n.find("quantization_config") == 0; }));
}

TEST_CASE("bitnet: BitNetConfig's defaults and the widths the sub-norm needs", "[hf_config][errors]") {
  // A config that leaves every size out is BitNetConfig's (the 2B4T's), untied.
  const ModelSpec d = mhacfg::spec_from_hf_config(nlohmann::json{{"model_type", "bitnet"}}, "defaults");
  CHECK(d.d_model == 2560);
  CHECK(d.num_layers() == 30);
  CHECK(d.attention.num_kv_heads == 5);
  CHECK_FALSE(d.tie_embeddings);
  CHECK(count_params(d).total == 2'412'820'480 + 128256LL * 2560);  // the untied head
  // attn_sub_norm is hidden_size wide: heads x head_dim must match it.
  const auto wide = [] {
    edited("bitnet-b1.58-2b-4t", [](nlohmann::json& j) { j["head_dim"] = 64; });
  };
  CHECK_THROWS_AS(wide(), InputError);
  CHECK_THROWS_WITH(wide(), Catch::Contains("head_dim = 64") && Catch::Contains("attn_sub_norm"));
}
