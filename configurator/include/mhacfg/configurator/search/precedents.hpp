// The precedent table: released decoder LLMs and their attention designs (configurator/data/precedents.json,
// compiled in), and what the quality risk and the shape rule ask of it: the nearest shipped design, the
// envelope of designs shipped at a design's scale, and d_model and depth fitted against size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

struct Precedent {
  std::string name;   // "Llama-3-8B"
  std::string hf_id;  // "meta-llama/Meta-Llama-3-8B"
  int year = 0;       // release year; 0 where not checked
  bool moe = false;
  double params_total = 0;
  double params_active = 0;  // MoE: parameters used per token; 0 where no figure was read
  std::int64_t d_model = 0;
  std::int64_t layers = 0;
  std::int64_t num_q_heads = 0;
  std::int64_t num_kv_heads = 0;  // MLA: the logical heads (= num_q_heads)
  std::int64_t head_dim = 0;      // Q/K width; MLA: qk_nope_head_dim + rope_head_dim
  std::int64_t v_head_dim = 0;
  AttentionVariant variant = AttentionVariant::mha;
  std::int64_t kv_lora_rank = 0;  // MLA only
  std::int64_t q_lora_rank = 0;   // MLA only; 0: queries projected from d_model
  std::int64_t rope_head_dim = 0; // MLA only
  std::int64_t index_topk = 0;    // sparse attention's keys per query; 0: dense
  std::int64_t context = 0;       // max_position_embeddings; 0 where the config gives none
  std::string config_source;      // the Hub config.json and the copy read
  std::string params_source;      // where params_total was read

  // "gqa 32q/8kv x 128" or "mla 128q/latent 512+64 x 192/128".
  std::string design() const;
};

// Every precedent, in the file's order. Parsed once; a malformed table is an invariant failure.
const std::vector<Precedent>& precedents();

// What the evidence is about, for a design or a precedent. KV capacity is the per-layer cache per
// token relative to the residual width: K and V widths of the KV heads (num_kv_heads x (head_dim +
// v_head_dim)) or MLA's latent and RoPE key (kv_lora_rank + rope_head_dim), over d_model. Query
// heads enter only through group_size, which no rule rates (see docs/quality-risk.md).
struct DesignPoint {
  double params = 0;  // total parameters
  AttentionVariant variant = AttentionVariant::mha;
  double kv_ratio = 0;
  std::int64_t head_dim = 0;
  std::int64_t group_size = 1;
  std::int64_t index_topk = 0;
};
DesignPoint design_point(const ModelSpec& m);  // params from count_params
DesignPoint design_point(const Precedent& p);

// The distance from a design to a precedent, in "doublings":
//   |log2(params / p.params)| + |log2(kv_ratio / p.kv_ratio)| + |log2(head_dim / p.head_dim)|
//   + 1 if the variants differ + 2 more if one is MLA and the other not (a latent is not a head count).
// A factor of two in size, KV capacity or head width each count one.
double precedent_distance(const DesignPoint& d, const Precedent& p);
// The closest precedent by that distance (ties: the earlier row). Never null: the table is not empty.
const Precedent* nearest_precedent(const ModelSpec& m);
const Precedent& nearest_precedent(const DesignPoint& d);

// The designs shipped at a design's scale: precedents of its family (MLA, or the head-sharing
// variants MHA/GQA/MQA) with total parameters in [P / w, P x w], P the design's total to two significant
// figures (candidates of one budget share a band), w = 2 and doubled until
// at least kMinEnvelopeMembers models fall inside (or the whole family does). Its bounds are the
// least KV capacity, the largest group, the narrowest and widest head_dim and (sparse designs) the
// fewest keys per query those models ship.
constexpr std::size_t kMinEnvelopeMembers = 3;
// The envelope's KV bound: the least KV capacity that at least this share of its members, and at least
// kMinSupport of them, ship at or below (common practice rather than the leanest single model).
constexpr double kCommonPracticeShare = 0.1;
constexpr std::size_t kMinSupport = 2;
struct Envelope {
  double params_lo = 0;
  double params_hi = 0;
  std::vector<const Precedent*> members;
  const Precedent* least_kv = nullptr;  // the member at the KV bound (see kCommonPracticeShare)
  double min_kv_ratio = 0;
  std::size_t kv_support = 0;  // how many of the kv_sample models nearest in size ship at or below the bound
  std::size_t kv_sample = 0;
  std::int64_t max_group_size = 0;
  std::int64_t min_head_dim = 0;
  std::int64_t max_head_dim = 0;
  std::int64_t min_index_topk = 0;  // over the family's sparse precedents, any scale; 0: none shipped
};
Envelope envelope_at(const DesignPoint& d);
// KV capacity at or above the envelope's least, group size at most its largest, head_dim within its
// range and, for a sparse design, at least the fewest keys per query shipped.
bool inside_envelope(const DesignPoint& d);
bool inside_envelope(const ModelSpec& m);

// d_model and depth against total parameters, fitted by least squares in log-log space to the dense
// precedents (MoE rows left out: their totals count experts): log d_model = a + b log params, log layers = c + e log params.
struct ShapeLaw {
  std::size_t n = 0;  // dense models fitted
  double d_model_log_intercept = 0, d_model_log_slope = 0;
  double layers_log_intercept = 0, layers_log_slope = 0;
  // Median of |log(actual / fitted)| over the fitted models, as a factor (1.2 = within 20 %).
  double d_model_median_factor = 1, layers_median_factor = 1;

  double d_model(double params) const;
  double layers(double params) const;
  std::string text() const;  // "d_model = 0.48 x P^0.33 ..., fitted to N dense models"
};
const ShapeLaw& shape_law();

}  // namespace mhacfg
