// The search: candidate enumeration, constraints, predictions, ranking, Pareto frontier.
#include "mhacfg/configurator/search/recommend.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "mhacfg/configurator/inputs/model_input.hpp"
#include "recommend_internal.hpp"
#include "mhacfg/costmodel/memory_fit.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

Objective parse_objective(std::string_view name) {
  for (auto o : {Objective::throughput, Objective::latency, Objective::memory, Objective::balanced})
    if (to_string(o) == name) return o;
  throw InputError("--objective", std::string(name), "unknown objective (expected throughput, latency, memory or balanced)");
}

std::string_view to_string(Objective o) {
  switch (o) {
    case Objective::throughput: return "throughput";
    case Objective::latency: return "latency";
    case Objective::memory: return "memory";
    case Objective::balanced: return "balanced";
  }
  MHACFG_CHECK(false, "unknown Objective");
}

namespace {

constexpr std::int64_t kMaxSearchDModel = 65536;  // the largest d_model searched, given or derived
constexpr std::int64_t kAspectRatio = 128;  // d_model / layers of the shape rule (Llama-2/3 7B-13B)

}  // namespace

ModelSpec baseline(std::int64_t d, std::int64_t layers, std::int64_t vocab) {
  ModelSpec m;
  m.name = "baseline";
  m.family = "custom";
  m.d_model = d;
  m.vocab_size = vocab;
  m.layers.assign(static_cast<std::size_t>(layers), LayerSpec{});
  const std::int64_t hd = d % 128 == 0 ? 128 : 64;
  m.attention = AttentionSpec{AttentionVariant::mha, d / hd, d / hd, hd, hd, false, false, false, false, false, false, {}};
  m.ffn = FfnSpec{FfnKind::gated, default_ffn_dim(d, FfnKind::gated), false};
  m.norm = NormSpec{NormKind::rmsnorm, 2, true};
  return m;
}

bool same_attention(const AttentionSpec& a, const AttentionSpec& b) {
  return a.variant == b.variant && a.num_q_heads == b.num_q_heads && a.num_kv_heads == b.num_kv_heads &&
         a.head_dim == b.head_dim && a.v_head_dim == b.v_head_dim && a.mla.kv_lora_rank == b.mla.kv_lora_rank &&
         a.mla.q_lora_rank == b.mla.q_lora_rank && a.mla.rope_head_dim == b.mla.rope_head_dim &&
         a.indexer.topk == b.indexer.topk;
}

bool same_class(const AttentionSpec& a, const AttentionSpec& b) {
  return a.variant == b.variant && a.head_dim == b.head_dim && a.v_head_dim == b.v_head_dim &&
         a.mla.kv_lora_rank == b.mla.kv_lora_rank && a.mla.q_lora_rank == b.mla.q_lora_rank && a.indexer.topk == b.indexer.topk;
}

bool absorbs_in_experts(const ModelSpec& m) {
  return std::any_of(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) { return l.moe(); });
}

