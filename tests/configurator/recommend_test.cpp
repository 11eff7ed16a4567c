// The recommender on shapes: released designs in the top tier or beaten with numbers, tiers, the budget,
// tensor parallelism and kernel constraints, rejections through the CLI, objectives and SLOs, MLA, the
// Pareto frontier and sparse designs.
#include <catch2/catch.hpp>

#include <map>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/configurator/search/design.hpp"
#include "mhacfg/configurator/search/precedents.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/configurator/search/quality.hpp"
#include "recommend_test_util.hpp"

using namespace mhacfg;

TEST_CASE("released designs are in the top tier, or the output says what beats them", "[recommend]") {
  // Llama-3-70B on 8 H100s and Qwen2.5-7B at 32k: their own designs are in the top tier.
  RecommendOptions o70 = of_model("llama-3-70b", 8192);
  o70.target = "h100-sxm";
  o70.workload.tp = 8;
  CHECK(rec(o70).base_rank == 1);
  // Qwen2.5-7B at 32k: more than the expected error behind the best (MLA's), which the output names;
  // designs of the top tier within that error of it do not count as beating it.
  RecommendOptions q = of_model("qwen2.5-7b", 32768);
  q.target = "h100-sxm";
  const Recommendation rq = rec(q);
  if (rq.base_rank > 1) {
    std::size_t beating = 0;
    for (const auto& d : rq.ranked)
      beating += d.score * (1 + rq.tie_tolerance) < rq.base_design->score && !same_class(d.spec.attention, rq.base_design->spec.attention);
    REQUIRE(beating > 0);
    CHECK(rq.base_beaten_by.rfind(std::to_string(beating) + " design(s) beat it on balanced by more than the expected error", 0) == 0);
  }
  // Llama-3-8B at 8k: leaner designs serve more per GPU beyond the expected error; the output names
  // them with their numbers and risk.
  RecommendOptions o8 = of_model("llama-3-8b", 8192);
  o8.target = "h100-sxm";
  const Recommendation r8 = rec(o8);
  REQUIRE(r8.base_rank > 1);
  CHECK(r8.base_beaten_by.find(std::to_string(r8.base_rank - 1) + " design(s) beat it on balanced") == 0);
  CHECK(r8.base_beaten_by.find("tokens/s per GPU") != std::string::npos);
  CHECK(r8.base_beaten_by.find("risk low against low") != std::string::npos);
}

TEST_CASE("designs within the expected error share a rank, ordered by risk then precedent", "[recommend][ranking]") {
  RecommendOptions tp8 = shape(8192, 80, 8192);
  tp8.workload.tp = 8;
  for (const RecommendOptions& o : {shape(768, 12, 1024), shape(4096, 32, 8192), tp8}) {
    const Recommendation r = rec(o);
    REQUIRE(r.ranked.size() >= 2);
    CHECK(r.tie_tolerance > 0);
    // A tier is the best design not yet ranked and every design within the expected error of it.
    double best_unranked = 0;
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
      if (i > 0) CHECK(r.ranked[i - 1].rank <= r.ranked[i].rank);
      if (i == 0 || r.ranked[i - 1].rank != r.ranked[i].rank) {
        best_unranked = r.ranked[i].score;
        for (std::size_t j = i; j < r.ranked.size(); ++j) best_unranked = std::min(best_unranked, r.ranked[j].score);
      }
      for (std::size_t j = i; j < r.ranked.size(); ++j)
        if (r.ranked[j].score <= best_unranked * (1 + r.tie_tolerance)) CHECK(r.ranked[j].rank == r.ranked[i].rank);
    }
    // Inside a tier: quality risk first, then the distance to the nearest released design.
    for (std::size_t i = 1; i < r.ranked.size(); ++i)
      if (r.ranked[i - 1].rank == r.ranked[i].rank) {
        CHECK(r.ranked[i - 1].risk.level <= r.ranked[i].risk.level);
        if (r.ranked[i - 1].risk.level == r.ranked[i].risk.level)
          CHECK(r.ranked[i - 1].precedent_distance <= r.ranked[i].precedent_distance);
        CHECK(r.ranked[i].tied);
      }
  }
}

