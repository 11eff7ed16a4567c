// Memory: weights and KV in a fraction of the GPU, a given batch, models that do not fit, and the
// weights a multimodal or MTP checkpoint serves.
#include <catch2/catch.hpp>

#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/costmodel/memory_fit.hpp"
#include "recommend_test_util.hpp"

using namespace mhacfg;

TEST_CASE("memory: weights plus KV fit, a given batch is honoured or rejected", "[recommend][constraints]") {
  RecommendOptions o = shape(4096, 32, 8192);
  o.target = "rtx-4090";  // 24 GB
  o.batch = 4;
  const Recommendation r = rec(o);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    CHECK(c.batch == 4);
    CHECK(c.memory_bytes_per_gpu <= 24e9 * 0.9);
    CHECK(c.headroom_bytes >= 0);
  }
  o.batch = 256;
  const Recommendation none = rec(o);
  CHECK(none.ranked.empty());
  REQUIRE(none.closest.has_value());
  CHECK(none.closest_miss.find("batch 256 needs") != std::string::npos);
}

TEST_CASE("one memory rule: sequences of KV beside the served weights, in a fraction of the memory", "[recommend]") {
  const ModelSpec m = load_model_preset("llama-3-8b");
  const Profile p = load_profile("h100-sxm", "--target");
  const Workload w = Workload{}.serving(8192);
  const MemoryFit fit = fit_memory(m, w, p, 0.9);
  const double weights = 8'030'261'248.0 * 2;  // bf16
  const double kv = 131'072.0 * 8192;          // 128 KiB per token
  CHECK(fit.budget_bytes == double(p.spec.memory_bytes) * 0.9);
  CHECK(fit.weights_bytes_per_gpu == weights);
  CHECK(fit.kv_bytes_per_seq_per_gpu == kv);
  CHECK(fit.max_batch == static_cast<std::int64_t>((fit.budget_bytes - weights) / kv));
  CHECK_FALSE(fit.unbounded);
  CHECK(fit.batch_within(10) == std::min<std::int64_t>(10, fit.max_batch));
  CHECK(fit.bytes_at(3) == weights + 3 * kv);
  // Over tp 2 each GPU holds half the weights and half the KV heads: twice the room, half the sequence.
  const MemoryFit two = fit_memory(m, w.with_tp(2), p, 0.9);
  CHECK(two.kv_bytes_per_seq_per_gpu == kv / 2);
  CHECK(two.max_batch > 2 * fit.max_batch);
  // Weights that leave no room: not one sequence fits.
  CHECK(fit_memory(load_model_preset("llama-3-70b"), w, p, 0.9).max_batch == 0);
}

TEST_CASE("a model that does not fit is reported with its own sizes and the reason", "[recommend][constraints]") {
  RecommendOptions o = of_model("llama-3-70b", 8192);  // 141 GB of bf16 weights on one 141 GB H200
  const Recommendation r = rec(o);
  CHECK(r.ranked.empty());
  REQUIRE(r.base_design);
  CHECK(r.base_rank == 0);
  CHECK(r.base_verdict.rfind("weights 131.4 GiB + one sequence's KV 2.50 GiB exceed", 0) == 0);
  CHECK(r.base_design->counts.params.total == 70'553'706'496);  // counted although rejected
  CHECK(r.base_design->single.decode_step_ms > 0);
  o.workload.tp = 2;  // split over two GPUs it fits, and its own design is ranked
  const Recommendation two = rec(o);
  CHECK(two.base_verdict.empty());
  CHECK(two.base_rank >= 1);
}

TEST_CASE("serving a multimodal checkpoint holds its vision encoder's weights too", "[recommend][constraints]") {
  // Gemma-3-4B: 3,880,263,168 language-model parameters and a 419,816,304-parameter SigLIP encoder
  // with its projector, in bf16 on one GPU.
  const Recommendation r = rec(of_model("gemma-3-4b-pt", 32768));
  REQUIRE(r.base_design);
  CHECK(r.base_design->weights_bytes_per_gpu == Approx((3'880'263'168.0 + 419'816'304.0) * 2));
  for (const auto& c : r.ranked)
    CHECK(c.weights_bytes_per_gpu == Approx(double(c.counts.params.total + c.counts.params.vision) * 2));
  // DeepSeek-V3's MTP module is loaded only for speculative decoding: not in the served weights.
  const ParamCounts v3 = count_params(load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/deepseek-v3.json"));
  // Its down-projections, routers and norms are whole on every GPU; the rest is split.
  CHECK(served_weight_bytes_per_gpu(v3, DType::fp8, 8) == Approx(double(v3.total - v3.replicated) / 8 + double(v3.replicated)));
}
