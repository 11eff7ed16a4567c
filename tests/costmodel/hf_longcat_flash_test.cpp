// Meituan's LongCat-Flash (longcat_flash, hf_longcat_flash.cpp): two MLA sublayers per layer, the MoE beside
// the first one's MLP, zero-computation experts beside the routed ones; on LongCat-Flash-Chat's configuration
// (tests/fixtures/hf, source in PUBLISHED.md).
#include <catch2/catch.hpp>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

namespace {
constexpr std::int64_t kD = 6144;
constexpr std::int64_t kExpert = 3 * kD * 2048;  // one routed expert: gate, up, down
constexpr std::int64_t kMlp = 3 * kD * 12288;     // one sublayer's MLP
}  // namespace

TEST_CASE("longcat_flash: 28 layers read as 56 MLA sublayers, the MoE beside every first one", "[hf_config][kv]") {
  const ModelSpec m = fixture("longcat-flash-chat");
  REQUIRE(m.num_layers() == 56);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    CHECK(m.layers[i].moe() == (i % 2 == 0));
    CHECK(m.layers[i].softmax());
  }
  const AttentionSpec& a = m.attention;
  CHECK(a.variant == AttentionVariant::mla);
  CHECK(a.num_q_heads == 64);
  CHECK(a.mla.q_lora_rank == 1536);
  CHECK(a.mla.kv_lora_rank == 512);
  CHECK(a.head_dim == 128 + 64);
  CHECK(a.v_head_dim == 128);
  CHECK(m.moe.num_routed_experts == 512);
  CHECK(m.moe.zero_experts == 256);
  CHECK(m.moe.top_k == 12);
  CHECK(shared_ffn_width(m.moe) == 12288);  // the first sublayer's MLP
  CHECK(m.ffn.ffn_dim == 12288);
  CHECK(m.extra.mtp_modules == 1);

  const ParamCounts p = count_params(m);
  // One MLA block: q_a, q_a_layernorm, q_b, kv_a (latent + RoPE key), kv_a_layernorm, kv_b, o.
  CHECK(p.attention_per_layer == kD * 1536 + 1536 + 1536 * 64 * 192 + kD * (512 + 64) + 512 + 512 * 64 * (128 + 128) + 64 * 128 * kD);
  // The router scores the 512 routed and 256 identity experts; its correction bias is a buffer.
  CHECK(p.router == 28LL * 768 * kD);
  CHECK(p.ffn == 28LL * (512 * kExpert + kMlp) + 28LL * kMlp);
  CHECK(p.norms == 56LL * 2 * kD + kD);
  // The MTP layer: enorm, hnorm, eh_proj, one sublayer (MLA, its MLP, two norms), the final norm.
  CHECK(p.mtp == 2 * kD + 2 * kD * kD + p.attention_per_layer + kMlp + 2 * kD + kD);
  // The Hub's safetensors total (PUBLISHED.md): the model, the 28 x 768 router buffers, the MTP layer and
  // the MTP layer's own copy of the embedding (model.mtp.embed_tokens).
  CHECK(p.total + 28 * 768 + p.mtp + 131'072LL * kD == 561'862'880'256);

  // The cache: 56 MLA layers, each a 512-wide latent and a 64-wide RoPE key per token.
  Workload w;
  CHECK(count_kv_cache(m, w).bytes_per_token == 56 * (512 + 64) * 2);
}

