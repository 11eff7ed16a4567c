// The recommender: searches query heads, KV heads, head_dim and projection strategy (MHA, GQA, MQA,
// MLA and its ranks) for a parameter budget, a context length and a device profile; ranks the
// feasible candidates by the objective within the allowed quality risk; explains the choice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhacfg/configurator/inputs/model_input.hpp"
#include "mhacfg/configurator/search/quality.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

enum class Objective { throughput, latency, memory, balanced };
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
  // MLA changes training (decoupled RoPE, latent projections) and needs MLA kernels: it is searched
  // when asked for; otherwise its best design is reported as an alternative.
  std::vector<AttentionVariant> variants = {AttentionVariant::mha, AttentionVariant::gqa, AttentionVariant::mqa};
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

struct Candidate {
  ModelSpec spec;
  ModelCounts counts;        // at the candidate's batch and seq
  ModelTimes at_batch;       // decode at `batch`
  ModelTimes single;         // prefill of one sequence of seq tokens, decode at batch 1
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
  bool pareto = false;                 // on the memory / decode time / risk frontier
  std::int64_t rank = 0;
  std::vector<std::string> rationale;
};

struct Rejection {
  std::string design;  // e.g. "gqa 32q/8kv x 80"
  std::string reason;
};

struct Recommendation {
  RecommendOptions options;
  Shape shape;
  Profile profile;
  std::vector<Candidate> ranked;   // the top K feasible candidates, best first
  std::vector<Candidate> pareto;   // the frontier (may overlap ranked)
  std::vector<Rejection> rejected; // notable alternatives and why they lost or failed
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
};

// Throws InputError for invalid options; returns with ranked empty and `closest` set when nothing is
// feasible (the CLI maps that to exit 1).
Recommendation recommend(const RecommendOptions& o, const Profile& profile);

}  // namespace mhacfg
