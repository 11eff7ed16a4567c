// The CUDA harness (src/bench.cpp): support reasons (host only, always run), device discovery that
// never throws, and one timed record and the ceilings on a device.
#include <catch2/catch.hpp>

#include "mhacfg/kernels/cuda/bench.hpp"
#include "reference.hpp"

namespace {

mhacfg::MeasurementRecord decode_record() {
  mhacfg::MeasurementRecord r;
  r.shape = mhacfg::AttentionOp{mhacfg::Phase::decode, {}};
  r.attention().batch = 4;
  r.attention().q_len = 1;
  r.attention().kv_len = 4096;
  r.attention().num_q_heads = 32;
  r.attention().num_kv_heads = 8;
  r.attention().head_dim = 128;
  r.attention().v_head_dim = 128;
  r.attention().causal = false;
  return r;
}

}  // namespace

TEST_CASE("cuda_device_count never throws", "[cuda]") {
  int n = -1;
  CHECK_NOTHROW(n = mhacfg::kernels::cuda_device_count());
  CHECK(n >= 0);
  if (n == 0) CHECK(mhacfg::kernels::cuda_device_name(0).empty());
}

TEST_CASE("cuda_unsupported_reason names what the CUDA backend does not run", "[cuda]") {
  using mhacfg::kernels::cuda_unsupported_reason;
  mhacfg::MeasurementRecord r = decode_record();
  CHECK(cuda_unsupported_reason(r).empty());
  mhacfg::MeasurementRecord fp16 = r;
  fp16.dtype = mhacfg::DType::fp16;
  CHECK(cuda_unsupported_reason(fp16).find("bf16") != std::string::npos);
  mhacfg::MeasurementRecord window = r;
  window.attention().window = 128;
  CHECK(!cuda_unsupported_reason(window).empty());
  mhacfg::MeasurementRecord prefill = r;
  prefill.set_phase(mhacfg::Phase::prefill);
  prefill.attention().q_len = 512;
  prefill.attention().kv_len = 512;
  CHECK(cuda_unsupported_reason(prefill).empty());
  mhacfg::MeasurementRecord g;
  g.shape = mhacfg::GemmOp{mhacfg::GemmShape{16, 30, 64}};
  CHECK(!cuda_unsupported_reason(g).empty());
}

TEST_CASE("measure_cuda times a decode record with the harness's method", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  mhacfg::kernels::BenchOptions o;
  o.repetitions = 5;  // the harness still times at least 20 calls
  const auto m = mhacfg::kernels::measure_cuda(decode_record(), o);
  CHECK(m.time_ms > 0);
  CHECK(m.repetitions == mhacfg::kernels::kCudaWorkloads);  // fresh allocations
  CHECK(m.calls >= 20 * mhacfg::kernels::kCudaWorkloads);   // at least 20 timed calls on each
  CHECK(m.median_ms == m.time_ms);
  CHECK(m.spread >= 0);
  CHECK(m.backend == "mhacfg-cuda");
  CHECK(!m.device.empty());
}

TEST_CASE("measure_cuda_ceilings measures GEMM rate and copy bandwidth", "[cuda]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  const auto c = mhacfg::kernels::measure_cuda_ceilings(mhacfg::kernels::BenchOptions{});
  CHECK(c.gemm_flop_per_s > 1e12);
  CHECK(c.read_bytes_per_s > 1e11);
  CHECK(!c.device.empty());
}

TEST_CASE("every shape the H200 check measures has a CUDA kernel", "[cuda]") {
  // The calibration grid lives in the configurator; here the held-out file the device script passes
  // to calibrate --holdout, checked on the host (unsupported_reason() needs no device).
  const auto records = mhacfg::read_records(std::string(MHACFG_FIXTURES_DIR) + "/h200-holdout-shapes.jsonl");
  REQUIRE(records.size() >= 20);
  for (const auto& r : records) {
    INFO(r.json.dump());
    CHECK(mhacfg::kernels::cuda_unsupported_reason(r).empty());
  }
}

TEST_CASE("measure_cuda times fp8 records: a GEMM through cuBLASLt and a decode over an fp8 KV cache", "[cuda][fp8]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  mhacfg::kernels::BenchOptions o;
  o.repetitions = 5;
  mhacfg::MeasurementRecord g;
  g.shape = mhacfg::GemmOp{mhacfg::GemmShape{64, 6144, 4096}};
  g.dtype = mhacfg::DType::fp8;
  const auto mg = mhacfg::kernels::measure_cuda(g, o);
  CHECK(mg.time_ms > 0);
  CHECK(mg.backend == "cublas");
  mhacfg::MeasurementRecord d = decode_record();
  d.dtype = mhacfg::DType::fp8;
  const auto md = mhacfg::kernels::measure_cuda(d, o);
  CHECK(md.time_ms > 0);
  CHECK(md.backend == "mhacfg-cuda");
}
