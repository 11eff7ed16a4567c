// `mhacfg bench`: times records with the project's kernels (measuring.hpp). Before it starts it
// estimates how long the measuring will take from a profile's predictions and says so when that is
// long; --max-seconds caps it, leaving out the records it did not reach.
#include <algorithm>
#include <cmath>
#include <optional>

#include "measuring.hpp"
#include "mhacfg/configurator/calibrate/calibration.hpp"
#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/configurator/cli/machine_check.hpp"
#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/configurator/inputs/flags.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/predict.hpp"

namespace mhacfg {

namespace {

// A run estimated to measure for longer than this is announced on stderr before it starts.
constexpr double kAnnounceSeconds = 60;

// "45 s", "31 min", "2.5 h".
std::string duration_text(double s) {
  if (s < 120) return fmt_fixed(s, 0) + " s";
  if (s < 3 * 3600) return fmt_fixed(s / 60, 0) + " min";
  return fmt_fixed(s / 3600, 1) + " h";
}

// The profile whose predictions estimate the measuring: --profile, else a shipped one for the device (a
// CPU profile measured on one thread; a GPU's own datasheet profile), else none.
std::optional<Profile> estimating_profile(const std::optional<Profile>& given, const DeviceChoice& dev) {
  if (given) return given;
  const std::string device = device_name(dev);
  const bool intel = device.find("Intel") != std::string::npos;
  const std::string name = dev.cuda ? profile_for_device(device) : intel ? "cpu-xeon-2vcpu" : "cpu-epyc-2vcpu";
  if (name.empty()) return std::nullopt;
  return load_profile(name, "--profile");
}

// What the measuring is expected to take, from the profile's predicted call times: per record, one
// timing (CPU: a warm-up call, then single calls for at least --min-time, 1 to 64 of them, each round;
// CUDA: kCudaWorkloads allocations of about 20 calls and a warm-up), and the whole run.
struct Estimate {
  std::string profile;           // the profile predicted with ("": no estimate)
  std::vector<double> timing_s;  // per record: one timing
  double total_s = 0;            // every record: CPU, --repetitions rounds; CUDA, one timing
};

Estimate estimate(const std::optional<Profile>& prof, const std::vector<MeasurementRecord>& rs,
                  const kernels::BenchOptions& o, bool cuda) {
  Estimate e;
  e.timing_s.assign(rs.size(), 0.0);
  if (!prof) return e;
  e.profile = prof->name;
  const Predictor p(*prof);
  // A CPU profile's times are for its own threads (compute_units); more threads, roughly shorter calls.
  const double scale = !cuda && prof->spec.compute_units > 0 ? prof->spec.compute_units / double(o.threads) : 1.0;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    double call = 0;
    try {
      call = p.record(rs[i]).time_ms * 1e-3 * scale;
    } catch (const InputError&) {  // no estimate for a record the time model cannot count
      continue;
    }
    const double calls = cuda ? kernels::kCudaWorkloads * 21.0
                              : 1 + std::clamp(std::ceil(o.min_time_s / std::max(call, 1e-7)), 1.0, 64.0);
    e.timing_s[i] = calls * call;
    e.total_s += e.timing_s[i] * (cuda ? 1 : o.repetitions);
  }
  return e;
}

std::string record_name(const MeasurementRecord& r, const std::string& in, std::size_t i) {
  return r.where.empty() ? in + " record " + std::to_string(i + 1) : r.where;
}

// "a.jsonl:3, a.jsonl:7, a.jsonl:9 and 4 more".
std::string listed(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 3) s += " and " + std::to_string(names.size() - 3) + " more";
  return s;
}

// The line said before a long run starts: how long, after which profile, and the longest record.
std::string announcement(const Estimate& e, const std::vector<MeasurementRecord>& rs, const std::string& in,
                         const kernels::BenchOptions& o, bool cuda, const std::string& cap) {
  const std::size_t longest =
      static_cast<std::size_t>(std::max_element(e.timing_s.begin(), e.timing_s.end()) - e.timing_s.begin());
  const double longest_s = e.timing_s[longest] * (cuda ? 1 : o.repetitions);
  std::string line = "mhacfg bench: measuring " + std::to_string(rs.size()) + " record(s) will take about " +
                     duration_text(e.total_s) + " (predicted by profile " + e.profile + "; the longest, " +
                     record_name(rs[longest], in, longest) + ", " + rs[longest].op_class() + ", about " +
                     duration_text(longest_s) + ")";
  if (!cap.empty()) return line + "; --max-seconds " + cap + " stops it sooner";
  return line + "; --max-seconds caps it";
}

}  // namespace

