#include "mhacfg/costmodel/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/predict.hpp"

namespace mhacfg {

FitSpec matrix_fit_spec(bool warm_cache, bool head_width) {
  FitSpec s;
  s.cache = warm_cache;
  s.stream_exponent = true;
  s.rows_half = true;
  s.head_dim_scale = head_width;
  return s;
}

FitSpec fit_spec_for(const OpClass& op_class, bool warm_cache) {
  FitSpec spec;
  for_each_op([&](auto tag) {
    using Op = typename decltype(tag)::type;
    if (Op::kind == op_class.op) spec = Op::fit_spec(op_class, warm_cache);
  });
  return spec;
}

FitSpec fit_spec_for(const std::string& op_class, bool warm_cache) {
  const std::optional<OpClass> c = OpClass::parse(op_class);
  if (!c) throw InputError("op class", op_class, "is not an op class (e.g. attention/decode, gemm)");
  return fit_spec_for(*c, warm_cache);
}

OpFeatures record_features(const MeasurementRecord& r, const CpuKernelFacts& facts) { return r.features(facts); }

namespace {
// What makes two records one shape: the record without its time (record_to_json writes every field the
// fit reads, with the backend and device).
std::string shape_key(const MeasurementRecord& r) {
  nlohmann::json j = record_to_json(r);
  j.erase("time_ms");
  return j.dump();
}

bool fitted(const MeasurementRecord& r) { return !std::holds_alternative<AttentionBlockOp>(r.shape); }

// The records grouped by shape, in the order each shape first appears.
std::vector<std::vector<const MeasurementRecord*>> by_shape(const std::vector<const MeasurementRecord*>& records) {
  std::vector<std::vector<const MeasurementRecord*>> groups;
  std::map<std::string, std::size_t> index;
  for (const auto* r : records) {
    const auto [it, added] = index.emplace(shape_key(*r), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

// The median of a shape's records' times, in seconds (one record: its own time).
double median_seconds(const std::vector<const MeasurementRecord*>& group) {
  std::vector<double> t;
  for (const auto* r : group) t.push_back(*r->time_ms);
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) * 1e-3;
}
}  // namespace

std::int64_t repeated_shapes(const std::vector<MeasurementRecord>& records) {
  std::vector<const MeasurementRecord*> fit;
  for (const auto& r : records)
    if (fitted(r)) fit.push_back(&r);
  return static_cast<std::int64_t>(fit.size() - by_shape(fit).size());
}

ErrorStats error_stats(std::vector<double> ape) {
  ErrorStats s;
  s.n = static_cast<std::int64_t>(ape.size());
  if (ape.empty()) return s;
  std::sort(ape.begin(), ape.end());
  auto quantile = [&](double q) {  // linear interpolation between order statistics
    const double pos = q * double(ape.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, ape.size() - 1);
    return ape[lo] + (ape[hi] - ape[lo]) * (pos - double(lo));
  };
  s.median_ape = quantile(0.5);
  s.p90_ape = quantile(0.9);
  s.max_ape = ape.back();
  return s;
}

namespace {

// The free parameters as a vector of logs (all parameters are positive scales).
struct Layout {
  std::vector<double OpModel::*> fields;
};

Layout layout(const FitSpec& s) {
  Layout l;
  if (s.t0) l.fields.push_back(&OpModel::t0_s);
  if (s.peak) l.fields.push_back(&OpModel::peak_flop_per_s);
  if (s.bw) l.fields.push_back(&OpModel::bw_bytes_per_s);
  if (s.half_streams) l.fields.push_back(&OpModel::half_streams);
  if (s.head_dim_scale) l.fields.push_back(&OpModel::head_dim_scale);
  if (s.causal_factor) l.fields.push_back(&OpModel::causal_factor);
  if (s.slots) l.fields.push_back(&OpModel::slots);
  if (s.stream_exponent) l.fields.push_back(&OpModel::stream_exponent);
  if (s.rows_half) l.fields.push_back(&OpModel::rows_half);
  if (s.cache) {
    l.fields.push_back(&OpModel::cache_bytes);
    l.fields.push_back(&OpModel::cache_bw_bytes_per_s);
  }
  if (s.softmax) l.fields.push_back(&OpModel::softmax_rate);
  if (s.load) l.fields.push_back(&OpModel::load_rate);
  if (s.combine) l.fields.push_back(&OpModel::combine_excess);
  if (s.miss) l.fields.push_back(&OpModel::miss_slowdown);
  if (s.masked) l.fields.push_back(&OpModel::masked_weight);
  if (s.tiles) l.fields.push_back(&OpModel::tile_rate);
  if (s.skinny) l.fields.push_back(&OpModel::skinny_rate);
  if (s.widen) l.fields.push_back(&OpModel::widen_rate);
  return l;
}

// Ceilings the fitted rates may not exceed: the datasheet's peak FLOP/s and bandwidth (+10 % for
// rounding) when caches are flushed between calls (GPU timings). CPU profiles measure their own
// ceilings, noisily, and fit rates that are marginal costs (caches and prefetch push a decode kernel
// above a plain read loop): there the caps are 2 x the measured GEMM rate and 4 x the read rate.
// 0 = no cap.
struct Caps {
  double peak = 0;
  double bw = 0;
  double combine = 0;  // k - 1
};

OpModel apply(OpModel m, const Layout& l, const std::vector<double>& theta, const Caps& caps) {
  for (std::size_t i = 0; i < l.fields.size(); ++i) m.*(l.fields[i]) = std::exp(std::clamp(theta[i], -80.0, 80.0));
  if (caps.peak > 0) m.peak_flop_per_s = std::min(m.peak_flop_per_s, caps.peak);
  if (caps.bw > 0) m.bw_bytes_per_s = std::min(m.bw_bytes_per_s, caps.bw);
  if (caps.combine > 0) m.combine_excess = std::min(m.combine_excess, caps.combine);
  return within_limits(m);  // what a profile file may hold, so a fitted profile always loads back
}

struct Sample {
  OpFeatures f;
  double seconds;
};

double cost(const OpModel& m, const std::vector<Sample>& xs, std::vector<double>* residuals) {
  double c = 0;
  if (residuals) residuals->resize(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double p = predict_seconds(m, xs[i].f);
    const double r = (p > 0 && std::isfinite(p)) ? std::log(p / xs[i].seconds) : 50.0;
    if (residuals) (*residuals)[i] = r;
    c += r * r;
  }
  return c;
}

// Solves A x = b for a small dense system (Gaussian elimination with partial pivoting).
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const std::size_t n = b.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t p = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::fabs(a[i][k]) > std::fabs(a[p][k])) p = i;
    if (std::fabs(a[p][k]) < 1e-300) return false;
    std::swap(a[k], a[p]);
    std::swap(b[k], b[p]);
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = a[i][k] / a[k][k];
      for (std::size_t j = k; j < n; ++j) a[i][j] -= f * a[k][j];
      b[i] -= f * b[k];
    }
  }
  x.assign(n, 0);
  for (std::size_t k = n; k-- > 0;) {
    double s = b[k];
    for (std::size_t j = k + 1; j < n; ++j) s -= a[k][j] * x[j];
    x[k] = s / a[k][k];
  }
  return true;
}

