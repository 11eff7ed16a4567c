// What a serving record means in mhacfg's terms: its model id -> a shipped preset (or a config.json),
// its GPU's name -> a device profile, its engine's name -> an engine preset, and its deployment ->
// a ServingQuery. The tables are data (docs/calibration.md, "Serving records: the mapping"); a name
// no row maps is an InputError naming the record, the field and the value.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mhacfg/costmodel/model_spec.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/serving.hpp"
#include "mhacfg/costmodel/serving_records.hpp"

namespace mhacfg {

// The shipped preset a Hugging Face id names ("" when no row does): the repository name, lower case,
// without its organisation, a trailing "(note)" and a quantisation suffix (-FP8, -FP4, -NVFP4, -v2, ...).
std::string model_preset_for_hf_id(const std::string& hf_id);
// The profile a GPU's name maps to by the GPU table ("" when no row does), shipped or not.
std::string profile_for_gpu(const std::string& gpu);
// The engine preset a free-text engine names ("" when none): TensorRT-LLM, NIM -> trtllm, SGLang,
// vLLM.
std::string engine_for_text(const std::string& engine);

// Overrides of the mapping for every record (from --profile and --engine).
struct ServingOverrides {
  std::string profile;  // a profile name or file; "" maps each record's GPU
  std::string engine;   // an engine name or file; "" maps each record's engine
};

// One record, mapped. `unusable` says why it cannot be predicted (the record's own reason, or a dtype
// this build does not price); the names say what was used.
struct ServingCase {
  const ServingRecord* record = nullptr;
  std::string model_name, profile_name, engine_name;  // what each was mapped to
  std::shared_ptr<const ModelSpec> model;
  std::shared_ptr<const Profile> profile;      // the predictor refers to it
  std::shared_ptr<const Predictor> predictor;
  EngineModel engine;
  ServingQuery query;
  std::string unusable;
};

// Maps records, loading each model, profile and engine once. Throws InputError for a value no table
// maps (an unknown model id, GPU or engine) or a profile that this build does not ship.
class ServingMapper {
 public:
  explicit ServingMapper(ServingOverrides o) : overrides_(std::move(o)) {}
  ServingCase map(const ServingRecord& r);

 private:
  ServingOverrides overrides_;
  std::map<std::string, std::shared_ptr<const ModelSpec>> models_;
  std::map<std::string, std::shared_ptr<const Profile>> profiles_;
  std::map<std::string, std::shared_ptr<const Predictor>> predictors_;
  std::map<std::string, EngineModel> engines_;
};

}  // namespace mhacfg