TEST_CASE("a budget too small for any FFN is infeasible on a fitted profile too, not a broken profile", "[recommend][cli]") {
  // Issue 26 point 3: a candidate with no FFN left has GEMMs with no output, which a fitted model
  // divided by zero parallel units. They are not launched: the search ends infeasible (exit 1), as on
  // a datasheet profile.
  for (const char* target : {"h200-sxm-cudnn", "h200-sxm", "h100-sxm"}) {
    INFO(target);
    const CliResult r = run({"recommend", "--params", "10M", "--target", target});
    CHECK(r.code == 1);
    CHECK(r.err.rfind("mhacfg: infeasible: no candidate satisfies the constraints; closest: ", 0) == 0);
  }
}

TEST_CASE("a parameter budget derives the shape and holds every candidate to it", "[recommend]") {
  RecommendOptions o;
  o.params = 7'000'000'000;
  o.workload = o.workload.serving(32768);
  o.target = "h200-sxm";
  const Recommendation r = rec(o);
  // The shape law fitted to released dense models: d_model in heads of 128 over 4 GPUs, layers in fours.
  const double fitted = shape_law().d_model(7e9);
  CHECK(r.shape.d_model % 512 == 0);
  CHECK(std::fabs(double(r.shape.d_model) - fitted) <= 256);
  CHECK(r.shape.layers % 4 == 0);
  CHECK(std::fabs(double(r.shape.layers) - shape_law().layers(7e9)) <= 2);
  CHECK(r.shape.rule.find("from shipped dense models' shape") != std::string::npos);
  REQUIRE_FALSE(r.ranked.empty());
  for (std::size_t i = 0; i < r.ranked.size(); ++i) {
    const Candidate& c = r.ranked[i];
    const double dev = double(c.counts.params.total) / 7e9 - 1.0;
    CHECK(std::fabs(dev) < 0.01);  // the FFN width absorbs the attention's difference (64-wide steps)
    CHECK(c.rationale.empty() == (i >= static_cast<std::size_t>(o.top)));  // rationales for the top K
    // No --batch: the largest batch that fits, unless the engine's max_num_seqs stops it first.
    if (c.served.batch_limit == "engine") CHECK(c.batch == o.engine.max_num_seqs);
    else CHECK(c.batch == c.max_batch);
  }
  // Under tp 8 the width is in heads of 128 over 8 GPUs.
  o.workload.tp = 8;
  o.params = 70'000'000'000;
  CHECK(derive_shape(o).d_model % 1024 == 0);
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

TEST_CASE("notable rejections show one line per rule they failed", "[recommend][cli]") {
  // At d_model 3072 on h100-sxm (fast kernels at head_dim 64, 96, 128, 192, 256) the d_model-wide designs
  // of head_dim 32 and 48 both fail the same rule: one of them stands for the other.
  const CliResult r = run({"recommend", "--d-model", "3072", "--layers", "28", "--target", "h100-sxm", "--format", "json"});
  REQUIRE(r.code == 0);
  std::map<std::string, int> per_rule;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& rj : doc["rejected"]) {
    if (!rj["notable"].get<bool>()) continue;  // every rejection is in the JSON; the notable ones are listed
    const std::string rule = rj["constraint"];
    if (rule == "kernel_head_dim") ++per_rule["kernel head_dim"];
    if (rule == "memory") ++per_rule["memory"];
  }
  // Every rejection carries its rule's numbers.
  for (const auto& rj : doc["rejected"])
    if (rj["constraint"] == "kernel_head_dim") CHECK(rj["numbers"].contains("head_dim"));
  CHECK(per_rule["kernel head_dim"] == 1);
  CHECK(per_rule["memory"] <= 1);
}

