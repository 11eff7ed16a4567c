// `mhacfg compare A B ...`.
#include <ostream>

#include "mhacfg/configurator/api/requests.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/cli/model_argument.hpp"
#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/configurator/report/compare.hpp"
#include "mhacfg/configurator/report/html.hpp"
#include "mhacfg/configurator/report/plots.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

int cmd_compare(const Args& args, std::ostream& out, std::ostream&) {
  const std::vector<Format> formats = {Format::table, Format::json, Format::markdown, Format::csv, Format::html};
  po::options_description d(
      "mhacfg compare A B ...: models side by side; each is a preset, a config.json path, or key=value flags\n"
      "(e.g. model=llama-3-8b,kv-heads=4 or d-model=4096,layers=32,heads=32,kv-heads=8)");
  add_workload_options(d, Workload{});
  d.add_options()("target", po::value<std::string>(), ("device profile name or file (default " + std::string(defaults::target) + ")").c_str())
;
  add_roofline_option(d);
  add_engine_option(d);
  add_memory_fraction_option(d);
  add_out_dir_option(d);
  add_format_option(d, formats);
  d.add_options()("help,h", "this help");
  if (print_help(d, args, out)) return kExitOk;
  // The models are positional: an option only the parser sees, not listed by --help.
  po::options_description all;
  all.add(d).add_options()("models", po::value<std::vector<std::string>>(), "models to compare");
  po::positional_options_description pos;
  pos.add("models", -1);
  const ParsedArgs a("compare", all, args, &pos);
  const Format format = read_format(a, formats);
  const std::vector<std::string> labels = a.list("models");
  const CompareRequest req = read_compare_request(a, labels, [&](std::size_t i) { return resolve_model_argument(labels[i]); });
  const CompareOptions& o = req.options;
  const std::vector<ModelSpec>& models = req.models;
  const Profile& p = req.profile;
  const Report r = compare_report(o, models, p);
  auto make = [&] {
    std::vector<PlotModel> pm;
    for (std::size_t i = 0; i < models.size(); ++i) pm.push_back({o.models[i], models[i], i == 0});
    return std::vector<SvgPlot>{kv_vs_context_plot(pm, o.workload, p, o.memory_fraction),
                                decode_vs_batch_plot(pm, o.workload, p, o.memory_fraction),
                                pareto_plot(pm, o.workload, p), roofline_plot(p, pm, o.workload)};
  };
  emit(r, format, read_out_dir(a), make, out);
  return kExitOk;
}

}  // namespace mhacfg
