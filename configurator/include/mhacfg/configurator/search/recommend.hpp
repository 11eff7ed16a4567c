// The recommender: searches query heads, KV heads, head_dim and projection strategy (MHA, GQA, MQA,
// MLA and its ranks) for a parameter budget, a context length and a device profile; ranks the
// feasible candidates by the objective within the allowed quality risk; explains the choice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/configurator/inputs/model_input.hpp"
#include "mhacfg/configurator/search/quality.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

// Every objective is per GPU and as the engine serves it (docs/commands.md "recommend"):
//   throughput: output tokens/s per GPU at the largest batch memory, the engine and the SLOs allow;
//   latency:    one request alone: TTFT of a --context prompt + (--output-len - 1) x TPOT;
//   memory:     KV cache per sequence per GPU (as each GPU holds it: replicated or data-parallel);
//   balanced:   geometric mean of throughput and latency, each relative to the best (KV counts once,
//               through the batch it allows);
//   goodput:    throughput counting only requests that meet --ttft-ms and --tpot-ms (needs one).
enum class Objective { throughput, latency, memory, balanced, goodput };
Objective parse_objective(std::string_view name);
std::string_view to_string(Objective o);

struct RecommendOptions {
  std::optional<std::int64_t> params;  // total parameter budget
  std::optional<std::int64_t> d_model;
  std::optional<std::int64_t> layers;
  // The deployment: sequences of `context` tokens, each prefilled whole (prompt_len = context), the
  // tensor-parallel degree and the KV, weight and state dtypes. Its batch is each candidate's own.
  Workload workload = Workload{}.serving(defaults::context);
  std::string target = defaults::target;
  std::optional<std::int64_t> batch;    // default: the largest batch that fits
  Objective objective = Objective::balanced;
  QualityTolerance quality = QualityTolerance::conservative;
  // All four are searched: each changes training as much as the others. MLA is served as engines serve
  // it: attention data parallel across the tp ranks when tp > 1.
  std::vector<AttentionVariant> variants = {AttentionVariant::mha, AttentionVariant::gqa, AttentionVariant::mqa,
                                            AttentionVariant::mla};
  // The serving engine whose overheads (other ops, kernel gaps, step and request costs, max batch)
  // every prediction carries; "none": kernels only.
  EngineModel engine = load_engine(kDefaultEngine);
  std::int64_t output_len = defaults::output_len;  // tokens a request generates (the latency objective, the SLOs)
  // Service-level objectives: a design whose single request misses one is rejected; the batch is the
  // largest whose TPOT meets --tpot-ms.
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  // Constraints users ask for: one head_dim, KV heads a multiple of N (MLA: not applicable), at most
  // this many KV bytes per token (all layers, the KV dtype).
  std::optional<std::int64_t> head_dim;
  std::int64_t kv_heads_multiple_of = 1;
  std::optional<std::int64_t> max_kv_bytes_per_token;
  int top = 5;
  double memory_fraction = defaults::memory_fraction;  // of the device memory for weights + KV cache
  std::int64_t vocab = CustomDefaults::vocab_size;
  std::int64_t max_batch = defaults::max_batch;  // the batch search stops here
  // > 0: every candidate is evaluated dense and with sparse attention, an indexer (the model's widths, else
  // 64 heads of 128) choosing each query's top index_topk keys.
  std::int64_t index_topk = 0;
  // A model (--hf-config, --model) whose attention is searched: d_model, layers, vocabulary, FFN or
  // experts, norms and layer windows are its own, the budget its parameter count unless --params
  // says otherwise, and its own attention design is evaluated beside the candidates.
  std::optional<ModelSpec> base;
  // Windows on the softmax layers of every candidate (the base model's, or the baseline's): a sliding
  // window or chunks on every layer, every N-th global (as analyze's flags).
  LayerPatternFlags layer_pattern;
};

// How d_model and layers were chosen, and how the budget is held.
struct Shape {
  std::int64_t d_model = 0;
  std::int64_t layers = 0;
  std::int64_t budget = 0;  // parameters every candidate is held to (the FFN width absorbs the rest:
                            // the experts' width in a model with MoE layers)
  std::string rule;         // sentence stating the rule and the numbers
};
Shape derive_shape(const RecommendOptions& o);

// A candidate as the engine serves it (predict_serving, continuous batching): one request alone, and
// the batch it is served at.
struct Served {
  double ttft_ms = 0;              // one --context prompt: prefill + the engine's request cost
  double tpot_ms = 0;              // batch 1
  double request_ms = 0;           // ttft + (output_len - 1) tpot
  double tpot_at_batch_ms = 0;     // at `batch`, with the prefills that join each step
  double tokens_per_s_per_gpu = 0; // at `batch`
  std::int64_t gpus = 1;
  std::string batch_limit;         // what stops the batch: "memory", "engine", "tpot", "max-batch", "asked"
};

