// The search: candidates evaluated against the constraints and predicted, then ranked
// (recommend_rank.cpp); the shape rule is recommend_shape.cpp.
#include "mhacfg/configurator/search/recommend.hpp"

#include <algorithm>
#include <cmath>

#include "mhacfg/configurator/inputs/model_input.hpp"
#include "mhacfg/configurator/search/precedents.hpp"
#include "recommend_internal.hpp"
#include "mhacfg/costmodel/memory_fit.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

struct Context {
  const RecommendOptions& o;
  const Shape& shape;
  const Profile& profile;
  Predictor predictor;
  double memory_budget;
};

// How a candidate is served: --tp, and MLA with attention data parallel across the tp ranks (each rank
// its own requests' latent, whole). SGLang's guide "DP, DPA and SGLang DP Router"
// (https://docs.sglang.io/advanced_features/dp_dpa_smg_guide.html): DeepSeek's MLA "only [has] one KV
// head. If we use tensor parallelism on 8 GPUs, it will lead to: Duplicated KV cache across all GPUs",
// which data parallel attention addresses.
// MLA is evaluated both ways when tp > 1 and served the way that scores better (evaluate()): under
// attention data parallel one rank prefills a request's whole prompt, which long prompts pay for.
Workload served_workload(const RecommendOptions& o, const AttentionSpec& a, std::int64_t tp) {
  Workload w = o.workload.with_tp(tp);
  if (a.variant == AttentionVariant::mla && tp > 1) w.dp_attention = true;
  return w;
}

// The engine's view at `batch` requests in flight: one request alone at batch 1, continuous batching
// above it (each step carrying the prefills of the requests that join it).
ServingTimes serve(const Context& ctx, const Candidate& c, std::int64_t batch) {
  const RecommendOptions& o = ctx.o;
  ServingQuery q;
  q.workload = c.workload;
  q.isl = o.workload.context;
  q.osl = o.output_len;
  q.concurrency = batch;
  q.mode = batch == 1 ? ServingMode::latency : ServingMode::continuous;
  q.decode_context = o.workload.context;
  q.memory_fraction = o.memory_fraction;
  return predict_serving(c.spec, q, ctx.predictor, o.engine);
}

// Counts and kernel predictions of `c` at its batch (at least 1) and at batch 1, as it is served.
void count_and_predict(const Context& ctx, Candidate& c) {
  c.batch = std::max<std::int64_t>(1, c.batch);
  const Workload at = c.workload.with_batch(c.batch);
  // Counted per sequence (a batch's prefill FLOPs at a million tokens would not fit 64 bits); the
  // batch's memory is c.memory_bytes_per_gpu.
  c.counts = count_model(c.spec, at.with_batch(1));
  c.at_batch = predict_model(c.spec, at, ctx.predictor);
  c.single = predict_model(c.spec, at.with_batch(1), ctx.predictor);
  c.error = std::max(c.at_batch.basis.expected_median_ape, c.single.basis.expected_median_ape);
}

