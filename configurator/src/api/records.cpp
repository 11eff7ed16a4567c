// validate and predict as library calls (api/requests.hpp): kernel records predicted by a profile,
// serving records mapped to models, profiles and engines (inputs/serving_inputs) and predicted by the
// serving model.
#include "mhacfg/configurator/api/requests.hpp"

#include <algorithm>

#include "mhacfg/configurator/calibrate/calibration.hpp"
#include "mhacfg/configurator/calibrate/serving_eval.hpp"
#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/streams.hpp"

namespace mhacfg {

namespace {

std::string required_in(const FlagValues& f, const std::string& command, const std::string& what) {
  if (!f.has("in")) throw InputError("--in", "(missing)", command + " needs --in " + what);
  return f.str("in");
}

Profile required_profile(const FlagValues& f, const std::string& command) {
  if (!f.has("profile")) throw InputError("--profile", "(missing)", command + " needs --profile");
  return read_profile_flag(f, "profile", "");
}

}  // namespace

// Decided by the first line that is not blank (LineReader: a file of kernel records is not read whole);
// a first line that does not close its object (a pretty-printed vLLM result) needs the whole text.
bool serving_input(const std::string& path, const std::string& field) {
  LineReader in(path, field);
  std::string line;
  while (in.next(line))
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      return is_serving_text(line.find('}') != std::string::npos ? line : read_file(path, field));
  return false;
}

MappedRecords map_serving_records(const FlagValues& a, const std::string& path, const std::string& field) {
  MappedRecords m;
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

Report validate_report(const FlagValues& f, const ProfileAdjust& adjust) {
  const std::string in = required_in(f, "validate", "MEASURED.jsonl");
  if (serving_input(in, "--in")) {
    const MappedRecords m = map_serving_records(f, in, "--in");
    return serving_validation_report(m.cases, predict_cases(m.cases), in);
  }
  const Profile loaded = required_profile(f, "validate");
  std::vector<std::string> notes;
  const auto all = read_records(in);
  const auto backends = split_commas(f.opt_str("attention-backend").value_or(""));
  check_backends(all, backends);
  const auto records = select_records(all, backends, &notes);
  const Profile p = adjust ? adjust(loaded, records) : loaded;
  Report report = validation_report(p, in, validate_records(Predictor(p), records));
  for (const auto& n : notes) report.notes.push_back(n);
  return report;
}

std::int64_t predict_each(const FlagValues& f, const std::function<void(nlohmann::json&&)>& each,
                          const ProfileAdjust& adjust) {
  const std::string in = required_in(f, "predict", "RECORDS.jsonl");
  if (serving_input(in, "--in")) {
    const MappedRecords m = map_serving_records(f, in, "--in");
    const std::vector<ServingPrediction> preds = predict_cases(m.cases);
    for (std::size_t i = 0; i < m.cases.size(); ++i) each(serving_prediction_json(m.cases[i], preds[i]));
    return static_cast<std::int64_t>(m.cases.size());
  }
  const Profile loaded = required_profile(f, "predict");
  const Profile p = adjust ? adjust(loaded, {}) : loaded;
  const Predictor predictor(p);
  return for_each_record(in, "--in", [&](const MeasurementRecord& r) { each(predict_record(predictor, r)); });
}

std::vector<nlohmann::json> predict_lines(const FlagValues& f, const ProfileAdjust& adjust) {
  std::vector<nlohmann::json> lines;
  predict_each(f, [&](nlohmann::json&& j) { lines.push_back(std::move(j)); }, adjust);
  return lines;
}

}  // namespace mhacfg
