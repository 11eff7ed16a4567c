// The CPU harness (kernels/bench, bench.hpp): records are timed with positive times and a
// non-negative spread, unsupported records say why, and the device name comes from /proc/cpuinfo.
#include "mhacfg/kernels/bench.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <functional>
#include <iostream>

#include "cpu_calls.hpp"
#include "inputs.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels {
namespace {

BenchOptions quick() {
  BenchOptions o;
  o.threads = 2;
  o.repetitions = 3;
  o.min_time_s = 0.002;
  return o;
}

MeasurementRecord attention(Phase phase, std::int64_t q_len, std::int64_t kv_len, DType dtype) {
  MeasurementRecord r;
  r.shape = AttentionOp{phase, {}};
  r.dtype = dtype;
  r.attention().batch = 1;
  r.attention().q_len = q_len;
  r.attention().kv_len = kv_len;
  r.attention().num_q_heads = 8;
  r.attention().num_kv_heads = 2;
  r.attention().head_dim = r.attention().v_head_dim = 64;
  r.attention().causal = phase == Phase::prefill;
  return r;
}

MeasurementRecord gemm_record(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype = DType::fp32) {
  MeasurementRecord r;
  r.shape = GemmOp{{m, n, k}};
  r.dtype = dtype;
  return r;
}

void check_measurement(const MeasurementRecord& r) {
  INFO(record_to_json(r).dump());
  REQUIRE(cpu_unsupported_reason(r).empty());
  const Measurement m = measure_cpu(r, quick());
  CHECK(m.time_ms > 0);
  CHECK(m.spread >= 0);
  // Three rounds, then at most six more while the fastest two disagree by more than 3 %.
  CHECK(m.repetitions >= 3);
  CHECK(m.repetitions <= 9);
  CHECK(m.statistic == "min");
  CHECK(m.time_ms <= m.median_ms);
  CHECK(m.backend == "mhacfg-cpu");
  CHECK(!m.device.empty());
}

TEST_CASE("the CPU harness times a GEMM record", "[kernels][cpu][bench]") {
  MeasurementRecord r;
  r.shape = GemmOp{{64, 96, 80}};
  r.dtype = DType::fp32;
  check_measurement(r);
}

TEST_CASE("the CPU harness times attention records of every kernel", "[kernels][cpu][bench]") {
  check_measurement(attention(Phase::prefill, 129, 129, DType::fp32));
  check_measurement(attention(Phase::decode, 1, 1000, DType::bf16));
  MeasurementRecord mla = attention(Phase::decode, 2, 300, DType::fp32);
  mla.attention().num_q_heads = 16;
  mla.attention().num_kv_heads = 1;
  mla.attention().kv_lora_rank = 64;
  mla.attention().rope_head_dim = 16;
  mla.attention().head_dim = 80;
  mla.attention().v_head_dim = 64;
  check_measurement(mla);
}

TEST_CASE("the CPU harness times attention blocks", "[kernels][cpu][bench]") {
  MeasurementRecord r = attention(Phase::prefill, 33, 65, DType::fp32);
  r.shape = AttentionBlockOp{r.phase(), r.attention(), 256};
  check_measurement(r);
  r.set_phase(Phase::decode);
  r.attention().q_len = 1;
  r.attention().causal = false;
  r.dtype = DType::bf16;
  check_measurement(r);
}

TEST_CASE("the CPU harness names what it cannot run", "[kernels][cpu][bench]") {
  const MeasurementRecord bf16_prefill = attention(Phase::prefill, 64, 64, DType::bf16);
  CHECK_THAT(cpu_unsupported_reason(bf16_prefill), Catch::Contains("dtype = bf16"));
  CHECK_THROWS_AS(measure_cpu(bf16_prefill, quick()), InputError);

  MeasurementRecord fp8_gemm;
  fp8_gemm.shape = GemmOp{};
  fp8_gemm.dtype = DType::fp8;
  CHECK_THAT(cpu_unsupported_reason(fp8_gemm), Catch::Contains("dtype = fp8"));

  CHECK_THAT(cpu_unsupported_reason(attention(Phase::decode, 16, 1000, DType::fp32)), Catch::Contains("q_len = 16"));

  MeasurementRecord huge = attention(Phase::decode, 1, std::int64_t{1} << 40, DType::fp32);
  CHECK_THAT(cpu_unsupported_reason(huge), Catch::Contains("kv_len = 1099511627776"));
  MeasurementRecord overflowing = attention(Phase::decode, 1, std::int64_t{1} << 60, DType::fp32);
  CHECK_THAT(cpu_unsupported_reason(overflowing), Catch::Contains("overflow"));

  BenchOptions no_threads = quick();
  no_threads.threads = 0;
  CHECK_THROWS_AS(measure_cpu(attention(Phase::decode, 1, 100, DType::fp32), no_threads), InputError);
}

TEST_CASE("interleaved rounds time every record and settle or stop at the cap", "[kernels][cpu][bench]") {
  const MeasurementRecord small = gemm_record(8, 64, 64), bigger = gemm_record(64, 256, 256);
  BenchOptions o = quick();
  o.repetitions = 2;
  o.max_repetitions = 4;
  // One thread, the default. With two, a CI run (2 cores, tests two at a time) timed every call of
  // the small GEMM at >= 7.9 ms, most likely a thread waiting scheduler ticks at the GEMM's barrier.
  o.threads = 1;
  const std::vector<Measurement> ms = measure_cpu_rounds({small, bigger, small}, o);
  REQUIRE(ms.size() == 3);
  for (const Measurement& m : ms) {
    CHECK(m.repetitions >= 2);
    CHECK(m.repetitions <= 4);
    CHECK(m.time_ms > 0);
    CHECK(m.time_ms <= m.median_ms);
  }
  // 128x the FLOPs: the larger GEMM takes longer whatever the machine is doing.
  CHECK(ms[1].time_ms > ms[0].time_ms);
  std::size_t calls = 0;
  measure_cpu_rounds({small, bigger}, o, [&](std::size_t done, std::size_t total, std::size_t record) {
    CHECK(done < total);
    CHECK(record < 2);
    ++calls;
  });
  CHECK(calls >= 4);
  CHECK(calls <= 8);
}

TEST_CASE("past the measuring cap no timing starts: records not reached come back unmeasured",
          "[kernels][cpu][bench]") {
  BenchOptions o = quick();
  o.threads = 1;
  o.max_s = 1e-9;  // passed before the first timing
  std::size_t timings = 0;
  const auto count = [&](std::size_t, std::size_t, std::size_t) { ++timings; };
  for (const Measurement& m : measure_cpu_rounds({gemm_record(8, 64, 64), gemm_record(16, 32, 32)}, o, count)) {
    CHECK(m.repetitions == 0);
    CHECK(m.calls == 0);
    CHECK(m.backend == "mhacfg-cpu");
  }
  CHECK(timings == 0);
  // A cap far below 1000 rounds of timings of at least min_time_s each: every record gets its first
  // round (it starts at once), none gets all of them.
  o.repetitions = 1000;
  o.min_time_s = 0.005;
  o.max_s = 0.2;
  for (const Measurement& m : measure_cpu_rounds({gemm_record(8, 64, 64), gemm_record(16, 32, 32)}, o)) {
    CHECK(m.repetitions >= 1);
    CHECK(m.repetitions < 1000);
    CHECK(m.time_ms > 0);
  }
}

TEST_CASE("a run's read-only inputs are views of one arena sized for its largest record", "[kernels][cpu][bench]") {
  const MeasurementRecord longer = attention(Phase::decode, 1, 4096, DType::fp32);
  const MeasurementRecord shorter = attention(Phase::decode, 1, 1024, DType::fp32);
  const MeasurementRecord g = gemm_record(16, 256, 512);
  // K and V of the longer decode: 4096 tokens x 2 KV heads x 64, twice; a GEMM's B, k x n.
  CHECK(detail::cpu_call_arena_need(longer).f32 == 4096 * 2 * 64 * 2);
  CHECK(detail::cpu_call_arena_need(g).f32 == 512 * 256);
  CHECK(detail::cpu_call_arena_need(attention(Phase::decode, 1, 1024, DType::bf16)).bf16 == 1024 * 2 * 64 * 2);
  // An attention block's weights (it writes its K/V cache, so that is its own): QKV d_model x (8 + 2 + 2)
  // x 64, O 8 x 64 x d_model.
  MeasurementRecord block = attention(Phase::decode, 1, 1024, DType::fp32);
  block.shape = AttentionBlockOp{Phase::decode, block.attention(), 256};
  CHECK(detail::cpu_call_arena_need(block).f32 == 256 * 12 * 64 + 8 * 64 * 256);
  detail::InputArena arena;
  BenchOptions o = quick();
  o.threads = 1;
  o.repetitions = 1;
  for (const Measurement& m : measure_cpu_rounds({shorter, g, longer}, o, {}, &arena)) CHECK(m.time_ms > 0);
  REQUIRE(arena.f32());
  CHECK(arena.f32()->size() == 4096 * 2 * 64 * 2);  // the largest need, not the sum of all
  // The shorter record's K, V and Q all fit; after the longer one's K and V nothing is left for its Q.
  std::int64_t served = 0;
  detail::prepare_cpu_call(shorter, 1, &arena, &served);
  CHECK(served == 4 * (1024 * 2 * 64 * 2 + 8 * 64));
  const std::function<void()> call = detail::prepare_cpu_call(longer, 1, &arena, &served);
  CHECK(served == 4 * 4096 * 2 * 64 * 2);
  // A view keeps the memory it reads when the arena grows past it.
  arena.reserve(std::int64_t{1} << 22, 0, 1);
  CHECK(arena.f32()->size() == std::int64_t{1} << 22);
  call();
}

TEST_CASE("past the time budget a record still gets five rounds, and no more", "[kernels][cpu][bench]") {
  BenchOptions o = quick();
  o.repetitions = 15;
  o.budget_s = 1e-9;  // spent before the first call
  const std::vector<Measurement> ms = measure_cpu_rounds({gemm_record(8, 64, 64), gemm_record(16, 32, 32)}, o);
  for (const Measurement& m : ms) CHECK(m.repetitions == 5);
}

TEST_CASE("an unsupported record is named before anything is timed", "[kernels][cpu][bench]") {
  const MeasurementRecord ok = gemm_record(8, 8, 8), bad = gemm_record(8, 8, 8, DType::bf16);
  std::size_t calls = 0;
  try {
    measure_cpu_rounds({ok, bad}, quick(), [&](std::size_t, std::size_t, std::size_t) { ++calls; });
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("record 2") != std::string::npos);
  }
  CHECK(calls == 0);
}

