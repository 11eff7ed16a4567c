// calibrate --from with serving records: the engine's times fitted to records mapped to models,
// profiles and engines (api/requests.hpp: map_serving_records).
#include "serving_commands.hpp"

#include "mhacfg/configurator/api/requests.hpp"

#include <algorithm>
#include <ctime>

#include "mhacfg/configurator/calibrate/serving_eval.hpp"
#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg {

int serving_calibrate(const ParsedArgs& a, const std::string& from, const std::string& path, Format format,
                      std::ostream& out) {
  if (!a.has("engine"))
    throw InputError("--engine", "(missing)", "calibrate --from with serving records needs --engine NAME: the engine fitted");
  const MappedRecords m = map_serving_records(a, from, "--from");
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
