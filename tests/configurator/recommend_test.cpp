// The recommender: real designs in the top three, each constraint, the quality rules, the ranking.
#include <catch2/catch.hpp>
#include <map>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/configurator/search/memory_fit.hpp"
#include "mhacfg/configurator/search/quality.hpp"
#include "mhacfg/configurator/search/memory_fit.hpp"
#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;

namespace {
Recommendation rec(RecommendOptions o) { return recommend(o, load_profile(o.target, "--target")); }

RecommendOptions shape(std::int64_t d, std::int64_t layers, std::int64_t seq) {
  RecommendOptions o;
  o.d_model = d;
  o.layers = layers;
  o.workload = o.workload.serving(seq);
  return o;
}

bool top3_has(const Recommendation& r, AttentionVariant v, std::int64_t nq, std::int64_t nkv, std::int64_t hd) {
  for (std::size_t i = 0; i < r.ranked.size() && i < 3; ++i) {
    const AttentionSpec& a = r.ranked[i].spec.attention;
    if (a.variant == v && a.num_q_heads == nq && a.num_kv_heads == nkv && a.head_dim == hd) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("real designs rank in the top three", "[recommend]") {
  // Llama-3-8B: d 4096, 32 layers, GQA 32/8 x 128.
  CHECK(top3_has(rec(shape(4096, 32, 8192)), AttentionVariant::gqa, 32, 8, 128));
  // Llama-3-70B served with tp 8: GQA 64/8 x 128.
  RecommendOptions o70 = shape(8192, 80, 8192);
  o70.workload.tp = 8;
  CHECK(top3_has(rec(o70), AttentionVariant::gqa, 64, 8, 128));
  // GPT-2 small: 12 query heads of 64.
  const Recommendation g = rec(shape(768, 12, 1024));
  bool twelve_of_64 = false;
  for (std::size_t i = 0; i < 3; ++i)
    twelve_of_64 |= g.ranked[i].spec.attention.num_q_heads == 12 && g.ranked[i].spec.attention.head_dim == 64;
  CHECK(twelve_of_64);
}

TEST_CASE("a parameter budget derives the shape and holds every candidate to it", "[recommend]") {
  RecommendOptions o;
  o.params = 7'000'000'000;
  o.workload = o.workload.serving(32768);
  o.target = "h200-sxm";
  const Recommendation r = rec(o);
  CHECK(r.shape.d_model == 4096);
  CHECK(r.shape.layers == 32);
  CHECK(r.shape.rule.find("aspect ratio") != std::string::npos);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    const double dev = double(c.counts.params.total) / 7e9 - 1.0;
    CHECK(std::fabs(dev) < 0.01);  // the FFN width absorbs the attention's difference (64-wide steps)
    CHECK_FALSE(c.rationale.empty());
    CHECK(c.batch == c.max_batch);  // no --batch: the largest batch that fits
  }
}

TEST_CASE("tensor parallelism: heads must divide, KV heads split or replicate", "[recommend][constraints]") {
  RecommendOptions o = shape(3072, 28, 4096);  // Gemma-7B's shape: 48 heads of 64 have divisors like 3 and 6
  o.workload.tp = 8;
  o.quality = QualityTolerance::aggressive;
  o.top = 50;
  const Recommendation r = rec(o);
  for (const auto& c : r.ranked) {
    CHECK(c.spec.attention.num_q_heads % 8 == 0);
    const std::int64_t nkv = c.spec.attention.num_kv_heads;
    CHECK((nkv % 8 == 0 || 8 % nkv == 0));
    if (nkv < 8) {
      CHECK(c.counts.kv_cache.replication == 8 / nkv);
      CHECK(c.replication_bytes > 0);
    }
  }
  bool saw_tp_rejection = false;
  for (const auto& rj : r.rejected) saw_tp_rejection |= rj.reason.find("tp 8") != std::string::npos;
  CHECK(saw_tp_rejection);
}

TEST_CASE("kernel support: head_dims outside the target's list are rejected", "[recommend][constraints]") {
  RecommendOptions o = shape(4096, 32, 8192);
  o.top = 100;
  const Recommendation r = rec(o);  // h100-sxm: 64, 96, 128, 192, 256
  for (const auto& c : r.ranked) {
    const auto hd = c.spec.attention.head_dim;
    CHECK((hd == 64 || hd == 96 || hd == 128 || hd == 192 || hd == 256));
  }
  o.target = "cpu-generic";  // any multiple of 8
  const Recommendation cpu = rec(o);
  bool other = false;
  for (const auto& c : cpu.ranked) other |= c.spec.attention.head_dim % 32 != 0;
  CHECK(other);
}

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
  o.batch = 64;
  const Recommendation none = rec(o);
  CHECK(none.ranked.empty());
  REQUIRE(none.closest.has_value());
  CHECK(none.closest_miss.find("batch 64 needs") != std::string::npos);
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

TEST_CASE("notable rejections show one line per rule they failed", "[recommend][cli]") {
  // At d_model 3072 on h100-sxm (fast kernels at head_dim 64, 96, 128, 192, 256) the d_model-wide designs
  // of head_dim 32 and 48 both fail the same rule: one of them stands for the other.
  const CliResult r = run({"recommend", "--d-model", "3072", "--layers", "28", "--target", "h100-sxm", "--format", "json"});
  REQUIRE(r.code == 0);
  std::map<std::string, int> per_rule;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& rj : doc["rejected"]) {
    const std::string why = rj["reason"];
    if (why.find("fast-kernel head_dims") != std::string::npos) ++per_rule["kernel head_dim"];
    if (why.find("exceed") != std::string::npos && why.rfind("weights", 0) == 0) ++per_rule["memory"];
  }
  CHECK(per_rule["kernel head_dim"] == 1);
  CHECK(per_rule["memory"] <= 1);
}

TEST_CASE("recommend names the context --context, as analyze and compare do, and keeps --seq", "[recommend][cli]") {
  const CliResult ctx = run({"recommend", "--d-model", "2048", "--layers", "16", "--context", "16384", "--format", "json"});
  const CliResult seq = run({"recommend", "--d-model", "2048", "--layers", "16", "--seq", "16384", "--format", "json"});
  REQUIRE(ctx.code == 0);
  CHECK(ctx.out == seq.out);
  CHECK(nlohmann::json::parse(ctx.out)["inputs"]["seq"] == 16384);
  const CliResult both = run({"recommend", "--d-model", "2048", "--layers", "16", "--context", "8192", "--seq", "4096"});
  CHECK(both.code == 2);
  CHECK(both.err == "mhacfg: error: --seq = 4096: is --context's earlier name: give one of them\n");
}

TEST_CASE("nothing feasible exits 1 and names the closest candidate", "[recommend][cli]") {
  const CliResult r = run({"recommend", "--params", "70B", "--target", "rtx-4090", "--seq", "8192"});
  CHECK(r.code == 1);
  CHECK(r.err.find("mhacfg: infeasible: no candidate satisfies the constraints; closest: ") == 0);
  CHECK(r.err.find("exceed") != std::string::npos);
  const CliResult j = run({"recommend", "--params", "70B", "--target", "rtx-4090", "--seq", "8192", "--format", "json"});
  CHECK(j.code == 1);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["feasible"] == false);
  CHECK(doc["closest"]["miss"].get<std::string>().find("exceed") != std::string::npos);
  // The closest candidate's sizes and times are its own, not the zeros of an uncounted candidate, and
  // an uncalibrated target says so.
  const auto& c = doc["closest"];
  CHECK(c["params"]["total"].get<double>() > 60e9);
  CHECK(std::abs(c["params"]["budget_delta"].get<double>()) < 0.05 * 70e9);
  CHECK(c["kv_cache"]["bytes_per_token"].get<double>() > 0);
  CHECK(c["predicted"]["single_sequence"]["prefill_ms"].get<double>() > 0);
  CHECK(c["predicted"]["basis"] == "uncalibrated roofline");
  // Heads that divide over no candidate's tp: still infeasible (exit 1) with the closest candidate,
  // counted on one GPU (its counts under --tp 64 do not exist).
  const CliResult tp = run({"recommend", "--d-model", "768", "--layers", "12", "--tp", "64", "--format", "json"});
  CHECK(tp.code == 1);
  const auto t = nlohmann::json::parse(tp.out)["closest"];
  CHECK(t["miss"].get<std::string>().find("do not divide over tp 64 (its sizes and times are counted on one GPU)") !=
        std::string::npos);
  CHECK(t["params"]["total"].get<double>() > 1e8);
  // A batch whose counts overflow 64 bits: the closest candidate is reported at one sequence, its
  // memory at that same batch.
  const CliResult huge = run({"recommend", "--params", "7B", "--batch", "4000000000", "--format", "json"});
  CHECK(huge.code == 1);
  const auto h = nlohmann::json::parse(huge.out)["closest"];
  CHECK(h["batch"] == 1);
  const auto& mem = h["memory"];
  CHECK(mem["total_bytes_per_gpu"].get<double>() ==
        Approx(mem["weights_bytes_per_gpu"].get<double>() + mem["kv_bytes_per_gpu"].get<double>()));
  CHECK(mem["kv_bytes_per_gpu"].get<double>() == h["kv_cache"]["bytes_per_sequence_per_gpu"].get<double>());
}

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

