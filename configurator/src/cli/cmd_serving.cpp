// The serving branches of validate, predict and calibrate --from: records mapped to models, profiles
// and engines (inputs/serving_inputs), predicted by the serving model, the engine's times fitted.
#include "serving_commands.hpp"

#include <algorithm>
#include <ctime>

#include "mhacfg/configurator/calibrate/serving_eval.hpp"
#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg {

namespace {

struct Mapped {
  std::vector<ServingRecord> records;
  std::vector<ServingCase> cases;
};

Mapped map_records(const ParsedArgs& a, const std::string& path, const std::string& field) {
  Mapped m;
  m.records = read_serving_records(path, field, read_serving_defaults(a));
  // --records-of ENGINE[,ENGINE]: only the records those engines measured (a record's own engine text
  // maps to one of them), so one file of several engines fits an engine on its own records.
  if (auto only = a.opt_str("records-of")) {
    const std::vector<std::string> names = shipped_engine_names(), wanted = split_commas(*only);
    for (const std::string& w : wanted)
      if (std::find(names.begin(), names.end(), w) == names.end())
        throw InputError("--records-of", w, "must name shipped engines: vllm, sglang, trtllm");
    std::vector<ServingRecord> kept;
    for (const ServingRecord& r : m.records)
      if (std::find(wanted.begin(), wanted.end(), engine_for_text(r.engine)) != wanted.end()) kept.push_back(r);
    if (kept.empty()) throw InputError("--records-of", *only, "no record of " + path + " was measured with those engines");
    m.records = std::move(kept);
  }
  ServingMapper mapper({a.opt_str("profile").value_or(""), a.opt_str("engine").value_or("")});
  m.cases.reserve(m.records.size());
  for (const ServingRecord& r : m.records) m.cases.push_back(mapper.map(r));
  return m;
}


}  // namespace

bool serving_input(const std::string& path, const std::string& field) { return is_serving_text(read_file(path, field)); }

int serving_validate(const ParsedArgs& a, const std::string& in, Format format, std::ostream& out) {
  const Mapped m = map_records(a, in, "--in");
  render(serving_validation_report(m.cases, predict_cases(m.cases), in), format, out);
  return kExitOk;
}

int serving_predict(const ParsedArgs& a, const std::string& in, std::ostream& out) {
  const Mapped m = map_records(a, in, "--in");
  const std::vector<ServingPrediction> preds = predict_cases(m.cases);
  std::vector<nlohmann::json> lines;
  for (std::size_t i = 0; i < m.cases.size(); ++i) lines.push_back(serving_prediction_json(m.cases[i], preds[i]));
  std::string text;
  for (const auto& j : lines) text += json_text(j) + "\n";
  if (auto path = a.opt_str("out")) write_file_atomic(*path, text);
  else out << text;
  return kExitOk;
}

int serving_calibrate(const ParsedArgs& a, const std::string& from, const std::string& path, Format format,
                      std::ostream& out) {
  if (!a.has("engine"))
    throw InputError("--engine", "(missing)", "calibrate --from with serving records needs --engine NAME: the engine fitted");
  const Mapped m = map_records(a, from, "--from");
  const EngineModel start = load_engine(a.str("engine"), "--engine");
  const EngineFit fit = fit_engine(m.cases, start);
  EngineModel e = fit.engine;
  e.name = a.opt_str("name").value_or(start.name + "-fitted");
  e.source = "fitted by mhacfg calibrate to " + std::to_string(fit.records) + " serving records in " + from + " on " +
             utc_now() + ": median APE " + fmt_fixed(fit.fit_median_ape * 100, 1) + " %, cross-validated " +
             fmt_fixed(fit.cv_median_ape * 100, 1) + " %";
  nlohmann::json j = engine_to_json(e);
  j["fit"] = {{"from", from},
              {"records", fit.records},
              {"date", utc_now()},
              {"start_engine", start.name},
              {"median_ape", fit.fit_median_ape},
              {"p90_ape", fit.fit_p90_ape},
              {"cv_median_ape", fit.cv_median_ape},
              {"cv_p90_ape", fit.cv_p90_ape},
              {"cv_folds", fit.folds}};
  (void)engine_from_json(j, path);  // only an engine that loads back is written
  write_file_atomic(path, json_text(j, 2) + "\n");
  Report r;
  r.heading = "Engine " + e.name + " fitted to " + std::to_string(fit.records) + " serving records of " + escaped(from) +
              ", written to " + escaped(path);
  Table t;
  t.columns = {"term", "fitted", "started from"};
  t.right_align = {false, true, true};
  t.rows = {{"kernel_gap_s", fmt_ms(e.kernel_gap_s * 1e3), fmt_ms(start.kernel_gap_s * 1e3)},
            {"step_overhead_s", fmt_ms(e.step_overhead_s * 1e3), fmt_ms(start.step_overhead_s * 1e3)},
            {"request_overhead_s", fmt_ms(e.request_overhead_s * 1e3), fmt_ms(start.request_overhead_s * 1e3)}};
  r.tables.push_back(t);
  r.csv = t;
  r.notes.push_back("Fit: median APE " + fmt_fixed(fit.fit_median_ape * 100, 1) + " %, p90 " + fmt_fixed(fit.fit_p90_ape * 100, 1) +
                    " %; each record predicted by a fit without it (" + std::to_string(fit.folds) + " folds): median " +
                    fmt_fixed(fit.cv_median_ape * 100, 1) + " %, p90 " + fmt_fixed(fit.cv_p90_ape * 100, 1) + " %.");
  r.notes.push_back("Use it with --engine " + escaped(path) + ".");
  r.json = {{"schema_version", "1.0"}, {"command", "calibrate"}, {"kind", "engine"}, {"path", path}, {"engine", j}};
  render(r, format, out);
  return kExitOk;
}

}  // namespace mhacfg
