// The CUDA backend plugin (libmhacfg_backend_cuda.so): the Backend interface over the CUDA harness
// (mhacfg/kernels/cuda/bench.hpp), with cudart, cuBLAS and cuBLASLt linked into the plugin only. It
// loads on a machine without a driver (the runtime is a plain shared library); device_count() is
// then 0.
#include <chrono>

#include "mhacfg/kernels/backend.hpp"
#include "mhacfg/kernels/cuda/bench.hpp"
#include "plugin_entry.hpp"

namespace mhacfg::kernels {

namespace {

class CudaBackend final : public Backend {
 public:
  std::string name() const override { return "cuda"; }
  int device_count() const noexcept override { return cuda_device_count(); }
  std::string device_name(int device) const override { return cuda_device_name(device); }
  std::int64_t memory_bytes(int device) const override { return cuda_device_memory_bytes(device); }
  nlohmann::json kernel_facts() const override { return nullptr; }  // GPU profiles fit without tile facts
  std::string unsupported_reason(const MeasurementRecord& r) const override { return cuda_unsupported_reason(r); }
  Measurement measure(const MeasurementRecord& r, const BenchOptions& o) override { return measure_cuda(r, o); }
  // The CUDA harness times each record on its own dedicated device: no interleaving needed. Past the
  // cap (o.max_s) the records left come back unmeasured (repetitions 0).
  std::vector<Measurement> measure_rounds(const std::vector<MeasurementRecord>& rs, const BenchOptions& o,
                                          const BenchProgress& progress) override {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Measurement> out;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (o.max_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o.max_s) {
        out.emplace_back();
        continue;
      }
      if (progress) progress(i, rs.size(), i);
      out.push_back(measure_cuda(rs[i], o));
    }
    return out;
  }
  Ceilings ceilings(const BenchOptions& o) override { return measure_cuda_ceilings(o); }
  // The probe: rounds of the ceilings' own calls (a bf16 GEMM 8192^3 and a 2 GiB device copy, each the
  // median of >= 20 event-timed, L2-flushed calls): a dedicated device needs no shorter calls.
  MachineProbe probe(const BenchOptions& o, int rounds) override {
    const int n = rounds > 0 ? rounds : 5;
    MachineProbe p;
    p.measured_at = utc_timestamp();
    p.what = "bf16 GEMM 8192^3 and a 2 GiB device-to-device copy (median of event-timed calls), per round";
    for (int round = 0; round < n; ++round) {
      const Ceilings c = measure_cuda_ceilings(o);
      p.gemm_rounds_flop_per_s.push_back(c.gemm_flop_per_s);
      p.stream_rounds_bytes_per_s.push_back(c.read_bytes_per_s);
    }
    return p;
  }
};

}  // namespace

}  // namespace mhacfg::kernels

extern "C" MHACFG_PLUGIN_EXPORT const mhacfg::kernels::BackendPluginInfo* mhacfg_backend_plugin() {
  return mhacfg::kernels::plugin_info<mhacfg::kernels::CudaBackend>();
}