TEST_CASE("objectives order the ranking by their metric", "[recommend][ranking]") {
  RecommendOptions o = shape(4096, 32, 8192);
  o.top = 20;
  o.objective = Objective::memory;
  const Recommendation mem = rec(o);
  for (std::size_t i = 1; i < mem.ranked.size(); ++i)
    CHECK(mem.ranked[i - 1].counts.kv_cache.bytes_per_token <= mem.ranked[i].counts.kv_cache.bytes_per_token);
  o.objective = Objective::throughput;
  const Recommendation thr = rec(o);
  for (std::size_t i = 1; i < thr.ranked.size(); ++i)
    CHECK(thr.ranked[i - 1].at_batch.tokens_per_s >= thr.ranked[i].at_batch.tokens_per_s);
  o.objective = Objective::latency;
  const Recommendation lat = rec(o);
  for (std::size_t i = 1; i < lat.ranked.size(); ++i)
    CHECK(lat.ranked[i - 1].single.decode_step_ms <= lat.ranked[i].single.decode_step_ms);
}

TEST_CASE("MLA is searched when asked and reported as an alternative otherwise", "[recommend]") {
  RecommendOptions o = shape(4096, 32, 32768);
  const Recommendation without = rec(o);
  bool mentioned = false;
  for (const auto& rj : without.rejected) mentioned |= rj.design.rfind("mla", 0) == 0;
  CHECK(mentioned);
  o.variants.push_back(AttentionVariant::mla);
  const Recommendation with = rec(o);
  bool has_mla = false;
  for (const auto& c : with.ranked) has_mla |= c.spec.attention.variant == AttentionVariant::mla;
  CHECK(has_mla);
}

