#include "mhacfg/configurator/calibrate/calibration.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"

namespace mhacfg {

namespace {
// validate flags a uniform shift: a median signed error of at least 5 % with at least 80 % of the
// records on its side.
constexpr double kUniformShift = 0.05;
constexpr double kUniformShare = 0.8;
}  // namespace

void check_backends(const std::vector<MeasurementRecord>& records, const std::vector<std::string>& backends) {
  std::set<std::string> present;
  for (const auto& r : records)
    if (r.op() == OpKind::attention) present.insert(r.backend);
  for (const auto& b : backends)
    if (!present.count(b)) {
      std::string list;
      for (const auto& n : present) list += (list.empty() ? "" : ", ") + n;
      throw InputError("--attention-backend", b,
                       "no attention record has this backend (" + (list.empty() ? std::string("the records have no attention records") : "they have: " + list) + ")");
    }
}

std::vector<MeasurementRecord> select_records(const std::vector<MeasurementRecord>& records,
                                              const std::vector<std::string>& backends,
                                              std::vector<std::string>* notes) {
  const auto chosen = [&](const MeasurementRecord& r) {
    return r.op() != OpKind::attention || backends.empty() ||
           std::find(backends.begin(), backends.end(), r.backend) != backends.end();
  };
  std::set<std::string> covered;  // attention classes some chosen backend measured
  for (const auto& r : records)
    if (r.op() == OpKind::attention && chosen(r)) covered.insert(r.op_class());
  std::map<std::string, std::set<std::string>> borrowed;  // class -> the backends kept for it
  std::vector<MeasurementRecord> out;
  for (const auto& r : records) {
    if (chosen(r)) {
      out.push_back(r);
    } else if (r.op() == OpKind::attention && !covered.count(r.op_class())) {
      borrowed[r.op_class()].insert(r.backend);
      out.push_back(r);
    }
  }
  if (notes)
    for (const auto& [cls, names] : borrowed) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      notes->push_back(cls + ": no records of the chosen attention backends; used those of " + list + ".");
    }
  return out;
}

void note_repeated_shapes(const std::vector<MeasurementRecord>& records, std::vector<std::string>& notes) {
  const std::int64_t n = repeated_shapes(records);
  if (n > 0)
    notes.push_back("Merged " + std::to_string(n) + " record" + (n == 1 ? "" : "s") +
                    " repeating another's shape (the same op, shape, dtype, backend and device): each shape is fitted "
                    "once, at the median of its times, and the leave-one-out error leaves it out whole.");
}

std::string profile_for_device(const std::string& device) {
  std::string d;
  for (char c : device) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::pair<const char*, const char*> table[] = {{"h200", "h200-sxm"}, {"h100", "h100-sxm"}, {"a100", "a100-80gb"},
                                                       {"b200", "b200"},     {"l40s", "l40s"},     {"4090", "rtx-4090"}};
  for (const auto& [needle, name] : table)
    if (d.find(needle) != std::string::npos) return name;
  return "";
}

namespace {
// The record's prediction; a count that overflows names the record (file:line) it came from.
Prediction predicted(const Predictor& p, const MeasurementRecord& r) {
  try {
    return p.record(r);
  } catch (const OverflowError& e) {
    if (r.where.empty()) throw;
    throw OverflowError(escaped(r.where) + ": " + e.what());
  }
}
}  // namespace

nlohmann::json predict_record(const Predictor& p, const MeasurementRecord& r) {
  const Prediction pr = predicted(p, r);
  nlohmann::json j = r.json.is_object() && !r.json.empty() ? r.json : record_to_json(r);
  j["predicted_ms"] = pr.time_ms;
  // A narrow dtype's GEMM predicted from the 16-bit fit is a transfer too, of dtype not device.
  const bool narrow = !pr.basis.dtype_transferred_ops.empty() && pr.basis.kind == BasisKind::measured;
  j["predicted_basis"] = narrow ? "transferred" : to_string(pr.basis.kind);
  if (pr.extrapolated) j["extrapolated"] = true;
  return j;
}

