#include "mhacfg/configurator/report/recommend_report.hpp"

#include "mhacfg/configurator/report/analyze.hpp"
#include "mhacfg/configurator/search/design.hpp"

namespace mhacfg {

namespace {

nlohmann::json inputs_json(const RecommendOptions& o) {
  std::vector<std::string> variants;
  for (auto v : o.variants) variants.emplace_back(to_string(v));
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"params", opt(o.params)}, {"d_model", opt(o.d_model)}, {"layers", opt(o.layers)}, {"seq", o.workload.context},
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
  return {{"rank", c.rank},
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
                        {"bytes_per_gpu", c.counts.kv_cache.bytes_per_gpu},
                        {"replication", c.counts.kv_cache.replication},
                        {"state_bytes_per_sequence", c.counts.kv_cache.state_bytes_per_sequence}}},
          {"flops", {{"prefill_per_sequence", c.counts.flops.prefill.total / std::max<std::int64_t>(1, c.batch)},
                     {"decode_per_token", c.counts.flops.decode_per_token.total}}},
          {"batch", c.batch},
          {"max_batch", c.max_batch},
          {"max_batch_capped", c.batch_capped},
          {"memory", {{"weights_bytes_per_gpu", c.weights_bytes_per_gpu},
                      {"kv_bytes_per_gpu", c.memory_bytes_per_gpu - c.weights_bytes_per_gpu},
                      {"total_bytes_per_gpu", c.memory_bytes_per_gpu},
                      {"headroom_bytes", c.headroom_bytes},
                      {"replication_bytes", c.replication_bytes}}},
          {"predicted", {{"profile", r.profile.name},
                         {"basis", time_basis(c.at_batch, c.single)},
                         {"extrapolated", c.at_batch.extrapolated || c.single.extrapolated},
                         {"at_batch", times_json(c.at_batch, TimesDetail::candidate)},
                         {"single_sequence", times_json(c.single, TimesDetail::candidate)}}},
          {"quality_risk", std::string(to_string(c.risk.level))},
          {"quality_reason", c.risk.reason},
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
  nlohmann::json pareto = nlohmann::json::array();
  for (const auto& c : r.pareto)
    pareto.push_back({{"design", design_label(c.spec.attention)}, {"variant", std::string(to_string(c.spec.attention.variant))},
                      {"num_q_heads", c.spec.attention.num_q_heads}, {"num_kv_heads", c.spec.attention.num_kv_heads},
                      {"head_dim", c.spec.attention.head_dim},
                      {"kv_bytes_per_token", c.counts.kv_cache.bytes_per_token},
                      {"decode_step_ms_batch1", c.single.decode_step_ms},
                      {"tokens_per_s", c.at_batch.tokens_per_s}, {"batch", c.batch},
                      {"quality_risk", std::string(to_string(c.risk.level))}, {"rank", c.rank}});
  nlohmann::json rejected = nlohmann::json::array();
  for (const auto& rj : r.rejected) rejected.push_back({{"design", rj.design}, {"reason", rj.reason}});
  doc = {{"schema_version", kSchemaVersion},
              {"command", "recommend"},
              {"inputs", inputs_json(o)},
              {"shape", {{"d_model", r.shape.d_model}, {"layers", r.shape.layers}, {"budget_params", r.shape.budget},
                         {"rule", r.shape.rule}}},
              {"profile", {{"name", r.profile.name}, {"device", r.profile.device}, {"source", r.profile.source},
                           {"basis", basis}}},
              {"search", {{"evaluated", r.evaluated}, {"feasible", r.feasible}}},
              {"feasible", !r.ranked.empty()},
              {"candidates", cands},
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
std::vector<std::string> table_row(const Candidate& c, const std::string& rank, const RecommendOptions& o) {
  const AttentionSpec& a = c.spec.attention;
  return std::vector<std::string>{rank, design_label(a, LabelStyle::table),
                                  a.v_head_dim != a.head_dim ? std::to_string(a.head_dim) + "/" + std::to_string(a.v_head_dim)
                                                             : std::to_string(a.head_dim),
                                  fmt_bytes(double(c.counts.kv_cache.bytes_per_token)),
                                  std::to_string(c.batch) + (c.batch_capped && !o.batch ? "+" : ""),
                                  fmt_fixed(c.at_batch.tokens_per_s, 0), fmt_ms(c.single.decode_step_ms), fmt_ms(c.single.prefill_ms),
                                  fmt_count(double(c.counts.params.total)), std::string(to_string(c.risk.level))};
}

// The ranking as a table, and as the csv's rows.
Table ranked_table(const Recommendation& r, Table& csv) {
  const RecommendOptions& o = r.options;
  Table t;
  t.title = "Ranked candidates (" + std::to_string(r.feasible) + " feasible of " + std::to_string(r.evaluated) + " evaluated)";
  t.columns = {"rank", "design", "head_dim", "KV/token", "batch", "tokens/s", "decode b=1", "prefill", "params", "risk"};
  t.right_align = {true, false, true, true, true, true, true, true, true, false};
  csv.columns = {"rank", "variant", "num_q_heads", "num_kv_heads", "head_dim", "v_head_dim", "kv_lora_rank",
                     "q_lora_rank", "kv_bytes_per_token", "batch", "max_batch", "tokens_per_s", "decode_step_ms_batch1",
                     "prefill_ms", "params_total", "quality_risk", "score"};
  for (const auto& c : r.ranked) {
    const AttentionSpec& a = c.spec.attention;
    t.rows.push_back(table_row(c, std::to_string(c.rank), o));
    csv.rows.push_back({std::to_string(c.rank), std::string(to_string(a.variant)), std::to_string(a.num_q_heads),
                            std::to_string(a.num_kv_heads), std::to_string(a.head_dim), std::to_string(a.v_head_dim),
                            std::to_string(a.mla.kv_lora_rank), std::to_string(a.mla.q_lora_rank),
                            std::to_string(c.counts.kv_cache.bytes_per_token), std::to_string(c.batch),
                            std::to_string(c.max_batch), fmt_fixed(c.at_batch.tokens_per_s, 3),
                            fmt_fixed(c.single.decode_step_ms, 6), fmt_fixed(c.single.prefill_ms, 6),
                            std::to_string(c.counts.params.total), std::string(to_string(c.risk.level)),
                            fmt_fixed(c.score, 6)});
  }
  return t;

}

// The model's own attention beside the first candidate: where it ranks, or why it is not ranked.
void add_own_design(Report& rep, const Recommendation& r, const Table& ranked) {
  const RecommendOptions& o = r.options;
  if (!r.base_design) return;
  const Candidate& own = *r.base_design;
  Table mt = ranked;
  mt.title = own.spec.name + "'s own attention (" + design_label(own.spec.attention) + "): " +
             (!r.base_rank ? r.base_verdict
              : r.base_class_design == design_label(own.spec.attention)
                  ? "rank " + std::to_string(r.base_rank) + " of " + std::to_string(r.designs) + " designs"
                  : "would rank " + std::to_string(r.base_rank) + " of " + std::to_string(r.designs) +
                        " designs; its class is ranked " + std::to_string(r.base_class_rank) + " as " +
                        r.base_class_design);
  mt.rows.clear();
  if (own.at_batch.tokens_per_s > 0) mt.rows.push_back(table_row(own, r.base_rank ? std::to_string(r.base_rank) : "-", o));
  if (!r.ranked.empty() && !same_attention(r.ranked.front().spec.attention, own.spec.attention))
    mt.rows.push_back(table_row(r.ranked.front(), "1", o));
  if (!mt.rows.empty()) rep.tables.push_back(mt);
  else rep.notes.push_back(mt.title + ".");
}

// The top three's rationales, the Pareto frontier and the rejected alternatives.
void add_explanations(Report& rep, const Recommendation& r) {
  for (const auto& c : r.ranked) {
    Table why;
    why.title = "#" + std::to_string(c.rank) + " " + design_label(c.spec.attention) + ": why";
    why.columns = {"rationale"};
    for (const auto& s : c.rationale) why.rows.push_back({s});
    rep.tables.push_back(why);
    if (c.rank >= 3) break;  // the table view explains the top three; JSON carries every rationale
  }
  if (!r.pareto.empty()) {
    Table pt;
    pt.title = "Pareto frontier: KV per token vs single-stream decode vs quality risk";
    pt.columns = {"design", "head_dim", "KV/token", "decode b=1", "risk", "rank"};
    pt.right_align = {false, true, true, true, false, true};
    for (const auto& c : r.pareto) {
      pt.rows.push_back({design_label(c.spec.attention, LabelStyle::table), std::to_string(c.spec.attention.head_dim),
                         fmt_bytes(double(c.counts.kv_cache.bytes_per_token)), fmt_ms(c.single.decode_step_ms),
                         std::string(to_string(c.risk.level)), std::to_string(c.rank)});
      if (pt.rows.size() >= 12) break;
    }
    rep.tables.push_back(pt);
  }
  if (!r.rejected.empty()) {
    Table rt;
    rt.title = "Rejected or outranked alternatives";
    rt.columns = {"design", "why"};
    for (const auto& rj : r.rejected) rt.rows.push_back({rj.design, rj.reason});
    rep.tables.push_back(rt);
  }
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