// The served times at batch 1 and at c.batch.
void predict_served(const Context& ctx, Candidate& c) {
  const ServingTimes one = serve(ctx, c, 1);
  const ServingTimes at = c.batch == 1 ? one : serve(ctx, c, c.batch);
  c.served.ttft_ms = one.ttft_ms;
  c.served.tpot_ms = one.tpot_ms;
  c.served.request_ms = one.request_latency_ms;
  c.served.tpot_at_batch_ms = at.tpot_ms;
  c.served.gpus = at.gpus;
  c.served.tokens_per_s_per_gpu = double(c.batch) / (at.tpot_ms * 1e-3) / double(at.gpus);
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
        c.workload = served_workload(o, c.spec.attention, tp);
        const MemoryFit fit = fit_memory(c.spec, c.workload, ctx.profile, o.memory_fraction);
        c.weights_bytes_per_gpu = fit.weights_bytes_per_gpu;
        c.kv_bytes_per_seq_per_gpu = fit.kv_bytes_per_seq_per_gpu;
        count_and_predict(ctx, c);
        c.memory_bytes_per_gpu = fit.bytes_at(c.batch);
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

// How far a design lies from the nearest shipped one (0: a shipped design); the order inside a tier.
double distance_to_shipped(const ModelSpec& m) {
  const DesignPoint d = design_point(m);
  return precedent_distance(d, nearest_precedent(d));
}

struct Evaluated {
  Verdict verdict = Verdict::ok;
  Constraint constraint = Constraint::budget;  // the rule it failed, when rejected
  std::string reason;
  std::vector<std::pair<std::string, double>> numbers;
  // How far a candidate rejected for memory or an SLO misses (needed / available, predicted / target): the
  // smallest is the closest design of an infeasible search.
  double miss = 0;
  Candidate c;
};

// The head_dim --head-dim constrains: MLA's per-head value width (its query/key width adds RoPE).
std::int64_t constrained_head_dim(const AttentionSpec& a) {
  return a.variant == AttentionVariant::mla ? a.v_head_dim : a.head_dim;
}

// The largest batch whose TPOT meets `slo_ms` in [1, cap] (TPOT grows with the batch); 0 when batch 1
// misses it.
std::int64_t batch_within_tpot(const Context& ctx, const Candidate& c, std::int64_t cap, double slo_ms) {
  std::int64_t lo = 0, hi = cap;  // tpot(lo) meets it (lo = 0: none yet), tpot(hi + 1) misses it
  if (serve(ctx, c, cap).tpot_ms <= slo_ms) return cap;
  hi = cap - 1;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (serve(ctx, c, mid).tpot_ms <= slo_ms) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Sizes and serves one candidate: memory, batch, predictions and the SLOs. Returns the rule it fails.
std::optional<Constraint> size_and_serve(const Context& ctx, Evaluated& e) {
  const RecommendOptions& o = ctx.o;
  Candidate& c = e.c;
  const MemoryFit fit = fit_memory(c.spec, c.workload, ctx.profile, o.memory_fraction);
  const KvCacheCounts& kv1 = fit.one_sequence;
  if (o.max_kv_bytes_per_token && kv1.bytes_per_token > *o.max_kv_bytes_per_token) {
    e.reason = "KV cache " + fmt_bytes(double(kv1.bytes_per_token)) + " per token exceeds --max-kv-bytes-per-token " +
               fmt_bytes(double(*o.max_kv_bytes_per_token));
    e.numbers = {{"kv_bytes_per_token", double(kv1.bytes_per_token)}, {"max_bytes", double(*o.max_kv_bytes_per_token)}};
    return Constraint::max_kv_bytes;
  }
  c.weights_bytes_per_gpu = fit.weights_bytes_per_gpu;
  c.kv_bytes_per_seq_per_gpu = fit.kv_bytes_per_seq_per_gpu;
  // A candidate rejected for memory reports what it would need at the asked (or a single) batch.
  c.batch = o.batch.value_or(1);
  c.memory_bytes_per_gpu = fit.bytes_at(c.batch);
  c.headroom_bytes = ctx.memory_budget - c.memory_bytes_per_gpu;
  c.max_batch = fit.batch_within(o.max_batch);
  if (c.max_batch == 0) {
    e.miss = fit.bytes_at(1) / ctx.memory_budget;
    e.reason = "weights " + fmt_bytes(c.weights_bytes_per_gpu) + " + one sequence's KV " + fmt_bytes(fit.kv_bytes_per_seq_on_gpu) +
               " exceed " + fmt_bytes(ctx.memory_budget) + " per GPU";
    e.numbers = {{"needed_bytes", fit.bytes_at(1)}, {"available_bytes", ctx.memory_budget}};
    return Constraint::memory;
  }
  c.batch_capped = c.max_batch == o.max_batch;
  // The engine schedules at most max_num_seqs per step (per rank under attention data parallel).
  const std::int64_t schedulers = c.workload.dp_attention ? c.workload.tp : 1;
  const std::int64_t engine_cap = o.engine.max_num_seqs > 0 ? o.engine.max_num_seqs * schedulers : 0;
  if (o.batch) {
    if (*o.batch > c.max_batch) {
      e.miss = fit.bytes_at(*o.batch) / ctx.memory_budget;
      e.reason = "batch " + std::to_string(*o.batch) + " needs " + fmt_bytes(fit.bytes_at(*o.batch)) + " per GPU; " +
                 fmt_bytes(ctx.memory_budget) + " available (at most " + std::to_string(c.max_batch) + " fit)";
      e.numbers = {{"needed_bytes", fit.bytes_at(*o.batch)}, {"available_bytes", ctx.memory_budget},
                   {"max_batch", double(c.max_batch)}};
      return Constraint::batch;
    }
    c.batch = *o.batch;
    c.served.batch_limit = "asked";
  } else {
    c.batch = c.max_batch;
    c.served.batch_limit = c.batch_capped ? "max-batch" : "memory";
    if (engine_cap > 0 && engine_cap < c.batch) {
      c.batch = engine_cap;
      c.served.batch_limit = "engine";
    }
  }
  c.memory_bytes_per_gpu = fit.bytes_at(c.batch);
  // Replicated KV heads: each GPU holds a whole head where an even split would hold 1/tp of them.
  if (kv1.replication > 1 && c.spec.attention.variant != AttentionVariant::mla)
    c.replication_bytes = double(c.batch) * (c.kv_bytes_per_seq_per_gpu - double(kv1.bytes_total) / double(c.workload.tp));
  c.headroom_bytes = ctx.memory_budget - c.memory_bytes_per_gpu;

  // The SLOs: one request alone must meet both; the batch is the largest whose TPOT meets --tpot-ms.
  const ServingTimes one = serve(ctx, c, 1);
  if (o.ttft_ms && one.ttft_ms > *o.ttft_ms) {
    e.reason = "TTFT " + fmt_ms(one.ttft_ms) + " for one " + std::to_string(o.workload.context) + "-token prompt misses --ttft-ms " +
               fmt_ms(*o.ttft_ms);
    e.numbers = {{"ttft_ms", one.ttft_ms}, {"slo_ms", *o.ttft_ms}};
    e.miss = one.ttft_ms / *o.ttft_ms;
    return Constraint::ttft_slo;
  }
  if (o.tpot_ms) {
    if (one.tpot_ms > *o.tpot_ms) {
      e.reason = "TPOT " + fmt_ms(one.tpot_ms) + " at batch 1 misses --tpot-ms " + fmt_ms(*o.tpot_ms);
      e.numbers = {{"tpot_ms", one.tpot_ms}, {"slo_ms", *o.tpot_ms}};
      e.miss = one.tpot_ms / *o.tpot_ms;
      return Constraint::tpot_slo;
    }
    if (!o.batch) {
      const std::int64_t b = batch_within_tpot(ctx, c, c.batch, *o.tpot_ms);
      if (b < c.batch) {
        c.batch = b;
        c.served.batch_limit = "tpot";
        c.memory_bytes_per_gpu = fit.bytes_at(c.batch);
        c.headroom_bytes = ctx.memory_budget - c.memory_bytes_per_gpu;
        if (kv1.replication > 1 && c.spec.attention.variant != AttentionVariant::mla)
          c.replication_bytes = double(c.batch) * (c.kv_bytes_per_seq_per_gpu - double(kv1.bytes_total) / double(c.workload.tp));
      }
    }
  }
  count_and_predict(ctx, c);
  predict_served(ctx, c);
  return std::nullopt;
}

// `refit`: hold the candidate to the budget (fit_budget); a base model's own design keeps its FFN.
Evaluated evaluate(const Context& ctx, ModelSpec spec, bool refit = true) {
  const RecommendOptions& o = ctx.o;
  Evaluated e;
  Candidate& c = e.c;
  c.spec = std::move(spec);
  AttentionSpec& a = c.spec.attention;
  c.workload = served_workload(o, a, o.workload.tp);
  auto reject = [&](Constraint rule, std::string why, std::vector<std::pair<std::string, double>> numbers = {}) {
    e.verdict = Verdict::rejected;
    e.constraint = rule;
    e.reason = std::move(why);
    e.numbers = std::move(numbers);
    return e;
  };
  if (refit && !fit_budget(c.spec, ctx.shape.budget))
    return reject(Constraint::budget, "attention parameters leave no room for an FFN within the " + billions(double(ctx.shape.budget)) +
                  " budget", {{"budget_params", double(ctx.shape.budget)}});
  if (o.head_dim && constrained_head_dim(a) != *o.head_dim)
    return reject(Constraint::head_dim, "head_dim " + std::to_string(constrained_head_dim(a)) + " is not --head-dim " +
                  std::to_string(*o.head_dim), {{"head_dim", double(constrained_head_dim(a))}, {"asked", double(*o.head_dim)}});
  if (a.variant != AttentionVariant::mla && a.num_kv_heads % o.kv_heads_multiple_of != 0)
    return reject(Constraint::kv_heads_multiple, std::to_string(a.num_kv_heads) + " KV heads are not a multiple of --kv-heads-multiple-of " +
                  std::to_string(o.kv_heads_multiple_of), {{"kv_heads", double(a.num_kv_heads)}, {"multiple_of", double(o.kv_heads_multiple_of)}});
  const double tp = double(o.workload.tp);
  if (!q_heads_split(a, o.workload.tp))
    return reject(Constraint::tp_heads, std::to_string(a.num_q_heads) + " query heads do not divide over tp " + std::to_string(o.workload.tp),
                  {{"q_heads", double(a.num_q_heads)}, {"tp", tp}});
  if (!kv_heads_shard(a, o.workload.tp))
    return reject(Constraint::tp_kv_heads, std::to_string(a.num_kv_heads) + " KV heads neither split over nor replicate across tp " +
                  std::to_string(o.workload.tp), {{"kv_heads", double(a.num_kv_heads)}, {"tp", tp}});
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
                    "'s fast-kernel head_dims" + (kh ? " (it would run padded to " + std::to_string(kh) + ")" : ""),
                    {{"head_dim", double(a.head_dim)}, {"padded_to", double(kh)}});
    const auto& gs = ctx.profile.kernels.group_sizes;
    if (!gs.empty() && std::find(gs.begin(), gs.end(), a.group_size()) == gs.end())
      c.penalties.push_back("group size " + std::to_string(a.group_size()) + " is not among the fast GQA kernel groups");
  }
  c.risk = assess_quality(c.spec);
  // A shape whose counts overflow 64 bits at this context (a window's FLOPs at millions of tokens) is
  // skipped with its reason; the rest of the search goes on.
  try {
    const Evaluated before = e;
    if (const auto failed = size_and_serve(ctx, e)) return reject(*failed, e.reason, e.numbers);
    // MLA under tp: also tensor parallel attention, kept when it serves the objective better.
    if (c.workload.dp_attention && !o.workload.dp_attention) {
      Evaluated tp = before;
      tp.c.workload.dp_attention = false;
      const bool latency = o.objective == Objective::latency;
      if (!size_and_serve(ctx, tp) &&
          (latency ? tp.c.served.request_ms < c.served.request_ms
                   : o.objective == Objective::memory ? tp.c.kv_bytes_per_seq_per_gpu < c.kv_bytes_per_seq_per_gpu
                                                      : tp.c.served.tokens_per_s_per_gpu > c.served.tokens_per_s_per_gpu))
        e = std::move(tp);
    }
  } catch (const InputError& err) {
    return reject(Constraint::uncountable, std::string("cannot be counted: ") + err.what());
  }
  if (c.risk.level > max_risk(o.quality))
    return reject(Constraint::quality, "quality risk " + std::string(to_string(c.risk.level)) + " exceeds --quality " +
                  std::string(to_string(o.quality)) + ": " + c.risk.reason);
  return e;
}

