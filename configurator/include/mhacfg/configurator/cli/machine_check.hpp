// --check-machine (predict, bench, validate): re-runs the machine probe a calibration stored in its
// profile and says how far this machine is from it now; =correct also scales the profile by that
// drift (costmodel/machine_probe.hpp) before predicting.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/calibrate/device_bench.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/costmodel/machine_probe.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

enum class MachineCheckMode { off, report, correct };

// --check-machine[=report|correct]; `correct_allowed`: whether the command predicts (bench does not).
void add_check_machine_option(po::options_description& d, bool correct_allowed);
MachineCheckMode read_check_machine(const ParsedArgs& a, bool correct_allowed);

struct MachineCheck {
  MachineProbe now;
  MachineDrift drift;  // now / the profile's probe
  bool corrected = false;
  std::string probe_source;  // "measured now" or "measured with the records (bench --check-machine)"
  std::string line;          // one line for people
  nlohmann::json json;       // the same for JSON outputs
};

// The profile's probe, checked before anything is measured (InputError naming the profile when it
// has none: a datasheet, imported timings).
void require_machine_probe(const Profile& p);
// Runs the probe on the profile's device (CPU profiles: the CPU, with the threads they were
// calibrated with; GPU profiles: CUDA device 0) and compares.
MachineProbe probe_like(const Profile& p);
MachineCheck machine_check(const Profile& p, const MachineProbe& now, MachineCheckMode mode, const std::string& probe_source);
// The note calibrate --device prints about the probe it stored (`after_before`: the last probe against
// the first).
std::string calibration_probe_note(const MachineProbe& probe, const MachineDrift& after_before);
// bench: --profile P, loaded and checked to be of dev's kind (cpu or gpu) and, with --check-machine, to
// store a probe; none without it (--check-machine without --profile is an InputError).
std::optional<Profile> bench_profile(const ParsedArgs& a, MachineCheckMode check, const DeviceChoice& dev);
// Serving records (whole requests) have no kernel the probe could describe: an InputError when asked.
void refuse_machine_check(MachineCheckMode check, const std::string& input);
// What predict adds to each record: the ratios and whether they were applied.
nlohmann::json record_check_json(const MachineCheck& c);
// The profile the command predicts with: corrected for the check's drift when it corrects.
Profile checked_profile(const Profile& p, const MachineCheck& c);

// A probe carried by records that bench --check-machine measured (each record's `machine_probe`,
// the same for all), or none when any record lacks it.
std::optional<MachineProbe> probe_of_records(const std::vector<MeasurementRecord>& rs);

}  // namespace mhacfg
