#include "mhacfg/configurator/inputs/model_source.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "mhacfg/configurator/inputs/hf_cache.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

namespace mhacfg {

namespace {

bool exists(const std::string& path, bool regular_only) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || (!regular_only && S_ISDIR(st.st_mode)));
}

}  // namespace

ModelSpec load_hf_config_arg(const std::string& path_or_id, const std::string& field) {
  // A file or folder of that name wins: a Hub id is only looked up when nothing here has its name.
  if (exists(path_or_id, false) || !looks_like_hf_id(path_or_id)) return load_hf_config(path_or_id);
  ModelSpec m = load_hf_config(hf_cached_config(path_or_id, field));
  m.name = escaped(path_or_id);
  return m;
}

bool names_config(const std::string& arg) {
  std::vector<std::string> presets = model_preset_names();
  for (const auto& alias : model_preset_aliases()) presets.push_back(alias.name);
  const bool is_preset = std::find(presets.begin(), presets.end(), arg) != presets.end();
  return arg.find('/') != std::string::npos || (arg.size() > 5 && arg.substr(arg.size() - 5) == ".json") ||
         (!is_preset && exists(arg, true));
}

ModelSpec load_model_source(const std::string& arg, const std::string& field) {
  return names_config(arg) ? load_hf_config_arg(arg, field) : load_model_preset(arg);
}

ModelSpec model_from_config_json(const nlohmann::json& config) {
  const std::string name = config.is_object() && config.contains("_name_or_path") && config["_name_or_path"].is_string() &&
                                   !config["_name_or_path"].get<std::string>().empty()
                               ? config["_name_or_path"].get<std::string>()
                               : "config";
  ModelSpec m = spec_from_hf_config(config, name);
  m.name = escaped(name);
  return m;
}

}  // namespace mhacfg
