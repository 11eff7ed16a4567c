// The CPU backend plugin (libmhacfg_backend_cpu.so): the Backend interface over the CPU harness of
// bench.hpp, with the Eigen kernels, OpenMP and Google Benchmark linked into the plugin only.
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/cpu_kernel_facts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cpu/tile_facts.hpp"
#include "cpu_calls.hpp"
#include "mhacfg/kernels/backend.hpp"
#include "plugin_entry.hpp"

namespace mhacfg::kernels {

namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  int device_count() const noexcept override { return 1; }
  std::string device_name(int) const override { return cpu_device_name(); }
  std::int64_t memory_bytes(int) const override {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::int64_t kib = 0;
    while (in >> key >> kib) {
      if (key == "MemTotal:") return kib * 1024;
      in.ignore(256, '\n');
    }
    throw RuntimeFailure("cannot read MemTotal from /proc/meminfo");
  }
  std::string unsupported_reason(const MeasurementRecord& r) const override { return cpu_unsupported_reason(r); }
  Measurement measure(const MeasurementRecord& r, const BenchOptions& o) override { return measure_cpu(r, o); }
  nlohmann::json kernel_facts() const override {
    const cpu::TileFacts& k = cpu::kTileFacts;
    CpuKernelFacts f;
    f.row_block = k.row_block;
    f.skinny_gemm_rows = k.skinny_gemm_rows;
    f.decode_small_rows = k.decode_small_rows;
    f.prefill_tile_rows = k.prefill_tile_rows;
    f.prefill_key_tile = k.prefill_key_tile;
    f.linear_token_block = k.linear_token_block;
    f.indexer_tile_rows = k.indexer_tile_rows;
    f.indexer_key_tile = k.indexer_key_tile;
    return cpu_kernel_facts_to_json(f);
  }
  std::vector<Measurement> measure_rounds(const std::vector<MeasurementRecord>& rs, const BenchOptions& o,
                                          const BenchProgress& progress) override {
    // An arena that must grow past the probe's buffer replaces it: the probe lets go of the old one
    // first (it is made again on the new one) rather than keep it alive beside it.
    const detail::InputArena::Cursor need = detail::cpu_calls_arena_need(rs);
    if (arena_.f32() && arena_.f32()->size() < need.f32) probe_.reset();
    arena_.reserve(need.f32, need.bf16, o.threads);
    return measure_cpu_rounds(rs, o, progress, &arena_);
  }
  Ceilings ceilings(const BenchOptions& o) override { return measure_cpu_ceilings(o, &arena_); }
  MachineProbe probe(const BenchOptions& o, int rounds) override {
    if (!probe_ || probe_->threads() != o.threads) {
      probe_.reset();
      probe_ = std::make_unique<CpuProbe>(o.threads, &arena_);
    }
    return probe_->run(rounds > 0 ? rounds : kCpuProbeRounds);
  }

 private:
  // The run's shared random inputs: the records' read-only operands, and the 1 GiB the probe and the
  // read ceiling stream (one buffer for all three, so a calibration holds 1 GiB, not 2 plus its inputs).
  detail::InputArena arena_;
  std::unique_ptr<CpuProbe> probe_;  // the probe's prepared calls, kept between probes
};

}  // namespace

}  // namespace mhacfg::kernels

extern "C" MHACFG_PLUGIN_EXPORT const mhacfg::kernels::BackendPluginInfo* mhacfg_backend_plugin() {
  return mhacfg::kernels::plugin_info<mhacfg::kernels::CpuBackend>();
}
