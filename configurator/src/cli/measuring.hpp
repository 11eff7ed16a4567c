// The measuring `bench` and `calibrate --device` share: the harness options from their flags, and
// records timed on a device with progress on a terminal and machine probes spread between them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/calibrate/device_bench.hpp"
#include "mhacfg/configurator/cli/cli_options.hpp"
#include "mhacfg/costmodel/machine_probe.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

// --threads, --repetitions and --min-time (one thread unless asked).
kernels::BenchOptions bench_options(const ParsedArgs& a);

// Throws InputError naming the first record no kernel of the device runs (by its file:line, else by
// `name` and its index).
void check_supported(const DeviceChoice& d, const std::vector<MeasurementRecord>& in, const std::string& name);

// Measures records (all checked for support first, named by `name` and their index where they carry no
// file:line). Each comes back with time_ms and the timing's fields in its JSON; one the harness never
// timed (o.max_s came first) comes back without time_ms. With `probes`, a machine probe of one round
// every kProbeEvery timings is added to them.
std::vector<MeasurementRecord> measure_records(const DeviceChoice& d, const std::vector<MeasurementRecord>& in,
                                               const std::string& name, const kernels::BenchOptions& o,
                                               std::vector<MachineProbe>* probes = nullptr);

// The records' JSON, as JSON Lines writes them.
std::vector<nlohmann::json> json_lines(const std::vector<MeasurementRecord>& rs);

}  // namespace mhacfg