Shape derive_shape(const RecommendOptions& o) {
  Shape s;
  if (o.base) {
    const ModelSpec& b = *o.base;
    if (o.d_model || o.layers)
      throw InputError(o.d_model ? "--d-model" : "--layers", std::to_string(o.d_model ? *o.d_model : *o.layers),
                       "comes from the model given with --hf-config or --model");
    if (b.d_model > kMaxSearchDModel)
      throw InputError("d_model", std::to_string(b.d_model), "must be at most " + std::to_string(kMaxSearchDModel) + " to search");
    s.d_model = b.d_model;
    s.layers = b.num_layers();
    const std::int64_t own = count_params(b).total;
    s.budget = o.params ? *o.params : own;
    s.rule = "d_model " + std::to_string(s.d_model) + " and " + std::to_string(s.layers) + " layers of " + b.name + "; " +
             (o.params ? "budget " + billions(double(s.budget)) + " as given (the model has " + billions(double(own)) + ")"
                       : "budget " + billions(double(s.budget)) + " = its parameters") +
             "; its vocabulary, norms, layer windows and " + (absorbs_in_experts(b) ? "experts" : "FFN") +
             " are kept, and each candidate's " + (absorbs_in_experts(b) ? "expert FFN width" : "FFN width") +
             " absorbs its attention's difference";
    return s;
  }
  if (o.d_model.has_value() != o.layers.has_value())
    throw InputError(o.d_model ? "--layers" : "--d-model", "(missing)", "--d-model and --layers go together");
  if (o.d_model) {
    if (*o.d_model % 64 != 0) throw InputError("--d-model", std::to_string(*o.d_model), "must be a multiple of 64");
    // The search's head counts grow with d_model (query widths to 2 d_model, every KV divisor): past
    // the --params range (65536) it would run for minutes on shapes no model has.
    if (*o.d_model > kMaxSearchDModel)
      throw InputError("--d-model", std::to_string(*o.d_model), "must be at most " + std::to_string(kMaxSearchDModel));
    s.d_model = *o.d_model;
    s.layers = checked_layer_count(*o.layers, "--layers");
    const ModelSpec b = baseline(s.d_model, s.layers, o.vocab);
    s.budget = o.params ? *o.params : count_params(b).total;
    s.rule = "d_model " + std::to_string(s.d_model) + " and " + std::to_string(s.layers) + " layers as given; " +
             (o.params ? "budget " + billions(double(s.budget)) + " as given"
                       : "budget " + billions(double(s.budget)) + " = a Llama-style MHA baseline of that shape (head_dim " +
                             std::to_string(b.attention.head_dim) + ", gated FFN " + std::to_string(b.ffn.ffn_dim) +
                             ", vocab " + std::to_string(o.vocab) + ", untied)") +
             "; each candidate's FFN width absorbs its attention's difference";
    return s;
  }
  if (!o.params) throw InputError("--params", "(missing)", "give --params N, or --d-model D --layers L");
  // The multiple of 128 whose Llama-style baseline at aspect ratio 128 comes closest to the budget.
  double best_gap = 0;
  for (std::int64_t d = 256; d <= kMaxSearchDModel; d += 128) {
    const std::int64_t layers = std::max<std::int64_t>(2, (d + kAspectRatio / 2) / kAspectRatio);
    const double total = double(count_params(baseline(d, layers, o.vocab)).total);
    const double gap = std::fabs(std::log(total / double(*o.params)));
    if (s.d_model == 0 || gap < best_gap) {
      best_gap = gap;
      s.d_model = d;
      s.layers = layers;
    }
  }
  s.budget = *o.params;
  const ModelSpec b = baseline(s.d_model, s.layers, o.vocab);
  s.rule = "d_model " + std::to_string(s.d_model) + " and " + std::to_string(s.layers) +
           " layers: the multiple of 128 at aspect ratio d_model/layers = 128 whose Llama-style MHA baseline (head_dim " +
           std::to_string(b.attention.head_dim) + ", gated FFN 8/3 d_model, vocab " + std::to_string(o.vocab) +
           ", untied) comes closest to the " + billions(double(s.budget)) + " budget (" +
           billions(double(count_params(b).total)) + "); each candidate's FFN width absorbs the difference";
  return s;
}

