#include "mhacfg/configurator/report/recommend_report.hpp"

#include <algorithm>

#include "mhacfg/configurator/report/analyze.hpp"
#include "mhacfg/configurator/search/design.hpp"

namespace mhacfg {

namespace {

nlohmann::json inputs_json(const RecommendOptions& o) {
  std::vector<std::string> variants;
  for (auto v : o.variants) variants.emplace_back(to_string(v));
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  auto optd = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"params", opt(o.params)}, {"d_model", opt(o.d_model)}, {"layers", opt(o.layers)}, {"context", o.workload.context},
          {"engine", o.engine.name}, {"output_len", o.output_len}, {"ttft_ms", optd(o.ttft_ms)}, {"tpot_ms", optd(o.tpot_ms)},
          {"head_dim", opt(o.head_dim)}, {"kv_heads_multiple_of", o.kv_heads_multiple_of},
          {"max_kv_bytes_per_token", opt(o.max_kv_bytes_per_token)},
          {"target", o.target}, {"batch", opt(o.batch)}, {"tp", o.workload.tp},
          {"kv_dtype", std::string(to_string(o.workload.kv_dtype))}, {"weight_dtype", std::string(to_string(o.workload.weight_dtype))},
          {"state_dtype", std::string(to_string(o.workload.state_dtype))},
          {"objective", std::string(to_string(o.objective))}, {"quality", std::string(to_string(o.quality))},
          {"variants", variants}, {"top", o.top}, {"memory_fraction", o.memory_fraction}, {"vocab", o.vocab},
          {"model", o.base ? nlohmann::json(o.base->name) : nlohmann::json(nullptr)},
          {"index_topk", o.index_topk}, {"sliding_window", opt(o.layer_pattern.sliding_window)},
          {"attention_chunk", opt(o.layer_pattern.attention_chunk)}, {"global_every", opt(o.layer_pattern.global_every)}};
  add_component_dtypes(j, o.workload);
  return j;
}


}  // namespace

nlohmann::json candidate_json(const Candidate& c, const Recommendation& r) {
  const AttentionSpec& a = c.spec.attention;
  const ParamCounts& p = c.counts.params;
  nlohmann::json mla = nullptr;
  if (a.variant == AttentionVariant::mla)
    mla = {{"kv_lora_rank", a.mla.kv_lora_rank},
           {"q_lora_rank", a.mla.q_lora_rank ? nlohmann::json(a.mla.q_lora_rank) : nlohmann::json(nullptr)},
           {"rope_head_dim", a.mla.rope_head_dim},
           {"qk_nope_head_dim", a.mla.qk_nope_head_dim}};
  return {{"rank", c.rank > 0 ? nlohmann::json(c.rank) : nlohmann::json(nullptr)},
          {"tied", c.tied},
          {"variant", std::string(to_string(a.variant))},
          {"design", design_label(a)},
          {"num_q_heads", a.num_q_heads},
          {"num_kv_heads", a.num_kv_heads},
          {"group_size", a.group_size()},
          {"head_dim", a.head_dim},
          {"v_head_dim", a.v_head_dim},
          {"mla", mla},
          {"indexer", a.sparse() ? nlohmann::json{{"num_heads", a.indexer.num_heads}, {"head_dim", a.indexer.head_dim},
                                                   {"topk", a.indexer.topk}}
                                 : nlohmann::json(nullptr)},
          {"d_model", c.spec.d_model},
          {"layers", c.spec.num_layers()},
          {"ffn_dim", c.spec.ffn.ffn_dim},
          {"expert_ffn_dim", absorbs_in_experts(c.spec) ? nlohmann::json(c.spec.moe.expert_ffn_dim) : nlohmann::json(nullptr)},
          {"params", {{"total", p.total}, {"attention", p.attention}, {"active", p.active},
                      {"budget", r.shape.budget}, {"budget_delta", p.total - r.shape.budget}}},
          {"kv_cache", {{"dtype", std::string(to_string(c.counts.kv_cache.dtype))},
                        {"bytes_per_token", c.counts.kv_cache.bytes_per_token},
                        {"bytes_per_sequence_per_gpu", c.kv_bytes_per_seq_per_gpu},
                        {"bytes_per_gpu", std::llround(c.memory_bytes_per_gpu - c.weights_bytes_per_gpu)},
                        {"replication", c.counts.kv_cache.replication},
                        {"state_bytes_per_sequence", c.counts.kv_cache.state_bytes_per_sequence}}},
          {"flops", {{"prefill_per_sequence", count_json(c.counts.flops.prefill.total)},
                     {"decode_per_token", count_json(c.counts.flops.decode_per_token.total)}}},
          {"batch", c.batch},
          {"max_batch", c.max_batch},
          {"max_batch_capped", c.batch_capped},
          {"memory", {{"weights_bytes_per_gpu", c.weights_bytes_per_gpu},
                      {"kv_bytes_per_gpu", c.memory_bytes_per_gpu - c.weights_bytes_per_gpu},
                      {"total_bytes_per_gpu", c.memory_bytes_per_gpu},
                      {"headroom_bytes", c.headroom_bytes},
                      {"replication_bytes", c.replication_bytes}}},
          {"served", {{"engine", r.options.engine.name},
                      {"gpus", c.served.gpus},
                      {"dp_attention", c.workload.dp_attention},
                      {"batch_limit", c.served.batch_limit},
                      {"ttft_ms", c.served.ttft_ms},
                      {"tpot_ms", c.served.tpot_ms},
                      {"request_ms", c.served.request_ms},
                      {"tpot_at_batch_ms", c.served.tpot_at_batch_ms},
                      {"tokens_per_s_per_gpu", c.served.tokens_per_s_per_gpu}}},
          {"predicted", {{"profile", r.profile.name},
                         {"basis", time_basis(c.at_batch, c.single)},
                         {"expected_error", c.error},
                         {"extrapolated", c.at_batch.extrapolated || c.single.extrapolated},
                         {"at_batch", times_json(c.at_batch, TimesDetail::candidate)},
                         {"single_sequence", times_json(c.single, TimesDetail::candidate)}}},
          {"quality_risk", std::string(to_string(c.risk.level))},
          {"quality_reason", c.risk.reason},
          {"precedent", {{"name", c.risk.precedent}, {"design", c.risk.precedent_design},
                         {"distance", c.precedent_distance}, {"inside_envelope", c.risk.inside_envelope},
                         {"support", c.risk.precedent_support}, {"envelope_members", c.risk.envelope_members}}},
          {"penalties", c.penalties},
          {"pareto", c.pareto},
          {"score", c.score},
          {"rationale", c.rationale}};
}

