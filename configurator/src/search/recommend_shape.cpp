// The shape rule of `recommend --params`: d_model and depth for a budget, fitted to shipped models
// (precedents.hpp), and the Llama-style baseline each candidate's FFN is sized against.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "mhacfg/configurator/search/precedents.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "recommend_internal.hpp"

namespace mhacfg {

namespace {

constexpr std::int64_t kMaxSearchDModel = 65536;  // the largest d_model searched, given or derived

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

namespace {

// The shape of the model given with --hf-config or --model: its d_model and depth, its parameters the budget
// unless --params is given.
Shape shape_of_base(const RecommendOptions& o) {
  Shape s;
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

// --d-model and --layers as given; the budget is --params or a Llama-style MHA baseline of that shape.
Shape shape_as_given(const RecommendOptions& o) {
  Shape s;
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

// The depth whose baseline at d_model comes closest (in log) to the budget p: the baseline's total grows
// with depth, so it is one of the two around where it crosses p, found by bisection (a count per
// step, not one per depth), between 2 layers and four times the fitted depth.
std::int64_t closest_depth(std::int64_t d_model, std::int64_t fitted, std::int64_t vocab, double p) {
  const auto total_at = [&](std::int64_t l) { return double(count_params(baseline(d_model, l, vocab)).total); };
  std::int64_t lo = 2, hi = std::min<std::int64_t>(4 * fitted + 8, kMaxLayers);
  if (total_at(hi) <= p) lo = hi;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (total_at(mid) <= p ? lo : hi) = mid;
  }
  return lo == hi || std::fabs(std::log(total_at(lo) / p)) <= std::fabs(std::log(total_at(hi) / p)) ? lo : hi;
}

// The shape rule of --params: shipped models' d_model and depth for the budget, rounded to widths
// that split over tensor parallelism.
Shape shape_for_budget(const RecommendOptions& o) {
  Shape s;
  // Shipped models' shape (precedents.hpp): d_model and depth fitted against size, d_model rounded to
  // a width whose heads of 128 divide over --tp and over the tp degrees usual at that size (8 from
  // 4096 up, 4 from 2048, 2 from 1024), layers as fitted; the FFN width holds the budget.
  const ShapeLaw& law = shape_law();
  const double p = double(*o.params);
  const double d_fit = law.d_model(p);
  const std::int64_t usual = d_fit >= 4096 ? 8 : d_fit >= 2048 ? 4 : d_fit >= 1024 ? 2 : 1;
  const std::int64_t unit = 128 * std::lcm(usual, o.workload.tp);
  s.d_model = std::clamp<std::int64_t>(std::llround(d_fit / double(unit)), 1, kMaxSearchDModel / unit) * unit;
  if (double(s.d_model) < d_fit && std::fabs(std::log(double(s.d_model + unit) / d_fit)) < std::fabs(std::log(double(s.d_model) / d_fit)) &&
      s.d_model + unit <= kMaxSearchDModel)
    s.d_model += unit;
  // Depth in fours from 16 layers (pipeline stages of 2 and 4 split it evenly).
  const double l_fit = law.layers(p);
  s.layers = l_fit >= 16 ? std::llround(l_fit / 4) * 4 : std::max<std::int64_t>(2, std::llround(l_fit));
  // The FFN the budget leaves at that depth, against the 8/3 d_model of the Llama baseline: outside 2-6
  // d_model the depth moves to the one whose baseline comes closest to the budget.
  const ModelSpec b = baseline(s.d_model, s.layers, o.vocab);
  const std::int64_t base_total = count_params(b).total;
  const double per_layer_ffn = 3.0 * double(s.d_model);  // gated: gate, up, down
  const double ffn = double(b.ffn.ffn_dim) + (p - double(base_total)) / (double(s.layers) * per_layer_ffn);
  std::string depth_note = l_fit >= 16 ? "layers as fitted, in fours" : "layers as fitted";
  if (ffn < 2.0 * double(s.d_model) || ffn > 6.0 * double(s.d_model)) {
    const std::int64_t best = closest_depth(s.d_model, s.layers, o.vocab, p);
    depth_note = "layers moved from the fitted " + std::to_string(s.layers) + " to " + std::to_string(best) +
                 " to keep the FFN within 2-6 d_model";
    s.layers = best;
  }
  s.budget = *o.params;
  s.rule = "d_model " + std::to_string(s.d_model) + " and " + std::to_string(s.layers) + " layers from shipped dense models' shape (" +
           law.text() + "): d_model " + fmt_fixed(d_fit, 0) + " fitted, rounded to a multiple of " + std::to_string(unit) +
           " (heads of 128 over tp " + std::to_string(std::lcm(usual, o.workload.tp)) + "), " + depth_note + " (fitted " +
           fmt_fixed(law.layers(p), 1) + "); vocab " + std::to_string(o.vocab) + ", untied, gated FFN; each candidate's FFN width "
           "absorbs the rest of the " + billions(p) + " budget";
  return s;
}

}  // namespace

Shape derive_shape(const RecommendOptions& o) {
  if (o.base) return shape_of_base(o);
  if (o.d_model.has_value() != o.layers.has_value())
    throw InputError(o.d_model ? "--layers" : "--d-model", "(missing)", "--d-model and --layers go together");
  if (o.d_model) return shape_as_given(o);
  if (!o.params) throw InputError("--params", "(missing)", "give --params N, or --d-model D --layers L");
  return shape_for_budget(o);
}

}  // namespace mhacfg
