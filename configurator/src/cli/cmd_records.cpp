// `mhacfg predict` and `validate`: a profile's predictions for measured records, and its error on them.
#include <optional>
#include <ostream>

#include "mhacfg/configurator/api/requests.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/configurator/cli/machine_check.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

int cmd_predict(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description d("mhacfg predict: add predicted_ms to each record");
  d.add_options()("profile", po::value<std::string>(), "profile name or file")
      ("in", po::value<std::string>(), "records (JSON Lines)")
      ("out", po::value<std::string>(), "output (JSON Lines); default stdout");
  add_check_machine_option(d, true);
  add_serving_record_options(d);
  add_roofline_option(d);
  d.add_options()("help,h", "this help");
  if (print_help(d, args, out)) return kExitOk;
  const ParsedArgs a("predict", d, args);
  const MachineCheckMode check = read_check_machine(a, true);
  if (check != MachineCheckMode::off && a.has("in") && serving_input(a.str("in"), "--in"))
    refuse_machine_check(check, a.str("in"));
  std::optional<MachineCheck> c;
  auto adjust = [&](const Profile& loaded, const std::vector<MeasurementRecord>&) {
    c = machine_check(loaded, probe_like(loaded), check, "measured now");
    return checked_profile(loaded, *c);
  };
  // Streamed: each record is predicted and written as it is read; the output is replaced (or printed)
  // only once every record has been.
  const std::optional<std::string> path = a.opt_str("out");
  if (path) check_output_path(*path, "--out");  // before the probe and the reading
  StreamedOutput lines = path ? StreamedOutput(*path) : StreamedOutput(out);
  predict_each(a, [&](nlohmann::json&& j) {
    if (c) j["machine_check"] = record_check_json(*c);
    lines.write(json_text(j) + "\n");
  }, check != MachineCheckMode::off ? ProfileAdjust(adjust) : ProfileAdjust());
  if (c) err << c->line << "\n";
  lines.commit();
  return kExitOk;
}

int cmd_validate(const Args& args, std::ostream& out, std::ostream&) {
  const std::vector<Format> formats = {Format::table, Format::json, Format::csv, Format::markdown};
  po::options_description d("mhacfg validate: median and p90 absolute percentage error per op class");
  d.add_options()("profile", po::value<std::string>(), "profile name or file")
      ("in", po::value<std::string>(), "measured records (JSON Lines)")
      ("attention-backend", po::value<std::string>(), "only attention records of these backends (comma list)");
  add_check_machine_option(d, true);
  add_serving_record_options(d);
  add_format_option(d, formats);
  d.add_options()("help,h", "this help");
  add_roofline_option(d);
  if (print_help(d, args, out)) return kExitOk;
  const ParsedArgs a("validate", d, args);
  const MachineCheckMode check = read_check_machine(a, true);
  const Format format = read_format(a, formats);
  if (check != MachineCheckMode::off && a.has("in") && serving_input(a.str("in"), "--in"))
    refuse_machine_check(check, a.str("in"));
  // The machine as the records saw it when bench probed it with them; else as it is now.
  std::optional<MachineCheck> c;
  auto adjust = [&](const Profile& loaded, const std::vector<MeasurementRecord>& records) {
    require_machine_probe(loaded);
    const std::optional<MachineProbe> with_records = probe_of_records(records);
    c = with_records ? machine_check(loaded, *with_records, check, "measured with the records by bench --check-machine")
                     : machine_check(loaded, probe_like(loaded), check, "measured now");
    return checked_profile(loaded, *c);
  };
  Report report = validate_report(a, check != MachineCheckMode::off ? ProfileAdjust(adjust) : ProfileAdjust());
  if (c) {
    report.notes.push_back(c->line);
    report.json["machine_check"] = c->json;
  }
  render(report, format, out);
  return kExitOk;
}

}  // namespace mhacfg