namespace {

// The document: inputs, shape, profile, the ranked candidates, the frontier, the rejections, the model's
// own design.
nlohmann::json recommend_json(const Recommendation& r, const std::string& basis) {
  const RecommendOptions& o = r.options;
  nlohmann::json doc;
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : r.ranked) cands.push_back(candidate_json(c, r));
  // Every other feasible candidate, in brief: the numbers its ranked design's entry has in full.
  nlohmann::json others = nlohmann::json::array();
  for (const auto& c : r.others) {
    const AttentionSpec& a = c.spec.attention;
    std::int64_t design_rank = 0;
    for (const auto& d : r.ranked)
      if (same_class(d.spec.attention, a)) design_rank = d.rank;
    others.push_back({{"design", design_label(a)}, {"variant", std::string(to_string(a.variant))},
                      {"num_q_heads", a.num_q_heads}, {"num_kv_heads", a.num_kv_heads}, {"head_dim", a.head_dim},
                      {"kv_bytes_per_token", c.counts.kv_cache.bytes_per_token},
                      {"kv_bytes_per_sequence_per_gpu", c.kv_bytes_per_seq_per_gpu}, {"batch", c.batch},
                      {"params_total", c.counts.params.total},
                      {"ttft_ms", c.served.ttft_ms}, {"tpot_ms", c.served.tpot_ms}, {"request_ms", c.served.request_ms},
                      {"tokens_per_s_per_gpu", c.served.tokens_per_s_per_gpu},
                      {"quality_risk", std::string(to_string(c.risk.level))}, {"score", c.score},
                      {"design_rank", design_rank > 0 ? nlohmann::json(design_rank) : nlohmann::json(nullptr)}});
  }
  nlohmann::json pareto = nlohmann::json::array();
  for (const auto& c : r.pareto)
    pareto.push_back({{"design", design_label(c.spec.attention)}, {"variant", std::string(to_string(c.spec.attention.variant))},
                      {"num_q_heads", c.spec.attention.num_q_heads}, {"num_kv_heads", c.spec.attention.num_kv_heads},
                      {"head_dim", c.spec.attention.head_dim},
                      {"kv_bytes_per_token", c.counts.kv_cache.bytes_per_token},
                      {"kv_bytes_per_sequence_per_gpu", c.kv_bytes_per_seq_per_gpu},
                      {"request_ms", c.served.request_ms},
                      {"tokens_per_s_per_gpu", c.served.tokens_per_s_per_gpu}, {"batch", c.batch},
                      {"quality_risk", std::string(to_string(c.risk.level))},
                      {"rank", c.rank > 0 ? nlohmann::json(c.rank) : nlohmann::json(nullptr)}});
  nlohmann::json rejected = nlohmann::json::array();
  for (const auto& rj : r.rejected) {
    nlohmann::json numbers = nlohmann::json::object();
    for (const auto& [k, v] : rj.numbers) numbers[k] = v;
    rejected.push_back({{"design", rj.design}, {"constraint", std::string(to_string(rj.constraint))}, {"reason", rj.reason},
                        {"numbers", numbers}, {"notable", rj.notable}});
  }
  doc = {{"schema_version", kSchemaVersion},
              {"command", "recommend"},
              {"inputs", inputs_json(o)},
              {"shape", {{"d_model", r.shape.d_model}, {"layers", r.shape.layers}, {"budget_params", r.shape.budget},
                         {"rule", r.shape.rule}}},
              {"profile", {{"name", r.profile.name}, {"device", r.profile.device}, {"source", r.profile.source},
                           {"basis", basis}}},
              {"search", {{"evaluated", r.evaluated}, {"feasible", r.feasible}, {"designs", r.designs},
                          {"tie_tolerance", r.tie_tolerance}, {"tie_basis", r.tie_basis}}},
              {"feasible", !r.ranked.empty()},
              {"candidates", cands},
              {"other_candidates", others},
              {"pareto", pareto},
              {"rejected", rejected}};
  if (r.ranked.empty() && r.closest) {
    doc["closest"] = candidate_json(*r.closest, r);
    doc["closest"]["miss"] = r.closest_miss;
  }
  if (r.base_design) {
    Candidate own = *r.base_design;
    own.rank = r.base_rank;
    nlohmann::json j = candidate_json(own, r);
    j["model"] = own.spec.name;
    j["rank"] = r.base_rank ? nlohmann::json(r.base_rank) : nlohmann::json(nullptr);
    j["of"] = r.designs;
    j["reason"] = r.base_verdict.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.base_verdict);
    j["class_design"] = r.base_class_rank ? nlohmann::json(r.base_class_design) : nlohmann::json(nullptr);
    j["class_rank"] = r.base_class_rank ? nlohmann::json(r.base_class_rank) : nlohmann::json(nullptr);
    j["in_top_tier"] = r.base_rank == 1;
    j["beaten_by"] = r.base_beaten_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.base_beaten_by);
    doc["model_design"] = j;
  }

  return doc;
}

