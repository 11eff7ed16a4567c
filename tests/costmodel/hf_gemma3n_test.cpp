// Gemma 3n (hf_gemma3n.cpp): the language models of gemma-3n-E2B and -E4B against the published
// text-only totals (tests/fixtures/hf/PUBLISHED.md), their KV sharing and their per-layer widths.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

namespace {

// The language model's parameters from Gemma3nTextModel's modules, for `layers` layers with an MLP of
// `ffn` (hidden 2048, 8 heads and 2 KV heads of 256, altup_num_inputs 4, laurel_rank 64, per-layer
// inputs of 256 from a 262144-row table, vocabulary 262400, tied head).
std::int64_t gemma3n_text_total(std::int64_t layers, std::int64_t ffn) {
  const std::int64_t d = 2048, n = 4, rank = 64, p = 256;
  const std::int64_t attention = 2 * d * 8 * 256 + 2 * d * 2 * 256 + 2 * 256;  // q, o, k, v; q_norm, k_norm
  const std::int64_t mlp = 3 * d * ffn;
  const std::int64_t norms = 4 * d;                                    // Gemma's four per layer
  const std::int64_t altup = d + n * n + n * n * n + d * n + d;       // scale, coefs, router, router norm
  const std::int64_t laurel = 2 * d * rank + d;                         // left, right, post norm
  const std::int64_t per_layer_input = 2 * d * p + d;                  // gate, projection, post norm
  const std::int64_t layer = attention + mlp + norms + altup + laurel + per_layer_input;
  const std::int64_t model = 262400 * d                                // embed_tokens (tied head)
                             + 262144 * layers * p                      // embed_tokens_per_layer
                             + d * layers * p + p                       // per_layer_model_projection and its norm
                             + 2 * (n - 1) * d * d                      // AltUp projections, unembedding projections
                             + d;                                       // final norm
  return layers * layer + model;
}

}  // namespace

TEST_CASE("gemma3n: E2B's language model, its KV sharing and its per-layer inputs", "[hf_config]") {
  const ModelSpec g = fixture("gemma-3n-e2b");
  CHECK(g.family == "gemma3n");
  REQUIRE(g.num_layers() == 30);
  CHECK(g.tie_embeddings);
  CHECK(g.norm.per_layer == 4);
  CHECK(g.attention.qk_norm);
  for (std::size_t i = 0; i < 30; ++i) {
    CHECK(g.layers[i].window() == ((i + 1) % 5 == 0 ? 0 : 512));
    CHECK(g.layers[i].shared_kv == (i >= 20));  // num_kv_shared_layers 10
    CHECK(dense_ffn_dim(g, g.layers[i]) == 8192);
  }
  CHECK(g.num_kv_cache_layers() == 20);
  const ParamCounts p = count_params(g);
  CHECK(p.total == gemma3n_text_total(30, 8192));
  CHECK(p.embedding == 262400LL * 2048 + 262144LL * 30 * 256);
  // Published only rounded: 4.46B text parameters of the E2B (PUBLISHED.md).
  CHECK(std::llround(double(p.total) / 1e7) == 446);
  // The vision and audio towers are not counted, and the output says so.
  CHECK(p.vision == 0);
  CHECK(std::any_of(g.notes.begin(), g.notes.end(), [](const std::string& n) { return n.find("vision tower") != std::string::npos; }));

  // KV cache: the 20 layers before the shared ones hold it, 4 full (layers 4, 9, 14, 19) and 16 sliding
  // over 512; the last 10 read theirs. 2 KV heads x 256 x (K and V) x 2 bytes per layer and token.
  Workload w;
  w.context = 8192;
  const KvCacheCounts kv = count_kv_cache(g, w);
  CHECK(kv.bytes_per_token_per_layer == 2 * 256 * 2 * 2);
  CHECK(kv.bytes_per_token == 20 * 2048);
  CHECK(kv.bytes_per_token_beyond_window == 4 * 2048);
  CHECK(kv.layer_tokens == 4 * 8192 + 16 * 512);
  CHECK(kv.bytes_total == (4LL * 8192 + 16 * 512) * 2048);
  const ModelCounts c = count_model(g, w);
  CHECK(c.bytes.kv_written == 20 * 2048);
  // The shared layers still read K/V (their producers'): 6 full layers and 24 sliding ones.
  CHECK(c.bytes.kv_read == (6LL * 8192 + 24 * 512) * 2048);

  // Without sharing every layer caches and projects its own K/V; the weights are the same.
  const ModelSpec unshared = edited("gemma-3n-e2b", [](nlohmann::json& j) { j["text_config"]["num_kv_shared_layers"] = 0; });
  CHECK(count_params(unshared).total == p.total);
  const KvCacheCounts kv_unshared = count_kv_cache(unshared, w);
  CHECK(kv_unshared.bytes_per_token == 30 * 2048);
  CHECK(kv_unshared.layer_tokens == 6 * 8192 + 24 * 512);
  // The 10 shared layers skip k_proj and v_proj (2048 x 2 x 256 each): 2 FLOPs per weight per token.
  const FlopCounts f = count_flops(g, w), f_unshared = count_flops(unshared, w);
  CHECK(f_unshared.decode_per_token.projections - f.decode_per_token.projections == 2 * 10 * (2 * 2048LL * 2 * 256));
}