namespace {

struct Context {
  const RecommendOptions& o;
  const Shape& shape;
  const Profile& profile;
  Predictor predictor;
  double memory_budget;
};


// Counts and predictions of `c` at its batch (at least 1) and at batch 1, over `tp` GPUs. evaluate()
// makes them for every candidate that fits (at --tp); the closest candidate of an infeasible search
// gets them afterwards, so its report shows its real sizes and times rather than zeros.
void count_and_predict(const Context& ctx, Candidate& c, std::int64_t tp) {
  const RecommendOptions& o = ctx.o;
  c.batch = std::max<std::int64_t>(1, c.batch);
  const Workload at = o.workload.with_tp(tp).with_batch(c.batch);
  const Workload one = at.with_batch(1);
  c.counts = count_model(c.spec, at);
  c.at_batch = predict_model(c.spec, at, ctx.predictor);
  c.single = predict_model(c.spec, one, ctx.predictor);
}

// The closest candidate of an infeasible search, rejected before evaluate() counted it: its risk,
// memory, counts and predictions, all at one batch and one tensor-parallel degree, so its report is
// consistent. The asked batch and --tp where they can be counted; batch 1 when the asked batch's counts
// overflow 64 bits; one GPU when its heads do not divide over --tp (the reason it was rejected).
// Returns the tensor-parallel degree it was counted at.
std::int64_t complete_closest(const Context& ctx, Candidate& c) {
  const RecommendOptions& o = ctx.o;
  c.risk = assess_quality(c.spec);
  const std::int64_t asked_batch = c.batch;
  for (const std::int64_t tp : {o.workload.tp, std::int64_t{1}})
    for (const std::int64_t batch : {asked_batch, std::int64_t{1}}) {
      try {
        c.batch = batch;
        const MemoryFit fit = fit_memory(c.spec, o.workload.with_tp(tp), ctx.profile, o.memory_fraction);
        c.weights_bytes_per_gpu = fit.weights_bytes_per_gpu;
        c.kv_bytes_per_seq_per_gpu = fit.kv_bytes_per_seq_per_gpu;
        count_and_predict(ctx, c, tp);
        c.memory_bytes_per_gpu = c.weights_bytes_per_gpu + double(c.batch) * c.kv_bytes_per_seq_per_gpu;
        c.headroom_bytes = ctx.memory_budget - c.memory_bytes_per_gpu;
        return tp;
      } catch (const InputError&) {
        if (tp == 1 && batch == 1) throw;
      }
    }
  return 1;  // not reached: the last attempt returns or throws
}

// Sets the FFN width to the multiple of 64 that brings the whole model nearest the budget; in a MoE
// model the experts' width, in multiples of 16 (one step of 64 there moves gpt-oss-20b by 425 M
// parameters, more than most attention designs differ). False when attention alone leaves less than
// 128 of width.
bool fit_budget(ModelSpec& m, std::int64_t budget) {
  const bool experts = absorbs_in_experts(m);
  std::int64_t& width = experts ? m.moe.expert_ffn_dim : m.ffn.ffn_dim;
  const std::int64_t step = experts ? 16 : 64;
  const std::int64_t own = width;
  width = 0;
  const std::int64_t rest = count_params(m).total;
  width = step;
  const std::int64_t per_step = count_params(m).total - rest;  // parameters are affine in the width
  if (per_step == 0) {  // no layer has an FFN (a Nemotron-H pattern of mixers only): nothing absorbs
    width = own;
    return true;
  }
  width = budget > rest ? (budget - rest + per_step / 2) / per_step * step : 0;
  return width >= 128;
}

// The next head_dim the target's kernels support (0: none large enough).
std::int64_t kernel_head_dim(const Profile& p, std::int64_t hd) {
  if (p.kernels.head_dims.empty()) return hd;
  std::int64_t best = 0;
  for (auto h : p.kernels.head_dims)
    if (h >= hd && (best == 0 || h < best)) best = h;
  return best;
}

enum class Verdict { ok, rejected };

struct Evaluated {
  Verdict verdict = Verdict::ok;
  Constraint constraint = Constraint::budget;  // the rule it failed, when rejected
  std::string reason;
  double miss = 0;  // how far a memory-rejected candidate misses (needed / available)
  Candidate c;
};

// `refit`: hold the candidate to the budget (fit_budget); a base model's own design keeps its FFN.
Evaluated evaluate(const Context& ctx, ModelSpec spec, bool refit = true) {
  const RecommendOptions& o = ctx.o;
  Evaluated e;
  Candidate& c = e.c;
  c.spec = std::move(spec);
  AttentionSpec& a = c.spec.attention;
  auto reject = [&](Constraint rule, std::string why) {
    e.verdict = Verdict::rejected;
    e.constraint = rule;
    e.reason = std::move(why);
    return e;
  };
  if (refit && !fit_budget(c.spec, ctx.shape.budget))
    return reject(Constraint::budget, "attention parameters leave no room for an FFN within the " + billions(double(ctx.shape.budget)) +
                  " budget");
  if (a.num_q_heads % o.workload.tp != 0)
    return reject(Constraint::tp_heads, std::to_string(a.num_q_heads) + " query heads do not divide over tp " + std::to_string(o.workload.tp));
  if (a.variant != AttentionVariant::mla && a.num_kv_heads % o.workload.tp != 0 && o.workload.tp % a.num_kv_heads != 0)
    return reject(Constraint::tp_kv_heads, std::to_string(a.num_kv_heads) + " KV heads neither split over nor replicate across tp " +
                  std::to_string(o.workload.tp));
  // Kernel support: MLA needs MLA kernels; a head_dim the target's fast kernels lack would run padded
  // (the cost of the larger head_dim for less capacity), so it is rejected with that reason.
  if (a.variant == AttentionVariant::mla) {
    if (!ctx.profile.kernels.mla) return reject(Constraint::mla_kernels, ctx.profile.name + " lists no MLA kernels");
    if (a.mla.kv_lora_rank != 512 || a.mla.rope_head_dim != 64)
      c.penalties.push_back("MLA decode kernels (FlashMLA, FlashInfer) are built for latent 512 + rope 64; this latent "
                            "is predicted as if an equally efficient kernel existed");
  } else {
    const std::int64_t kh = kernel_head_dim(ctx.profile, a.head_dim);
    if (kh != a.head_dim)
      return reject(Constraint::kernel_head_dim, "head_dim " + std::to_string(a.head_dim) + " is not among " + ctx.profile.name +
                    "'s fast-kernel head_dims" + (kh ? " (it would run padded to " + std::to_string(kh) + ")" : ""));
    const auto& gs = ctx.profile.kernels.group_sizes;
    if (!gs.empty() && std::find(gs.begin(), gs.end(), a.group_size()) == gs.end())
      c.penalties.push_back("group size " + std::to_string(a.group_size()) + " is not among the fast GQA kernel groups");
  }
  c.risk = assess_quality(c.spec);

  // Memory: weights (split over tp) plus the KV cache of batch sequences of seq tokens, per GPU.
  const MemoryFit fit = fit_memory(c.spec, o.workload, ctx.profile, o.memory_fraction);
  const KvCacheCounts& kv1 = fit.one_sequence;
  c.weights_bytes_per_gpu = fit.weights_bytes_per_gpu;
  c.kv_bytes_per_seq_per_gpu = fit.kv_bytes_per_seq_per_gpu;
  // A candidate rejected for memory reports what it would need at the asked (or a single) batch.
  c.batch = o.batch.value_or(1);
  c.memory_bytes_per_gpu = c.weights_bytes_per_gpu + double(c.batch) * c.kv_bytes_per_seq_per_gpu;
  c.headroom_bytes = ctx.memory_budget - c.memory_bytes_per_gpu;
  c.max_batch = fit.batch_within(o.max_batch);
  if (c.max_batch == 0) {
    e.miss = (c.weights_bytes_per_gpu + c.kv_bytes_per_seq_per_gpu) / ctx.memory_budget;
    return reject(Constraint::memory, "weights " + fmt_bytes(c.weights_bytes_per_gpu) + " + one sequence's KV " +
                  fmt_bytes(c.kv_bytes_per_seq_per_gpu) + " exceed " + fmt_bytes(ctx.memory_budget) + " per GPU");
  }
  c.batch_capped = c.max_batch == o.max_batch;
  if (o.batch) {
    if (*o.batch > c.max_batch) {
      e.miss = (c.weights_bytes_per_gpu + double(*o.batch) * c.kv_bytes_per_seq_per_gpu) / ctx.memory_budget;
      return reject(Constraint::batch, "batch " + std::to_string(*o.batch) + " needs " +
                    fmt_bytes(c.weights_bytes_per_gpu + double(*o.batch) * c.kv_bytes_per_seq_per_gpu) + " per GPU; " +
                    fmt_bytes(ctx.memory_budget) + " available (at most " + std::to_string(c.max_batch) + " fit)");
    }
    c.batch = *o.batch;
  } else {
    c.batch = c.max_batch;
  }
  c.memory_bytes_per_gpu = c.weights_bytes_per_gpu + double(c.batch) * c.kv_bytes_per_seq_per_gpu;
  // Replicated KV heads: each GPU holds a whole head where an even split would hold 1/tp of them.
  if (kv1.replication > 1 && a.variant != AttentionVariant::mla)
    c.replication_bytes = double(c.batch) * (c.kv_bytes_per_seq_per_gpu - double(kv1.bytes_total) / double(o.workload.tp));
  c.headroom_bytes = ctx.memory_budget - c.memory_bytes_per_gpu;

  count_and_predict(ctx, c, o.workload.tp);
  if (c.risk.level > max_risk(o.quality))
    return reject(Constraint::quality, "quality risk " + std::string(to_string(c.risk.level)) + " exceeds --quality " +
                  std::string(to_string(o.quality)) + ": " + c.risk.reason);
  return e;
}

bool wanted(const RecommendOptions& o, AttentionVariant v) {
  return std::find(o.variants.begin(), o.variants.end(), v) != o.variants.end();
}


void score(std::vector<Candidate>& cs, Objective o) {
  if (o != Objective::balanced) {
    for (auto& c : cs) c.score = objective_value(c, o);
    return;
  }
  // Balanced: geometric mean of throughput, latency and KV-per-token, each relative to the best.
  double best_t = 1e300, best_l = 1e300, best_m = 1e300;
  for (const auto& c : cs) {
    best_t = std::min(best_t, objective_value(c, Objective::throughput));
    best_l = std::min(best_l, objective_value(c, Objective::latency));
    best_m = std::min(best_m, double(c.counts.kv_cache.bytes_per_token));
  }
  for (auto& c : cs)
    c.score = std::cbrt(objective_value(c, Objective::throughput) / best_t * objective_value(c, Objective::latency) / best_l *
                        double(c.counts.kv_cache.bytes_per_token) / best_m);
}

// The ranked list holds one design per variant and head_dim (and MLA latent): the architect's
// decision. Within a class the best-scoring head counts represent it, except that a query width of
// d_model is kept unless another width scores more than 2 % better. Input is sorted best first.
std::vector<Candidate> distinct_designs(const std::vector<Candidate>& sorted) {
  constexpr double kWidthPreference = 1.02;
  std::map<std::vector<std::int64_t>, std::size_t> index;
  std::vector<Candidate> out;
  for (const auto& c : sorted) {
    const AttentionSpec& a = c.spec.attention;
    const std::vector<std::int64_t> key = {static_cast<std::int64_t>(a.variant), a.head_dim, a.v_head_dim,
                                           a.mla.kv_lora_rank, a.mla.q_lora_rank, a.indexer.topk};
    const auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, out.size());
      out.push_back(c);
      continue;
    }
    Candidate& kept = out[it->second];
    const bool kept_full = kept.spec.attention.num_q_heads * kept.spec.attention.v_head_dim == kept.spec.d_model;
    const bool full = a.num_q_heads * a.v_head_dim == c.spec.d_model;
    if (full && !kept_full && c.score <= kept.score * kWidthPreference) kept = c;
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
  return out;
}