std::string heading(const Recommendation& r, const std::string& basis) {
  const RecommendOptions& o = r.options;
  // The layers as every candidate has them (windows, chunks, linear-attention layers).
  const ModelSpec* any = !r.ranked.empty() ? &r.ranked.front().spec : r.base_design ? &r.base_design->spec : nullptr;
  const std::string layers = any ? layer_pattern_text(*any) : std::to_string(r.shape.layers) + " layers";
  return "mhacfg recommend: d_model " + std::to_string(r.shape.d_model) + ", " + layers + ", " +
                billions(double(r.shape.budget)) + " params, context " + std::to_string(o.workload.context) + " on " +
                r.profile.name + " (" + basis + ")" + (o.workload.tp > 1 ? ", tp " + std::to_string(o.workload.tp) : "") + "; objective " +
                std::string(to_string(o.objective)) + ", quality " + std::string(to_string(o.quality));
}

// One row of the ranking (and of the model's own design beside it).
std::string rank_text(const Candidate& c) { return c.rank <= 0 ? "-" : std::to_string(c.rank) + (c.tied ? "=" : ""); }

std::vector<std::string> table_row(const Candidate& c, const std::string& rank, const RecommendOptions& o) {
  const AttentionSpec& a = c.spec.attention;
  return std::vector<std::string>{rank, design_label(a, LabelStyle::table),
                                  a.v_head_dim != a.head_dim ? std::to_string(a.head_dim) + "/" + std::to_string(a.v_head_dim)
                                                             : std::to_string(a.head_dim),
                                  fmt_bytes(double(c.counts.kv_cache.bytes_per_token)),
                                  fmt_bytes(c.kv_bytes_per_seq_per_gpu),
                                  std::to_string(c.batch) + (c.batch_capped && !o.batch ? "+" : ""),
                                  fmt_fixed(c.served.tokens_per_s_per_gpu, 0), fmt_ms(c.served.ttft_ms), fmt_ms(c.served.tpot_ms),
                                  fmt_count(double(c.counts.params.total)), std::string(to_string(c.risk.level))};
}

