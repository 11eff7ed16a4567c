// The commands as library calls, without a terminal: each reads its flags from FlagValues
// (inputs/flags.hpp) and returns the Report whose JSON document `--format json` writes. The CLI fills
// the flags from its arguments and renders the Report; the Python module fills them from keyword
// arguments and returns the document as Python objects. One reader per command, so a flag means the
// same in both.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/inputs/flags.hpp"
#include "mhacfg/configurator/inputs/serving_inputs.hpp"
#include "mhacfg/configurator/report/compare.hpp"
#include "mhacfg/configurator/report/report.hpp"
#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

// analyze: the model (--model, --hf-config or flags), the workload, the --target profile when given,
// and the engine of the served times.
struct AnalyzeRequest {
  ModelSpec model;
  Workload workload;
  std::optional<Profile> target;
  EngineModel engine;
};
AnalyzeRequest read_analyze_request(const FlagValues& f);
Report analyze_report(const AnalyzeRequest& r);

// recommend: the search's options (a model from --hf-config or --model is searched with the rest of it
// kept) and the --target profile.
struct RecommendRequest {
  RecommendOptions options;
  Profile profile;
};
RecommendRequest read_recommend_request(const FlagValues& f);

// compare: `labels` name the models as given (two or more); `model(i)` resolves the i-th (after the
// flags are checked).
struct CompareRequest {
  CompareOptions options;
  std::vector<ModelSpec> models;
  Profile profile;
};
CompareRequest read_compare_request(const FlagValues& f, std::vector<std::string> labels,
                                    const std::function<ModelSpec(std::size_t)>& model);

// profiles: the shipped device profiles with provenance.
Report profiles_report();

// models: the model presets --model reads, with their shapes and sources (api/models.cpp).
Report models_report();

// validate and predict (--in RECORDS): kernel records (with --profile) or serving records (vLLM,
// SGLang or mhacfg's serving JSONL, each mapped to a model, a profile and an engine).
// `adjust` (the CLI's --check-machine) may replace the profile before kernel records are predicted
// (validate passes the records; predict, which does not hold them, passes none).
using ProfileAdjust = std::function<Profile(const Profile& loaded, const std::vector<MeasurementRecord>& records)>;
Report validate_report(const FlagValues& f, const ProfileAdjust& adjust = {});
// One JSON object per record, as predict's JSON Lines.
std::vector<nlohmann::json> predict_lines(const FlagValues& f, const ProfileAdjust& adjust = {});
// The same objects one at a time, in order, as each record is read (kernel records are streamed: a
// file of millions is never held; serving records are read whole); returns how many. An error stops
// it at the record that caused it, after `each` has seen the records before.
std::int64_t predict_each(const FlagValues& f, const std::function<void(nlohmann::json&&)>& each,
                          const ProfileAdjust& adjust = {});

// True when the file holds serving records rather than kernel records.
bool serving_input(const std::string& path, const std::string& field);

// Serving records read from `path` (--set fills what they lack, --records-of keeps one engine's) and
// each mapped by --profile and --engine, or by its own GPU and engine.
struct MappedRecords {
  MappedRecords() = default;
  MappedRecords(MappedRecords&&) = default;
  MappedRecords(const MappedRecords&) = delete;  // the cases point into `records`
  std::vector<ServingRecord> records;
  std::vector<ServingCase> cases;  // each refers to its record
};
MappedRecords map_serving_records(const FlagValues& f, const std::string& path, const std::string& field);

}  // namespace mhacfg
