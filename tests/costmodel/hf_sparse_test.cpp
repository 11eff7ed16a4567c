// Sparse attention's HF import (DeepSeek-V3.2's and GLM-5.1's lightning indexer) and its counts: the
// indexer's weights and keys, queries over the top k keys. Split from hf_moe_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/io.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

TEST_CASE("sparse attention (DeepSeek-V3.2, GLM-5.1): the indexer's weights and keys, the checkpoints' totals",
          "[hf_config][counts][kv]") {
  const ModelSpec v32 = fixture("deepseek-v3.2");
  REQUIRE(v32.attention.sparse());
  CHECK(v32.attention.indexer.num_heads == 64);
  CHECK(v32.attention.indexer.head_dim == 128);
  CHECK(v32.attention.indexer.topk == 2048);
  // Per layer: wq_b (1536 -> 64 x 128), wk (7168 -> 128), k_norm (weight + bias), weights_proj (7168 -> 64).
  const std::int64_t indexer = 1536LL * 64 * 128 + 7168LL * 128 + 2 * 128 + 7168LL * 64;
  CHECK(indexer == 13'959'424);
  CHECK(attention_params_per_layer(v32) - attention_params_per_layer(fixture("deepseek-v3")) == indexer);
  const ParamCounts p = count_params(v32);
  CHECK(p.indexer == 61 * indexer);
  // Every GPU holds the indexers whole, as it does MLA's down-projections (q_a_proj 7168 -> 1536 with
  // q_a_layernorm, kv_a_proj_with_mqa 7168 -> 576 with kv_a_layernorm), the routers and the norms (vLLM's
  // and SGLang's ReplicatedLinear): at tp 8 in fp8, 7/8 of them more than an even split.
  const std::int64_t mla_down = 7168LL * 1536 + 1536 + 7168LL * 576 + 512;
  CHECK(p.replicated == 61 * (indexer + mla_down) + p.router + p.norms);
  CHECK(p.replicated == 1'775'117'568 + p.router + p.norms);
  CHECK(p.kv_projection == 0);  // the latent's projection is MLA's kv_a, counted above
  CHECK(served_weight_bytes_per_gpu(p, DType::fp8, 8) == Approx(double(p.total) / 8 + double(p.replicated) * 7 / 8));
  // The checkpoint's 685,355,329,792 elements without the FP8 scales (its header audit's 685,396,921,376 with
  // them): the backbone, and an MTP layer that stores its own copies of the embedding and the head.
  CHECK(p.total + p.mtp + 2 * 129'280LL * 7168 == 685'355'329'792);
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(v32, w);
  CHECK(kv.indexer_bytes_per_token_per_layer == 132);  // 128 fp8 values and one fp32 scale
  CHECK(kv.bytes_per_token == 61 * ((512 + 64) * 2 + 132));

  const ModelSpec glm = fixture("glm-5.1");
  REQUIRE(glm.attention.sparse());
  CHECK(glm.attention.indexer.num_heads == 32);
  CHECK(glm.attention.mla.q_lora_rank == 2048);
  CHECK(glm.attention.v_head_dim == 256);
  const ParamCounts g = count_params(glm);
  CHECK(g.total + g.mtp == 753'864'139'008);  // the Hub's safetensors total: its MTP layer shares embedding and head
  CHECK(count_kv_cache(glm, w).bytes_per_token == 78 * ((512 + 64) * 2 + 132));

  // GlmMoeDsaConfig's defaults when the indexer's keys are missing; DeepseekV32Config's 64 heads.
  const ModelSpec bare = edited("glm-5.1", [](nlohmann::json& j) {
    for (const char* k : {"index_n_heads", "index_head_dim", "index_topk", "q_lora_rank"}) j.erase(k);
  });
  CHECK(count_params(bare).total == g.total);
  CHECK(edited("deepseek-v3.2", [](nlohmann::json& j) { j.erase("index_n_heads"); }).attention.indexer.num_heads == 64);
  // GLM-5.2's IndexShare schedule (index_topk_freq 4, index_skip_topk_offset 3): layer i runs its own
  // indexer when max(i - 2, 0) is a multiple of 4, i.e. layers 0, 1, 2, 6, 10, ..., 74: 21 of 78. The
  // other 57 attend to the previous full layer's top k and hold no indexer weights, keys or work.
  const ModelSpec share = edited("glm-5.1", [](nlohmann::json& j) {
    j["index_topk_freq"] = 4;
    j["index_skip_topk_offset"] = 3;
  });
  CHECK(share.num_indexer_layers() == 21);
  CHECK_FALSE(share.layers[2].shared_topk);
  CHECK(share.layers[3].shared_topk);
  CHECK_FALSE(share.layers[6].shared_topk);
  CHECK_FALSE(share.layers[74].shared_topk);
  CHECK(share.layers[77].shared_topk);
  const std::int64_t glm_indexer = 2048LL * 32 * 128 + 6144LL * 128 + 2 * 128 + 6144LL * 32;  // wq_b, wk, k_norm, weights_proj
  CHECK(g.indexer == 78 * glm_indexer);
  const ParamCounts gs = count_params(share);
  CHECK(gs.indexer == 21 * glm_indexer);
  CHECK(g.total - gs.total == 57 * glm_indexer);
  CHECK(gs.mtp == g.mtp);  // the MTP layer keeps its own indexer
  const KvCacheCounts skv = count_kv_cache(share, w);
  CHECK(skv.bytes_per_token == 78 * (512 + 64) * 2 + 21 * 132);
  CHECK(skv.indexer_layer_tokens == 21 * w.context);
  const FlopCounts gf = count_flops(glm, w), sf = count_flops(share, w);
  const std::int64_t decode_indexer = indexer_flops(layer_indexer_shape(glm, 1, 1, w.context));
  CHECK(gf.decode_per_token.attention_core - sf.decode_per_token.attention_core == 57 * decode_indexer);
  CHECK(gf.decode_per_token.projections - sf.decode_per_token.projections == 2 * 57 * (2048LL * 32 * 128 + 6144LL * (128 + 32)));
  // The same schedule from a pattern or a list; 1 is every layer; the list names every layer.
  std::string pattern;
  for (const auto& l : share.layers) pattern += l.shared_topk ? 'S' : 'F';
  CHECK(edited("glm-5.1", [&](nlohmann::json& j) { j["index_topk_pattern"] = pattern; }).num_indexer_layers() == 21);
  nlohmann::json types = nlohmann::json::array();
  for (char c : pattern) types.push_back(c == 'S' ? "shared" : "full");
  CHECK(count_params(edited("glm-5.1", [&](nlohmann::json& j) { j["indexer_types"] = types; })).total == gs.total);
  CHECK(edited("glm-5.1", [](nlohmann::json& j) { j["index_topk_freq"] = 1; }).num_indexer_layers() == 78);
  CHECK_THROWS_WITH(edited("glm-5.1", [](nlohmann::json& j) { j["indexer_types"] = {"full", "shared"}; }),
                    "glm-5.1: indexer_types = (2 entries): must name every layer's indexer mode (num_hidden_layers = 78)");
  CHECK_THROWS_WITH(edited("glm-5.1", [&](nlohmann::json& j) { j["indexer_types"] = types; j["indexer_types"][5] = "half"; }),
                    "glm-5.1: indexer_types[5] = \"half\": unknown indexer type (expected \"full\" or \"shared\")");
  // A first layer that shares has nothing to share from.
  CHECK_THROWS_WITH(edited("glm-5.1", [&](nlohmann::json& j) { j["indexer_types"] = types; j["indexer_types"][0] = "shared"; }),
                    Catch::Contains("layers[0].shared_topk = true: shares the top-k of an earlier layer"));
  // DeepSeek-V3.2's config gives every layer its own indexer: IndexCache's serving override is refused.
  CHECK_THROWS_WITH(edited("deepseek-v3.2", [](nlohmann::json& j) { j["index_topk_freq"] = 4; }),
                    Catch::Contains("index_topk_freq") && Catch::Contains("GlmMoeDsaConfig"));
  // Widths whose products overflow are an input error, never a wrapped count (the sanitized suite runs this).
  for (const char* key : {"index_head_dim", "index_n_heads"}) {
    INFO(key);
    // The import counts the model once: the overflow is refused there, naming the config.
    CHECK_THROWS_WITH(edited("deepseek-v3.2", [&](nlohmann::json& j) { j[key] = std::numeric_limits<std::int64_t>::max(); }),
                      Catch::Contains("would overflow") && Catch::Contains("deepseek-v3.2"));
  }
  const ModelSpec far = edited("deepseek-v3.2", [](nlohmann::json& j) { j["index_topk"] = std::numeric_limits<std::int64_t>::max(); });
  CHECK(count_model(far, w).bytes.kv_read > 0);  // every key is in the top k: dense MLA plus the indexer
}

TEST_CASE("sparse attention counts: queries attend to the top k keys, the indexer scores every key", "[counts]") {
  const ModelSpec v32 = fixture("deepseek-v3.2");
  Workload w;
  w.batch = 2;
  w.context = 131072;
  w.prompt_len = 4096;
  const ModelCounts c = count_model(v32, w);
  // Decode, per token and layer: the indexer's 64 heads x (2 x 128 + 2) FLOPs per cached key, and the
  // absorbed MLA of 128 heads over 2048 keys ((512 + 64) + 512 dims, a multiply-add each).
  const std::int64_t indexer = 2LL * 64 * (128 + 1) * 131072;
  const std::int64_t mla = 2LL * 128 * 2048 * (576 + 512);
  CHECK(c.flops.decode_per_token.attention_core == 61 * (indexer + mla));
  // The step reads the top 2048 latents and every indexer key of each sequence.
  CHECK(c.bytes.kv_read == 2LL * 61 * (2048 * 1152 + 131072 * 132));
  // Prefill: a query at position p sees min(p + 1, 2048) keys; the indexer scores all p + 1.
  const std::int64_t capped = 2048LL * 2049 / 2 + (4096LL - 2048) * 2048, causal = 4096LL * 4097 / 2;
  const std::int64_t prefill_mla = 128LL * capped * 2 * (192 + 128);  // decompressed: 128 heads of 192 / 128
  CHECK(c.flops.prefill.attention_core == 61 * 2 * (prefill_mla + 2LL * 64 * 129 * causal));
  // The indexer is whole on every GPU, beside the latent: tp replicates the whole cache.
  w.tp = 8;
  const KvCacheCounts kv = count_kv_cache(v32, w);
  CHECK(kv.bytes_per_gpu == kv.bytes_total);
}