TEST_CASE("the Pareto frontier is non-dominated", "[recommend][ranking]") {
  const Recommendation r = rec(shape(4096, 32, 8192));
  REQUIRE_FALSE(r.pareto.empty());
  for (const auto& a : r.pareto)
    for (const auto& b : r.pareto) {
      const bool dominates = b.counts.kv_cache.bytes_per_token <= a.counts.kv_cache.bytes_per_token &&
                             b.single.decode_step_ms <= a.single.decode_step_ms && b.risk.level <= a.risk.level &&
                             (b.counts.kv_cache.bytes_per_token < a.counts.kv_cache.bytes_per_token ||
                              b.single.decode_step_ms < a.single.decode_step_ms || b.risk.level < a.risk.level);
      CHECK_FALSE(dominates);
    }
}

namespace {
RecommendOptions of_model(const std::string& fixture, std::int64_t seq) {
  RecommendOptions o;
  o.base = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + fixture + ".json");
  o.workload = o.workload.serving(seq);
  o.target = "h200-sxm-cudnn";
  return o;
}
}  // namespace

TEST_CASE("a model's attention is searched with the rest of the model kept, its own design ranked beside", "[recommend]") {
  const RecommendOptions o = of_model("llama-3-8b", 8192);
  const Recommendation r = rec(o);
  CHECK(r.shape.d_model == 4096);
  CHECK(r.shape.layers == 32);
  CHECK(r.shape.budget == 8'030'261'248);  // the model's own count
  REQUIRE(r.ranked.size() >= 3);
  for (const auto& c : r.ranked) {
    CHECK(c.spec.vocab_size == 128'256);  // Llama 3's vocabulary, untied, not the 32000 default
    CHECK_FALSE(c.spec.tie_embeddings);
    // The FFN width absorbs the attention's difference in steps of 64 (3 x 4096 x 32 x 64 parameters).
    CHECK(std::llabs(c.counts.params.total - r.shape.budget) <= 3LL * 4096 * 32 * 32);
  }
  // Its own GQA 32/8 x 128 is ranked as the design of its class, with its own FFN (14336).
  REQUIRE(r.base_design);
  CHECK(r.base_verdict.empty());
  CHECK(r.base_design->spec.ffn.ffn_dim == 14336);
  CHECK(r.base_class_design == "gqa 32q/8kv x 128");
  const Candidate* same = nullptr;
  for (const auto& c : r.ranked)
    if (c.spec.attention.num_q_heads == 32 && c.spec.attention.num_kv_heads == 8 && c.spec.attention.head_dim == 128) same = &c;
  REQUIRE(same);
  CHECK(same->rank == r.base_rank);
  CHECK(same->at_batch.tokens_per_s == r.base_design->at_batch.tokens_per_s);
  // Its predictions are the model's own: analyze's numbers at the same batch.
  const Workload w{r.base_design->batch, 8192, 8192, DType::bf16, DType::bf16, 1};
  CHECK(r.base_design->at_batch.tokens_per_s ==
        Approx(predict_model(*o.base, w, Predictor(load_profile("h200-sxm-cudnn", "--target"))).tokens_per_s));
  // Every other ranked design says what it changes against the model's own.
  for (const auto& c : r.ranked) {
    if (same == &c) continue;
    bool against = false;
    for (const auto& line : c.rationale) against |= line.rfind("Against llama-3-8b.json's own gqa 32q/8kv x 128: ", 0) == 0;
    CHECK(against);
  }
}

TEST_CASE("a MoE model holds the budget with its experts' width, a rejected own design says why", "[recommend]") {
  RecommendOptions o = of_model("qwen3-30b-a3b", 32768);
  const Recommendation strict = rec(o);  // 4 KV heads in groups of 8: medium risk, over conservative
  REQUIRE(strict.base_design);
  CHECK(strict.base_rank == 0);
  CHECK(strict.base_verdict.rfind("quality risk medium exceeds --quality conservative", 0) == 0);
  o.quality = QualityTolerance::balanced;
  const Recommendation r = rec(o);
  CHECK(r.base_verdict.empty());
  CHECK(r.base_rank >= 1);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    CHECK(c.spec.ffn.ffn_dim == 6144);             // the (unused) dense width is left alone
    CHECK(c.spec.moe.num_routed_experts == 128);   // the experts are the model's
    CHECK(c.spec.moe.expert_ffn_dim % 16 == 0);    // their width absorbs the attention's difference
    CHECK(c.spec.attention.qk_norm);               // Qwen3's q/k norms carry over
    CHECK(std::llabs(c.counts.params.total - r.shape.budget) <= 128LL * 3 * 2048 * 48 * 8);
  }
  // Gemma 3's windows (five sliding layers to one global) stay as the model has them.
  const Recommendation g = rec(of_model("gemma-3-1b-it", 32768));
  const ModelSpec base = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/gemma-3-1b-it.json");
  REQUIRE_FALSE(g.ranked.empty());
  for (const auto& c : g.ranked)
    for (std::size_t i = 0; i < base.layers.size(); ++i) CHECK(c.spec.layers[i].window() == base.layers[i].window());
}

TEST_CASE("Llama 4's chunks stay as the model has them and cap each design's cache per sequence", "[recommend]") {
  RecommendOptions o = of_model("llama-4-scout-17b-16e-instruct", 131072);
  o.workload.tp = 4;
  const Recommendation r = rec(o);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    std::int64_t chunked = 0;
    for (const auto& l : c.spec.layers) chunked += l.chunk() == 8192;
    CHECK(chunked == 36);
    // 36 layers hold 8192 tokens, 12 the whole context: per GPU under tp 4 (the KV heads split).
    const double per_layer_token = double(c.counts.kv_cache.bytes_per_token_per_layer);
    CHECK(c.kv_bytes_per_seq_per_gpu == Approx(per_layer_token * (36 * 8192 + 12 * 131072) / 4));
    CHECK_THAT(c.rationale.front(), Catch::Contains(" in 48 layers (36 in 8192-token chunks, 12 global), "));
  }
  // Without local layers the sentence does not describe the layers.
  const Recommendation plain = rec(of_model("llama-3-8b", 8192));
  REQUIRE_FALSE(plain.ranked.empty());
  CHECK(plain.ranked.front().rationale.front().find(" layers") == std::string::npos);
}

