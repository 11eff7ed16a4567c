// The recommender's explanations: rationale sentences with numbers, the Pareto frontier and the
// notable alternatives it rejected.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "mhacfg/configurator/common/describe.hpp"
#include "recommend_internal.hpp"

namespace mhacfg {

std::string_view to_string(Constraint c) {
  switch (c) {
    case Constraint::budget: return "budget";
    case Constraint::tp_heads: return "tp_heads";
    case Constraint::tp_kv_heads: return "tp_kv_heads";
    case Constraint::mla_kernels: return "mla_kernels";
    case Constraint::kernel_head_dim: return "kernel_head_dim";
    case Constraint::head_dim: return "head_dim";
    case Constraint::kv_heads_multiple: return "kv_heads_multiple";
    case Constraint::max_kv_bytes: return "max_kv_bytes";
    case Constraint::memory: return "memory";
    case Constraint::batch: return "batch";
    case Constraint::ttft_slo: return "ttft_slo";
    case Constraint::tpot_slo: return "tpot_slo";
    case Constraint::quality: return "quality";
    case Constraint::uncountable: return "uncountable";
    case Constraint::not_searched: return "not_searched";
    case Constraint::outranked: return "outranked";
  }
  return "";  // not reached: every rule returns above
}

double objective_value(const Candidate& c, Objective o) {
  switch (o) {
    case Objective::throughput:
    case Objective::goodput: return 1.0 / c.served.tokens_per_s_per_gpu;  // the batch already meets the SLOs
    case Objective::latency: return c.served.request_ms;
    case Objective::memory: return c.kv_bytes_per_seq_per_gpu;
    case Objective::balanced: return 0;  // computed relative to the field, in score()
  }
  return 0;
}

namespace {

std::string pct(double ratio) {  // +12 % / -8 % / 0.0 % (never "-0.0 %")
  const double p = (ratio - 1.0) * 100.0;
  const int decimals = std::fabs(p) < 10 ? 1 : 0;
  const std::string text = fmt_fixed(p, decimals);
  if (std::stod(text) == 0) return fmt_fixed(0.0, decimals) + " %";
  return (p > 0 ? "+" : "") + text + " %";
}

std::string times_x(double ratio) { return fmt_fixed(ratio, ratio < 10 ? 2 : 1) + "x"; }

// "8.00x less KV per token" against a design holding `other` bytes per token; "2.00x more" when it holds less.
std::string kv_against(double other, double mine) {
  if (other == mine) return "the same KV per token";
  return other > mine ? times_x(other / mine) + " less KV per token" : times_x(mine / other) + " more KV per token";
}

std::string basis(const Recommendation& r, const Candidate& c) {
  std::string b = time_basis(c.at_batch, c.single);
  if (c.at_batch.extrapolated || c.single.extrapolated) b += ", extrapolated";
  return b + " on " + r.profile.name;
}

const Candidate* find_design(const std::vector<Candidate>& cs, AttentionVariant v, std::int64_t nq, std::int64_t nkv,
                             std::int64_t hd, std::int64_t topk) {
  for (const auto& c : cs) {
    const AttentionSpec& a = c.spec.attention;
    if (a.variant == v && a.num_q_heads == nq && a.num_kv_heads == nkv && a.head_dim == hd && a.indexer.topk == topk) return &c;
  }
  return nullptr;
}

// The same attention without (or with) the indexer: a sparse candidate's dense twin.
const Candidate* find_twin(const std::vector<Candidate>& cs, const AttentionSpec& a, std::int64_t topk) {
  for (const auto& c : cs) {
    AttentionSpec b = c.spec.attention;
    if (b.indexer.topk != topk) continue;
    b.indexer = a.indexer;
    if (b.variant == a.variant && b.num_q_heads == a.num_q_heads && b.num_kv_heads == a.num_kv_heads &&
        b.head_dim == a.head_dim && b.v_head_dim == a.v_head_dim && b.mla.kv_lora_rank == a.mla.kv_lora_rank &&
        b.mla.q_lora_rank == a.mla.q_lora_rank)
      return &c;
  }
  return nullptr;
}

bool same_ffn(const ModelSpec& a, const ModelSpec& b) {
  return a.ffn.ffn_dim == b.ffn.ffn_dim && a.moe.expert_ffn_dim == b.moe.expert_ffn_dim;
}

// What a sequence holds and how many fit beside the weights. Windows and chunks cap what a sequence
// holds in their layers: say so where the model has them. A hybrid model's linear-attention layers
// hold a fixed state instead: say how much of the sequence's share it is.
std::string memory_sentence(const Recommendation& r, const Candidate& c) {
  const RecommendOptions& o = r.options;
  const KvCacheCounts& kv = c.counts.kv_cache;
  const bool local = std::any_of(c.spec.layers.begin(), c.spec.layers.end(), [](const LayerSpec& l) { return !l.full_attention(); });
  const std::string state =
      kv.state_bytes_per_sequence > 0
          ? " (" +
                fmt_bytes(double(dtype_bytes(kv.state_dtype, linear_attention_state_elements_per_gpu(c.spec, o.workload.tp), "state bytes")) *
                          double(c.spec.num_linear_layers())) +
                " of it linear-attention state, " +
                std::string(to_string(kv.state_dtype)) + ")"
          : "";
  const std::string head = "KV cache " + fmt_bytes(double(kv.bytes_per_token)) + " per token (" +
                           std::string(to_string(o.workload.kv_dtype)) + ")" + (local ? " in " + layer_pattern_text(c.spec) : "") + ", ";
  const std::string room = " fit in " + fmt_bytes(double(r.profile.spec.memory_bytes) * o.memory_fraction) + " beside " +
                           fmt_bytes(c.weights_bytes_per_gpu) + " of weights" +
                           (o.batch ? "; serving batch " + std::to_string(c.batch) + " as asked" : "; serving that batch") + ".";
  const std::string fit = std::to_string(c.max_batch) + (c.batch_capped ? "+" : "");
  // Attention data parallel: a sequence's cache lives whole on the rank that serves it.
  if (c.workload.dp_attention && c.workload.tp > 1) {
    const std::int64_t tp = c.workload.tp;
    return head + fmt_bytes(c.kv_bytes_per_seq_per_gpu * double(tp)) + " per " + std::to_string(o.workload.context) +
           "-token sequence" + state + ", held whole by the GPU that serves it (attention data parallel over " +
           std::to_string(tp) + " GPUs): " + std::to_string(c.max_batch / tp) + " per GPU, " + fit + " in all," + room;
  }
  return head + fmt_bytes(c.kv_bytes_per_seq_per_gpu) + " per " + std::to_string(o.workload.context) + "-token sequence per GPU" +
         state + ": " + fit + " sequences" + room;
}

std::string batch_limit_text(const Recommendation& r, const Candidate& c) {
  const std::string& l = c.served.batch_limit;
  if (l == "engine") return "the batch is " + r.options.engine.name + "'s max_num_seqs";
  if (l == "tpot") return "the largest batch meeting --tpot-ms";
  if (l == "max-batch") return "the batch search stops at --max-batch";
  if (l == "asked") return "the batch asked";
  return "the batch memory allows";
}

std::string speed_sentence(const Recommendation& r, const Candidate& c) {
  const RecommendOptions& o = r.options;
  const std::string per_gpu = c.served.gpus > 1 ? " per GPU over " + std::to_string(c.served.gpus) : " per GPU";
  return "Served by " + o.engine.name + " at batch " + std::to_string(c.batch) + " (" + batch_limit_text(r, c) + "): " +
         fmt_fixed(c.served.tokens_per_s_per_gpu, 0) + " tokens/s" + per_gpu + ", TPOT " + fmt_ms(c.served.tpot_at_batch_ms) +
         " (decode step " + fmt_ms(c.at_batch.decode_step_ms) + " of kernels, attention " + fmt_ms(c.at_batch.decode_attention_ms) +
         "). One request alone: TTFT " + fmt_ms(c.served.ttft_ms) + " for " + std::to_string(o.workload.context) +
         " tokens (prefill kernels " + fmt_ms(c.single.prefill_ms) + "), TPOT " + fmt_ms(c.served.tpot_ms) + ", " +
         std::to_string(o.output_len) + " tokens in " + fmt_ms(c.served.request_ms) +
         (c.workload.dp_attention ? "; attention data parallel over the " + std::to_string(c.workload.tp) + " GPUs" : "") + " (" +
         basis(r, c) + ").";
}

// Where it stands among designs the prediction cannot tell apart.
std::string tie_sentence(const Recommendation& r, const std::vector<Candidate>& designs, const Candidate& c) {
  std::vector<std::string> others;
  for (const auto& d : designs)
    if (d.rank == c.rank && !same_attention(d.spec.attention, c.spec.attention)) others.push_back(design_label(d.spec.attention, LabelStyle::table));
  if (others.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < others.size() && i < 4; ++i) list += (i ? ", " : "") + others[i];
  if (others.size() > 4) list += " and " + std::to_string(others.size() - 4) + " more";
  return "Tied at rank " + std::to_string(c.rank) + " with " + list + ": their " + std::string(to_string(r.options.objective)) +
         " scores lie within " + fmt_fixed(r.tie_tolerance * 100, 1) + " % of the tier's best (" + r.tie_basis +
         "); inside the tier the order is quality risk, then closeness to a released design (this one's nearest: " +
         c.risk.precedent + "'s " + c.risk.precedent_design + ", " + fmt_fixed(c.precedent_distance, 2) +
         " doublings away), then how many released models of its scale ship no more KV (" +
         std::to_string(c.risk.precedent_support) + " of " + std::to_string(c.risk.envelope_members) + "), then the score.";
}

// Against MHA with the same heads, against the model's own design, and a sparse design against its
// dense twin, where each is there to compare with.
void comparisons(const Recommendation& r, const std::vector<Candidate>& feasible, const Candidate& c,
                 std::vector<std::string>& out) {
  const RecommendOptions& o = r.options;
  const AttentionSpec& a = c.spec.attention;
  const KvCacheCounts& kv = c.counts.kv_cache;
  if (a.variant != AttentionVariant::mha && a.variant != AttentionVariant::mla) {
    const std::int64_t nq = a.num_q_heads;
    if (const Candidate* mha = find_design(feasible, AttentionVariant::mha, nq, nq, a.head_dim, a.indexer.topk))
      out.push_back("Against MHA with the same " + std::to_string(nq) + " heads of " + std::to_string(a.head_dim) + ": " +
                    kv_against(double(mha->counts.kv_cache.bytes_per_token), double(kv.bytes_per_token)) + ", " + times_x(double(c.max_batch) / double(std::max<std::int64_t>(1, mha->max_batch))) +
                    " the batch, " + pct(c.served.tokens_per_s_per_gpu / mha->served.tokens_per_s_per_gpu) + " tokens/s per GPU.");
  }
  if (r.base_design && r.base_design->served.tokens_per_s_per_gpu > 0 && !same_attention(a, r.base_design->spec.attention)) {
    const Candidate& own = *r.base_design;
    out.push_back("Against " + own.spec.name + "'s own " + design_label(own.spec.attention) + ": " +
                  kv_against(double(own.counts.kv_cache.bytes_per_token), double(kv.bytes_per_token)) + ", batch " + std::to_string(c.batch) + " against " + std::to_string(own.batch) + ", " +
                  pct(c.served.tokens_per_s_per_gpu / own.served.tokens_per_s_per_gpu) + " tokens/s per GPU, " +
                  pct(c.served.ttft_ms / own.served.ttft_ms) + " TTFT, " +
                  pct(c.served.tpot_ms / own.served.tpot_ms) + " TPOT at batch 1 (quality risk " + std::string(to_string(c.risk.level)) +
                  " against " + std::string(to_string(own.risk.level)) + ").");
  }
  if (o.index_topk > 0 && a.sparse())
    if (const Candidate* dense = find_twin(feasible, a, 0))
      out.push_back("Against the same design with dense attention: the indexer's keys add " +
                    fmt_bytes(double(kv.bytes_per_token - dense->counts.kv_cache.bytes_per_token)) + " per token, batch " +
                    std::to_string(c.batch) + " against " + std::to_string(dense->batch) + ", " +
                    pct(c.served.tokens_per_s_per_gpu / dense->served.tokens_per_s_per_gpu) + " tokens/s per GPU, " +
                    pct(c.single.decode_step_ms / dense->single.decode_step_ms) + " decode time at batch 1 (indexer " +
                    fmt_ms(c.single.decode_indexer_ms) + " of it, " +
                    (roofline_for(c.single.basis, "indexer/") ? "its roofline: " + r.profile.name + " has no fit of the indexer"
                                                              : std::string(to_string(c.single.basis.kind))) + ").");
}

// What it gives up: the leanest KV and the fastest single-stream decode among the feasible ("" when
// it is both).
std::string gives_up_sentence(const std::vector<Candidate>& feasible, const Candidate& c) {
  const Candidate* leanest = &feasible.front();
  const Candidate* fastest = &feasible.front();
  const Candidate* widest = &feasible.front();
  for (const auto& f : feasible) {
    if (f.kv_bytes_per_seq_per_gpu < leanest->kv_bytes_per_seq_per_gpu) leanest = &f;
    if (f.served.request_ms < fastest->served.request_ms) fastest = &f;
    if (f.served.tokens_per_s_per_gpu > widest->served.tokens_per_s_per_gpu) widest = &f;
  }
  // Only what lies beyond the expected error is given up.
  const double tol = std::max(c.error, 1e-9);
  std::vector<std::string> gives;
  if (leanest->kv_bytes_per_seq_per_gpu * (1 + tol) < c.kv_bytes_per_seq_per_gpu)
    gives.push_back(design_label(leanest->spec.attention) + " holds " +
                    times_x(c.kv_bytes_per_seq_per_gpu / leanest->kv_bytes_per_seq_per_gpu) +
                    " less KV per sequence per GPU (quality risk " + std::string(to_string(leanest->risk.level)) + ")");
  if (fastest->served.request_ms * (1 + tol) < c.served.request_ms)
    gives.push_back(design_label(fastest->spec.attention) + " serves a request alone " +
                    fmt_fixed((c.served.request_ms / fastest->served.request_ms - 1.0) * 100, 1) + " % faster (quality risk " +
                    std::string(to_string(fastest->risk.level)) + ")");
  if (widest->served.tokens_per_s_per_gpu > c.served.tokens_per_s_per_gpu * (1 + tol))
    gives.push_back(design_label(widest->spec.attention) + " serves " +
                    pct(widest->served.tokens_per_s_per_gpu / c.served.tokens_per_s_per_gpu) + " tokens/s per GPU (quality risk " +
                    std::string(to_string(widest->risk.level)) + ")");
  if (gives.empty()) return "";
  std::string s = "Gives up: ";
  for (std::size_t i = 0; i < gives.size(); ++i) s += (i ? "; " : "") + gives[i];
  return s + ".";
}

std::string params_sentence(const Recommendation& r, const Candidate& c) {
  const ParamCounts& p = c.counts.params;
  const bool experts = absorbs_in_experts(c.spec);
  return billions(double(p.total)) + " parameters (" + pct(double(p.total) / double(r.shape.budget)) +
         " against the budget): attention " + billions(double(p.attention)) + ", " +
         (experts ? "expert FFN width " + std::to_string(c.spec.moe.expert_ffn_dim)
                  : "FFN width " + std::to_string(c.spec.ffn.ffn_dim)) +
         (r.base_design && same_ffn(c.spec, r.base_design->spec) ? " as the model has it." : " absorbs the rest.");
}

// The common tensor-parallel degrees (2, 4, 8) the heads rule out, for a design a deployment may later
// want to split: empty when all of them divide.
std::string tp_sentence(const Recommendation& r, const Candidate& c) {
  const AttentionSpec& a = c.spec.attention;
  std::string q, kv;
  for (const std::int64_t tp : {2, 4, 8}) {
    if (tp == r.options.workload.tp) continue;
    if (!q_heads_split(a, tp)) q += (q.empty() ? "" : ", ") + std::to_string(tp);
    else if (!kv_heads_shard(a, tp)) kv += (kv.empty() ? "" : ", ") + std::to_string(tp);
  }
  if (q.empty() && kv.empty()) return "";
  std::string s = "Not servable at ";
  if (!q.empty()) s += "tp " + q + ": its " + std::to_string(a.num_q_heads) + " query heads do not divide over them";
  if (!kv.empty())
    s += std::string(q.empty() ? "" : "; nor at ") + "tp " + kv + ": its " + std::to_string(a.num_kv_heads) +
         " KV heads neither split nor replicate over them";
  return s + " (the tensor-parallel rule of docs/cost-model.md).";
}

void rationale(const Recommendation& r, const std::vector<Candidate>& designs, const std::vector<Candidate>& feasible,
               Candidate& c) {
  // `feasible` is every feasible candidate, for comparisons with designs outside the ranked list.
  std::vector<std::string>& out = c.rationale;
  out.push_back(memory_sentence(r, c));
  out.push_back(speed_sentence(r, c));
  comparisons(r, feasible, c, out);
  out.push_back("Quality risk " + std::string(to_string(c.risk.level)) + ": " + c.risk.reason + ".");
  if (std::string gives = gives_up_sentence(feasible, c); !gives.empty()) out.push_back(gives);
  out.push_back(params_sentence(r, c));
  if (c.replication_bytes > 0)
    out.push_back("Tensor parallelism " + std::to_string(r.options.workload.tp) + " replicates each KV head on " +
                  std::to_string(c.counts.kv_cache.replication) + " GPUs: " + fmt_bytes(c.replication_bytes) +
                  " extra per GPU at this batch.");
  if (std::string tp = tp_sentence(r, c); !tp.empty()) out.push_back(tp);
  for (const auto& pen : c.penalties) out.push_back("Penalty: " + pen + ".");
  if (std::string tie = tie_sentence(r, designs, c); !tie.empty()) out.push_back(tie);
}

}  // namespace

void explain(Recommendation& r, std::vector<Candidate>& designs, const std::vector<Candidate>& all,
             std::vector<Rejected>& rejected) {
  const RecommendOptions& o = r.options;
  const std::size_t top = std::min<std::size_t>(static_cast<std::size_t>(o.top), designs.size());
  for (std::size_t i = 0; i < top; ++i) rationale(r, designs, all, designs[i]);
  r.ranked = designs;
  if (r.base_design && r.base_rank > 1) {
    const Candidate& own = *r.base_design;
    std::vector<std::string> better;
    std::size_t beating = 0;  // a better tier's designs within the expected error of this one do not beat it
    for (const auto& d : designs) {
      if (d.score * (1 + r.tie_tolerance) >= own.score || same_class(d.spec.attention, own.spec.attention)) continue;
      if (++beating <= 3)
        better.push_back(design_label(d.spec.attention, LabelStyle::table) + " (rank " + std::to_string(d.rank) + ": " +
                         pct(d.served.tokens_per_s_per_gpu / own.served.tokens_per_s_per_gpu) + " tokens/s per GPU, " +
                         pct(d.served.request_ms / own.served.request_ms) + " request time, " +
                         kv_against(own.kv_bytes_per_seq_per_gpu, d.kv_bytes_per_seq_per_gpu) + " per GPU, risk " +
                         std::string(to_string(d.risk.level)) + " against " + std::string(to_string(own.risk.level)) + ")");
    }
    std::string list;
    for (std::size_t i = 0; i < better.size(); ++i) list += (i ? "; " : "") + better[i];
    if (beating > 0)
      r.base_beaten_by = std::to_string(beating) + " design(s) beat it on " + std::string(to_string(o.objective)) +
                         " by more than the expected error, first " + list;
  }
  std::sort(r.pareto.begin(), r.pareto.end(), [](const Candidate& a, const Candidate& b) {
    return a.kv_bytes_per_seq_per_gpu < b.kv_bytes_per_seq_per_gpu;
  });

  // Every rejection goes to the output with its rule and numbers; the notable ones are listed in the
  // text, at most one line of each kind per variant: its best design when it missed the top K, its best
  // design the quality tolerance excluded, its best design when --variants left it out, and one example
  // of each hard constraint among designs whose query width is d_model.
  std::set<std::string> seen;
  for (std::size_t i = 0; i < top; ++i) seen.insert(design_label(designs[i].spec.attention));
  auto add = [&](const AttentionSpec& a, Constraint rule, const std::string& reason,
                 std::vector<std::pair<std::string, double>> numbers) {
    if (seen.insert(design_label(a)).second) r.rejected.push_back({design_label(a), rule, reason, std::move(numbers), true});
  };
  auto summary = [](const Candidate& c) {
    return fmt_fixed(c.served.tokens_per_s_per_gpu, 0) + " tokens/s per GPU at batch " + std::to_string(c.batch) + ", " +
           fmt_bytes(double(c.counts.kv_cache.bytes_per_token)) + "/token KV, risk " + std::string(to_string(c.risk.level));
  };
  for (AttentionVariant v : o.variants)
    for (const auto& c : designs)
      if (c.spec.attention.variant == v) {
        if (c.rank > static_cast<std::int64_t>(top))
          add(c.spec.attention, Constraint::outranked,
              "best " + std::string(to_string(v)) + " design, ranked " + std::to_string(c.rank) + " of " +
                  std::to_string(designs.size()) + " on " + std::string(to_string(o.objective)) + ": " + summary(c),
              {{"rank", double(c.rank)}, {"score", c.score}});
        break;
      }
  const std::size_t outranked = r.rejected.size();
  std::vector<const Rejected*> sorted;
  for (const auto& rj : rejected) sorted.push_back(&rj);
  // Rejections that got as far as a prediction, best throughput first; the rest keep their order.
  // Those stopped earlier are taken nearest head_dim 128 first, the most common choice.
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
    const double ta = a->candidate.served.tokens_per_s_per_gpu, tb = b->candidate.served.tokens_per_s_per_gpu;
    if (ta != tb) return ta > tb;
    auto off = [](const Candidate& c) { return std::fabs(std::log2(double(c.spec.attention.head_dim) / 128.0)); };
    return off(a->candidate) < off(b->candidate);
  });
  std::set<std::string> kinds;
  std::vector<Rejection> all_rejected;
  for (const auto* rj : sorted) {
    const Candidate& c = rj->candidate;
    const AttentionSpec& a = c.spec.attention;
    all_rejected.push_back({design_label(a), rj->constraint, rj->reason, rj->numbers, false});
    // One line per rule (per variant for the quality tolerance and --variants), hard rules only among
    // designs whose query width is d_model.
    std::string kind;
    if (rj->constraint == Constraint::quality) kind = "quality " + std::string(to_string(a.variant));
    else if (rj->constraint == Constraint::not_searched) kind = "variants " + std::string(to_string(a.variant));
    else if (a.num_q_heads * a.v_head_dim == c.spec.d_model) kind = std::string(to_string(rj->constraint));
    else continue;
    if (!kinds.insert(kind).second) continue;
    std::string text = rj->reason;
    if (c.served.tokens_per_s_per_gpu > 0 && kind.rfind("variants", 0) != 0) text += " (would serve " + summary(c) + ")";
    if (kind.rfind("variants", 0) == 0) {
      if (c.risk.level > max_risk(o.quality)) {
        kinds.erase(kind);
        continue;
      }
      text += ": would serve " + summary(c);
    }
    if (seen.insert(design_label(a)).second) {
      all_rejected.back().notable = true;
      all_rejected.back().reason = text;
    }
  }
  // The notable lines first (outranked designs, then rules), then every other rejection.
  std::vector<Rejection> out(r.rejected.begin(), r.rejected.begin() + std::ptrdiff_t(outranked));
  for (auto& rj : all_rejected)
    if (rj.notable) out.push_back(rj);
  for (auto& rj : all_rejected)
    if (!rj.notable) out.push_back(std::move(rj));
  r.rejected = std::move(out);
}

}  // namespace mhacfg