TEST_CASE("gemma3n: E4B and the text model read alone", "[hf_config]") {
  const ModelSpec g = fixture("gemma-3n-e4b");
  REQUIRE(g.num_layers() == 35);
  CHECK(g.num_kv_cache_layers() == 20);  // num_kv_shared_layers 15
  const ParamCounts p = count_params(g);
  CHECK(p.total == gemma3n_text_total(35, 16384));
  // Published only rounded: 7.40B for the E4B's text-only export, which matches the total with the
  // head counted a second time (PUBLISHED.md).
  CHECK(std::llround(double(p.total + 262400LL * 2048) / 1e7) == 740);
  // gemma3n_text alone (Gemma3nForCausalLM) is the same language model.
  nlohmann::json text = nlohmann::json::parse(read_file(std::string(MHACFG_FIXTURES_DIR) + "/hf/gemma-3n-e4b.json", "fixture"))["text_config"];
  const ModelSpec alone = spec_from_hf_config(text, "text");
  CHECK(alone.family == "gemma3n_text");
  CHECK(count_params(alone).total == p.total);
  // Gemma3nTextConfig's defaults are the E4B's, intermediate_size as one width for every layer.
  const ModelSpec defaults = spec_from_hf_config(nlohmann::json{{"model_type", "gemma3n_text"}}, "defaults");
  CHECK(count_params(defaults).total == p.total);
  // A layer of its own width (MatFormer's per-layer sizes) is counted at that width.
  const ModelSpec mixed = edited("gemma-3n-e4b", [](nlohmann::json& j) { j["text_config"]["intermediate_size"][3] = 8192; });
  CHECK(mixed.layers[3].ffn_dim == 8192);
  CHECK(p.total - count_params(mixed).total == 3LL * 2048 * (16384 - 8192));
}

TEST_CASE("gemma3n: bad widths and sharing name the key", "[hf_config][errors]") {
  const auto err = [](const std::function<void(nlohmann::json&)>& edit) {
    try {
      edited("gemma-3n-e2b", edit);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(err([](nlohmann::json& j) { j["text_config"]["intermediate_size"] = {8192, 8192}; }),
             Catch::Contains("intermediate_size") && Catch::Contains("list of num_hidden_layers = 30 widths"));
  CHECK_THAT(err([](nlohmann::json& j) { j["text_config"]["intermediate_size"][7] = 0; }), Catch::Contains("intermediate_size[7] = 0"));
  CHECK_THAT(err([](nlohmann::json& j) { j["text_config"]["num_kv_shared_layers"] = 30; }),
             Catch::Contains("num_kv_shared_layers = 30: must be below num_hidden_layers = 30"));
  // Every layer sliding before the shared ones: the shared full-attention layers have no producer.
  CHECK_THAT(err([](nlohmann::json& j) {
               for (int i = 0; i < 20; ++i) j["text_config"]["layer_types"][i] = "sliding_attention";
             }),
             Catch::Contains("num_kv_shared_layers = 10: layer 24 would read the K/V of an earlier layer of its type"));
}

TEST_CASE("a layer reading another's K/V needs an earlier layer of its span that caches", "[model_spec][errors]") {
  ModelSpec m = fixture("gemma-3n-e2b");
  validate(m);
  // Layer 24 (full attention) reads layer 19's; without a full layer caching before it, none is left.
  for (std::size_t i = 0; i < 20; ++i) m.layers[i].span = Span::window(512);
  CHECK_THROWS_WITH(validate(m), Catch::Contains("layers[24].shared_kv = true: reads the K/V of an earlier softmax layer"));
  ModelSpec first = fixture("gemma-3n-e2b");
  first.layers[0].shared_kv = true;
  CHECK_THROWS_WITH(validate(first), Catch::Contains("layers[0].shared_kv"));
  ModelSpec negative = fixture("gemma-3n-e2b");
  negative.aux.layer_matmul = -1;
  CHECK_THROWS_WITH(validate(negative), Catch::Contains("aux.layer_matmul = -1: must not be negative"));
}