TEST_CASE("windows asked for by flags: every candidate and a model's own design keep them, and they cap the cache", "[recommend]") {
  // A 7B budget at 32768 tokens with Gemma 3's pattern: 1024-token windows, every 6th layer global. Of 32
  // layers 5 hold the whole context and 27 hold 1024 tokens, so each sequence holds a fraction
  // (5 x 32768 + 27 x 1024) / (32 x 32768) of the full cache, and more sequences fit.
  RecommendOptions o;
  o.params = 7'000'000'000;
  o.workload = o.workload.serving(32768);
  o.target = "h200-sxm-cudnn";
  o.top = 1000;
  const Recommendation full = rec(o);
  o.layer_pattern = {1024, std::nullopt, 6};
  const Recommendation local = rec(o);
  REQUIRE_FALSE(local.ranked.empty());
  for (const auto& c : local.ranked) {
    std::int64_t windowed = 0, global = 0;
    for (const auto& l : c.spec.layers) (l.window() == 1024 ? windowed : global) += 1;
    CHECK(windowed == 27);
    CHECK(global == 5);
    const double per_token = double(c.counts.kv_cache.bytes_per_token_per_layer);
    CHECK(c.kv_bytes_per_seq_per_gpu == Approx(per_token * (5 * 32768 + 27 * 1024)));
  }
  // The same design holds a larger batch with the windows than without them.
  const auto find = [](const Recommendation& r, const AttentionSpec& a) -> const Candidate* {
    for (const auto& c : r.ranked)
      if (c.spec.attention.variant == a.variant && c.spec.attention.num_q_heads == a.num_q_heads &&
          c.spec.attention.num_kv_heads == a.num_kv_heads && c.spec.attention.head_dim == a.head_dim)
        return &c;
    return nullptr;
  };
  const Candidate* dense = find(full, local.ranked.front().spec.attention);
  REQUIRE(dense != nullptr);
  CHECK(local.ranked.front().batch > dense->batch);
  // A model given keeps its attention's own design beside the candidates, with the windows too.
  RecommendOptions m = of_model("llama-3-8b", 32768);
  m.layer_pattern = {4096, std::nullopt, std::nullopt};
  const Recommendation mr = rec(m);
  REQUIRE(mr.base_design);
  CHECK(mr.base_design->spec.name == "llama-3-8b.json (modified)");
  for (const auto& l : mr.base_design->spec.layers) CHECK(l.window() == 4096);
  // A global layer needs a local one to come from: the flag is named.
  RecommendOptions bad = shape(2048, 16, 8192);
  bad.layer_pattern.global_every = 4;
  CHECK_THROWS_WITH(rec(bad), "--global-every = 4: no layer is local to make global (add --sliding-window or --attention-chunk)");
}

