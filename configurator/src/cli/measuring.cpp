#include "measuring.hpp"

#include <unistd.h>

#include <iostream>
#include <optional>

#include "mhacfg/configurator/inputs/flags.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

// One thread unless asked: on shared 2-vCPU machines two threads made run-to-run timings vary by
// 8.5 % (median over decode shapes) against 2.3 % with one, too much noise for a 5 % model.
kernels::BenchOptions bench_options(const ParsedArgs& a) {
  kernels::BenchOptions o;
  o.threads = 1;
  auto bounded = [&](const char* key, std::int64_t most) -> std::optional<int> {
    const auto v = a.opt_int(key);
    if (v && *v > most) throw InputError(std::string("--") + key, std::to_string(*v), "must be at most " + std::to_string(most));
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  if (auto v = bounded("threads", 1024)) o.threads = *v;
  if (auto v = bounded("repetitions", 1000)) o.repetitions = *v;
  if (auto v = a.opt_str("min-time")) o.min_time_s = parse_double("--min-time", *v, 0.0, 60.0);
  return o;
}

namespace {

// Progress on stderr, only when it is a terminal.
struct Progress {
  bool on = ::isatty(2) != 0;
  void step(std::size_t i, std::size_t n, const std::string& what) const {
    if (on) std::cerr << "\r[" << i << "/" << n << "] " << what << "\033[K" << std::flush;
  }
  void done() const {
    if (on) std::cerr << "\r\033[K" << std::flush;
  }
};

std::string where(const std::string& file, std::size_t i) { return file + " record " + std::to_string(i + 1); }

// Measures records (all checked for support first). CPU: interleaved rounds (measure_cpu_rounds),
// time_ms the fastest call; CUDA: one harness call per record, time_ms the median of its flushed,
// event-timed calls. time_spread is (p75 - p25) / median of the timed calls.
// A machine probe of one round (~17 ms) every kProbeEvery timings (each >= min_time_s), spread through a
// run's rounds: on a shared machine whose speed moves within seconds, a probe before and after alone can
// miss the phase the records saw.
constexpr std::size_t kProbeEvery = 50;

}  // namespace

void check_supported(const DeviceChoice& d, const std::vector<MeasurementRecord>& in, const std::string& name) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::string why = unsupported_reason(d, in[i]);
    if (!why.empty())
      throw InputError(in[i].where.empty() ? where(name, i) : in[i].where, json_value_text(in[i].json),
                       "no " + d.label + " kernel supports it: " + why);
  }
}

std::vector<MeasurementRecord> measure_records(const DeviceChoice& d, const std::vector<MeasurementRecord>& in,
                                               const std::string& name, const kernels::BenchOptions& o,
                                               std::vector<MachineProbe>* probes) {
  check_supported(d, in, name);
  const Progress progress;
  const auto step = [&](std::size_t done, std::size_t total, std::size_t i) {
    if (probes && done % kProbeEvery == 0) probes->push_back(probe_machine(d, o, 1));
    progress.step(done + 1, total, in[i].op_class());
  };
  const std::vector<kernels::Measurement> ms = measure_rounds(d, in, o, step);
  progress.done();
  std::vector<MeasurementRecord> out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const kernels::Measurement& m = ms[i];
    MeasurementRecord r = in[i];
    if (m.repetitions == 0) {  // never timed: the record as given, without a time
      r.time_ms.reset();
      out.push_back(std::move(r));
      continue;
    }
    r.time_ms = m.time_ms;
    r.backend = m.backend;
    r.device = m.device;
    nlohmann::json j = r.json.is_object() && !r.json.empty() ? r.json : record_to_json(r);
    j["time_ms"] = m.time_ms;
    j["time_statistic"] = m.statistic;
    j["time_median_ms"] = m.median_ms;
    j["time_spread"] = m.spread;
    j["repetitions"] = m.repetitions;
    j["calls"] = m.calls;
    j["backend"] = r.backend;
    j["device"] = r.device;
    if (!d.cuda) j["threads"] = o.threads;
    r.json = std::move(j);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<nlohmann::json> json_lines(const std::vector<MeasurementRecord>& rs) {
  std::vector<nlohmann::json> out;
  for (const auto& r : rs) out.push_back(r.json);
  return out;
}

}  // namespace mhacfg
