#include "mhacfg/configurator/cli/model_argument.hpp"

#include <algorithm>
#include <sstream>
#include <vector>
#include <sys/stat.h>

#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

namespace mhacfg {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

ModelSpec resolve_model_argument(const std::string& arg) {
  // An existing file is read as a config even when its path holds a `=` (runs/lr=3e-4/config.json).
  if (arg.find('=') != std::string::npos && !is_regular_file(arg)) {
    // key=value pairs map onto the analyze flags: "--" + key.
    std::vector<std::string> flags;
    std::stringstream ss(arg);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        throw InputError("compare", arg, "expected key=value pairs separated by commas, got \"" + item + "\"");
      flags.push_back("--" + item.substr(0, eq));
      flags.push_back(item.substr(eq + 1));
    }
    po::options_description d;
    add_model_options(d);
    const ModelSpec m = resolve_model(read_model_flags(ParsedArgs("compare", d, flags)));
    return m;
  }
  // A preset's name (or alias) always means the preset (a file or folder of that name here does not replace it;
  // ./NAME reads such a file); another bare name is a config.json when a regular file of that name is here.
  std::vector<std::string> presets = model_preset_names();
  for (const auto& alias : model_preset_aliases()) presets.push_back(alias.name);
  const bool is_preset = std::find(presets.begin(), presets.end(), arg) != presets.end();
  if (arg.find('/') != std::string::npos || (arg.size() > 5 && arg.substr(arg.size() - 5) == ".json") ||
      (!is_preset && is_regular_file(arg)))
    return load_hf_config(arg);
  return load_model_preset(arg);
}

}  // namespace mhacfg
