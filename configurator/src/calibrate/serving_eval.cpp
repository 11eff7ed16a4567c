#include "mhacfg/configurator/calibrate/serving_eval.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"

namespace mhacfg {

namespace {

const char* mode_name(ServingMode m) {
  return m == ServingMode::latency ? "latency" : m == ServingMode::static_batch ? "static_batch" : "continuous";
}

std::string pct(double x) { return fmt_fixed(x * 100, 1) + " %"; }

struct Group {
  std::vector<double> ape, error;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One summary table: a row per key (in order of first appearance), then "all".
Table summary_table(const std::string& title, const std::string& key_name, const std::vector<ServingCase>& cases,
                    const std::vector<ServingPrediction>& preds, const std::function<std::string(const ServingCase&)>& key,
                    nlohmann::json& out) {
  std::vector<std::string> order;
  std::map<std::string, Group> groups;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!preds[i].ok) continue;
    const std::string k = key(cases[i]);
    if (!groups.count(k)) order.push_back(k);
    groups[k].ape.push_back(preds[i].ape);
    groups[k].error.push_back(preds[i].error);
  }
  Table t;
  t.title = title;
  t.columns = {key_name, "records", "median APE", "p90 APE", "max APE", "median error"};
  t.right_align = {false, true, true, true, true, true};
  out = nlohmann::json::array();
  for (const std::string& k : order) {
    const ErrorStats s = error_stats(groups[k].ape);
    const double signed_median = median(groups[k].error);
    t.rows.push_back({k, std::to_string(s.n), pct(s.median_ape), pct(s.p90_ape), pct(s.max_ape), pct(signed_median)});
    out.push_back({{key_name, k}, {"records", s.n}, {"median_ape", s.median_ape}, {"p90_ape", s.p90_ape},
                   {"max_ape", s.max_ape}, {"median_error", signed_median}});
  }
  return t;
}

std::string fmt_value(double v) { return v >= 100 ? fmt_fixed(v, 0) : v >= 10 ? fmt_fixed(v, 1) : fmt_fixed(v, 2); }

}  // namespace

ServingPrediction predict_case(const ServingCase& c, const EngineModel& e) {
  ServingPrediction p;
  if (!c.unusable.empty()) {
    p.reason = c.unusable;
    return p;
  }
  try {
    p.times = predict_serving(*c.model, c.query, *c.predictor, e);
  } catch (const InputError& err) {
    p.reason = err.what();  // the model cannot serve it (it does not fit, a parallelism it cannot split)
    return p;
  }
  p.predicted = serving_metric_value(p.times, *c.record);
  if (!(p.predicted > 0) || !std::isfinite(p.predicted)) {
    p.reason = "no positive prediction";
    return p;
  }
  p.ok = true;
  p.error = p.predicted / c.record->value - 1.0;
  p.ape = std::fabs(p.error);
  return p;
}

std::vector<ServingPrediction> predict_cases(const std::vector<ServingCase>& cases) {
  std::vector<ServingPrediction> out;
  out.reserve(cases.size());
  for (const ServingCase& c : cases) out.push_back(predict_case(c, c.engine));
  return out;
}

nlohmann::json serving_prediction_json(const ServingCase& c, const ServingPrediction& p) {
  nlohmann::json j = serving_record_to_json(*c.record);
  j["mapping"] = {{"model", c.model_name}, {"profile", c.profile_name}, {"engine", c.engine_name},
                  {"mode", mode_name(c.query.mode)}, {"concurrency", c.query.concurrency}};
  if (p.ok) {
    j["mapping"]["batch"] = p.times.batch;
    j["predicted"] = p.predicted;
    j["ape"] = p.ape;
  } else {
    j["predicted"] = nullptr;
    j["not_predicted"] = p.reason;
  }
  return j;
}

Report serving_validation_report(const std::vector<ServingCase>& cases, const std::vector<ServingPrediction>& preds,
                                 const std::string& input) {
  Report r;
  std::size_t ok = 0;
  for (const auto& p : preds) ok += p.ok ? 1 : 0;
  r.heading = "Serving prediction error on " + escaped(std::filesystem::path(input).filename().string()) + ": " + std::to_string(ok) + " of " +
              std::to_string(cases.size()) + " records predicted";
  nlohmann::json by_metric, by_category, by_gpu, all;
  r.tables.push_back(summary_table("By metric", "metric", cases, preds,
                                   [](const ServingCase& c) { return std::string(to_string(c.record->metric)); }, by_metric));
  r.tables.push_back(summary_table("By category", "category", cases, preds,
                                   [](const ServingCase& c) { return c.record->category; }, by_category));
  r.tables.push_back(summary_table("By GPU (profile)", "profile", cases, preds,
                                   [](const ServingCase& c) { return c.profile_name; }, by_gpu));
  r.tables.push_back(summary_table("All", "set", cases, preds, [](const ServingCase&) { return std::string("all"); }, all));
  Table rows;
  rows.title = "Records";
  rows.columns = {"id", "model", "profile", "engine", "mode", "batch", "isl", "osl", "metric", "measured", "predicted", "error"};
  rows.right_align = {false, false, false, false, false, true, true, true, false, true, true, true};
  nlohmann::json records = nlohmann::json::array();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ServingCase& c = cases[i];
    const ServingPrediction& p = preds[i];
    rows.rows.push_back({c.record->id, c.model_name, c.profile_name, c.engine_name, mode_name(c.query.mode),
                         p.ok ? std::to_string(p.times.batch) : "-", std::to_string(c.record->isl),
                         std::to_string(c.record->osl), std::string(to_string(c.record->metric)),
                         fmt_value(c.record->value), p.ok ? fmt_value(p.predicted) : "-",
                         p.ok ? (p.error >= 0 ? "+" : "") + pct(p.error) : "not predicted"});
    records.push_back(serving_prediction_json(c, p));
  }
  r.tables.push_back(rows);
  r.csv = rows;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (!preds[i].ok) r.notes.push_back(cases[i].record->id + " not predicted: " + preds[i].reason);
  r.notes.push_back("APE: |predicted / measured - 1|; error: predicted / measured - 1 (negative: a time predicted short, a rate low).");
  r.json = {{"schema_version", "1.0"},
            {"command", "validate"},
            {"kind", "serving"},
            {"input", input},
            {"records_predicted", ok},
            {"summary", {{"all", all}, {"by_metric", by_metric}, {"by_category", by_category}, {"by_gpu", by_gpu}}},
            {"records", records}};
  return r;
}

}  // namespace mhacfg
