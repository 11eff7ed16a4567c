// The 2025 dense families of hf_dense_2025.cpp (VaultGemma, Arcee's AFM, Jais 2, CWM) against published totals
// of real or reconstructed config.json files (tests/fixtures/hf/PUBLISHED.md says which).
#include <catch2/catch.hpp>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

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

TEST_CASE("arcee: Llama's attention with an ungated MLP (AFM-4.5B)", "[hf_config][kv]") {
  const ModelSpec m = fixture("afm-4.5b");
  const ParamCounts p = count_params(m);
  const std::int64_t h = 2560, q = 20 * 128, kv = 4 * 128, f = 18432, vocab = 128004, layers = 36;
  CHECK(m.family == "arcee");
  CHECK(m.attention.variant == AttentionVariant::gqa);
  CHECK(m.ffn.kind == FfnKind::plain);  // up_proj and down_proj, no gate_proj
  CHECK_FALSE(m.ffn.bias);
  CHECK(m.norm.kind == NormKind::rmsnorm);
  CHECK(p.attention_per_layer == 2 * h * q + 2 * h * kv);
  // Module by module: embedding and untied head, 36 layers of attention, up/down and two RMSNorms, the final norm.
  CHECK(p.total == 2 * vocab * h + layers * (p.attention_per_layer + 2 * h * f + 2 * h) + h);
  CHECK(p.total / 100'000'000 == 46);  // the Hub's "4.6B params" (PUBLISHED.md: no exact figure found)
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == layers * 2 * kv * 2);
  // The same file read as Llama counts a gate_proj per layer that AFM does not have.
  const ModelSpec llama = edited("afm-4.5b", [](nlohmann::json& j) { j["model_type"] = "llama"; });
  CHECK(count_params(llama).total - p.total == layers * h * f);
  // ArceeConfig's defaults: MHA without num_key_value_heads, heads of hidden_size / heads without head_dim,
  // mlp_bias on up and down.
  const ModelSpec mha = edited("afm-4.5b", [](nlohmann::json& j) {
    j.erase("num_key_value_heads");
    j["head_dim"] = nullptr;
    j["mlp_bias"] = true;
  });
  CHECK(mha.attention.variant == AttentionVariant::mha);
  CHECK(mha.attention.head_dim == 128);
  CHECK(count_params(mha).total - p.total == layers * (2 * h * (q - kv) + f + h));
  const auto indivisible = [](nlohmann::json& j) {
    j.erase("head_dim");
    j["num_attention_heads"] = 24;
  };
  CHECK_THROWS_WITH(edited("afm-4.5b", indivisible),
                    Catch::Contains("num_attention_heads = 24: must divide hidden_size = 2560"));
}

TEST_CASE("jais2: LayerNorms and biases on by default around an ungated MLP (Jais-2-8B)", "[hf_config][kv]") {
  const ModelSpec m = fixture("jais-2-8b-chat");
  const ParamCounts p = count_params(m);
  const std::int64_t h = 3328, f = 26624, vocab = 150272, layers = 32;
  CHECK(m.family == "jais2");
  CHECK(m.attention.variant == AttentionVariant::mha);  // Jais2Config: num_key_value_heads None
  CHECK(m.attention.head_dim == 128);                   // 3328 / 26
  CHECK(m.norm.kind == NormKind::layernorm);
  CHECK(m.ffn.kind == FfnKind::plain);
  // q, k, v and o with their biases; up and down with theirs; two LayerNorms (weight and bias) per layer.
  CHECK(p.attention_per_layer == 4 * h * h + 4 * h);
  CHECK(p.total == 2 * vocab * h + layers * (p.attention_per_layer + 2 * h * f + f + h + 4 * h) + 2 * h);
  // The Hub's four bf16 shards of Jais-2-8B-Chat hold 16,180,861,064 bytes (PUBLISHED.md): two bytes per
  // parameter plus the shards' JSON headers, about 110 bytes for each of the 516 tensors.
  const std::int64_t shard_bytes = 4'988'455'440LL + 4'963'153'816LL + 4'874'521'632LL + 1'354'730'176LL;
  CHECK(shard_bytes - 2 * p.total > 516 * 64);
  CHECK(shard_bytes - 2 * p.total < 516 * 160);
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == layers * 2 * h * 2);
  // Biases default on: without the keys the count is the same; switched off, it loses them.
  const ModelSpec defaults = edited("jais-2-8b-chat", [](nlohmann::json& j) {
    j.erase("attention_bias");
    j.erase("mlp_bias");
  });
  CHECK(count_params(defaults).total == p.total);
  const ModelSpec unbiased = edited("jais-2-8b-chat", [](nlohmann::json& j) {
    j["attention_bias"] = false;
    j["mlp_bias"] = false;
  });
  CHECK(p.total - count_params(unbiased).total == layers * (4 * h + f + h));
  // Read as Arcee, the same keys give RMSNorms: the LayerNorms' biases are the difference.
  const ModelSpec arcee = edited("jais-2-8b-chat", [](nlohmann::json& j) { j["model_type"] = "arcee"; });
  CHECK(p.total - count_params(arcee).total == layers * 2 * h + h);
}