TEST_CASE("recommend names the context --context, as analyze and compare do, and keeps --seq", "[recommend][cli]") {
  const CliResult ctx = run({"recommend", "--d-model", "2048", "--layers", "16", "--context", "16384", "--format", "json"});
  const CliResult seq = run({"recommend", "--d-model", "2048", "--layers", "16", "--seq", "16384", "--format", "json"});
  REQUIRE(ctx.code == 0);
  CHECK(ctx.out == seq.out);
  CHECK(nlohmann::json::parse(ctx.out)["inputs"]["context"] == 16384);
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
  // a transferred target says so.
  const auto& c = doc["closest"];
  CHECK(c["params"]["total"].get<double>() > 60e9);
  CHECK(std::abs(c["params"]["budget_delta"].get<double>()) < 0.05 * 70e9);
  CHECK(c["kv_cache"]["bytes_per_token"].get<double>() > 0);
  CHECK(c["predicted"]["single_sequence"]["prefill_ms"].get<double>() > 0);
  CHECK(c["predicted"]["basis"].get<std::string>().rfind("transferred from h200-sxm-cudnn, expected error", 0) == 0);
  // Every design misses a TPOT target: the closest is the one that misses it by the least, whatever
  // other rules rejected other designs.
  const CliResult slo = run({"recommend", "--d-model", "4096", "--layers", "32", "--context", "8192", "--target",
                             "h200-sxm-cudnn", "--objective", "goodput", "--tpot-ms", "1", "--format", "json"});
  CHECK(slo.code == 1);
  const auto s = nlohmann::json::parse(slo.out);
  CHECK(s["closest"]["miss"].get<std::string>().rfind("TPOT ", 0) == 0);
  double least = 1e300;
  for (const auto& rj : s["rejected"])
    if (rj["constraint"] == "tpot_slo") least = std::min(least, rj["numbers"]["tpot_ms"].get<double>());
  REQUIRE(least < 1e300);
  CHECK(s["closest"]["miss"].get<std::string>().find("TPOT " + fmt_ms(least) + " at batch 1") == 0);
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

TEST_CASE("objectives order the ranking by their per-GPU metric, tiers aside", "[recommend][ranking]") {
  RecommendOptions o = shape(4096, 32, 8192);
  o.top = 20;
  // Between tiers the order is the objective's; inside one, the designs are within the expected error.
  auto ordered = [](const Recommendation& r, auto metric) {
    for (std::size_t i = 1; i < r.ranked.size(); ++i)
      if (r.ranked[i - 1].rank < r.ranked[i].rank) CHECK(metric(r.ranked[i - 1]) <= metric(r.ranked[i]) * (1 + r.tie_tolerance));
  };
  // A tier is measured from its best design, not chained through neighbours: every tied design lies within
  // the expected error of its rank's best, and each tier's best lies beyond it from the tier before.
  auto tiers_from_best = [](const Recommendation& r) {
    std::map<std::int64_t, double> best;
    for (const auto& c : r.ranked) best[c.rank] = best.count(c.rank) ? std::min(best[c.rank], c.score) : c.score;
    for (const auto& c : r.ranked) CHECK(c.score <= best[c.rank] * (1 + r.tie_tolerance) * (1 + 1e-12));
    for (auto it = best.begin(); it != best.end() && std::next(it) != best.end(); ++it)
      CHECK(std::next(it)->second > it->second * (1 + r.tie_tolerance));
    return best.size();
  };
  CHECK(tiers_from_best(rec(o)) > 1);
  o.objective = Objective::throughput;
  CHECK(tiers_from_best(rec(o)) > 1);
  o.objective = Objective::memory;
  ordered(rec(o), [](const Candidate& c) { return c.kv_bytes_per_seq_per_gpu; });
  o.objective = Objective::throughput;
  ordered(rec(o), [](const Candidate& c) { return 1.0 / c.served.tokens_per_s_per_gpu; });
  o.objective = Objective::latency;
  ordered(rec(o), [](const Candidate& c) { return c.served.request_ms; });
  // Memory per GPU: MQA and GQA with 2 KV heads hold the same KV per GPU under tp 8 (one head each).
  RecommendOptions tp8 = shape(8192, 80, 8192);
  tp8.workload.tp = 8;
  tp8.objective = Objective::memory;
  tp8.quality = QualityTolerance::aggressive;
  tp8.top = 100;
  const Recommendation m = rec(tp8);
  const Candidate* mqa = nullptr;
  const Candidate* gqa2 = nullptr;
  for (const auto& c : m.ranked) {
    const AttentionSpec& a = c.spec.attention;
    if (a.head_dim != 128) continue;
    if (a.variant == AttentionVariant::mqa && !mqa) mqa = &c;
    if (a.variant == AttentionVariant::gqa && a.num_kv_heads == 2 && !gqa2) gqa2 = &c;
  }
  for (const auto& c : m.others) {
    const AttentionSpec& a = c.spec.attention;
    if (a.head_dim == 128 && a.variant == AttentionVariant::gqa && a.num_kv_heads == 2 && !gqa2) gqa2 = &c;
  }
  REQUIRE(mqa != nullptr);
  REQUIRE(gqa2 != nullptr);
  CHECK(mqa->kv_bytes_per_seq_per_gpu == gqa2->kv_bytes_per_seq_per_gpu);
}

TEST_CASE("SLOs reject designs and cap the batch, goodput ranks within them", "[recommend][ranking]") {
  RecommendOptions o = shape(4096, 32, 8192);
  o.objective = Objective::goodput;
  CHECK_THROWS_AS(rec(o), mhacfg::InputError);  // goodput needs an SLO
  o.tpot_ms = 30;
  const Recommendation r = rec(o);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) CHECK(c.served.tpot_at_batch_ms <= 30.0 * 1.0001);
  bool capped = false;
  for (const auto& c : r.ranked) capped |= c.served.batch_limit == "tpot";
  CHECK(capped);
  o.ttft_ms = 1;  // no 8192-token prompt is prefilled in 1 ms
  const Recommendation none = rec(o);
  CHECK(none.ranked.empty());
  bool ttft = false;
  for (const auto& rj : none.rejected) ttft |= rj.constraint == Constraint::ttft_slo && !rj.numbers.empty();
  CHECK(ttft);
}

