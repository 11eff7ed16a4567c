// The calibration loop's library side: fitting a profile from records, predicting records,
// validating a profile against measurements. The CLI's calibrate/predict/validate call these.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/configurator/report/report.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

// Throws InputError naming --attention-backend when a requested backend is on none of the attention
// records (a typo would otherwise select nothing and silently keep every backend).
void check_backends(const std::vector<MeasurementRecord>& records, const std::vector<std::string>& backends);

// Keeps gemm records and the attention records whose backend is in `backends` (all when empty).
// An attention op class none of those backends measured (MLA decode in a file of cuDNN timings and
// two-bmm MLA timings) keeps every backend's records of that class, so the profile still covers it;
// each such class adds a line to `notes` naming the backends used.
std::vector<MeasurementRecord> select_records(const std::vector<MeasurementRecord>& records,
                                              const std::vector<std::string>& backends,
                                              std::vector<std::string>* notes = nullptr);

// Adds a line to `notes` saying how many records repeat another's shape (costmodel's repeated_shapes),
// which the fit takes once; nothing when none do.
void note_repeated_shapes(const std::vector<MeasurementRecord>& records, std::vector<std::string>& notes);

// The shipped profile whose device the records name ("NVIDIA H200" -> h200-sxm), or empty.
std::string profile_for_device(const std::string& device);

// The record back as JSON with predicted_ms, predicted_basis and (outside the calibrated range)
// extrapolated: true added.
nlohmann::json predict_record(const Predictor& p, const MeasurementRecord& r);

struct ClassError {
  std::string op_class;
  std::int64_t records = 0;
  double median_ape = 0;
  double p90_ape = 0;
  double max_ape = 0;
  std::int64_t extrapolated = 0;
  double median_error = 0;  // signed: median of predicted / measured - 1 (< 0: predictions fast)
  double same_sign = 0;     // fraction of records whose error has the sign of median_error
};

// Absolute percentage error of the profile's predictions per op class and overall ("all").
std::vector<ClassError> validate_records(const Predictor& p, const std::vector<MeasurementRecord>& measured);
Report validation_report(const Profile& profile, const std::string& input, const std::vector<ClassError>& errors);

// Summary of a fitted profile (op classes, parameters, fit and cross-validation errors).
Report profile_summary_report(const Profile& p, const std::string& path);

}  // namespace mhacfg