// Levenberg-Marquardt in log-parameter space with a numerical Jacobian.
std::vector<double> levenberg_marquardt(const OpModel& base, const Layout& l, const Caps& caps,
                                        std::vector<double> theta, const std::vector<Sample>& xs, double& final_cost) {
  const std::size_t n = theta.size(), m = xs.size();
  std::vector<double> r;
  double c = cost(apply(base, l, theta, caps), xs, &r);
  double lambda = 1e-3;
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<std::vector<double>> jac(m, std::vector<double>(n));
    for (std::size_t k = 0; k < n; ++k) {
      std::vector<double> t = theta;
      constexpr double h = 1e-5;
      t[k] += h;
      std::vector<double> rk;
      cost(apply(base, l, t, caps), xs, &rk);
      for (std::size_t i = 0; i < m; ++i) jac[i][k] = (rk[i] - r[i]) / h;
    }
    std::vector<std::vector<double>> jtj(n, std::vector<double>(n, 0));
    std::vector<double> jtr(n, 0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t a = 0; a < n; ++a) {
        jtr[a] += jac[i][a] * r[i];
        for (std::size_t b = 0; b < n; ++b) jtj[a][b] += jac[i][a] * jac[i][b];
      }
    bool improved = false;
    for (int tries = 0; tries < 12 && !improved; ++tries) {
      std::vector<std::vector<double>> a = jtj;
      std::vector<double> rhs(n);
      for (std::size_t k = 0; k < n; ++k) {
        a[k][k] += lambda * (jtj[k][k] + 1e-12);
        rhs[k] = -jtr[k];
      }
      std::vector<double> delta;
      if (!solve(a, rhs, delta)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> t = theta;
      for (std::size_t k = 0; k < n; ++k) t[k] += std::clamp(delta[k], -3.0, 3.0);
      std::vector<double> rt;
      const double ct = cost(apply(base, l, t, caps), xs, &rt);
      if (ct < c) {
        const double gain = c - ct;
        theta = t;
        r = rt;
        c = ct;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (gain < 1e-12 * (1 + c)) iter = 1000;  // converged
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  final_cost = c;
  return theta;
}

struct Fitted {
  OpModel model;
  double cost = std::numeric_limits<double>::infinity();
};

Fitted fit_samples(const std::vector<Sample>& xs, const FitSpec& requested, const SpecCeilings& ceilings, DType dtype,
                   double row_block) {
  // Initial guesses from the data: the best observed rates, the smallest time.
  double peak = 0, bw = 0, tmin = std::numeric_limits<double>::infinity();
  for (const auto& x : xs) {
    peak = std::max(peak, x.f.flop / x.seconds);
    bw = std::max(bw, x.f.bytes / x.seconds);
    tmin = std::min(tmin, x.seconds);
  }
  FitSpec spec = requested;
  // One CPU thread: any shape fills it and there are no waves, so the fill and span terms have
  // nothing to fit (and would overfit).
  if (spec.cache && ceilings.compute_units <= 1) spec.half_streams = spec.stream_exponent = spec.slots = false;
  // Fewer records than parameters: fit the scales only.
  const Layout full = layout(spec);
  if (xs.size() < full.fields.size() + 2)
    spec.head_dim_scale = spec.causal_factor = spec.slots = spec.half_streams = spec.stream_exponent = spec.rows_half =
        spec.cache = spec.softmax = spec.load = spec.combine = spec.miss = spec.masked = spec.tiles = spec.skinny = spec.widen = false;
  const Layout l = layout(spec);
  OpModel base;
  base.bw_bytes_per_s = spec.bw ? bw : (ceilings.mem_bw_bytes_per_s > 0 ? ceilings.mem_bw_bytes_per_s : bw * 4);
  if (!spec.bw && !(spec.bw_ceiling && ceilings.mem_bw_bytes_per_s > 0))
    base.bw_bytes_per_s = std::max(base.bw_bytes_per_s, bw * 4);  // memory term negligible unless fitted
  const double units = ceilings.compute_units > 0 ? double(ceilings.compute_units) : 16.0;
  Caps caps;
  // The records' dtype's peak (its matmul rate: fp8-block's is fp8's, int4's bf16's), else the largest listed.
  const auto peak_it = ceilings.peak_flop_per_s.find(std::string(to_string(compute_dtype(dtype))));
  double peak_spec = peak_it != ceilings.peak_flop_per_s.end() ? peak_it->second : 0.0;
  if (peak_spec == 0)
    for (const auto& [name, v] : ceilings.peak_flop_per_s) peak_spec = std::max(peak_spec, v);
  caps.peak = (spec.cache ? 2.0 : 1.1) * peak_spec;
  if (ceilings.mem_bw_bytes_per_s > 0) caps.bw = (spec.cache ? 4.0 : 1.1) * ceilings.mem_bw_bytes_per_s;
  caps.combine = spec.combine_max;

  // Compute and memory phases either overlap (max) or not (sum): each class gets the better fit.
  Fitted best;
  // Starts: both overlap modes, three rate scales, two span slot counts, and for the cache term
  // three capacities (the LM step is local; kinks of max() and min() need several starts).
  const std::vector<double> caches = spec.cache ? std::vector<double>{16e6, 64e6, 256e6} : std::vector<double>{0};
  for (bool overlap : {false, true})
    for (double scale : {1.0, 0.5, 2.0})
      for (double cache : caches)
        for (double span_units : {units, 2 * units}) {
          if (overlap && spec.combine) continue;  // a fitted k covers the max
          OpModel init = base;
          init.overlap = overlap;
          init.t0_s = std::max(tmin * 0.3, 1e-9);
          init.peak_flop_per_s = peak * 1.2 * scale;
          init.bw_bytes_per_s = spec.bw ? bw * 1.2 * scale : base.bw_bytes_per_s;
          init.half_streams = spec.half_streams ? (spec.slots ? 30.0 : 4.0) * scale : 0;
          init.stream_exponent = 1.0;
          init.rows_half = spec.rows_half ? 4.0 : 0;
          init.cache_bytes = cache;
          init.cache_bw_bytes_per_s = spec.cache ? bw * 2 : 0;
          init.head_dim_scale = spec.head_dim_scale ? 40.0 * scale : 0;
          init.causal_factor = spec.causal_factor ? 0.05 : 0;
          init.slots = spec.slots ? span_units : 0;
          // Per-element rates well above the FLOP rate's element equivalents, k = 2.
          init.softmax_rate = spec.softmax ? peak * scale / 8 : 0;
          init.load_rate = spec.load ? peak * scale / 4 : 0;
          init.combine_excess = spec.combine ? 1.0 : 0;
          init.miss_slowdown = spec.miss ? 0.5 : 0;
          init.masked_weight = spec.masked ? 1.0 : 0;
          init.tile_rate = spec.tiles ? peak * scale / 4 : 0;
          init.skinny_rate = spec.skinny ? bw / 4 * scale : 0;  // elements/s near the best streaming rate
          init.widen_rate = spec.widen ? peak * scale / 4 : 0;
          init.row_block = spec.row_block ? row_block : 0;
          std::vector<double> theta;
          for (auto f : l.fields) theta.push_back(std::log(init.*f));
          double c = 0;
          theta = levenberg_marquardt(init, l, caps, theta, xs, c);
          if (c < best.cost) {
            best.cost = c;
            best.model = apply(init, l, theta, caps);
          }
          if (!spec.slots) break;
        }
  return best;
}

std::vector<double> apes(const OpModel& m, const std::vector<Sample>& xs) {
  std::vector<double> out;
  for (const auto& x : xs) out.push_back(std::fabs(predict_seconds(m, x.f) / x.seconds - 1.0));
  return out;
}

}  // namespace

OpFit fit_op_class(const std::string& op_class, const std::vector<const MeasurementRecord*>& records,
                   const SpecCeilings& ceilings, bool cross_validate, bool warm_cache, const CpuKernelFacts& facts) {
  if (records.size() < 3)
    throw InputError("records", op_class, "need at least 3 timed records to fit an op class, got " + std::to_string(records.size()));
  const auto shapes = by_shape(records);
  if (shapes.size() < 3)
    throw InputError("records", op_class, "need at least 3 distinct shapes to fit an op class, got " + std::to_string(shapes.size()) +
                                              " (" + std::to_string(records.size()) + " records: copies of a shape count once)");
  std::vector<Sample> xs;
  OpFit out;
  for (const auto& group : shapes) {
    xs.push_back({record_features(*group.front(), facts), median_seconds(group)});
    for (const auto& [name, value] : range_point(xs.back().f)) {
      auto it = out.range.find(name);
      if (it == out.range.end()) out.range[name] = {value, value};
      else it->second = {std::min(it->second.first, value), std::max(it->second.second, value)};
    }
  }
  const FitSpec spec = fit_spec_for(op_class, warm_cache);
  const DType dtype = records.front()->dtype;
  const double row_block = static_cast<double>(facts.row_block);
  out.model = fit_samples(xs, spec, ceilings, dtype, row_block).model;
  out.records = static_cast<std::int64_t>(xs.size());
  const ErrorStats fit = error_stats(apes(out.model, xs));
  out.fit_median_ape = fit.median_ape;
  out.fit_p90_ape = fit.p90_ape;
  if (cross_validate) {
    std::vector<double> loo;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      std::vector<Sample> rest = xs;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      const OpModel m = fit_samples(rest, spec, ceilings, dtype, row_block).model;
      loo.push_back(std::fabs(predict_seconds(m, xs[i].f) / xs[i].seconds - 1.0));
    }
    const ErrorStats cv = error_stats(loo);
    out.cv_median_ape = cv.median_ape;
    out.cv_p90_ape = cv.p90_ape;
  }
  return out;
}

void fit_profile(Profile& profile, const std::vector<MeasurementRecord>& records, bool cross_validate) {
  std::map<std::string, std::vector<const MeasurementRecord*>> by_class;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const MeasurementRecord& r = records[i];
    if (!r.time_ms)
      throw InputError(r.where.empty() ? "record " + std::to_string(i + 1) : r.where, "(no time_ms)",
                       "calibration needs timed records");
    if (!fitted(r)) continue;  // attention_block: composed from its ops, used for validation only
    by_class[r.op_class()].push_back(&r);
  }
  if (by_class.empty()) throw InputError("records", "(none)", "no attention or gemm records to fit");
  profile.ops.clear();
  for (const auto& [cls, rs] : by_class)
    profile.ops[cls] = fit_op_class(cls, rs, profile.spec, cross_validate, profile.kind == "cpu", profile.cpu_facts());
  profile.source = "measured";
  // The calibrated points themselves, for rooflines in reports.
  nlohmann::json points = nlohmann::json::array();
  for (const auto& [cls, rs] : by_class)
    for (const auto* r : rs) {
      const OpFeatures f = record_features(*r, profile.cpu_facts());
      points.push_back({{"op_class", cls}, {"flop", f.flop}, {"bytes", f.bytes}, {"time_ms", *r->time_ms}});
    }
  if (!profile.measured.is_object()) profile.measured = nlohmann::json::object();
  profile.measured["points"] = points;
}

}  // namespace mhacfg