int cmd_bench(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description d("mhacfg bench: measure records with the project's kernels");
  d.add_options()("device", po::value<std::string>(), "cpu, cuda or cuda:N (default cpu)")
      ("in", po::value<std::string>(), "shapes: measurement records, time_ms optional (JSON Lines)")
      ("out", po::value<std::string>(), "measured records (JSON Lines); default stdout")
      ("threads", po::value<std::string>(), "CPU threads (default 1: reproducible on shared machines)")
      ("repetitions", po::value<std::string>(), "CPU: interleaved rounds (default 15; up to 3x more for records whose fastest two disagree by > 3 %; after 60 s of timing no new round starts once every record has 5)")
      ("min-time", po::value<std::string>(), "CPU: seconds of single calls per round (default 0.005: one call unless shorter)")
      ("max-seconds", po::value<std::string>(), "stop measuring after this many seconds: records not measured by then (or whose one timing is predicted to take longer) are left out of the output, and a note on stderr says which")
      ("profile", po::value<std::string>(), "the profile whose predictions estimate the measuring time (default: a shipped one for the device); with --check-machine, the profile whose machine probe to compare with");
  add_check_machine_option(d, false);
  d.add_options()("help,h", "this help");
  if (print_help(d, args, out)) return kExitOk;
  const ParsedArgs a("bench", d, args);
  const MachineCheckMode check = read_check_machine(a, false);
  if (!a.has("in")) throw InputError("--in", "(missing)", "bench needs --in SHAPES.jsonl");
  const DeviceChoice dev = parse_device(a.opt_str("device").value_or("cpu"));
  const std::optional<Profile> given = bench_profile(a, check, dev);
  const std::optional<Profile> reference = check != MachineCheckMode::off ? given : std::nullopt;
  const std::string in = a.str("in");
  kernels::BenchOptions o = bench_options(a);
  o.budget_s = 60;  // CPU: no more rounds after a minute of timing (every record keeps at least 5)
  const std::string cap = a.opt_str("max-seconds").value_or("");
  if (!cap.empty()) o.max_s = parse_double("--max-seconds", cap, 0.01, 1e7);
  if (auto path = a.opt_str("out")) check_output_path(*path, "--out");  // before the measuring, not after
  const auto shapes = read_records(in);
  check_supported(dev, shapes, in);
  // Announced when long; under a cap, a record whose one timing is predicted past it is not started.
  const Estimate e = estimate(estimating_profile(given, dev), shapes, o, dev.cuda);
  if (e.total_s > kAnnounceSeconds) err << announcement(e, shapes, in, o, dev.cuda, cap) << "\n" << std::flush;
  std::vector<MeasurementRecord> started;
  std::vector<std::size_t> index;    // each started record's place in the file
  std::vector<std::string> skipped;  // the records not measured
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (o.max_s > 0 && e.timing_s[i] > o.max_s) {
      skipped.push_back(record_name(shapes[i], in, i) + " (predicted " + duration_text(e.timing_s[i]) + " a timing)");
      continue;
    }
    started.push_back(shapes[i]);
    index.push_back(i);
  }
  // The probe on each side of the rounds, as calibrate takes it, with the reference's threads.
  std::vector<MachineProbe> probes;
  if (reference) probes.push_back(probe_like(*reference));
  std::vector<MeasurementRecord> measured = measure_records(dev, started, in, o, reference ? &probes : nullptr);
  for (std::size_t j = 0; j < measured.size(); ++j)
    if (!measured[j].time_ms) skipped.push_back(record_name(measured[j], in, index[j]));
  const auto unmeasured = [](const MeasurementRecord& r) { return !r.time_ms; };
  measured.erase(std::remove_if(measured.begin(), measured.end(), unmeasured), measured.end());
  if (reference) {
    probes.push_back(probe_like(*reference));
    const MachineCheck c =
        machine_check(*reference, pooled(probes), check, "measured before, between and after these records");
    for (auto& r : measured) r.json["machine_probe"] = machine_probe_to_json(c.now);
    err << c.line << "\n";
  }
  if (!skipped.empty())
    err << "mhacfg bench: --max-seconds " << cap << ": " << skipped.size() << " of " << shapes.size()
        << " record(s) not measured, left out of the output: " << listed(skipped) << "\n";
  if (auto path = a.opt_str("out")) write_records(*path, json_lines(measured));
  else for (const auto& r : measured) out << json_text(r.json) << "\n";
  return kExitOk;
}

}  // namespace mhacfg
