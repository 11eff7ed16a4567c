#include "mhacfg/configurator/calibrate/device_bench.hpp"

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

// The plugin of d's backend, loaded on first use. A missing plugin is a build without that backend
// (the error says how to build one) or an installation that lost it (the error says where it looked).
kernels::Backend& backend(const DeviceChoice& d) {
  const std::string name = d.cuda ? "cuda" : "cpu";
  if (kernels::Backend* b = kernels::load_backend(name)) return *b;
  if (!kernels::backend_was_built(name))
    throw RuntimeFailure("--device " + d.label + ": this mhacfg was built without CUDA (configure with -DMHACFG_CUDA=ON where nvcc is installed)");
  std::string dirs;
  for (const std::string& dir : kernels::backend_search_dirs()) dirs += (dirs.empty() ? "" : ", ") + dir;
  throw RuntimeFailure("--device " + d.label + ": no " + kernels::backend_file_name(name) + " in " + escaped(dirs) +
                       " (set MHACFG_BACKEND_DIR to the folder that holds it)");
}

// The options with the device's ordinal (the CPU has one device).
kernels::BenchOptions on_device(const DeviceChoice& d, const kernels::BenchOptions& o) {
  kernels::BenchOptions c = o;
  if (d.cuda) c.device = d.ordinal;
  return c;
}

}  // namespace

DeviceChoice parse_device(const std::string& text) {
  DeviceChoice d;
  d.label = text;
  if (text == "cpu") return d;
  if (text == "cuda" || text.rfind("cuda:", 0) == 0) {
    d.cuda = true;
    if (text.size() > 5) {
      const std::string n = text.substr(5);
      if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 3)
        throw InputError("--device", text, "expected cpu, cuda or cuda:N");
      d.ordinal = std::stoi(n);
    }
    const int count = backend(d).device_count();
    if (count == 0) throw RuntimeFailure("--device " + text + ": no CUDA device is available on this machine");
    if (d.ordinal >= count)
      throw InputError("--device", text, "this machine has " + std::to_string(count) + " CUDA device(s)");
    return d;
  }
  throw InputError("--device", text, "expected cpu, cuda or cuda:N");
}

std::string unsupported_reason(const DeviceChoice& d, const MeasurementRecord& r) {
  return backend(d).unsupported_reason(r);
}

std::vector<kernels::Measurement> measure_rounds(const DeviceChoice& d, const std::vector<MeasurementRecord>& rs,
                                                 const kernels::BenchOptions& o, const kernels::BenchProgress& progress) {
  return backend(d).measure_rounds(rs, on_device(d, o), progress);
}

kernels::Ceilings measure_ceilings(const DeviceChoice& d, const kernels::BenchOptions& o) {
  return backend(d).ceilings(on_device(d, o));
}

MachineProbe probe_machine(const DeviceChoice& d, const kernels::BenchOptions& o, int rounds) {
  return backend(d).probe(on_device(d, o), rounds);
}

std::string device_name(const DeviceChoice& d) { return backend(d).device_name(d.ordinal); }

std::int64_t device_memory_bytes(const DeviceChoice& d) { return backend(d).memory_bytes(d.ordinal); }

nlohmann::json kernel_facts(const DeviceChoice& d) { return backend(d).kernel_facts(); }

}  // namespace mhacfg