TEST_CASE("a sparse model whose layers share the top-k keeps the sharing in its sparse candidates only", "[recommend]") {
  // Llama-3-8B given an indexer on every fourth layer (the other 24 share its top k), searched dense and
  // sparse: each sparse candidate keeps the 24 sharing layers, each dense twin has none.
  RecommendOptions o = of_model("llama-3-8b", 32768);
  o.base->attention.indexer = IndexerSpec{64, 128, 2048};
  for (std::size_t i = 0; i < o.base->layers.size(); ++i) o.base->layers[i].shared_topk = i % 4 != 0;
  o.index_topk = 2048;
  o.top = 1000;
  const Recommendation r = rec(o);
  std::size_t sparse = 0, dense = 0;
  for (const auto& c : r.ranked) {
    std::int64_t sharing = 0;
    for (const auto& l : c.spec.layers) sharing += l.shared_topk;
    if (c.spec.attention.sparse()) {
      ++sparse;
      CHECK(sharing == 24);
      CHECK(c.spec.num_indexer_layers() == 8);
    } else {
      ++dense;
      CHECK(sharing == 0);
    }
  }
  CHECK(sparse > 0);
  CHECK(dense > 0);
}

TEST_CASE("a hybrid model's linear-attention layers and output gate stay, its state joins each sequence's share", "[recommend]") {
  RecommendOptions o = of_model("qwen3-next-80b-a3b-instruct", 65536);
  o.workload.tp = 2;
  o.quality = QualityTolerance::balanced;
  const Recommendation r = rec(o);
  REQUIRE_FALSE(r.ranked.empty());
  REQUIRE(r.base_design);
  for (const auto& c : r.ranked) {
    CHECK(c.spec.num_attention_layers() == 12);
    CHECK(c.spec.attention.output_gate);
    const KvCacheCounts& kv = c.counts.kv_cache;
    // 12 softmax layers hold the context, 36 linear layers a fixed bf16 state, split over 2 GPUs.
    CHECK(kv.state_bytes_per_sequence == 36 * (32 * 128 * 128 + 8192 * 3) * 2);
    const double kv_per_gpu = double(kv.bytes_per_token_per_layer) * 12 * 65536 /
                              double(std::min<std::int64_t>(c.spec.attention.num_kv_heads, 2));
    CHECK(c.kv_bytes_per_seq_per_gpu == Approx(kv_per_gpu + double(kv.state_bytes_per_sequence) / 2));
    CHECK_THAT(c.rationale.front(), Catch::Contains(" in 48 layers (36 Gated DeltaNet, 12 global), "));
    CHECK_THAT(c.rationale.front(), Catch::Contains(" of it linear-attention state, bf16)"));
    CHECK_THAT(c.rationale[1], Catch::Contains("(calibrated, linear attention roofline"));
  }
  // Each candidate's parameters hold the model's budget: the experts' width absorbs the attention's difference.
  for (const auto& c : r.ranked) CHECK(std::abs(double(c.counts.params.total) / 79'674'391'296.0 - 1) < 0.01);
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

TEST_CASE("index_topk evaluates every design dense and sparse: at long contexts sparse wins, said against its twin",
          "[recommend]") {
  RecommendOptions o = shape(4096, 32, 131072);
  o.target = "h200-sxm-cudnn";
  o.index_topk = 2048;
  o.top = 1000;
  const Recommendation r = rec(o);
  REQUIRE(r.ranked.size() >= 2);
  const Candidate& best = r.ranked.front();
  CHECK(best.spec.attention.sparse());
  CHECK(best.spec.attention.indexer.topk == 2048);
  // Both forms of each design class are ranked: the dense one of the best's class is there too.
  const auto dense_class = std::find_if(r.ranked.begin(), r.ranked.end(), [&](const Candidate& c) {
    const AttentionSpec& a = c.spec.attention;
    return !a.sparse() && a.variant == best.spec.attention.variant && a.head_dim == best.spec.attention.head_dim;
  });
  CHECK(dense_class != r.ranked.end());
  // Its dense twin, the same model without the indexer: at 131072 tokens each sparse query reads 2048 keys
  // instead of all, so the sparse design decodes a single stream faster, for 132 bytes per token and layer.
  ModelSpec dense = best.spec;
  dense.attention.indexer = IndexerSpec{};
  Workload w;
  w.batch = 1;
  w.context = w.prompt_len = o.workload.context;
  const Profile prof = load_profile(o.target, "--target");
  CHECK(best.single.decode_step_ms < predict_model(dense, w, Predictor(prof)).decode_step_ms);
  CHECK(best.counts.kv_cache.bytes_per_token - count_kv_cache(dense, w).bytes_per_token == 32 * 132);
  bool against_twin = false;
  for (const auto& line : best.rationale)
    if (line.rfind("Against the same design with dense attention", 0) == 0) {
      against_twin = true;
      // The indexer's share is said to be the roofline: this profile has no fit of it.
      CHECK(line.find("of it, its roofline: h200-sxm-cudnn has no fit of the indexer).") != std::string::npos);
    }
  CHECK(against_twin);
  // On a profile that fits mhacfg's CPU indexer kernel the same comparison says it is calibrated.
  o.target = "cpu-epyc-2vcpu";
  o.workload = o.workload.serving(16384);
  o.top = 1000;
  const Recommendation cpu = rec(o);
  bool calibrated_twin = false;
  for (const auto& c : cpu.ranked)
    for (const auto& line : c.rationale)
      calibrated_twin = calibrated_twin || (line.rfind("Against the same design with dense attention", 0) == 0 &&
                                            line.find("of it, calibrated).") != std::string::npos);
  CHECK(calibrated_twin);
  // Fewer keys than the 2048 DeepSeek validated raise the quality risk one level.
  AttentionSpec a = best.spec.attention;
  a.indexer.topk = 512;
  CHECK(static_cast<int>(assess_quality(a).level) == static_cast<int>(best.risk.level) + 1);
}