bool wanted(const RecommendOptions& o, AttentionVariant v) {
  return std::find(o.variants.begin(), o.variants.end(), v) != o.variants.end();
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
  if (o.output_len <= 0) throw InputError("--output-len", std::to_string(o.output_len), "must be positive");
  if (o.kv_heads_multiple_of <= 0)
    throw InputError("--kv-heads-multiple-of", std::to_string(o.kv_heads_multiple_of), "must be positive");
  if (o.head_dim && *o.head_dim <= 0) throw InputError("--head-dim", std::to_string(*o.head_dim), "must be positive");
  if (o.max_kv_bytes_per_token && *o.max_kv_bytes_per_token <= 0)
    throw InputError("--max-kv-bytes-per-token", std::to_string(*o.max_kv_bytes_per_token), "must be positive");
  for (const auto& [flag, v] : {std::pair<const char*, std::optional<double>>{"--ttft-ms", o.ttft_ms}, {"--tpot-ms", o.tpot_ms}})
    if (v && !(*v > 0 && std::isfinite(*v))) throw InputError(flag, fmt_fixed(*v, 3), "must be a positive number of milliseconds");
  if (o.objective == Objective::goodput && !o.ttft_ms && !o.tpot_ms)
    throw InputError("--objective", "goodput", "needs a service-level objective: --ttft-ms, --tpot-ms or both");
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
                                                      "not searched: --variants leaves out " + std::string(to_string(variant)), {}});
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
    rejected.push_back({std::move(e.c), e.constraint, std::move(e.reason), std::move(e.numbers)});
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
// rank it would take there: one more than the designs of other classes that beat it by more than the
// expected error.
void rank_base(Recommendation& r, const std::vector<Candidate>& feasible, const std::vector<Candidate>& designs) {
  if (!r.base_design || !r.base_verdict.empty()) return;
  for (const auto& c : feasible)
    if (same_attention(c.spec.attention, r.base_design->spec.attention)) {
      r.base_design = c;  // with its score and Pareto mark
      r.base_rank = 1 + std::count_if(designs.begin(), designs.end(), [&](const Candidate& d) {
                      return d.score * (1 + r.tie_tolerance) < c.score && !same_class(d.spec.attention, c.spec.attention);
                    });
      for (const auto& d : designs)
        if (same_class(d.spec.attention, c.spec.attention)) {
          r.base_class_design = design_label(d.spec.attention);
          r.base_class_rank = d.rank;
          if (same_attention(d.spec.attention, c.spec.attention)) r.base_rank = d.rank;
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
  for (auto& c : feasible) c.precedent_distance = distance_to_shipped(c.spec);
  std::stable_sort(feasible.begin(), feasible.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score < b.score;
    return a.risk.level < b.risk.level;
  });
  std::vector<Candidate> designs = distinct_designs(feasible, r.others);
  r.tie_tolerance = tie_tolerance(designs);
  const bool stated = std::any_of(designs.begin(), designs.end(), [](const Candidate& d) { return d.error > 0; });
  r.tie_basis = stated ? "the expected median error of " + profile.name + "'s predictions"
                    : profile.name + " states no expected error; " + fmt_fixed(defaults::unknown_error * 100, 0) + " % is assumed";
  assign_tiers(designs, r.tie_tolerance);
  // The frontier among the ranked designs, so that every member shows the rank the ranking gives it.
  mark_pareto(designs);
  for (const auto& c : designs)
    if (c.pareto) r.pareto.push_back(c);
  r.designs = static_cast<std::int64_t>(designs.size());
  rank_base(r, feasible, designs);
  explain(r, designs, feasible, rejected);
  return r;
}

}  // namespace mhacfg