TEST_CASE("cwm: Llama without biases, three sliding layers to one global from layer 0", "[hf_config][kv]") {
  const ModelSpec m = fixture("cwm");
  const ParamCounts p = count_params(m);
  const std::int64_t h = 6144, q = 48 * 128, kv = 8 * 128, f = 21504, vocab = 128256, layers = 64;
  CHECK(m.family == "cwm");
  CHECK(m.ffn.kind == FfnKind::gated);
  CHECK(p.attention_per_layer == 2 * h * q + 2 * h * kv);
  CHECK(p.total == 2 * vocab * h + layers * (p.attention_per_layer + 3 * h * f + 2 * h) + h);
  CHECK(p.total / 1'000'000'000 == 32);  // the card's "32-billion-parameter" (no exact figure found)
  // CwmConfig's layer_types: full attention on layers 0, 4, 8, ..., sliding_window 8192 on the others.
  for (std::size_t i = 0; i < m.layers.size(); ++i) CHECK(m.layers[i].window() == (i % 4 == 0 ? 0 : 8192));
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv_cache = count_kv_cache(m, w);
  CHECK(kv_cache.bytes_per_token == layers * 2 * kv * 2);
  CHECK(kv_cache.bytes_per_token_beyond_window == 16 * 2 * kv * 2);
  // CwmAttention has no biases whatever the file says; layer_types decide; a null window: every layer global.
  const ModelSpec biased = edited("cwm", [](nlohmann::json& j) { j["attention_bias"] = true; });
  CHECK(count_params(biased).total == p.total);
  const ModelSpec typed = edited("cwm", [](nlohmann::json& j) {
    j["layer_types"] = nlohmann::json::array();
    for (int i = 0; i < 64; ++i) j["layer_types"].push_back(i < 32 ? "sliding_attention" : "full_attention");
  });
  CHECK(typed.layers[31].window() == 8192);
  CHECK(typed.layers[32].window() == 0);
  const ModelSpec global = edited("cwm", [](nlohmann::json& j) { j["sliding_window"] = nullptr; });
  for (const auto& l : global.layers) CHECK(l.full_attention());
  const ModelSpec zero = edited("cwm", [](nlohmann::json& j) { j["sliding_window"] = 0; });
  for (const auto& l : zero.layers) CHECK(l.full_attention());
  CHECK_THROWS_WITH(edited("cwm", [](nlohmann::json& j) { j["sliding_window"] = -1; }),
                    Catch::Contains("sliding_window = -1"));
  // Missing sizes take CwmConfig's defaults, which are CWM's own; a null head_dim is hidden_size / heads.
  const ModelSpec defaults = edited("cwm", [](nlohmann::json& j) {
    for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                            "head_dim", "intermediate_size", "vocab_size", "sliding_window"})
      j.erase(key);
  });
  CHECK(count_params(defaults).total == p.total);
  CHECK(count_kv_cache(defaults, w).bytes_per_token_beyond_window == kv_cache.bytes_per_token_beyond_window);
  const ModelSpec null_head = edited("cwm", [](nlohmann::json& j) {
    j["head_dim"] = nullptr;
    j["num_attention_heads"] = 32;
  });
  CHECK(null_head.attention.head_dim == 192);
  CHECK_THROWS_WITH(
      edited("cwm", [](nlohmann::json& j) { j["layer_types"] = nlohmann::json::array({"full_attention"}); }),
      Catch::Contains("layer_types = [\"full_attention\"]: must be a list of 64 layer types"));
}
