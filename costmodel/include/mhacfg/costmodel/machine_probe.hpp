// The machine probe: a short reference measurement (a fixed GEMM and a stream read, about a second)
// that a calibration stores beside its fits, so a later command can tell how far the machine it runs
// on now is from the one the profile describes, and scale the profile by that drift. On a shared VM
// the same CPU ran a held-out set 8-25 % slower minutes after a calibration than within it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/time_model.hpp"

namespace mhacfg {

struct Profile;  // profile.hpp, which holds a MachineProbe

// One probe: per round the fastest GEMM call and the fastest stream-read call (the statistic of the
// CPU records: other tenants only ever add time), summarised by the upper decile over rounds. A CPU
// record is the fastest call of all its rounds, over a whole run: it describes the run's fast phases,
// and so does the decile, without resting on one lucky round as the maximum would. (The median first
// used here read a run whose machine slowed 18 % during the calibration as 16 % slower than a bench
// minutes later, whose records ran 6 % faster.)
struct MachineProbe {
  std::vector<double> gemm_rounds_flop_per_s;     // one per round
  std::vector<double> stream_rounds_bytes_per_s;  // one per round
  std::string measured_at;                        // UTC, ISO 8601
  std::string what;                               // the calls, e.g. "fp32 GEMM 512^3; read of 256 MiB in 32 MiB slices"

  double gemm_flop_per_s() const;     // upper decile over rounds
  double stream_bytes_per_s() const;  // upper decile over rounds
  std::size_t rounds() const { return gemm_rounds_flop_per_s.size(); }
};

// Probes taken at several moments of one run (before and after a calibration's rounds) as one: their
// rounds pooled, so the statistic describes the machine over the whole run. `measured_at` is the first's.
MachineProbe pooled(const std::vector<MachineProbe>& probes);

// How fast the machine is now against the profile's probe: now / then (0.9: 10 % slower now).
struct MachineDrift {
  double gemm_ratio = 1;    // compute: the core's clock and its share of time on a shared host
  double stream_ratio = 1;  // memory: DRAM bandwidth
};
MachineDrift machine_drift(const MachineProbe& then, const MachineProbe& now);

// The model with its rates scaled to a machine that drifted: every term of the compute time C (FLOP
// rate, exponentials, loads, tiles, widening, the skinny GEMM's rate, the warm-cache bandwidth a core
// serves) by gemm_ratio, the fixed cost t0 by 1 / gemm_ratio (host code on the same core), the memory
// bandwidth BW by stream_ratio. Dimensionless terms (efficiencies, half-points, cache size) keep.
OpModel corrected_for(const OpModel& m, const MachineDrift& d);
// The profile with every fit and its spec ceilings corrected (corrected_for above); its provenance
// gains `machine_correction`. Throws InputError naming the profile when it stores no machine_probe.
Profile corrected_for(const Profile& p, const MachineProbe& now);
// The profile's stored probe; InputError naming the profile (and why: imported timings or a
// datasheet carry none) when it has none.
const MachineProbe& stored_probe(const Profile& p);

// The current time in UTC, ISO 8601 ("2026-12-02T05:30:00Z"): a probe's and a profile's measured_at.
std::string utc_timestamp();

nlohmann::json machine_probe_to_json(const MachineProbe& p);
// Throws InputError naming `where` and the field.
MachineProbe machine_probe_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace mhacfg