TEST_CASE("constraints users ask for: head_dim, KV heads multiple, KV bytes per token", "[recommend][constraints]") {
  RecommendOptions o = shape(4096, 32, 8192);
  o.head_dim = 128;
  o.kv_heads_multiple_of = 4;
  o.max_kv_bytes_per_token = 100'000;
  const Recommendation r = rec(o);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    const AttentionSpec& a = c.spec.attention;
    CHECK((a.variant == AttentionVariant::mla ? a.v_head_dim : a.head_dim) == 128);
    if (a.variant != AttentionVariant::mla) CHECK(a.num_kv_heads % 4 == 0);
    CHECK(c.counts.kv_cache.bytes_per_token <= 100'000);
  }
}

TEST_CASE("a candidate that cannot be counted is skipped, not the search", "[recommend][constraints]") {
  // 2M tokens with a 4096-token window: the batch's prefill FLOPs would not fit 64 bits; each candidate
  // is counted per sequence, and the search answers.
  const CliResult r = run({"recommend", "--params", "7B", "--context", "2M", "--sliding-window", "4096", "--target",
                           "h200-sxm-cudnn", "--format", "json"});
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("MLA is searched by default and served with attention data parallel under tp", "[recommend]") {
  RecommendOptions o = shape(4096, 32, 32768);
  o.workload.tp = 4;
  o.top = 100;
  const Recommendation r = rec(o);
  const Candidate* mla = nullptr;
  for (const auto& c : r.ranked)
    if (c.spec.attention.variant == AttentionVariant::mla && !mla) mla = &c;
  REQUIRE(mla != nullptr);
  // Served tensor parallel, every GPU holds the whole latent; attention data parallel, each of the 4
  // ranks its own requests' latent: a quarter of a sequence's cache per GPU.
  const double whole = double(mla->counts.kv_cache.bytes_total);
  CHECK(mla->kv_bytes_per_seq_per_gpu == Approx(mla->workload.dp_attention ? whole / 4 : whole).epsilon(0.001));
  // ... but a sequence's cache is never split: under attention data parallel each GPU holds whole
  // sequences, so the batch memory allows is 4 x what fits on one GPU beside its weights.
  const double budget = double(r.profile.spec.memory_bytes) * o.memory_fraction;
  for (const auto& c : r.ranked) {
    if (!c.workload.dp_attention || c.batch_capped) continue;
    const double per_seq = double(c.counts.kv_cache.bytes_total);
    const auto per_gpu = static_cast<std::int64_t>((budget - c.weights_bytes_per_gpu) / per_seq);
    CHECK(c.max_batch == 4 * per_gpu);
    CHECK(c.memory_bytes_per_gpu == Approx(c.weights_bytes_per_gpu + double((c.batch + 3) / 4) * per_seq));
  }
  // The memory objective takes the data-parallel form: a quarter of the KV per GPU.
  o.objective = Objective::memory;
  bool dp = false;
  for (const auto& c : rec(o).ranked) dp |= c.spec.attention.variant == AttentionVariant::mla && c.workload.dp_attention;
  CHECK(dp);
  o.objective = Objective::balanced;
  // Query widths reach DeepSeek-V3's 128 heads of 128 on d_model 7168.
  RecommendOptions ds = shape(7168, 8, 8192);
  bool h128 = false;
  for (const auto& c : rec(ds).ranked) h128 |= c.spec.attention.variant == AttentionVariant::mla && c.spec.attention.num_q_heads == 128;
  for (const auto& c : rec(ds).others) h128 |= c.spec.attention.variant == AttentionVariant::mla && c.spec.attention.num_q_heads == 128;
  CHECK(h128);
  o.variants = {AttentionVariant::gqa};
  bool reported = false;
  for (const auto& rj : rec(o).rejected) reported |= rj.design.rfind("mla", 0) == 0 && rj.constraint == Constraint::not_searched;
  CHECK(reported);
}

TEST_CASE("the Pareto frontier is non-dominated", "[recommend][ranking]") {
  const Recommendation r = rec(shape(4096, 32, 8192));
  REQUIRE_FALSE(r.pareto.empty());
  for (const auto& a : r.pareto)
    for (const auto& b : r.pareto) {
      const bool dominates = b.kv_bytes_per_seq_per_gpu <= a.kv_bytes_per_seq_per_gpu &&
                             b.served.request_ms <= a.served.request_ms && b.risk.level <= a.risk.level &&
                             (b.kv_bytes_per_seq_per_gpu < a.kv_bytes_per_seq_per_gpu ||
                              b.served.request_ms < a.served.request_ms || b.risk.level < a.risk.level);
      CHECK_FALSE(dominates);
    }
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
  // On a profile that fits mhacfg's CPU indexer kernel the same comparison says it is measured.
  o.target = "cpu-epyc-2vcpu";
  o.workload = o.workload.serving(16384);
  o.top = 1000;
  const Recommendation cpu = rec(o);
  bool calibrated_twin = false;
  for (const auto& c : cpu.ranked)
    for (const auto& line : c.rationale)
      calibrated_twin = calibrated_twin || (line.rfind("Against the same design with dense attention", 0) == 0 &&
                                            line.find("of it, measured).") != std::string::npos);
  CHECK(calibrated_twin);
  // Fewer keys than the 2048 DeepSeek validated raise the quality risk one level.
  ModelSpec fewer = best.spec;
  fewer.attention.indexer.topk = 512;
  CHECK(static_cast<int>(assess_quality(fewer).level) == static_cast<int>(best.risk.level) + 1);
}

TEST_CASE("a rationale says which common tensor-parallel degrees the heads rule out", "[recommend]") {
  RecommendOptions o = shape(4096, 32, 8192);
  o.top = 100;
  const Recommendation r = rec(o);
  std::size_t checked = 0;
  for (const auto& c : r.ranked) {
    if (c.rationale.empty()) continue;
    const AttentionSpec& a = c.spec.attention;
    std::string line;
    for (const auto& l : c.rationale)
      if (l.rfind("Not servable at ", 0) == 0) line = l;
    INFO(design_label(a) << ": " << line);
    bool any_out = false;
    for (const std::int64_t tp : {2, 4, 8}) {
      const bool ok = q_heads_split(a, tp) && kv_heads_shard(a, tp);
      any_out |= !ok;
      if (!ok) CHECK(line.find(std::to_string(tp)) != std::string::npos);
    }
    CHECK(line.empty() == !any_out);
    if (a.variant != AttentionVariant::mla && a.num_kv_heads == 5)
      CHECK(line.rfind("Not servable at tp 2, 4, 8: its 5 KV heads neither split nor replicate over them", 0) == 0);
    ++checked;
  }
  CHECK(checked >= 10);
}