// The ranking as a table, and as the csv's rows.
Table ranked_table(const Recommendation& r, Table& csv) {
  const RecommendOptions& o = r.options;
  Table t;
  t.title = "Ranked designs (" + std::to_string(r.designs) + " designs, " + std::to_string(r.feasible) + " feasible candidates of " +
            std::to_string(r.evaluated) + " evaluated" +
            (r.feasible > 0 ? "; '=' marks designs tied within " + fmt_fixed(r.tie_tolerance * 100, 1) + " %" : "") +
            "; per GPU, served by " + o.engine.name + ")";
  t.columns = {"rank", "design", "head_dim", "KV/token", "KV/seq/GPU", "batch", "tok/s/GPU", "TTFT", "TPOT b=1", "params", "risk"};
  t.right_align = {true, false, true, true, true, true, true, true, true, true, false};
  csv.columns = {"rank", "tied", "variant", "num_q_heads", "num_kv_heads", "head_dim", "v_head_dim", "kv_lora_rank",
                 "q_lora_rank", "kv_bytes_per_token", "kv_bytes_per_sequence_per_gpu", "batch", "max_batch",
                 "tokens_per_s_per_gpu", "ttft_ms", "tpot_ms_batch1", "request_ms", "prefill_ms", "params_total",
                 "quality_risk", "score"};
  std::size_t shown = 0;
  for (const auto& c : r.ranked) {
    if (shown++ >= static_cast<std::size_t>(o.top)) break;
    const AttentionSpec& a = c.spec.attention;
    t.rows.push_back(table_row(c, rank_text(c), o));
    csv.rows.push_back({std::to_string(c.rank), c.tied ? "true" : "false", std::string(to_string(a.variant)),
                        std::to_string(a.num_q_heads), std::to_string(a.num_kv_heads), std::to_string(a.head_dim),
                        std::to_string(a.v_head_dim), std::to_string(a.mla.kv_lora_rank), std::to_string(a.mla.q_lora_rank),
                        std::to_string(c.counts.kv_cache.bytes_per_token), fmt_fixed(c.kv_bytes_per_seq_per_gpu, 0),
                        std::to_string(c.batch), std::to_string(c.max_batch), fmt_fixed(c.served.tokens_per_s_per_gpu, 3),
                        fmt_fixed(c.served.ttft_ms, 6), fmt_fixed(c.served.tpot_ms, 6), fmt_fixed(c.served.request_ms, 6),
                        fmt_fixed(c.single.prefill_ms, 6), std::to_string(c.counts.params.total),
                        std::string(to_string(c.risk.level)), fmt_fixed(c.score, 6)});
  }
  return t;

}

// The model's own attention beside the first candidate: where it ranks, or why it is not ranked.
void add_own_design(Report& rep, const Recommendation& r, const Table& ranked) {
  const RecommendOptions& o = r.options;
  if (!r.base_design) return;
  const Candidate& own = *r.base_design;
  Table mt = ranked;
  const std::string place = r.base_rank == 1 ? "in the top tier" : "rank " + std::to_string(r.base_rank);
  mt.title = own.spec.name + "'s own attention (" + design_label(own.spec.attention) + "): " +
             (!r.base_rank ? r.base_verdict
              : r.base_class_design == design_label(own.spec.attention)
                  ? place + " of " + std::to_string(r.designs) + " designs"
                  : "would be " + place + " of " + std::to_string(r.designs) + " designs; its class is ranked " +
                        std::to_string(r.base_class_rank) + " as " + r.base_class_design);
  mt.rows.clear();
  if (own.served.tokens_per_s_per_gpu > 0) mt.rows.push_back(table_row(own, r.base_rank ? std::to_string(r.base_rank) : "-", o));
  if (!r.ranked.empty() && !same_attention(r.ranked.front().spec.attention, own.spec.attention))
    mt.rows.push_back(table_row(r.ranked.front(), rank_text(r.ranked.front()), o));
  if (!mt.rows.empty()) rep.tables.push_back(mt);
  else rep.notes.push_back(mt.title + ".");
  if (!r.base_beaten_by.empty()) rep.notes.push_back(own.spec.name + "'s own design: " + r.base_beaten_by + ".");
}

