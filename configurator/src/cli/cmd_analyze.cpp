// `mhacfg analyze` and `mhacfg profiles`.
#include <iostream>

#include "mhacfg/configurator/api/requests.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/configurator/report/html.hpp"
#include "mhacfg/configurator/report/plots.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg {

std::string tool_version() { return MHACFG_VERSION; }

int cmd_analyze(const Args& args, std::ostream& out, std::ostream&) {
  const std::vector<Format> formats = {Format::table, Format::json, Format::markdown, Format::csv, Format::html};
  po::options_description d("mhacfg analyze: exact counts of one model (--model NAME | --hf-config FILE | flags)");
  add_model_options(d);
  add_workload_options(d, Workload{});
  d.add_options()("target", po::value<std::string>(), "device profile (name or file): adds predicted times");
  add_roofline_option(d);
  add_engine_option(d);
  add_out_dir_option(d);
  add_format_option(d, formats);
  d.add_options()("help,h", "this help");
  if (print_help(d, args, out)) return kExitOk;
  const ParsedArgs a("analyze", d, args);
  const Format format = read_format(a, formats);
  const AnalyzeRequest req = read_analyze_request(a);
  const ModelSpec& m = req.model;
  const Workload& w = req.workload;
  // Plots need predicted times: without --target they use the h100-sxm datasheet roofline.
  const bool plots = format == Format::html || (format == Format::markdown && a.has("out-dir"));
  const Profile profile = req.target ? *req.target : plots ? read_profile_flag(a, "target", defaults::target) : Profile{};
  const Report r = analyze_report(req);
  auto make = [&] {
    const std::vector<PlotModel> models = {{m.name, m, true}};
    return std::vector<SvgPlot>{kv_vs_context_plot(models, w, profile, defaults::memory_fraction),
                                decode_vs_batch_plot(models, w, profile, defaults::memory_fraction),
                                pareto_plot(models, w, profile), roofline_plot(profile, models, w)};
  };
  emit(r, format, read_out_dir(a), make, out);
  return kExitOk;
}

int cmd_profiles(const Args& args, std::ostream& out, std::ostream&) {
  const std::vector<Format> formats = {Format::table, Format::json};
  po::options_description d("mhacfg profiles [show NAME|FILE]: list device profiles with provenance, or show one");
  add_format_option(d, formats);
  d.add_options()("help,h", "this help")("args", po::value<std::vector<std::string>>(), "show NAME");
  if (print_help(d, args, out)) return kExitOk;
  po::positional_options_description pos;
  pos.add("args", -1);
  const ParsedArgs a("profiles", d, args, &pos);
  const Format format = read_format(a, formats);
  const auto rest = a.list("args");
  if (!rest.empty()) {
    if (rest[0] != "show" || rest.size() != 2)
      throw InputError("profiles", rest[0], "expected `mhacfg profiles` or `mhacfg profiles show NAME`");
    const Profile p = load_profile(rest[1], "profiles show");
    std::vector<std::string> ops;
    for (const auto& [cls, fit] : p.ops) ops.push_back(cls);
    if (format == Format::json) {
      out << json_text(profile_to_json(p), 2) << "\n";
      return kExitOk;
    }
    Report r;
    r.heading = p.name + ": " + p.device + " (" + basis_text(p.basis()) + ")";
    Table t;
    t.columns = {"field", "value"};
    t.rows = {{"memory", fmt_bytes(double(p.spec.memory_bytes))},
              {"memory bandwidth", fmt_si(p.spec.mem_bw_bytes_per_s, "B/s")}};
    for (const auto& [dt, v] : p.spec.peak_flop_per_s) t.rows.push_back({"peak " + dt, fmt_si(v, "FLOP/s")});
    std::string hd;
    for (auto h : p.kernels.head_dims) hd += (hd.empty() ? "" : ", ") + std::to_string(h);
    t.rows.push_back({"kernel head_dims", hd.empty() ? "any multiple of 8" : hd});
    std::string opsl;
    for (const auto& o : ops) opsl += (opsl.empty() ? "" : ", ") + o;
    t.rows.push_back({"fitted ops", opsl.empty() ? "none (datasheet roofline)" : opsl});
    if (p.transfer) t.rows.push_back({"transferred from", p.transfer->from + " (" + p.transfer->expected_how + ")"});
    for (const auto& [cls, fit] : p.ops)
      t.rows.push_back({"  " + cls, std::to_string(fit.records) + " records, cross-validated median error " +
                                        fmt_fixed(fit.cv_median_ape * 100, 1) + " %, p90 " + fmt_fixed(fit.cv_p90_ape * 100, 1) + " %"});
    for (const auto& v : p.validation)
      t.rows.push_back({"validation", std::to_string(v.records) + " records: median " + fmt_fixed(v.median_ape * 100, 1) +
                                          " %, p90 " + fmt_fixed(v.p90_ape * 100, 1) + " % (" + v.what + ")"});
    r.tables.push_back(t);
    render(r, Format::table, out);
    return kExitOk;
  }
  render(profiles_report(), format, out);
  return kExitOk;
}

}  // namespace mhacfg
