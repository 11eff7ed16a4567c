// measure_cuda and friends: the CUDA side of the microbenchmark harness (see bench.hpp for the
// method). Everything that can fail on the device throws RuntimeFailure with the CUDA error text.
#include "mhacfg/kernels/cuda/bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "check.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/attention_block.hpp"
#include "mhacfg/kernels/cuda/decode_attention.hpp"
#include "mhacfg/kernels/cuda/gemm.hpp"
#include "mhacfg/kernels/cuda/indexer.hpp"
#include "mhacfg/kernels/cuda/linear_attention.hpp"
#include "mhacfg/kernels/cuda/mla_decode.hpp"
#include "mhacfg/kernels/cuda/prefill_attention.hpp"
#include "workloads.hpp"

namespace mhacfg::kernels {

namespace {

namespace cu = mhacfg::kernels::cuda;

// Owns a stream for the duration of one measurement.
struct ScopedStream {
  cu::Stream s = cu::create_stream();
  ~ScopedStream() { cu::destroy_stream(s); }
};

void select_device(int device) {
  const int n = cuda_device_count();
  if (n == 0) throw RuntimeFailure("no CUDA device is visible (cudaGetDeviceCount found none)");
  if (device < 0 || device >= n)
    throw InputError("device", std::to_string(device), "must be in [0, " + std::to_string(n - 1) + "]");
  cu::set_device(device);
}

}  // namespace

int cuda_device_count() noexcept {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the non-sticky error (no driver, no device)
    return 0;
  }
  return n;
}

std::string cuda_device_name(int device) {
  if (device < 0 || device >= cuda_device_count()) return "";
  return cu::device_info(device).name;
}

std::int64_t cuda_device_memory_bytes(int device) {
  if (device < 0 || device >= cuda_device_count())
    throw RuntimeFailure("CUDA device " + std::to_string(device) + " does not exist on this machine");
  return cu::device_info(device).total_memory_bytes;
}

std::string cuda_unsupported_reason(const MeasurementRecord& r) {
  if (r.op() == OpKind::indexer) {
    if (r.dtype != DType::fp8)
      return "dtype " + std::string(to_string(r.dtype)) + ": the CUDA indexer takes fp8 keys and queries";
    return cu::indexer::unsupported_reason(r.indexer());
  }
  // fp8 (e4m3, per-tensor scales): the GEMM through cuBLASLt, and decode over an fp8 KV cache.
  if (r.dtype == DType::fp8 && r.op() == OpKind::gemm) return cu::gemm::unsupported_reason_fp8(r.gemm());
  if (r.dtype == DType::fp8 && r.op() == OpKind::attention && r.phase() == Phase::decode && !r.attention().is_mla())
    return cu::decode::unsupported_reason_fp8(r.attention());
  if (r.dtype != DType::bf16)
    return "dtype " + std::string(to_string(r.dtype)) +
           ": the CUDA kernels take bf16 (and fp8: GEMMs, decode over an fp8 KV cache) only";
  switch (r.op()) {
    case OpKind::gemm: return cu::gemm::unsupported_reason(r.gemm());
    case OpKind::attention:
      if (r.attention().is_mla()) return cu::mla_decode::unsupported_reason(r.attention());
      return r.attention().q_len == 1 ? cu::decode::unsupported_reason(r.attention()) : cu::prefill::unsupported_reason(r.attention());
    case OpKind::attention_block: return cu::attention_block::unsupported_reason(r.attention(), r.d_model());
    case OpKind::linear_attention:
      if (r.phase() == Phase::prefill)
        return "phase prefill: the CUDA linear-attention kernel is the decode step (engines run prefill chunked on tensor cores)";
      return cu::linear_attention::unsupported_reason(r.linear());
    case OpKind::indexer: break;  // answered above
  }
  return "unknown op";
}

Measurement measure_cuda(const MeasurementRecord& r, const BenchOptions& o) {
  select_device(o.device);
  ScopedStream stream;
  const int calls = std::max(cu::detail::kMinTimedCalls, o.repetitions);
  std::vector<double> medians;
  for (int i = 0; i < kCudaWorkloads; ++i) {
    auto w = cu::detail::make_workload(r, cu::detail::Knobs{}, 0x6d686163666721ull + static_cast<std::uint64_t>(i), stream.s);
    medians.push_back(cu::detail::time_calls([&](cu::Stream s) { w->run(s); }, calls, cu::detail::kWarmupCalls,
                                             cu::detail::Flush::write, stream.s)
                          .median_ms);
  }  // each workload is freed before the next is allocated
  std::sort(medians.begin(), medians.end());
  Measurement m;
  m.time_ms = medians[medians.size() / 2];
  m.median_ms = m.time_ms;
  m.statistic = "median";
  m.spread = m.time_ms > 0 ? (medians.back() - medians.front()) / m.time_ms : 0.0;
  m.repetitions = kCudaWorkloads;
  m.calls = calls * kCudaWorkloads;
  m.backend = r.op() == OpKind::gemm ? "cublas" : "mhacfg-cuda";  // GEMMs run through cuBLASLt
  m.device = cuda_device_name(o.device);
  return m;
}

Ceilings measure_cuda_ceilings(const BenchOptions& o) {
  select_device(o.device);
  ScopedStream stream;
  const int calls = std::max(cu::detail::kMinTimedCalls, o.repetitions);
  Ceilings c;
  c.device = cuda_device_name(o.device);
  {
    MeasurementRecord g;
    g.shape = GemmOp{GemmShape{8192, 8192, 8192}};
    auto w = cu::detail::make_workload(g, cu::detail::Knobs{}, 0x63656c6c, stream.s);
    const auto t = cu::detail::time_calls([&](cu::Stream s) { w->run(s); }, calls, cu::detail::kWarmupCalls,
                                          cu::detail::Flush::write, stream.s);
    c.gemm_flop_per_s = static_cast<double>(gemm_flops(g.gemm())) / (t.median_ms * 1e-3);
  }
  {
    const std::size_t bytes = std::size_t{2} << 30;
    cu::DeviceBuffer src(bytes), dst(bytes);
    cu::fill_bytes(src.get(), 0x3c, bytes, stream.s);
    const auto t = cu::detail::time_calls(
        [&](cu::Stream s) { MHACFG_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s)); },
        calls, cu::detail::kWarmupCalls, cu::detail::Flush::write, stream.s);
    c.read_bytes_per_s = 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e-3);  // read + write
  }
  return c;
}

}  // namespace mhacfg::kernels
