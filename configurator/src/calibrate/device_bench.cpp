#include "mhacfg/configurator/calibrate/device_bench.hpp"

#include <fstream>
#include <sstream>

#include "mhacfg/costmodel/errors.hpp"
#if MHACFG_WITH_CUDA
#include "mhacfg/kernels/cuda/bench.hpp"
#endif

namespace mhacfg {

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
#if MHACFG_WITH_CUDA
    const int count = kernels::cuda_device_count();
    if (count == 0) throw RuntimeFailure("--device " + text + ": no CUDA device is available on this machine");
    if (d.ordinal >= count)
      throw InputError("--device", text, "this machine has " + std::to_string(count) + " CUDA device(s)");
    return d;
#else
    throw RuntimeFailure("--device " + text + ": this mhacfg was built without CUDA (configure with -DMHACFG_CUDA=ON where nvcc is installed)");
#endif
  }
  throw InputError("--device", text, "expected cpu, cuda or cuda:N");
}

std::string unsupported_reason(const DeviceChoice& d, const MeasurementRecord& r) {
#if MHACFG_WITH_CUDA
  if (d.cuda) return kernels::cuda_unsupported_reason(r);
#endif
  (void)d;
  return kernels::cpu_unsupported_reason(r);
}

kernels::Measurement measure(const DeviceChoice& d, const MeasurementRecord& r, const kernels::BenchOptions& o) {
#if MHACFG_WITH_CUDA
  if (d.cuda) {
    kernels::BenchOptions c = o;
    c.device = d.ordinal;
    return kernels::measure_cuda(r, c);
  }
#endif
  (void)d;
  return kernels::measure_cpu(r, o);
}

kernels::Ceilings measure_ceilings(const DeviceChoice& d, const kernels::BenchOptions& o) {
#if MHACFG_WITH_CUDA
  if (d.cuda) {
    kernels::BenchOptions c = o;
    c.device = d.ordinal;
    return kernels::measure_cuda_ceilings(c);
  }
#endif
  (void)d;
  return kernels::measure_cpu_ceilings(o);
}

std::string device_name(const DeviceChoice& d) {
#if MHACFG_WITH_CUDA
  if (d.cuda) return kernels::cuda_device_name(d.ordinal);
#endif
  (void)d;
  return kernels::cpu_device_name();
}

std::int64_t device_memory_bytes(const DeviceChoice& d) {
#if MHACFG_WITH_CUDA
  if (d.cuda) return kernels::cuda_device_memory_bytes(d.ordinal);
#endif
  (void)d;
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(256, '\n');
  }
  throw RuntimeFailure("cannot read MemTotal from /proc/meminfo");
}

}  // namespace mhacfg