// The top three's rationales, the Pareto frontier and the rejected alternatives.
void add_explanations(Report& rep, const Recommendation& r) {
  std::size_t explained = 0;
  for (const auto& c : r.ranked) {
    if (c.rationale.empty() || explained++ >= 3) break;  // the table view explains the top three; JSON the top K
    Table why;
    why.title = "#" + rank_text(c) + " " + design_label(c.spec.attention) + ": why";
    why.columns = {"rationale"};
    for (const auto& s : c.rationale) why.rows.push_back({s});
    rep.tables.push_back(why);
  }
  if (!r.pareto.empty()) {
    Table pt;
    pt.title = "Pareto frontier: KV per sequence per GPU vs a request's latency vs quality risk";
    pt.columns = {"design", "head_dim", "KV/seq/GPU", "request", "risk", "rank"};
    pt.right_align = {false, true, true, true, false, true};
    for (const auto& c : r.pareto) {
      pt.rows.push_back({design_label(c.spec.attention, LabelStyle::table), std::to_string(c.spec.attention.head_dim),
                         fmt_bytes(c.kv_bytes_per_seq_per_gpu), fmt_ms(c.served.request_ms),
                         std::string(to_string(c.risk.level)), rank_text(c)});
      if (pt.rows.size() >= 12) break;
    }
    rep.tables.push_back(pt);
  }
  Table rt;
  rt.title = "Rejected or outranked alternatives (every rejection, with its numbers, is in the JSON)";
  rt.columns = {"design", "rule", "why"};
  for (const auto& rj : r.rejected)
    if (rj.notable) rt.rows.push_back({rj.design, std::string(to_string(rj.constraint)), rj.reason});
  if (!rt.rows.empty()) rep.tables.push_back(rt);
}

void add_notes(Report& rep, const Recommendation& r) {
  const RecommendOptions& o = r.options;
  rep.notes.push_back("Shape: " + r.shape.rule + ".");
  rep.notes.push_back(profile_basis_note(r.profile));
  for (const std::string& n : gemm_dtype_notes(r.profile, o.workload)) rep.notes.push_back(n + ".");
  if (o.base && o.base->num_linear_layers() > 0)
    rep.notes.push_back(linear_roofline_note(*o.base, r.profile));
  if (o.base && o.base->attention.sparse())
    rep.notes.push_back(sparse_attention_note(*o.base, r.profile) +
                        " Every candidate keeps this indexer; without MLA's query compression its queries project from d_model "
                        "(a wider wq_b).");
  rep.notes.push_back("Memory counts weights and KV cache in " + fmt_fixed(o.memory_fraction * 100, 0) +
                      " % of device memory; activations and runtime buffers use the rest.");
  if (std::any_of(r.ranked.begin(), r.ranked.end(), [](const Candidate& c) { return c.workload.dp_attention && c.workload.tp > 1; }))
    rep.notes.push_back("Served attention data parallel (MLA under tp > 1): a sequence's cache is held whole by the one GPU "
                        "that serves it; KV/seq/GPU is its share of each GPU (1/" + std::to_string(o.workload.tp) +
                        " of it), and the batch counts whole sequences per GPU.");
  rep.notes.push_back("Objective " + std::string(to_string(o.objective)) + ", per GPU as " + o.engine.name +
                      " serves each design (docs/commands.md, recommend): throughput = output tokens/s per GPU at the largest batch "
                      "memory, the engine and the SLOs allow (continuous batching, each step carrying the prefills of the requests "
                      "that join it); latency = TTFT of one " + std::to_string(o.workload.context) + "-token prompt + " +
                      std::to_string(o.output_len - 1) + " x TPOT; memory = KV per sequence per GPU; balanced = the geometric mean "
                      "of throughput and latency relative to the best; goodput = throughput within --ttft-ms/--tpot-ms. " +
                      "Designs within " + fmt_fixed(r.tie_tolerance * 100, 1) + " % of the best design not yet ranked share its rank (" +
                      r.tie_basis + ").");
}

}  // namespace

Report recommend_report(const Recommendation& r) {
  const std::string basis = basis_text(r.profile.basis());
  Report rep;
  rep.json = recommend_json(r, basis);
  rep.heading = heading(r, basis);
  rep.tables.push_back(ranked_table(r, rep.csv));
  add_own_design(rep, r, rep.tables.front());
  add_explanations(rep, r);
  add_notes(rep, r);
  return rep;
}


}  // namespace mhacfg
