// `mhacfg calibrate`: the calibration loop (`bench`: cmd_bench.cpp; predict and validate: cmd_records.cpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "mhacfg/configurator/calibrate/device_bench.hpp"
#include "mhacfg/configurator/calibrate/calibration.hpp"
#include "mhacfg/configurator/calibrate/calibration_grid.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/configurator/cli/machine_check.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/machine_probe.hpp"
#include "measuring.hpp"
#include "serving_commands.hpp"
#include "mhacfg/configurator/api/requests.hpp"

namespace mhacfg {

namespace {

// A base profile lends its spec, kernel list and name; a calibration it carries (fits, validation,
// measured ceilings) described other timings and is dropped before the new one is fitted.
void forget_calibration(Profile& p) {
  p.ops.clear();
  p.validation.clear();
  p.transfer.reset();  // its own fits replace the ones it borrowed
  p.measured = nlohmann::json::object();
  p.machine_probe.reset();
  p.source = "datasheet";
}

void add_validation(Profile& p, const std::vector<MeasurementRecord>& holdout, const std::string& what) {
  // The held-out figure is the fits' (the profile's measured basis); a kernel class states its own error.
  Profile fits_only = p;
  fits_only.kernel_classes.clear();
  const Predictor pred(fits_only);
  for (const auto& e : validate_records(pred, holdout))
    if (e.op_class == "all") p.validation.push_back({e.records, e.median_ape, e.p90_ape, what});
}

const std::vector<Format> kSummaryFormats = {Format::table, Format::json};

void print_summary(const Profile& p, const std::string& path, Format format, std::ostream& out,
                   const std::vector<std::string>& extra_notes) {
  Report r = profile_summary_report(p, path);
  for (const auto& n : extra_notes) r.notes.push_back(n);
  render(r, format, out);
}

// One profile describes one device: records that name two (a merged file) would be fitted into one
// curve without a word. Records without a device name are taken as the file's device.
void check_one_device(const std::vector<MeasurementRecord>& records, const std::string& from) {
  std::string first;
  for (const auto& r : records) {
    if (r.device.empty()) continue;
    if (first.empty()) first = r.device;
    else if (r.device != first)
      throw InputError("--from", from, "records of two devices, \"" + first + "\" and \"" + r.device +
                                           "\"; a profile fits one device: split the file by device");
  }
}

// --from: a profile fitted to imported timings, its spec from --base or the records' device.
Profile fit_imported(const ParsedArgs& a, const std::string& from, std::vector<std::string>& notes) {
  const auto all = read_records(from, "--from");
  const auto backends = split_commas(a.opt_str("attention-backend").value_or(""));
  check_backends(all, backends);
  const auto records = select_records(all, backends, &notes);
  check_one_device(records, from);
  std::string base = a.opt_str("base").value_or("");
  if (base.empty()) base = profile_for_device(records.front().device);
  if (base.empty())
    throw InputError("--base", "(missing)", "records name device \"" + records.front().device +
                                                "\"; give --base with a profile for its memory and ceilings");
  Profile p = load_profile(base, "--base");
  forget_calibration(p);
  p.name = a.opt_str("name").value_or(p.name + "-measured");
  p.provenance = {{"source", "measured"}, {"from", from}, {"attention_backends", backends},
                  {"base", base}, {"fitted_at", utc_timestamp()}, {"tool_version", tool_version()},
                  {"records", records.size()}, {"device", records.front().device}};
  if (!notes.empty()) p.provenance["backend_notes"] = notes;
  note_repeated_shapes(records, notes);
  fit_profile(p, records);
  for (const std::string& h : a.list("holdout"))
    add_validation(p, select_records(read_records(h, "--holdout"), backends), "held-out records in " + h);
  return p;
}

// What one calibration run on a device measured: the grid, the held-out shapes (each file's end in
// holdout_ends), the two speed checks and the machine's ceilings.
struct DeviceRun {
  std::vector<MeasurementRecord> measured, held, checks;
  std::vector<std::string> holdout_files;
  std::vector<std::size_t> holdout_ends;
  kernels::Ceilings ceil;
  MachineProbe probe_before, probe_after;  // the machine probe on each side of the rounds
  std::vector<MachineProbe> probe_during;  // single rounds between the records
  std::vector<MachineProbe> probes() const {
    std::vector<MachineProbe> all = {probe_before};
    all.insert(all.end(), probe_during.begin(), probe_during.end());
    all.push_back(probe_after);
    return all;
  }
};

DeviceRun measure_on_device(const ParsedArgs& a, const DeviceChoice& dev, bool quick, const kernels::BenchOptions& o) {
  DeviceRun run;
  run.holdout_files = a.list("holdout");
  const std::vector<std::string>& holdout_files = run.holdout_files;
  std::vector<MeasurementRecord> holdout_in;
  std::vector<std::size_t>& holdout_ends = run.holdout_ends;  // one past each file's last record in holdout_in
  for (const std::string& h : holdout_files) {  // read (and checked) before anything is measured
    const auto rs = read_records(h, "--holdout");
    holdout_in.insert(holdout_in.end(), rs.begin(), rs.end());
    holdout_ends.push_back(holdout_in.size());
  }
  // Ceilings before and after the kernels (the higher of the two is quoted: on a shared machine
  // other tenants only ever slow a measurement, and a slow phase can last seconds); the held-out shapes
  // are measured in the same interleaved rounds as the grid, so both see the same machine.
  // The probe on each side of the rounds and between them, pooled: the machine as the fitted records saw it.
  run.probe_before = probe_machine(dev, o);
  const kernels::Ceilings before = measure_ceilings(dev, o);
  const GridDevice gd = dev.cuda ? GridDevice::cuda : GridDevice::cpu;
  const std::vector<MeasurementRecord> grid = calibration_grid(gd, quick);
  // One round's order: held-out shapes spread evenly through the grid (so neither set runs in a
  // different phase of the round), the two large speed checks last (their 1 GiB buffers would
  // otherwise change the memory the next shapes get).
  std::vector<MeasurementRecord> all;
  std::vector<int> role;  // 0 grid, 1 held out, 2 speed check
  for (std::size_t i = 0, h = 0; i < grid.size(); ++i) {
    all.push_back(grid[i]);
    role.push_back(0);
    while (h < holdout_in.size() && (h + 1) * grid.size() <= (i + 1) * holdout_in.size()) {
      all.push_back(holdout_in[h++]);
      role.push_back(1);
    }
  }
  all.push_back(speed_check_prefill(gd));
  all.push_back(speed_check_decode(gd));
  role.insert(role.end(), {2, 2});
  const auto timed = measure_records(dev, all, "grid", o, &run.probe_during);
  const kernels::Ceilings after = measure_ceilings(dev, o);
  run.probe_after = probe_machine(dev, o);
  kernels::Ceilings& ceil = run.ceil;
  ceil = before;
  ceil.gemm_flop_per_s = std::max(before.gemm_flop_per_s, after.gemm_flop_per_s);
  ceil.read_bytes_per_s = std::max(before.read_bytes_per_s, after.read_bytes_per_s);
  for (std::size_t i = 0; i < timed.size(); ++i)
    (role[i] == 0 ? run.measured : role[i] == 1 ? run.held : run.checks).push_back(timed[i]);
  return run;
}

// --device: the measured profile (a GPU with a shipped datasheet profile keeps its spec and name).
Profile calibrate_on_device(const ParsedArgs& a, std::vector<std::string>& notes) {
  const DeviceChoice dev = parse_device(a.str("device"));
  const bool quick = a.has("quick");
  kernels::BenchOptions o = bench_options(a);
  // 15 interleaved rounds (a round of the quick grid and held-out shapes takes ~1 s), then more for
  // the shapes whose fastest rounds disagree, within the time budget: 60 s in all for --quick, 5
  // minutes for the full grid. Many short rounds spread each shape's calls over the whole run,
  // past slow phases of a shared machine that last seconds.
  o.budget_s = quick ? 38 : 200;
  const auto t0 = std::chrono::steady_clock::now();
  const DeviceRun run = measure_on_device(a, dev, quick, o);
  const std::vector<MeasurementRecord>& measured = run.measured;
  const std::vector<MeasurementRecord>& held = run.held;
  const std::vector<MeasurementRecord>& checks = run.checks;
  const kernels::Ceilings& ceil = run.ceil;
  const std::vector<std::string>& holdout_files = run.holdout_files;
  const std::vector<std::size_t>& holdout_ends = run.holdout_ends;
  const double prefill_flops = double(attention_flops(checks[0].attention())) / (*checks[0].time_ms * 1e-3);
  const double decode_bw = double(attention_kv_bytes(checks[1].attention(), checks[1].dtype)) / (*checks[1].time_ms * 1e-3);
  Profile p;
  const std::string name = device_name(dev);
  // A GPU with a shipped datasheet profile keeps its spec, kernel list and name (so the result can
  // replace profiles/<name>.json); the measured ceilings are recorded beside it. A CPU's spec is
  // what was measured here.
  const std::string base = dev.cuda ? profile_for_device(name) : "";
  if (!base.empty()) {
    p = load_profile(base, "--device");
    forget_calibration(p);
  } else {
    p.kind = dev.cuda ? "gpu" : "cpu";
    p.spec.mem_bw_bytes_per_s = ceil.read_bytes_per_s;
    p.spec.peak_flop_per_s[dev.cuda ? "bf16" : "fp32"] = ceil.gemm_flop_per_s;
    p.spec.compute_units = dev.cuda ? 0 : o.threads;
    p.spec.memory_bytes = device_memory_bytes(dev);
  }
  p.name = a.opt_str("name").value_or(!base.empty() ? base : dev.cuda ? "cuda-measured" : "cpu-measured");
  p.device = name;
  p.provenance = {{"source", "measured"}, {"device", name}, {"measured_at", utc_timestamp()},
                  {"tool_version", tool_version()}, {"grid", quick ? "quick" : "full"},
                  {"records", measured.size()}, {"repetitions", o.repetitions}};
  if (!dev.cuda) p.provenance["threads"] = o.threads;
  if (dev.cuda) {
    p.provenance["repetitions"] = kernels::kCudaWorkloads;  // fresh allocations per record
    p.provenance["timing"] = "CUDA events; L2 flushed (256 MiB written) before each call; median of >= 20 calls on each of " +
                             std::to_string(kernels::kCudaWorkloads) + " fresh allocations of the inputs, then the median of those";
  }
  // The kernels' tiles, as they publish them: the CPU features count with these (a profile without them
  // falls back to the values the shipped CPU profiles were fitted with).
  if (const nlohmann::json facts = kernel_facts(dev); !facts.is_null())
    p.cpu_kernel_facts = cpu_kernel_facts_from_json(facts, "the " + dev.label + " backend's kernel facts");
  fit_profile(p, measured);
  p.machine_probe = pooled(run.probes());
  p.measured.update({{"gemm_flop_per_s", ceil.gemm_flop_per_s},
                     {"read_bytes_per_s", ceil.read_bytes_per_s},
                     {"prefill_attention_flop_per_s", prefill_flops},
                     {"prefill_fraction_of_gemm", prefill_flops / ceil.gemm_flop_per_s},
                     {"prefill_shape", checks[0].json},
                     {"decode_kv_bytes_per_s", decode_bw},
                     {"decode_fraction_of_read_bw", decode_bw / ceil.read_bytes_per_s},
                     {"decode_shape", checks[1].json}});
  if (!held.empty()) {
    for (std::size_t f = 0, begin = 0; f < holdout_files.size(); begin = holdout_ends[f++])
      add_validation(p, {held.begin() + std::ptrdiff_t(begin), held.begin() + std::ptrdiff_t(holdout_ends[f])},
                     "held-out shapes in " + holdout_files[f] + ", measured in the same rounds as the grid");
    if (auto hs = a.opt_str("save-holdout")) write_records(*hs, json_lines(held));
  }
  if (auto s = a.opt_str("save-measurements")) write_records(*s, json_lines(measured));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  p.provenance["seconds"] = seconds;
  notes.push_back("Ceilings with " + (dev.cuda ? std::string("the GPU") : std::to_string(o.threads) + " threads") +
                  ": GEMM " + fmt_si(ceil.gemm_flop_per_s, "FLOP/s") + ", read bandwidth " +
                  fmt_si(ceil.read_bytes_per_s, "B/s") + ".");
  notes.push_back("Kernel speed: prefill attention " + fmt_si(prefill_flops, "FLOP/s") + " = " +
                  fmt_fixed(prefill_flops / ceil.gemm_flop_per_s * 100, 1) + " % of the GEMM ceiling; decode reads KV at " +
                  fmt_si(decode_bw, "B/s") + " = " + fmt_fixed(decode_bw / ceil.read_bytes_per_s * 100, 1) +
                  " % of the read bandwidth (" + fmt_bytes(double(attention_kv_bytes(checks[1].attention(), checks[1].dtype))) +
                  " of KV).");
  notes.push_back(calibration_probe_note(*p.machine_probe, machine_drift(run.probe_before, run.probe_after)));
  notes.push_back("Calibration took " + fmt_fixed(seconds, 1) + " s.");
  return p;
}

}  // namespace

int cmd_calibrate(const Args& args, std::ostream& out, std::ostream& err) {
  po::options_description d("mhacfg calibrate: fit a device profile from kernel timings");
  d.add_options()("device", po::value<std::string>(), "measure this machine: cpu, cuda or cuda:N")
      ("from", po::value<std::string>(), "fit imported measurement records (JSON Lines) instead")
      ("attention-backend", po::value<std::string>(), "with --from: attention records of these backends (comma list); gemm always")
      ("base", po::value<std::string>(), "with --from: profile giving the device's spec (default: from the records' device)")
      ("quick", "with --device: the short grid (within 60 s on 2 cores)")
      ("holdout", po::value<std::vector<std::string>>()->composing(),
       "records to validate on: measured with --device, timed with --from (repeat it: each file is validated on its own)")
      ("save-measurements", po::value<std::string>(), "with --device: write the measured grid (JSON Lines)")
      ("save-holdout", po::value<std::string>(), "with --device --holdout: write the measured held-out shapes (every file's, in order)")
      ("name", po::value<std::string>(), "profile name (default: <device>-measured)")
      ("out", po::value<std::string>(), "profile JSON to write")
      ("threads", po::value<std::string>(), "CPU threads (default 1: reproducible on shared machines)")
      ("repetitions", po::value<std::string>(), "CPU: interleaved rounds (default 15; more for unsettled shapes within the time budget)")
      ("min-time", po::value<std::string>(), "CPU: seconds of single calls per round (default 0.005)");
  add_serving_record_options(d);
  add_format_option(d, kSummaryFormats);
  d.add_options()("help,h", "this help");
  if (print_help(d, args, out)) return kExitOk;
  const ParsedArgs a("calibrate", d, args);
  const Format format = read_format(a, kSummaryFormats);
  if (!a.has("out")) throw InputError("--out", "(missing)", "calibrate needs --out PROFILE.json");
  if (a.has("device") == a.has("from")) throw InputError("--device", "(or --from)", "give exactly one of --device and --from");
  const std::string path = a.str("out");
  // Flags of the other mode would be ignored: refuse them.
  const bool from_records = a.has("from");
  const std::vector<std::string> other_mode =
      from_records ? std::vector<std::string>{"quick", "save-measurements", "save-holdout", "threads", "repetitions", "min-time"}
                   : std::vector<std::string>{"attention-backend", "base"};
  for (const std::string& key : other_mode)
    if (a.has(key))
      throw InputError("--" + key, from_records ? "(with --from)" : "(with --device)",
                       std::string("only used with ") + (from_records ? "--device" : "--from"));
  if (a.has("save-holdout") && !a.has("holdout"))
    throw InputError("--save-holdout", a.str("save-holdout"), "needs --holdout (the shapes to measure and save)");
  if (auto name = a.opt_str("name"); name && (name->empty() || escaped(*name) != *name))
    throw InputError("--name", name->empty() ? "(empty)" : *name, "a profile name is one line of printable text");
  // Every output path checked before minutes of measuring.
  check_output_path(path, "--out");
  std::vector<FlagPath> inputs, outputs = {{"--out", path}};
  for (const char* key : {"save-measurements", "save-holdout"})
    if (auto s = a.opt_str(key)) {
      check_output_path(*s, std::string("--") + key);
      outputs.emplace_back(std::string("--") + key, *s);
    }
  if (auto from = a.opt_str("from")) inputs.emplace_back("--from", *from);
  for (const std::string& h : a.list("holdout")) inputs.emplace_back("--holdout", h);
  check_distinct_files(inputs, outputs);
  if (from_records && serving_input(a.str("from"), "--from")) {
    for (const char* key : {"attention-backend", "base", "holdout"})
      if (a.has(key)) throw InputError(std::string("--") + key, "(with serving records)", "only used with kernel records");
    return serving_calibrate(a, a.str("from"), path, format, out);
  }
  for (const char* key : {"engine", "set"})
    if (a.has(key)) throw InputError(std::string("--") + key, "(with kernel records)", "only used with serving records");
  std::vector<std::string> notes;
  const Profile p = a.has("from") ? fit_imported(a, a.str("from"), notes) : calibrate_on_device(a, notes);
  // Only a profile that loads back is written (a base profile with absurd ceilings can fit NaNs).
  const nlohmann::json written = profile_to_json(p);
  try {
    (void)profile_from_json(written, path);
  } catch (const InputError& e) {
    throw InputError(std::string("calibrate: the fitted profile would not load back, nothing written: ") + e.what());
  }
  write_file_atomic(path, json_text(written, 2) + "\n");
  print_summary(p, path, format, out, notes);
  (void)err;
  return kExitOk;
}

}  // namespace mhacfg
