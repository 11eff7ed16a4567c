// A model named by one string (a preset, a config.json path or model folder, a Hugging Face id in the
// local cache) or given as config.json content: the one rule `--model`, `--hf-config`, `compare`'s
// arguments and the Python module's `model` follow.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

// --hf-config's value: a config.json file or a model's folder, else a Hugging Face id ("org/name")
// read from the local cache (inputs/hf_cache.hpp). `field` names the flag in errors.
ModelSpec load_hf_config_arg(const std::string& path_or_id, const std::string& field = "--hf-config");

// Whether `arg` names a config (a path, a file here, a Hugging Face id) rather than a preset: a
// preset's name (or alias) always means the preset (./NAME reads a file of that name); a name with '/' or ending
// in .json, or another bare name that is a regular file here, is a config.
bool names_config(const std::string& arg);

// A preset or a config, by names_config's rule.
ModelSpec load_model_source(const std::string& arg, const std::string& field);

// config.json content given in-process; named by its "_name_or_path" when it has one, else "config".
ModelSpec model_from_config_json(const nlohmann::json& config);

}  // namespace mhacfg
