// The CUDA backend plugin (libmhacfg_backend_cuda.so): the Backend interface over the CUDA harness
// (mhacfg/kernels/cuda/bench.hpp), with cudart, cuBLAS and cuBLASLt linked into the plugin only. It
// loads on a machine without a driver (the runtime is a plain shared library); device_count() is
// then 0.
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
  // The CUDA harness times each record on its own dedicated device: no interleaving needed.
  std::vector<Measurement> measure_rounds(const std::vector<MeasurementRecord>& rs, const BenchOptions& o,
                                          const BenchProgress& progress) override {
    std::vector<Measurement> out;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (progress) progress(i, rs.size(), i);
      out.push_back(measure_cuda(rs[i], o));
    }
    return out;
  }
  Ceilings ceilings(const BenchOptions& o) override { return measure_cuda_ceilings(o); }
};

}  // namespace

}  // namespace mhacfg::kernels

extern "C" MHACFG_PLUGIN_EXPORT const mhacfg::kernels::BackendPluginInfo* mhacfg_backend_plugin() {
  return mhacfg::kernels::plugin_info<mhacfg::kernels::CudaBackend>();
}