void mark_pareto(std::vector<Candidate>& cs) {
  for (auto& c : cs) {
    c.pareto = true;
    for (const auto& d : cs) {
      const bool no_worse = d.counts.kv_cache.bytes_per_token <= c.counts.kv_cache.bytes_per_token &&
                            d.single.decode_step_ms <= c.single.decode_step_ms && d.risk.level <= c.risk.level;
      const bool better = d.counts.kv_cache.bytes_per_token < c.counts.kv_cache.bytes_per_token ||
                          d.single.decode_step_ms < c.single.decode_step_ms || d.risk.level < c.risk.level;
      if (no_worse && better) {
        c.pareto = false;
        break;
      }
    }
  }
}

// The options as searched: windows applied to the base model, every option checked. Throws InputError.
RecommendOptions checked_options(const RecommendOptions& given) {
  RecommendOptions o = given;
  if (o.base && o.layer_pattern.any()) {  // its own design and every candidate keep the windows asked for
    apply_layer_pattern(o.layer_pattern, *o.base);
    o.base->name += " (modified)";
  }
  if (o.workload.context <= 0) throw InputError("--context", std::to_string(o.workload.context), "must be positive");
  if (o.workload.tp <= 0) throw InputError("--tp", std::to_string(o.workload.tp), "must be positive");
  if (o.top <= 0) throw InputError("--top", std::to_string(o.top), "must be positive");
  if (o.variants.empty()) throw InputError("--variants", "(empty)", "name at least one of mha, gqa, mqa, mla");
  if (o.base && o.base->num_attention_layers() == 0)
    throw InputError("model", o.base->name, "has no softmax-attention layer whose heads to design");
  if (o.base && o.base->num_linear_layers() > 0) {
    try {
      linear_shard(*o.base, o.workload.tp);  // the model's linear-attention heads are kept: they must split over --tp
    } catch (const InputError& e) {
      throw InputError("--" + std::string(e.what()));  // "tp = ...: must divide ..." names the flag
    }
  }
  return o;
}

