// The CPU side of bench.hpp: which records the CPU kernels run, timing them, and the machine
// ceilings they are quoted against (Eigen SGEMM FLOP/s, streaming read bytes/s) with the same threads.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "ceiling_calls.hpp"
#include "cpu_calls.hpp"
#include "inputs.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/bench.hpp"
#include "mhacfg/kernels/cpu/stream_read.hpp"
#include "timing.hpp"

namespace mhacfg::kernels {

namespace {

constexpr const char* kCpuBackend = "mhacfg-cpu";

// Inputs may use at most this fraction of physical memory.
constexpr double kMaxMemoryFraction = 0.75;

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

void check_threads(const BenchOptions& o) {
  if (o.threads < 1) throw InputError("threads", std::to_string(o.threads), "must be at least 1");
}

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / double(std::int64_t{1} << 30) << " GiB";
  return s.str();
}

}  // namespace

namespace detail {

std::function<void()> prepare_gemm_ceiling(int threads) {
  MeasurementRecord r;
  r.op = OpKind::gemm;
  r.gemm = kCeilingGemm;
  r.dtype = DType::fp32;
  return prepare_cpu_call(r, threads);
}

std::function<void()> prepare_read_ceiling(int threads) {
  const std::int64_t count = kCeilingReadBytes / static_cast<std::int64_t>(sizeof(float));
  auto buf = std::make_shared<Buffer<float>>(random_buffer<float>(count, 9, threads));
  auto sink = std::make_shared<double>(0.0);  // keeps the sum observable
  return [buf, sink, count, threads] { *sink += cpu::stream_read_sum({buf->data(), count, threads}); };
}

}  // namespace detail

std::string cpu_unsupported_reason(const MeasurementRecord& r) {
  if (std::string why = detail::cpu_call_unsupported_reason(r); !why.empty()) return why;
  double need = 0;
  try {
    need = static_cast<double>(detail::cpu_call_bytes(r));
  } catch (const InputError& e) {  // a count that overflows 64 bits: far too big to allocate
    return e.what();
  }
  const double have = physical_memory_bytes();
  if (have > 0 && need > kMaxMemoryFraction * have) {
    const std::string field = r.op == OpKind::gemm ? "m = " + std::to_string(r.gemm.m)
                                                   : "kv_len = " + std::to_string(r.attention.kv_len);
    return field + ": the inputs need " + gib(need) + ", more than 3/4 of this machine's " + gib(have);
  }
  return {};
}

Measurement measure_cpu(const MeasurementRecord& r, const BenchOptions& o) {
  check_threads(o);
  if (std::string why = cpu_unsupported_reason(r); !why.empty()) throw InputError(why);
  const std::function<void()> call = detail::prepare_cpu_call(r, o.threads);
  const detail::Timing t = detail::time_call(r.op_class(), call, o);
  Measurement m;
  m.time_ms = t.median_s * 1e3;
  m.spread = t.spread;
  m.repetitions = static_cast<int>(t.per_call_s.size());
  m.backend = kCpuBackend;
  m.device = cpu_device_name();
  return m;
}

Ceilings measure_cpu_ceilings(const BenchOptions& o) {
  check_threads(o);
  Ceilings c;
  c.device = cpu_device_name();
  const detail::Timing gemm = detail::time_call("ceiling gemm", detail::prepare_gemm_ceiling(o.threads), o);
  c.gemm_flop_per_s = static_cast<double>(gemm_flops(detail::kCeilingGemm)) / gemm.median_s;
  const detail::Timing read = detail::time_call("ceiling read", detail::prepare_read_ceiling(o.threads), o);
  c.read_bytes_per_s = static_cast<double>(detail::kCeilingReadBytes) / read.median_s;
  return c;
}

std::string cpu_device_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

}  // namespace mhacfg::kernels
