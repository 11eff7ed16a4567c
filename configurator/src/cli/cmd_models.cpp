// `mhacfg models`: the model presets --model reads, with their shapes and the repository each came from.
#include <ostream>

#include "mhacfg/configurator/api/requests.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg {

int cmd_models(const Args& args, std::ostream& out, std::ostream&) {
  const std::vector<Format> formats = {Format::table, Format::json};
  po::options_description d("mhacfg models: the model presets --model reads, each a Hugging Face config.json compiled in");
  add_format_option(d, formats);
  d.add_options()("help,h", "this help");
  if (print_help(d, args, out)) return kExitOk;
  const ParsedArgs a("models", d, args);
  const Format format = read_format(a, formats);
  const Report r = models_report();
  if (format == Format::json) {
    out << json_text(r.json, 2) << "\n";
    return kExitOk;
  }
  render(r, Format::table, out);
  return kExitOk;
}

}  // namespace mhacfg