// Every enumerated design evaluated: the feasible ones, and the others with the rule they failed; the
// closest miss for an infeasible search.
void search(const Context& ctx, Recommendation& r, std::vector<Candidate>& feasible, std::vector<Rejected>& rejected) {
  const RecommendOptions& o = ctx.o;
  double closest_miss = 0;
  for (ModelSpec& spec : enumerate(o, r.shape)) {
    const AttentionVariant variant = spec.attention.variant;
    Evaluated e = evaluate(ctx, std::move(spec));
    ++r.evaluated;
    if (!wanted(o, variant)) {
      if (e.verdict == Verdict::ok) rejected.push_back({std::move(e.c), Constraint::not_searched,
                                                      "not searched: --variants leaves out " + std::string(to_string(variant))});
      continue;
    }
    if (e.verdict == Verdict::ok) {
      feasible.push_back(std::move(e.c));
      continue;
    }
    if (e.miss > 0 && (!r.closest || e.miss < closest_miss)) {
      closest_miss = e.miss;
      r.closest = e.c;
      r.closest_miss = e.reason;
    }
    rejected.push_back({std::move(e.c), e.constraint, std::move(e.reason)});
  }
}

// The base model's own attention, with its own FFN: ranked among the candidates when it is feasible
// and searched (in place of the enumerated twin held to the budget), else reported with the reason.
void place_base(const Context& ctx, Recommendation& r, std::vector<Candidate>& feasible) {
  const RecommendOptions& o = ctx.o;
  if (!o.base) return;
  Evaluated own = evaluate(ctx, *o.base, false);
  ++r.evaluated;
  const AttentionVariant variant = own.c.spec.attention.variant;
  if (own.verdict == Verdict::rejected) {
    r.base_verdict = own.reason;
    // Rejected before it was counted (memory, tensor parallelism): its sizes and times all the same.
    if (own.c.counts.params.total == 0 && complete_closest(ctx, own.c) != o.workload.tp)
      r.base_verdict += " (its sizes and times are counted on one GPU)";
  } else if (!wanted(o, variant)) {
    r.base_verdict = "not searched: --variants leaves out " + std::string(to_string(variant));
  } else {
    feasible.erase(std::remove_if(feasible.begin(), feasible.end(),
                                  [&](const Candidate& c) { return same_attention(c.spec.attention, own.c.spec.attention); }),
                   feasible.end());
    feasible.push_back(own.c);
  }
  r.base_design = std::move(own.c);
}

