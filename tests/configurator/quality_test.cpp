// Quality risk: the rules from the published ablations and the tolerance that bounds the ranking.
#include <catch2/catch.hpp>

#include "mhacfg/configurator/search/quality.hpp"
#include "recommend_test_util.hpp"

using namespace mhacfg;

TEST_CASE("quality rules follow the published ablations", "[recommend][quality]") {
  auto risk = [](AttentionVariant v, std::int64_t nq, std::int64_t nkv, std::int64_t hd) {
    AttentionSpec a{v, nq, nkv, hd, hd, false, false, false, false, false, false, {}};
    return assess_quality(a).level;
  };
  CHECK(risk(AttentionVariant::mha, 32, 32, 128) == RiskLevel::none);
  CHECK(risk(AttentionVariant::gqa, 32, 8, 128) == RiskLevel::low);     // GQA-8
  CHECK(risk(AttentionVariant::gqa, 64, 8, 128) == RiskLevel::low);     // groups of 8
  CHECK(risk(AttentionVariant::gqa, 12, 6, 64) == RiskLevel::low);      // groups of 2
  CHECK(risk(AttentionVariant::gqa, 32, 4, 128) == RiskLevel::medium);  // fewer than 8 KV heads, groups of 8
  CHECK(risk(AttentionVariant::gqa, 64, 2, 128) == RiskLevel::high);    // groups of 32: near MQA
  CHECK(risk(AttentionVariant::mqa, 32, 1, 128) == RiskLevel::high);
  CHECK(risk(AttentionVariant::gqa, 64, 8, 48) == RiskLevel::medium);   // head_dim < 64 raises a level
  AttentionSpec mla{AttentionVariant::mla, 16, 16, 192, 128, false, false, false, false, false, false, {}};
  mla.mla = MlaSpec{0, 512, 128, 64};
  CHECK(assess_quality(mla).level == RiskLevel::low);  // DeepSeek-V2: latent 4 x 128
  mla.mla.kv_lora_rank = 256;
  CHECK(assess_quality(mla).level == RiskLevel::medium);
  mla.mla.kv_lora_rank = 128;
  CHECK(assess_quality(mla).level == RiskLevel::high);
}

TEST_CASE("the quality tolerance bounds the risk of every ranked candidate", "[recommend][quality]") {
  for (auto q : {QualityTolerance::conservative, QualityTolerance::balanced, QualityTolerance::aggressive}) {
    RecommendOptions o = shape(4096, 32, 8192);
    o.quality = q;
    o.top = 30;
    for (const auto& c : rec(o).ranked) CHECK(c.risk.level <= max_risk(q));
  }
}
