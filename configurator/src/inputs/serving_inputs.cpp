#include "mhacfg/configurator/inputs/serving_inputs.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <utility>

#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

namespace mhacfg {

namespace {

// Hugging Face repository names (lower case, without the organisation and a quantisation suffix)
// and the shipped preset of the same tensor shapes. Instruct and chat fine-tunes keep their base's
// shapes; Llama 3.1 and 3.3 keep Llama 3's (8B: 32 layers of 4096, 70B: 80 of 8192, vocabulary
// 128256); DeepSeek-R1 is DeepSeek-V3's architecture.
constexpr std::array<std::pair<const char*, const char*>, 21> kModelRows = {{
    {"llama-2-7b-hf", "llama-2-7b"},
    {"llama-2-7b-chat-hf", "llama-2-7b"},
    {"llama-2-70b-hf", "llama-2-70b"},
    {"llama-2-70b-chat-hf", "llama-2-70b"},
    {"meta-llama-3-8b", "llama-3-8b"},
    {"meta-llama-3-8b-instruct", "llama-3-8b"},
    {"llama-3.1-8b", "llama-3-8b"},
    {"llama-3.1-8b-instruct", "llama-3-8b"},
    {"meta-llama-3-70b", "llama-3-70b"},
    {"meta-llama-3-70b-instruct", "llama-3-70b"},
    {"llama-3.1-70b", "llama-3-70b"},
    {"llama-3.1-70b-instruct", "llama-3-70b"},
    {"llama-3.3-70b-instruct", "llama-3-70b"},
    {"mixtral-8x7b-v0.1", "mixtral-8x7b"},
    {"mixtral-8x7b-instruct-v0.1", "mixtral-8x7b"},
    {"qwen3-30b-a3b", "qwen3-30b-a3b"},
    {"qwen3-235b-a22b", "qwen3-235b-a22b"},
    {"deepseek-v3", "deepseek-v3"},
    {"deepseek-v3-0324", "deepseek-v3"},
    {"deepseek-r1", "deepseek-v3"},
    {"deepseek-r1-0528", "deepseek-v3"},
}};

// GPU names: a family word, optionally a variant word, and the profile; the first row that matches
// wins, so a variant's row comes before its family's default.
struct GpuRow {
  const char* family;
  const char* variant;  // "" for any
  const char* profile;
};
constexpr std::array<GpuRow, 12> kGpuRows = {{
    {"h200", "", "h200-sxm-cudnn"},
    {"h100", "pcie", "h100-pcie"},
    {"h100", "nvl", "h100-nvl"},
    {"h100", "", "h100-sxm"},
    {"h20", "", "h20"},
    {"a100", "40gb", "a100-40gb"},
    {"a100", "", "a100-80gb"},
    {"gb200", "", "gb200"},
    {"b200", "", "b200"},
    {"l40s", "", "l40s"},
    {"4090", "", "rtx-4090"},
    {"mi300x", "", "mi300x"},
}};

// Engine words: the first of them in the text names the engine.
constexpr std::array<std::pair<const char*, const char*>, 5> kEngineWords = {{
    {"tensorrt", "trtllm"}, {"trtllm", "trtllm"}, {"trt", "trtllm"}, {"sglang", "sglang"}, {"vllm", "vllm"},
}};


bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

bool shipped(const std::string& profile) {
  const auto names = shipped_profile_names();
  return contains(names, profile);
}

// A record's dtype word as the cost model's dtype: "" (unstated) is bf16; a word this build does not
// price (nvfp4 before fp4 support) leaves the record unpredicted with the reason.
DType record_dtype(const std::string& word, const char* what, std::string& unusable) {
  if (word.empty()) return DType::bf16;
  try {
    return parse_dtype(word, what);
  } catch (const InputError&) {
    if (unusable.empty()) unusable = std::string(what) + " " + word + " is not priced by this build";
    return DType::bf16;
  }
}

}  // namespace

std::string model_preset_for_hf_id(const std::string& hf_id) {
  std::string name = hf_id.substr(0, hf_id.find(" ("));
  if (const auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  static const std::regex quant("-(fp8|fp4|nvfp4|mxfp4|awq|gptq|int4|int8|w8a8|w4a16)(-dynamic)?(-v[0-9]+)?$");
  name = std::regex_replace(name, quant, "");
  for (const auto& [id, preset] : kModelRows)
    if (name == id) return preset;
  const auto presets = model_preset_names();
  return contains(presets, name) ? name : "";
}

std::string profile_for_gpu(const std::string& gpu) {
  const std::vector<std::string> ws = lowercase_words(gpu);
  for (const GpuRow& row : kGpuRows)
    if (contains(ws, row.family) && (*row.variant == '\0' || contains(ws, row.variant))) return row.profile;
  return "";
}

std::string engine_for_text(const std::string& engine) {
  for (const std::string& w : lowercase_words(engine))
    for (const auto& [word, preset] : kEngineWords)
      if (w == word) return preset;
  return "";
}

ServingCase ServingMapper::map(const ServingRecord& r) {
  ServingCase c;
  c.record = &r;
  c.unusable = r.unusable;
  // The model: a config.json path, or a Hugging Face id through the table.
  const bool config_path = r.model.size() > 5 && r.model.compare(r.model.size() - 5, 5, ".json") == 0;
  c.model_name = config_path ? r.model : model_preset_for_hf_id(r.model);
  if (c.model_name.empty())
    throw InputError(r.where + ": model", r.model,
                     "no row of the model table maps it (docs/calibration.md); give a config.json path instead");
  auto& m = models_[c.model_name];
  if (!m) m = std::make_shared<const ModelSpec>(config_path ? load_hf_config(r.model) : load_model_preset(c.model_name));
  c.model = m;
  // The profile.
  c.profile_name = !overrides_.profile.empty() ? overrides_.profile : profile_for_gpu(r.gpu);
  if (c.profile_name.empty())
    throw InputError(r.where + ": gpu", r.gpu, "no row of the GPU table maps it (docs/calibration.md); give --profile");
  if (overrides_.profile.empty() && !shipped(c.profile_name))
    throw InputError(r.where + ": gpu", r.gpu, "maps to profile " + c.profile_name + ", which this build does not ship; give --profile");
  auto& p = profiles_[c.profile_name];
  if (!p) p = std::make_shared<const Profile>(load_profile(c.profile_name, overrides_.profile.empty() ? "gpu" : "--profile"));
  c.profile = p;
  auto& pred = predictors_[c.profile_name];
  if (!pred) pred = std::make_shared<const Predictor>(*p);
  c.predictor = pred;
  // The engine.
  c.engine_name = !overrides_.engine.empty() ? overrides_.engine : engine_for_text(r.engine);
  if (c.engine_name.empty())
    throw InputError(r.where + ": engine", r.engine.empty() ? "(missing)" : r.engine,
                     "names no engine preset (vLLM, SGLang, TensorRT-LLM); give --engine");
  auto e = engines_.find(c.engine_name);
  if (e == engines_.end()) e = engines_.emplace(c.engine_name, load_engine(c.engine_name, "--engine")).first;
  c.engine = e->second;
  if (r.scheduler_steps > 0) c.engine.scheduler_steps = r.scheduler_steps;
  // The query.
  Workload& w = c.query.workload;
  w.tp = r.tp;
  w.pp = r.pp;
  w.ep = r.ep;
  w.dp_attention = r.dp_attention;
  w.weight_dtype = record_dtype(r.weight_dtype, "weight dtype", c.unusable);
  w.kv_dtype = record_dtype(r.kv_dtype, "KV dtype", c.unusable);
  c.query.isl = r.isl;
  c.query.osl = r.osl;
  c.query.mode = r.mode;
  c.query.concurrency = r.mode == ServingMode::static_batch ? r.batch : r.concurrency;
  return c;
}

}  // namespace mhacfg
