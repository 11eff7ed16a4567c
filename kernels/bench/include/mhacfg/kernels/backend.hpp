// One interface over the measuring backends (the CPU harness, the CUDA harness), and the loader that
// opens them as plugins. Each backend is a shared module (libmhacfg_backend_<name>.so) that links its
// kernels and their libraries (Eigen, OpenMP and Google Benchmark; cudart and cuBLAS), so a program
// that only predicts never maps them: the CLI loads one only when a command measures on a device.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/records.hpp"
#include "mhacfg/kernels/bench.hpp"

namespace mhacfg::kernels {

// `progress(done, total, record)`, called before each timing.
using BenchProgress = std::function<void(std::size_t, std::size_t, std::size_t)>;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu" or "cuda", as --device spells it
  // Devices this backend can measure on: 1 for the CPU; 0 without a CUDA device or driver. Never throws.
  virtual int device_count() const noexcept = 0;
  virtual std::string device_name(int device) const = 0;
  // Memory of the device: MemTotal for the CPU, the card's global memory for CUDA.
  virtual std::int64_t memory_bytes(int device) const = 0;
  // Empty when a kernel of this backend runs the record, else the reason.
  virtual std::string unsupported_reason(const MeasurementRecord& r) const = 0;
  // One record on o.device.
  virtual Measurement measure(const MeasurementRecord& r, const BenchOptions& o) = 0;
  // Every record, in the order and with the statistic the backend's harness uses (CPU: interleaved
  // rounds; CUDA: one record after another). Throws InputError for an unsupported record.
  virtual std::vector<Measurement> measure_rounds(const std::vector<MeasurementRecord>& rs, const BenchOptions& o,
                                                  const BenchProgress& progress) = 0;
  virtual Ceilings ceilings(const BenchOptions& o) = 0;
  // The machine probe (costmodel/machine_probe.hpp): a fixed GEMM and a stream read, `rounds` rounds
  // (0: the backend's reference, about a second), the same calls every time, so a later probe says how
  // far the machine moved since a profile. Its buffers are kept between calls: single rounds between a
  // run's records cost only their calls.
  virtual MachineProbe probe(const BenchOptions& o, int rounds) = 0;
  // The facts its kernels publish about how they cut their work (the CPU kernels' tiles), as the
  // profile carries them (`cpu_kernel_facts`); null where the time model needs none (CUDA).
  virtual nlohmann::json kernel_facts() const = 0;
};

// What a plugin exports: one extern "C" function, kBackendEntrySymbol, returning this. The Backend
// vtable and the records, options and measurements passed through it are C++ types, so a plugin of
// another build would misread them: the loader compares the ABI number (raised when Backend changes),
// the mhacfg version and the size of those types (which moves when a field is added between
// versions) before it calls `create`.
inline constexpr int kBackendAbiVersion = 3;  // 2: kernel_facts; 3: probe
inline constexpr std::size_t kBackendLayoutBytes =
    sizeof(Backend) + sizeof(MeasurementRecord) + sizeof(BenchOptions) + sizeof(Measurement) + sizeof(Ceilings) +
    sizeof(MachineProbe);
struct BackendPluginInfo {
  int abi_version;
  std::size_t layout_bytes;
  const char* mhacfg_version;
  Backend* (*create)();  // a new backend, owned by the caller
};
inline constexpr const char* kBackendEntrySymbol = "mhacfg_backend_plugin";
using BackendEntry = const BackendPluginInfo* (*)();

// Where load_backend looks for libmhacfg_backend_<name>.so, in order: $MHACFG_BACKEND_DIR when set,
// the running executable's folder (a build tree), <executable>/../<libdir>/mhacfg and the installed
// <prefix>/<libdir>/mhacfg.
std::vector<std::string> backend_search_dirs();
std::string backend_file_name(const std::string& name);
// Whether this build made the plugin of backend `name` (the CUDA one only where nvcc was found).
bool backend_was_built(const std::string& name);

// The backend `name` ("cpu", "cuda"), loaded once per process and kept until it exits. Returns
// nullptr when no search folder holds its plugin; throws RuntimeFailure (one line naming the path)
// when a plugin exists but cannot be loaded or was built for another mhacfg.
Backend* load_backend(const std::string& name);

}  // namespace mhacfg::kernels