TEST_CASE("longcat_flash: the active count is an expectation between the card's bounds", "[hf_config]") {
  const ModelSpec m = fixture("longcat-flash-chat");
  const ParamCounts p = count_params(m);
  const std::int64_t all_routed = 28LL * 512 * kExpert;
  // Picks spread evenly over 512 + 256 experts: 12 x 512 / 768 = 8 routed experts per token and MoE layer.
  CHECK(p.active == p.total - all_routed + 28LL * 8 * kExpert);
  CHECK(p.active_min == p.total - all_routed);                   // every pick an identity expert
  CHECK(p.active_max == p.total - all_routed + 28LL * 12 * kExpert);  // every pick a routed expert
  // LongCat-Flash-Chat's card (PUBLISHED.md): 18.6B to 31.3B activated, about 27B on average; its figures
  // leave out the embedding and are cut, not rounded, to one decimal.
  CHECK((p.active_min - p.embedding) / 100'000'000 == 186);
  CHECK((p.active_max - p.embedding) / 100'000'000 == 313);
  CHECK((p.active - p.embedding) / 1'000'000'000 == 27);

  // FLOPs follow the expectation: per token, every MoE sublayer runs the router over 768 experts, 8
  // routed experts and its MLP; every other sublayer its MLP.
  Workload w;
  const FlopCounts f = count_flops(m, w);
  CHECK(f.decode_per_token.ffn == 28 * (2 * kD * 768 + 2 * 8 * kExpert + 2 * kMlp) + 28 * (2 * kMlp));
  // Decode reads the routed experts the batch's picks reach: 512 x (1 - (1 - 12/768)^batch).
  const ModelCounts c = count_model(m, w);
  CHECK(c.bytes.experts_read == Approx(512.0 * (1.0 - std::pow(1.0 - 12.0 / 768.0, double(w.batch)))));

  // Without zero-computation experts it is an ordinary top-12 MoE: one active count.
  const ParamCounts plain = count_params(edited("longcat-flash-chat", [](nlohmann::json& j) { j["zero_expert_num"] = 0; }));
  CHECK(plain.router == 28LL * 512 * kD);
  CHECK(plain.active == plain.total - 28LL * (512 - 12) * kExpert);
  CHECK(plain.active_min == plain.active);
  CHECK(plain.active_max == plain.active);
  // Other models keep one active count too.
  const ParamCounts dsv3 = count_params(fixture("deepseek-v3"));
  CHECK(dsv3.active_min == dsv3.active);
  CHECK(dsv3.active_max == dsv3.active);
}

TEST_CASE("longcat_flash: LongcatFlashConfig's defaults, its v5 key names and the errors", "[hf_config]") {
  // Every size left out takes the class default (LongCat-Flash-Chat's own sizes).
  const ModelSpec bare = spec_from_hf_config(nlohmann::json{{"model_type", "longcat_flash"}}, "bare");
  CHECK(count_params(bare).total == count_params(fixture("longcat-flash-chat")).total);
  // transformers v5 writes num_hidden_layers = 2 x num_layers back, and the attribute_map's names.
  const ModelSpec v5 = edited("longcat-flash-chat", [](nlohmann::json& j) {
    j["num_hidden_layers"] = 56;
    j["num_local_experts"] = j["n_routed_experts"];
    j["num_experts_per_tok"] = j["moe_topk"];
    j["intermediate_size"] = j["ffn_hidden_size"];
    j.erase("n_routed_experts");
    j.erase("moe_topk");
    j.erase("ffn_hidden_size");
  });
  CHECK(v5.num_layers() == 56);
  CHECK(count_params(v5).total == count_params(fixture("longcat-flash-chat")).total);
  // A router bias covers every expert it scores; no MTP layer when the file says none.
  const ModelSpec biased = edited("longcat-flash-chat", [](nlohmann::json& j) {
    j["router_bias"] = true;
    j["num_nextn_predict_layers"] = 0;
  });
  CHECK(count_params(biased).router == 28LL * 768 * (kD + 1));
  CHECK(count_params(biased).mtp == 0);
  CHECK_THROWS_WITH(edited("longcat-flash-chat", [](nlohmann::json& j) { j["zero_expert_type"] = "copy"; }),
                    Catch::Contains("zero_expert_type = \"copy\": only identity zero-computation experts are modelled"));
  CHECK_THROWS_WITH(edited("longcat-flash-chat", [](nlohmann::json& j) {
                      j["moe_topk"] = 800;
                    }),
                    Catch::Contains("moe_topk = 800: must not exceed n_routed_experts = 512 + zero_expert_num = 256"));
  CHECK_THROWS_WITH(edited("longcat-flash-chat", [](nlohmann::json& j) { j["num_layers"] = 60000; }),
                    Catch::Contains("num_layers = 60000: must be at most 50000"));
  CHECK_THROWS_AS(edited("longcat-flash-chat", [](nlohmann::json& j) { j["zero_expert_num"] = -1; }), InputError);
}
