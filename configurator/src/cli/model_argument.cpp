#include "mhacfg/configurator/cli/model_argument.hpp"

#include <sstream>
#include <sys/stat.h>

#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

namespace mhacfg {

ModelSpec resolve_model_argument(const std::string& arg) {
  if (arg.find('=') != std::string::npos) {
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
  struct stat st {};
  if (arg.find('/') != std::string::npos || (arg.size() > 5 && arg.substr(arg.size() - 5) == ".json") ||
      (::stat(arg.c_str(), &st) == 0 && S_ISREG(st.st_mode)))  // a folder named like a preset does not hide it
    return load_hf_config(arg);
  return load_model_preset(arg);
}

}  // namespace mhacfg
