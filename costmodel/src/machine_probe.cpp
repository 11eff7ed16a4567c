#include "mhacfg/costmodel/machine_probe.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

namespace {

// The rates' upper decile, linear between order statistics (see MachineProbe).
constexpr double kProbeQuantile = 0.9;
double upper_decile(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = kProbeQuantile * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// Below 1e6 per second no probe measured a machine (the profile's rates keep the same floor).
constexpr double kMinProbeRate = 1e6;
// A stored value may differ from the statistic of its stored rounds by JSON's rounding only.
constexpr double kStatisticTolerance = 1e-9;

std::vector<double> rounds_from_json(const JsonFields& f, const char* value_key, const char* rounds_key) {
  const double value = f.require_number(value_key);
  if (!(value >= kMinProbeRate) || !std::isfinite(value))
    throw InputError(f.name(value_key), json_value_text(f.at(value_key)), "must be a finite rate of at least 1e6 per second");
  if (!f.has(rounds_key)) return {value};
  const nlohmann::json& a = f.at(rounds_key);
  if (!a.is_array() || a.empty()) throw InputError(f.name(rounds_key), json_value_text(a), "must be a non-empty list of rates");
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number() || !std::isfinite(a[i].get<double>()) || a[i].get<double>() < kMinProbeRate)
      throw InputError(f.name(rounds_key) + "[" + std::to_string(i) + "]", json_value_text(a[i]),
                       "must be a finite rate of at least 1e6 per second");
    out.push_back(a[i].get<double>());
  }
  if (std::fabs(upper_decile(out) / value - 1) > kStatisticTolerance)
    throw InputError(f.name(value_key), json_value_text(f.at(value_key)),
                     "is not the upper decile of " + f.name(rounds_key) + " (edit both or neither)");
  return out;
}

}  // namespace

double MachineProbe::gemm_flop_per_s() const { return upper_decile(gemm_rounds_flop_per_s); }
double MachineProbe::stream_bytes_per_s() const { return upper_decile(stream_rounds_bytes_per_s); }

MachineProbe pooled(const std::vector<MachineProbe>& probes) {
  MachineProbe out;
  for (const MachineProbe& p : probes) {
    if (out.measured_at.empty()) out.measured_at = p.measured_at;
    if (out.what.empty()) out.what = p.what;
    out.gemm_rounds_flop_per_s.insert(out.gemm_rounds_flop_per_s.end(), p.gemm_rounds_flop_per_s.begin(),
                                      p.gemm_rounds_flop_per_s.end());
    out.stream_rounds_bytes_per_s.insert(out.stream_rounds_bytes_per_s.end(), p.stream_rounds_bytes_per_s.begin(),
                                         p.stream_rounds_bytes_per_s.end());
  }
  return out;
}

MachineDrift machine_drift(const MachineProbe& then, const MachineProbe& now) {
  MHACFG_CHECK(then.rounds() > 0 && now.rounds() > 0 && then.gemm_flop_per_s() > 0 && then.stream_bytes_per_s() > 0,
        "machine_drift of an empty probe");
  return {now.gemm_flop_per_s() / then.gemm_flop_per_s(), now.stream_bytes_per_s() / then.stream_bytes_per_s()};
}

OpModel corrected_for(const OpModel& m, const MachineDrift& d) {
  OpModel c = m;
  const double g = d.gemm_ratio;
  c.t0_s = m.t0_s / g;
  for (double OpModel::*rate : {&OpModel::peak_flop_per_s, &OpModel::softmax_rate, &OpModel::load_rate,
                                &OpModel::tile_rate, &OpModel::widen_rate, &OpModel::skinny_rate,
                                &OpModel::cache_bw_bytes_per_s})
    c.*rate = m.*rate * g;
  c.bw_bytes_per_s = m.bw_bytes_per_s * d.stream_ratio;
  return c;
}

const MachineProbe& stored_probe(const Profile& p) {
  if (p.machine_probe) return *p.machine_probe;
  const std::string why = p.source == "datasheet" ? "a datasheet profile measured nothing on this machine"
                          : p.provenance.contains("from")
                              ? "it was fitted to imported timings (calibrate --from), not measured here"
                              : "it was calibrated before mhacfg stored a probe";
  throw InputError("--profile", p.name,
                   "stores no machine_probe (" + why + "); --check-machine needs a profile calibrated with calibrate --device");
}

Profile corrected_for(const Profile& p, const MachineProbe& now) {
  const MachineDrift d = machine_drift(stored_probe(p), now);
  Profile c = p;
  for (auto& [cls, fit] : c.ops) fit.model = corrected_for(fit.model, d);
  for (auto& [dtype, peak] : c.spec.peak_flop_per_s) peak *= d.gemm_ratio;
  c.spec.mem_bw_bytes_per_s *= d.stream_ratio;
  c.provenance["machine_correction"] = {{"gemm_ratio", d.gemm_ratio}, {"stream_ratio", d.stream_ratio},
                                        {"probe_measured_at", now.measured_at}};
  return c;
}

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

nlohmann::json machine_probe_to_json(const MachineProbe& p) {
  return {{"gemm_flop_per_s", p.gemm_flop_per_s()},
          {"stream_bytes_per_s", p.stream_bytes_per_s()},
          {"statistic", "upper decile over rounds of each round's fastest call"},
          {"rounds", p.rounds()},
          {"measured_at", p.measured_at},
          {"what", p.what},
          {"gemm_rounds_flop_per_s", p.gemm_rounds_flop_per_s},
          {"stream_rounds_bytes_per_s", p.stream_rounds_bytes_per_s}};
}

MachineProbe machine_probe_from_json(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where);
  MachineProbe p;
  p.gemm_rounds_flop_per_s = rounds_from_json(f, "gemm_flop_per_s", "gemm_rounds_flop_per_s");
  p.stream_rounds_bytes_per_s = rounds_from_json(f, "stream_bytes_per_s", "stream_rounds_bytes_per_s");
  if (p.gemm_rounds_flop_per_s.size() != p.stream_rounds_bytes_per_s.size())
    throw InputError(f.name("stream_rounds_bytes_per_s"), std::to_string(p.stream_rounds_bytes_per_s.size()) + " rounds",
                     "must have as many rounds as gemm_rounds_flop_per_s");
  p.measured_at = f.optional_string("measured_at").value_or("");
  p.what = f.optional_string("what").value_or("");
  return p;
}

}  // namespace mhacfg
