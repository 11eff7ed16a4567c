// Serving records against the serving model: each record's metric predicted (predict_serving) and
// its error, the summary by metric, category and GPU (validate), and the engine terms fitted to the
// records (calibrate --from with serving results).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/inputs/serving_inputs.hpp"
#include "mhacfg/configurator/report/report.hpp"

namespace mhacfg {

struct ServingPrediction {
  bool ok = false;
  std::string reason;  // why not predicted (the record's, or the model's: it does not fit, ...)
  double predicted = 0;
  double ape = 0;        // |predicted / measured - 1|
  double error = 0;      // predicted / measured - 1 (< 0: predictions fast for a time, low for a rate)
  ServingTimes times;
};

// One case's metric with engine `e`.
ServingPrediction predict_case(const ServingCase& c, const EngineModel& e);
// Every case with its own engine.
std::vector<ServingPrediction> predict_cases(const std::vector<ServingCase>& cases);

// validate's report: the summary (all, per metric, per category, per GPU) and every record's row with
// its mapping.
Report serving_validation_report(const std::vector<ServingCase>& cases, const std::vector<ServingPrediction>& preds,
                                 const std::string& input);
// predict's line for one record: the record, its mapping, and the predicted value (or why not).
nlohmann::json serving_prediction_json(const ServingCase& c, const ServingPrediction& p);

struct EngineFit {
  EngineModel engine;          // the start engine with the fitted kernel_gap_s, step_overhead_s, request_overhead_s
  std::int64_t records = 0;    // records fitted (predictable ones)
  double fit_median_ape = 0, fit_p90_ape = 0;
  double cv_median_ape = 0, cv_p90_ape = 0;  // each record predicted by a fit without it (k-fold, k <= 10)
  int folds = 0;
};
// Fits the three engine times to the predictable cases by minimising the mean absolute log error
// (Nelder-Mead on log10 seconds, bounded to [1e-9, 59] s), other_ops on. Throws InputError with fewer
// than 3 predictable records.
EngineFit fit_engine(const std::vector<ServingCase>& cases, const EngineModel& start);

}  // namespace mhacfg