// The base's place in the design ranking: its class's rank when it represents the class, else the
// rank it would take there (the designs of other classes that score better, plus one).
void rank_base(Recommendation& r, const std::vector<Candidate>& feasible, const std::vector<Candidate>& designs) {
  if (!r.base_design || !r.base_verdict.empty()) return;
  for (const auto& c : feasible)
    if (same_attention(c.spec.attention, r.base_design->spec.attention)) {
      r.base_design = c;  // with its score and Pareto mark
      r.base_rank = 1 + std::count_if(designs.begin(), designs.end(), [&](const Candidate& d) {
                      return d.score < c.score && !same_class(d.spec.attention, c.spec.attention);
                    });
      for (const auto& d : designs)
        if (same_class(d.spec.attention, c.spec.attention)) {
          r.base_class_design = design_label(d.spec.attention);
          r.base_class_rank = d.rank;
        }
    }
}

}  // namespace

Recommendation recommend(const RecommendOptions& given, const Profile& profile) {
  const RecommendOptions o = checked_options(given);
  Recommendation r;
  r.options = o;
  r.profile = profile;
  r.shape = derive_shape(o);
  const Context ctx{o, r.shape, r.profile, Predictor(r.profile), double(profile.spec.memory_bytes) * o.memory_fraction};

  std::vector<Candidate> feasible;
  std::vector<Rejected> rejected;
  search(ctx, r, feasible, rejected);
  place_base(ctx, r, feasible);
  r.feasible = static_cast<std::int64_t>(feasible.size());
  if (feasible.empty()) {
    if (!r.closest && !rejected.empty()) {
      r.closest = rejected.front().candidate;
      r.closest_miss = rejected.front().reason;
    }
    if (r.closest && r.closest->counts.params.total == 0 && complete_closest(ctx, *r.closest) != o.workload.tp)
      r.closest_miss += " (its sizes and times are counted on one GPU)";
    explain(r, feasible, feasible, rejected);
    return r;
  }
  score(feasible, o.objective);
  std::stable_sort(feasible.begin(), feasible.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score < b.score;
    return a.risk.level < b.risk.level;
  });
  mark_pareto(feasible);
  for (const auto& c : feasible)
    if (c.pareto) r.pareto.push_back(c);
  std::vector<Candidate> designs = distinct_designs(feasible);
  for (std::size_t i = 0; i < designs.size(); ++i) designs[i].rank = static_cast<std::int64_t>(i + 1);
  r.designs = static_cast<std::int64_t>(designs.size());
  rank_base(r, feasible, designs);
  explain(r, designs, feasible, rejected);
  return r;
}

}  // namespace mhacfg
