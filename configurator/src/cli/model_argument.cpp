#include "mhacfg/configurator/cli/model_argument.hpp"

#include <sstream>
#include <vector>
#include <sys/stat.h>

#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/inputs/model_source.hpp"
#include "mhacfg/costmodel/errors.hpp"

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
  return load_model_source(arg, "compare");
}

}  // namespace mhacfg