std::vector<ClassError> validate_records(const Predictor& p, const std::vector<MeasurementRecord>& measured) {
  std::map<std::string, std::vector<double>> ape, signed_error;
  std::map<std::string, std::int64_t> extrapolated;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const MeasurementRecord& r = measured[i];
    if (!r.time_ms)
      throw InputError(r.where.empty() ? "--in record " + std::to_string(i + 1) : r.where, "(no time_ms)",
                       "validate needs measured records");
    const Prediction pr = predicted(p, r);
    const double e = pr.time_ms / *r.time_ms - 1.0;
    for (const std::string& cls : {r.op_class(), std::string("all")}) {
      ape[cls].push_back(std::fabs(e));
      signed_error[cls].push_back(e);
      extrapolated[cls] += pr.extrapolated;
    }
  }
  std::vector<ClassError> out;
  for (const auto& [cls, v] : ape) {
    const ErrorStats s = error_stats(v);
    std::vector<double> e = signed_error[cls];
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    const double median = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    const auto same = std::count_if(e.begin(), e.end(), [&](double x) { return median < 0 ? x < 0 : x > 0; });
    out.push_back({cls, s.n, s.median_ape, s.p90_ape, s.max_ape, extrapolated[cls], median, double(same) / double(n)});
  }
  std::stable_partition(out.begin(), out.end(), [](const ClassError& e) { return e.op_class != "all"; });
  return out;
}

Report validation_report(const Profile& profile, const std::string& input, const std::vector<ClassError>& errors) {
  Report r;
  r.heading = "Prediction error of " + profile.name + " (" + profile.source + ") on " + escaped(input);
  Table t;
  t.columns = {"op class", "records", "median APE", "p90 APE", "max APE", "extrapolated"};
  t.right_align = {false, true, true, true, true, true};
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& e : errors) {
    t.rows.push_back({e.op_class, std::to_string(e.records), fmt_fixed(e.median_ape * 100, 1) + " %",
                      fmt_fixed(e.p90_ape * 100, 1) + " %", fmt_fixed(e.max_ape * 100, 1) + " %", std::to_string(e.extrapolated)});
    classes.push_back({{"op_class", e.op_class}, {"records", e.records}, {"median_ape", e.median_ape},
                       {"p90_ape", e.p90_ape}, {"max_ape", e.max_ape}, {"extrapolated", e.extrapolated},
                       {"median_error", e.median_error}});
  }
  r.tables.push_back(t);
  r.csv = t;
  r.json = {{"schema_version", "1.0"}, {"command", "validate"}, {"profile", profile.name}, {"input", input},
            {"classes", classes}};
  r.notes.push_back("APE: |predicted / measured - 1|. Classes the profile has no fit for use the roofline.");
  // One shift across (nearly) every record is more often the machine than the model: on shared
  // machines a bench run minutes after the calibration ran 8-25 % slower on every shape.
  for (const auto& e : errors)
    if (e.op_class == "all" && e.records >= 5 && std::fabs(e.median_error) >= kUniformShift && e.same_sign >= kUniformShare)
      r.notes.push_back("Predictions are " + std::string(e.median_error < 0 ? "fast" : "slow") + " on " +
                        fmt_fixed(e.same_sign * 100, 0) + " % of the records (median " + fmt_fixed(e.median_error * 100, 1) +
                        " %): a shift this uniform usually means the machine ran " +
                        (e.median_error < 0 ? "slower" : "faster") + " than when the profile was measured; re-measure after a minute idle, "
                        "measure held-out shapes in the calibration's own rounds (calibrate --holdout), "
                        "or see how far the machine moved (--check-machine; =correct scales the predictions).");
  return r;
}

Report profile_summary_report(const Profile& p, const std::string& path) {
  Report r;
  r.heading = "Profile " + p.name + " (" + p.device + ", " + p.source + ") written to " + escaped(path);
  Table t;
  t.columns = {"op class", "records", "fit median", "fit p90", "LOO median", "LOO p90", "t0", "peak", "bandwidth"};
  t.right_align = {false, true, true, true, true, true, true, true, true};
  for (const auto& [cls, f] : p.ops)
    t.rows.push_back({cls, std::to_string(f.records), fmt_fixed(f.fit_median_ape * 100, 1) + " %",
                      fmt_fixed(f.fit_p90_ape * 100, 1) + " %", fmt_fixed(f.cv_median_ape * 100, 1) + " %",
                      fmt_fixed(f.cv_p90_ape * 100, 1) + " %", fmt_ms(f.model.t0_s * 1e3),
                      fmt_si(f.model.peak_flop_per_s, "FLOP/s"), fmt_si(f.model.bw_bytes_per_s, "B/s")});
  r.tables.push_back(t);
  r.csv = t;
  r.json = profile_to_json(p);
  for (const auto& v : p.validation)
    r.notes.push_back("Validation on " + std::to_string(v.records) + " records (" + v.what + "): median " +
                      fmt_fixed(v.median_ape * 100, 1) + " %, p90 " + fmt_fixed(v.p90_ape * 100, 1) + " %.");
  return r;
}

}  // namespace mhacfg
