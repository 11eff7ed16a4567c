#include "mhacfg/configurator/cli/machine_check.hpp"

#include "mhacfg/configurator/calibrate/device_bench.hpp"
#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

void add_check_machine_option(po::options_description& d, bool correct_allowed) {
  d.add_options()("check-machine", po::value<std::string>()->implicit_value("report"),
                  correct_allowed
                      ? "re-run the profile's machine probe (~1 s) and report how far this machine is from it; "
                        "=correct also scales the predictions by that drift"
                      : "probe the machine (~1 s) before and after measuring, and a round every 50 timings, and report how far it is from --profile's probe; "
                        "each record carries the probe (validate --check-machine=correct uses it)");
}

MachineCheckMode read_check_machine(const ParsedArgs& a, bool correct_allowed) {
  const auto v = a.opt_str("check-machine");
  if (!v) return MachineCheckMode::off;
  if (*v == "report") return MachineCheckMode::report;
  if (*v == "correct" && correct_allowed) return MachineCheckMode::correct;
  throw InputError("--check-machine", *v, correct_allowed ? "expected report or correct" : "expected report (bench measures; it corrects nothing)");
}

void require_machine_probe(const Profile& p) { (void)stored_probe(p); }

MachineProbe probe_like(const Profile& p) {
  require_machine_probe(p);
  const DeviceChoice dev = parse_device(p.kind == "cpu" ? "cpu" : "cuda");
  kernels::BenchOptions o;
  if (p.provenance.contains("threads") && p.provenance["threads"].is_number_integer())
    o.threads = static_cast<int>(json_to_int(p.provenance["threads"], p.name + ": provenance.threads", true));
  return probe_machine(dev, o);
}

MachineCheck machine_check(const Profile& p, const MachineProbe& now, MachineCheckMode mode, const std::string& probe_source) {
  const MachineProbe& then = stored_probe(p);
  MachineCheck c;
  c.now = now;
  c.drift = machine_drift(then, now);
  c.corrected = mode == MachineCheckMode::correct;
  c.probe_source = probe_source;
  auto ratio = [](double r) { return fmt_fixed(r, 3) + "x"; };
  c.line = "Machine check against " + p.name + "'s probe of " + (then.measured_at.empty() ? "unknown date" : then.measured_at) +
           " (" + probe_source + "): GEMM " + fmt_si(now.gemm_flop_per_s(), "FLOP/s") +
           " = " + ratio(c.drift.gemm_ratio) + ", stream read " + fmt_si(now.stream_bytes_per_s(), "B/s") + " = " +
           ratio(c.drift.stream_ratio) + " the calibration's; " +
           (c.corrected ? "predictions corrected (compute rates x " + ratio(c.drift.gemm_ratio) + ", memory bandwidth x " +
                              ratio(c.drift.stream_ratio) + ")."
                        : "predictions not corrected (--check-machine=correct scales them).");
  c.json = {{"profile", p.name},
            {"profile_probe", {{"gemm_flop_per_s", then.gemm_flop_per_s()},
                               {"stream_bytes_per_s", then.stream_bytes_per_s()},
                               {"measured_at", then.measured_at}}},
            {"probe", {{"gemm_flop_per_s", now.gemm_flop_per_s()}, {"stream_bytes_per_s", now.stream_bytes_per_s()},
                       {"rounds", now.rounds()}, {"measured_at", now.measured_at}}},
            {"probe_source", probe_source},
            {"gemm_ratio", c.drift.gemm_ratio},
            {"stream_ratio", c.drift.stream_ratio},
            {"corrected", c.corrected}};
  return c;
}

std::string calibration_probe_note(const MachineProbe& probe, const MachineDrift& after_before) {
  return "Machine probe (stored for --check-machine): GEMM " + fmt_si(probe.gemm_flop_per_s(), "FLOP/s") + ", stream read " +
         fmt_si(probe.stream_bytes_per_s(), "B/s") + ", upper decile of " + std::to_string(probe.rounds()) +
         " rounds before, between and after the grid's (after / before: GEMM " + fmt_fixed(after_before.gemm_ratio, 3) +
         "x, stream " + fmt_fixed(after_before.stream_ratio, 3) + "x).";
}

std::optional<Profile> bench_profile(const ParsedArgs& a, MachineCheckMode check, const DeviceChoice& dev) {
  const bool checking = check != MachineCheckMode::off;
  if (checking && !a.has("profile"))
    throw InputError("--check-machine", "report", "bench --check-machine needs --profile");
  if (!a.has("profile")) return std::nullopt;
  Profile p = read_profile_flag(a, "profile", "");
  if (checking) require_machine_probe(p);
  if ((p.kind == "cpu") == dev.cuda)
    throw InputError("--profile", p.name,
                     "is a " + p.kind + " profile: its " + (checking ? "probe says" : "predictions say") +
                         " nothing about --device " + dev.label);
  return p;
}

void refuse_machine_check(MachineCheckMode check, const std::string& input) {
  if (check != MachineCheckMode::off)
    throw InputError("--check-machine", input, "serving records are whole requests; the machine probe describes kernel records");
}

nlohmann::json record_check_json(const MachineCheck& c) {
  return {{"gemm_ratio", c.drift.gemm_ratio}, {"stream_ratio", c.drift.stream_ratio}, {"corrected", c.corrected}};
}

Profile checked_profile(const Profile& p, const MachineCheck& c) { return c.corrected ? corrected_for(p, c.now) : p; }


std::optional<MachineProbe> probe_of_records(const std::vector<MeasurementRecord>& rs) {
  std::optional<MachineProbe> out;
  for (const MeasurementRecord& r : rs) {
    if (!r.json.is_object() || !r.json.contains("machine_probe")) return std::nullopt;
    const std::string where = (r.where.empty() ? std::string("record") : r.where) + ": machine_probe";
    MachineProbe p = machine_probe_from_json(r.json.at("machine_probe"), where);
    if (out && (p.gemm_flop_per_s() != out->gemm_flop_per_s() || p.stream_bytes_per_s() != out->stream_bytes_per_s()))
      throw InputError(where, json_value_text(r.json.at("machine_probe")),
                       "differs from the first record's: records of several bench runs carry several probes (validate each file on its own)");
    if (!out) out = std::move(p);
  }
  return out;
}

}  // namespace mhacfg
