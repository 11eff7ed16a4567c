// Mistral's ministral3 text model (hf_ministral3.cpp): Ministral3Config's defaults and the Ministral 3
// sizes its cards state.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;

TEST_CASE("ministral3: Mistral's block with Ministral3Config's defaults", "[hf_config][kv]") {
  // The class's defaults are Ministral-3-8B's text model: 34 layers of 4096, 32 heads of 128, 8 KV heads,
  // a 14336-wide MLP, 131072 tokens, untied.
  const ModelSpec m = spec_from_hf_config(nlohmann::json{{"model_type", "ministral3"}}, "c.json");
  CHECK(m.num_layers() == 34);
  CHECK(m.attention.num_kv_heads == 8);
  CHECK(m.attention.head_dim == 128);
  CHECK_FALSE(m.tie_embeddings);
  for (const auto& l : m.layers) CHECK_FALSE(l.span.local());
  const std::int64_t layer = 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 3LL * 4096 * 14336 + 2 * 4096;
  CHECK(count_params(m).total == 34 * layer + 2LL * 131072 * 4096 + 4096);
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == 2 * 8 * 128 * 34 * 2);
  // head_dim null: hidden_size / heads (Ministral3Config.__post_init__); num_key_value_heads null: MHA.
  const ModelSpec nulls = spec_from_hf_config(
      nlohmann::json{
          {"model_type", "ministral3"}, {"hidden_size", 5120}, {"head_dim", nullptr}, {"num_key_value_heads", nullptr}},
      "c.json");
  CHECK(nulls.attention.head_dim == 160);
  CHECK(nulls.attention.num_kv_heads == 32);
  // A sliding_window windows every layer; layer_types is not read.
  const ModelSpec windowed = spec_from_hf_config(
      nlohmann::json{{"model_type", "ministral3"}, {"sliding_window", 4096}, {"layer_types", {"full_attention"}}},
      "c.json");
  for (const auto& l : windowed.layers) CHECK(l.window() == 4096);
}

TEST_CASE("ministral3: Ministral 3 3B's text model is the card's 3.4B language model", "[hf_config]") {
  // The sizes a released Ministral-3-3B text_config gives (PUBLISHED.md): 26 layers of 3072, 32 heads, 8
  // KV heads, a 9216-wide MLP. The card's "3.4B Language Model" is the tied count, 3,429,006,336; untied
  // it would be 3.83B.
  nlohmann::json c = {{"model_type", "ministral3"}, {"hidden_size", 3072},       {"num_hidden_layers", 26},
                      {"intermediate_size", 9216},  {"num_attention_heads", 32}, {"num_key_value_heads", 8}};
  c["tie_word_embeddings"] = true;
  CHECK(count_params(spec_from_hf_config(c, "c.json")).total == 3'429'006'336);
  c["tie_word_embeddings"] = false;
  CHECK(count_params(spec_from_hf_config(c, "c.json")).total == 3'429'006'336 + 131072LL * 3072);
}
