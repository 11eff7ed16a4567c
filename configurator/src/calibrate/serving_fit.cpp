// The engine terms fitted to serving records: kernel_gap_s, step_overhead_s and request_overhead_s
// minimise the mean absolute log error of the records' predictions. The search is Nelder-Mead on
// log10 seconds (the three span six decades: microseconds per kernel, milliseconds per request),
// each kept in [1e-9, 59] s, restarted once from its own result.
#include <algorithm>
#include <array>
#include <cmath>

#include "mhacfg/configurator/calibrate/serving_eval.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"

namespace mhacfg {

namespace {

constexpr int kTerms = 3;
using Point = std::array<double, kTerms>;  // log10 of kernel_gap_s, step_overhead_s, request_overhead_s
constexpr double kLowLog = -9.0;
const double kHighLog = std::log10(59.0);

EngineModel with_terms(EngineModel e, const Point& x) {
  e.other_ops = true;
  e.kernel_gap_s = std::pow(10.0, x[0]);
  e.step_overhead_s = std::pow(10.0, x[1]);
  e.request_overhead_s = std::pow(10.0, x[2]);
  return e;
}

Point clamp(Point x) {
  for (double& v : x) v = std::clamp(v, kLowLog, kHighLog);
  return x;
}

// Mean |log(predicted / measured)| over `cases` (records the engine cannot predict count as a
// large error, so the search moves away from them).
double objective(const std::vector<const ServingCase*>& cases, const EngineModel& e) {
  double sum = 0;
  for (const ServingCase* c : cases) {
    const ServingPrediction p = predict_case(*c, e);
    sum += p.ok ? std::fabs(std::log(p.predicted / c->record->value)) : 10.0;
  }
  return sum / double(cases.size());
}

Point nelder_mead(const std::vector<const ServingCase*>& cases, const EngineModel& base, Point start, double step,
                  int max_evals) {
  const auto f = [&](const Point& x) { return objective(cases, with_terms(base, clamp(x))); };
  std::array<Point, kTerms + 1> s;
  std::array<double, kTerms + 1> fs;
  for (int i = 0; i <= kTerms; ++i) {
    s[i] = start;
    if (i > 0) s[i][i - 1] += step;
    s[i] = clamp(s[i]);
    if (i > 0 && s[i][i - 1] == start[i - 1]) s[i][i - 1] -= step;  // at a bound: step the other way
    fs[i] = f(s[i]);
  }
  int evals = kTerms + 1;
  while (evals < max_evals) {
    std::array<int, kTerms + 1> idx = {0, 1, 2, 3};
    std::sort(idx.begin(), idx.end(), [&](int a, int b) { return fs[a] < fs[b]; });
    const int best = idx[0], worst = idx[kTerms], second = idx[kTerms - 1];
    if (fs[worst] - fs[best] < 1e-7) break;
    Point centroid{};
    for (int i : idx)
      if (i != worst)
        for (int k = 0; k < kTerms; ++k) centroid[k] += s[i][k] / kTerms;
    const auto along = [&](double t) {
      Point p;
      for (int k = 0; k < kTerms; ++k) p[k] = centroid[k] + t * (s[worst][k] - centroid[k]);
      return clamp(p);
    };
    const Point r = along(-1.0);
    const double fr = f(r);
    ++evals;
    if (fr < fs[best]) {
      const Point e = along(-2.0);
      const double fe = f(e);
      ++evals;
      if (fe < fr) s[worst] = e, fs[worst] = fe;
      else s[worst] = r, fs[worst] = fr;
    } else if (fr < fs[second]) {
      s[worst] = r, fs[worst] = fr;
    } else {
      const Point c = along(0.5);
      const double fc = f(c);
      ++evals;
      if (fc < fs[worst]) {
        s[worst] = c, fs[worst] = fc;
      } else {  // shrink towards the best
        for (int i = 0; i <= kTerms; ++i) {
          if (i == best) continue;
          for (int k = 0; k < kTerms; ++k) s[i][k] = s[best][k] + 0.5 * (s[i][k] - s[best][k]);
          fs[i] = f(s[i]);
          ++evals;
        }
      }
    }
  }
  const int best = int(std::min_element(fs.begin(), fs.end()) - fs.begin());
  return clamp(s[best]);
}

Point fit_points(const std::vector<const ServingCase*>& cases, const EngineModel& base, const Point& start, int evals) {
  const Point first = nelder_mead(cases, base, start, 1.0, evals);
  return nelder_mead(cases, base, first, 0.3, evals / 2);
}

Point start_point(const EngineModel& e) {
  const auto log_or = [](double v, double fallback) { return std::log10(v > 0 ? v : fallback); };
  return clamp({log_or(e.kernel_gap_s, 1e-6), log_or(e.step_overhead_s, 1e-4), log_or(e.request_overhead_s, 1e-3)});
}

}  // namespace

EngineFit fit_engine(const std::vector<ServingCase>& cases, const EngineModel& start) {
  std::vector<const ServingCase*> usable;
  for (const ServingCase& c : cases)
    if (predict_case(c, with_terms(start, start_point(start))).ok) usable.push_back(&c);
  if (usable.size() < 3)
    throw InputError("--from", std::to_string(usable.size()) + " predictable records",
                     "fitting the engine's three times needs at least 3");
  EngineFit fit;
  fit.records = std::int64_t(usable.size());
  const Point best = fit_points(usable, start, start_point(start), 240);
  fit.engine = with_terms(start, best);
  std::vector<double> ape;
  for (const ServingCase* c : usable) ape.push_back(predict_case(*c, fit.engine).ape);
  const ErrorStats s = error_stats(ape);
  fit.fit_median_ape = s.median_ape;
  fit.fit_p90_ape = s.p90_ape;
  // Cross-validation: each record predicted by the engine fitted without its fold (leave-one-out up
  // to 10 records, 10 folds beyond), each fold's search started from the full fit.
  fit.folds = int(std::min<std::size_t>(usable.size(), 10));
  std::vector<double> cv;
  for (int k = 0; k < fit.folds; ++k) {
    std::vector<const ServingCase*> train, test;
    for (std::size_t i = 0; i < usable.size(); ++i) (int(i % std::size_t(fit.folds)) == k ? test : train).push_back(usable[i]);
    const EngineModel e = with_terms(start, fit_points(train, start, best, 80));
    for (const ServingCase* c : test) {
      const ServingPrediction p = predict_case(*c, e);
      cv.push_back(p.ok ? p.ape : 1.0);
    }
  }
  const ErrorStats cs = error_stats(cv);
  fit.cv_median_ape = cs.median_ape;
  fit.cv_p90_ape = cs.p90_ape;
  return fit;
}

}  // namespace mhacfg