TEST_CASE("the CPU device name is the model name", "[kernels][cpu][bench]") {
  CHECK(!cpu_device_name().empty());
}

TEST_CASE("the CPU ceilings are measured", "[kernels][cpu][bench]") {
  const Ceilings c = measure_cpu_ceilings(quick());
  CHECK(c.gemm_flop_per_s > 0);
  CHECK(c.read_bytes_per_s > 0);
  CHECK(c.device == cpu_device_name());
}

// The CLI writes JSON to stdout, so the harness (and Google Benchmark under it) must not print there.
TEST_CASE("the CPU harness prints nothing to stdout", "[kernels][cpu][bench]") {
  MeasurementRecord r;
  r.shape = GemmOp{{32, 32, 32}};
  r.dtype = DType::fp32;
  std::fflush(stdout);
  std::cout.flush();
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  const int saved = dup(1);
  REQUIRE(saved >= 0);
  dup2(fileno(capture), 1);
  measure_cpu(r, quick());
  std::fflush(stdout);
  std::cout.flush();
  dup2(saved, 1);
  close(saved);
  std::fseek(capture, 0, SEEK_END);
  const long printed = std::ftell(capture);
  std::fclose(capture);
  CHECK(printed == 0);
}

}  // namespace
}  // namespace mhacfg::kernels