struct Candidate {
  ModelSpec spec;
  Workload workload;         // as served: --tp, and attention data parallel for MLA when tp > 1
  ModelCounts counts;        // of one sequence at the context (the batch's memory: memory_bytes_per_gpu)
  ModelTimes at_batch;       // decode at `batch` (kernels)
  ModelTimes single;         // prefill of one sequence of seq tokens, decode at batch 1 (kernels)
  Served served;
  std::int64_t batch = 0;
  std::int64_t max_batch = 0;
  bool batch_capped = false;  // max_batch stopped at options.max_batch
  double weights_bytes_per_gpu = 0;
  double kv_bytes_per_seq_per_gpu = 0;
  double memory_bytes_per_gpu = 0;  // weights + KV at `batch`
  double headroom_bytes = 0;        // memory budget minus memory_bytes_per_gpu
  double replication_bytes = 0;     // extra KV memory from replicated KV heads under TP
  QualityRisk risk;
  std::vector<std::string> penalties;  // kernel padding and other visible penalties
  double score = 0;                    // lower is better
  double error = 0;                    // the expected error of its prediction (median APE, fraction)
  bool pareto = false;                 // on the memory / decode time / risk frontier
  std::int64_t rank = 0;               // its tier: designs within the expected error of each other share it
  bool tied = false;                   // another design shares its rank
  double precedent_distance = 0;       // to the nearest shipped design (the order inside a tier)
  std::vector<std::string> rationale;
};

// The rules a candidate can fail.
enum class Constraint {
  budget,        // the attention leaves no room for an FFN within the parameter budget
  tp_heads,      // query heads do not divide over --tp
  tp_kv_heads,   // KV heads neither split over nor replicate across --tp
  mla_kernels,   // the target lists no MLA kernels
  kernel_head_dim,  // head_dim is not among the target's fast-kernel head_dims
  head_dim,      // --head-dim asks for another
  kv_heads_multiple,  // --kv-heads-multiple-of
  max_kv_bytes,  // --max-kv-bytes-per-token
  memory,        // weights and one sequence's KV exceed the memory per GPU
  batch,         // the asked batch does not fit
  ttft_slo,      // one request's TTFT misses --ttft-ms
  tpot_slo,      // TPOT at batch 1 misses --tpot-ms
  quality,       // the quality risk exceeds --quality
  uncountable,   // a count overflows 64 bits at this shape and context
  not_searched,  // feasible, but --variants leaves its variant out
  outranked,     // not a rejection: its variant's best design, ranked below the top K (it is in `ranked`)
};
std::string_view to_string(Constraint c);

struct Rejection {
  std::string design;  // e.g. "gqa 32q/8kv x 80"
  Constraint constraint = Constraint::budget;
  std::string reason;
  // The numbers of the rule: e.g. {"needed_bytes": .., "available_bytes": ..}, {"ttft_ms": .., "slo_ms": ..}.
  std::vector<std::pair<std::string, double>> numbers;
  bool notable = false;  // one of the alternatives the explanation lists
};

struct Recommendation {
  RecommendOptions options;
  Shape shape;
  Profile profile;
  std::vector<Candidate> ranked;   // every design (one per variant, head_dim, MLA ranks), best first;
                                   // the top K (--top) carry rationales and fill the table
  std::vector<Candidate> others;   // every other feasible candidate (other head counts of a ranked design)
  std::vector<Candidate> pareto;   // the frontier (may overlap ranked)
  std::vector<Rejection> rejected; // every rejected candidate with its rule and numbers, the notable first
                                   // (with each variant's best design when it is ranked below the top K)
  double tie_tolerance = 0;        // designs whose scores differ by less share a rank
  std::string tie_basis;           // where the tolerance comes from
  std::int64_t evaluated = 0;      // candidates evaluated
  std::int64_t feasible = 0;
  std::int64_t designs = 0;        // distinct designs (variant, head_dims, MLA ranks) among the feasible
  // Set when nothing is feasible: the closest candidate and how far it misses.
  std::optional<Candidate> closest;
  std::string closest_miss;
  // With options.base: its own attention, evaluated like a candidate (its FFN as it is). base_rank is
  // its place in the design ranking (0: not ranked) and base_verdict says why it is not.
  std::optional<Candidate> base_design;
  std::int64_t base_rank = 0;
  std::string base_verdict;
  // The ranked design of its class (variant, head_dims, MLA ranks) and that design's rank: the base
  // itself, or other head counts of the class that score better.
  std::string base_class_design;
  std::int64_t base_class_rank = 0;
  // Where the base is not in the top tier: what beats it beyond the expected error, with numbers and
  // risk ("" when it is in the top tier or not ranked).
  std::string base_beaten_by;
};

// Throws InputError for invalid options; returns with ranked empty and `closest` set when nothing is
// feasible (the CLI maps that to exit 1).
Recommendation recommend(const RecommendOptions& o, const Profile& profile);

}  // namespace mhacfg
