// mhacfg_kernels_bench: Google Benchmark runs of the CPU kernels on representative shapes, with
// FLOP/s and bytes/s counters (counted by mhacfg/costmodel/ops.hpp) and each kernel's fraction of
// the machine ceilings measured first in the same run with the same threads:
//   gemm_frac = FLOP/s / Eigen SGEMM FLOP/s,  read_frac = KV bytes/s / streaming read bytes/s
// (Google Benchmark prints rate counters with a "/s" suffix; these two are plain fractions).
// Usage: mhacfg_kernels_bench [--threads=N] [--targets[=ROUNDS]] [Google Benchmark flags]. Without
// options it runs in under a minute on two cores.
//
// --targets checks the speed targets on a shared, noisy machine: each of ROUNDS rounds
// (default 5) measures a ceiling, the kernels, and the ceiling again, and divides by the geometric
// mean of the two ceilings, so every fraction compares neighbours in time. It prints every round
// and the median fractions:
//   prefill attention (4096 x 4096 causal, 32 heads, head_dim 128) / Eigen SGEMM      target >= 0.60
//   decode attention (128k keys, 32/8 heads, head_dim 128, fp32 and bf16 K/V) / read   target >= 0.70
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mhacfg/kernels/bench.hpp"
#include "src/ceiling_calls.hpp"
#include "src/cpu_calls.hpp"
#include "src/timing.hpp"

namespace {

using mhacfg::AttentionShape;
using mhacfg::DType;
using mhacfg::MeasurementRecord;
using mhacfg::OpKind;
using mhacfg::Phase;

MeasurementRecord attention(Phase phase, std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t nq,
                            std::int64_t nkv, std::int64_t head_dim, DType dtype) {
  MeasurementRecord r;
  r.shape = mhacfg::AttentionOp{phase, {}};
  r.dtype = dtype;
  AttentionShape& s = r.attention();
  s.batch = batch;
  s.q_len = q_len;
  s.kv_len = kv_len;
  s.num_q_heads = nq;
  s.num_kv_heads = nkv;
  s.head_dim = s.v_head_dim = head_dim;
  s.causal = phase == Phase::prefill;
  return r;
}

MeasurementRecord mla(std::int64_t q_len, std::int64_t kv_len, std::int64_t heads, DType dtype) {
  MeasurementRecord r = attention(Phase::decode, 1, q_len, kv_len, heads, 1, 576, dtype);
  r.attention().kv_lora_rank = 512;
  r.attention().rope_head_dim = 64;
  r.attention().v_head_dim = 512;
  r.attention().causal = true;
  return r;
}

MeasurementRecord gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  MeasurementRecord r;
  r.shape = mhacfg::GemmOp{{m, n, k}};
  r.dtype = DType::fp32;
  return r;
}

MeasurementRecord block(Phase phase, std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t d_model,
                        std::int64_t nq, std::int64_t nkv, std::int64_t head_dim, DType dtype) {
  MeasurementRecord r = attention(phase, batch, q_len, kv_len, nq, nkv, head_dim, dtype);
  r.shape = mhacfg::AttentionBlockOp{r.phase(), r.attention(), d_model};
  return r;
}

MeasurementRecord linear(mhacfg::LinearKind kind, std::int64_t batch, std::int64_t q_len, std::int64_t kh, std::int64_t vh,
                         std::int64_t dk, std::int64_t dv, DType state) {
  MeasurementRecord r;
  r.shape = mhacfg::LinearAttentionOp{q_len == 1 ? Phase::decode : Phase::prefill, {batch, q_len, kh, vh, dk, dv, 4, kind}};
  r.dtype = state;
  return r;
}

MeasurementRecord indexer(std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t heads, std::int64_t topk) {
  MeasurementRecord r;
  r.shape = mhacfg::IndexerOp{q_len == 1 ? Phase::decode : Phase::prefill, {batch, q_len, kv_len, heads, 128, topk}};
  r.dtype = DType::fp8;
  return r;
}

std::string name_of(const MeasurementRecord& r) {
  if (r.op() == OpKind::indexer) {
    const mhacfg::IndexerShape& s = r.indexer();
    return r.op_class() + "/b" + std::to_string(s.batch) + "_q" + std::to_string(s.q_len) + "_kv" + std::to_string(s.kv_len) +
           "_h" + std::to_string(s.num_heads) + "_d" + std::to_string(s.head_dim) + "_top" + std::to_string(s.topk);
  }
  if (r.op() == OpKind::linear_attention) {
    const mhacfg::LinearAttentionShape& s = r.linear();
    return r.op_class() + "/" + std::string(mhacfg::to_string(s.kind)) + "/" + std::string(mhacfg::to_string(r.dtype)) +
           "_b" + std::to_string(s.batch) + "_q" + std::to_string(s.q_len) + "_h" + std::to_string(s.num_k_heads) + "x" +
           std::to_string(s.num_v_heads) + "_d" + std::to_string(s.head_k_dim) + "x" + std::to_string(s.head_v_dim);
  }
  if (r.op() == OpKind::gemm)
    return "gemm/m" + std::to_string(r.gemm().m) + "_n" + std::to_string(r.gemm().n) + "_k" + std::to_string(r.gemm().k);
  const AttentionShape& s = r.attention();
  std::string n = r.op_class() + "/" + std::string(mhacfg::to_string(r.dtype)) + "_b" + std::to_string(s.batch) +
                  "_q" + std::to_string(s.q_len) + "_kv" + std::to_string(s.kv_len) + "_h" +
                  std::to_string(s.num_q_heads) + "x" + std::to_string(s.kv_heads()) + "_d" + std::to_string(s.qk_dim());
  if (r.op() == OpKind::attention_block) n += "_dm" + std::to_string(r.d_model());
  return n;
}

// FLOPs and the bytes the kernel's roofline is quoted on, from the costmodel.
void counts(const MeasurementRecord& r, double& flop, double& bytes) {
  if (r.op() == OpKind::gemm) {
    flop = static_cast<double>(mhacfg::gemm_flops(r.gemm()));
    bytes = static_cast<double>(mhacfg::gemm_bytes(r.gemm(), DType::fp32));
    return;
  }
  if (r.op() == OpKind::linear_attention) {  // the state read and written, each token's inputs and output
    flop = static_cast<double>(mhacfg::linear_attention_flops(r.linear()));
    bytes = static_cast<double>(mhacfg::linear_attention_bytes(r.linear(), r.dtype));
    return;
  }
  if (r.op() == OpKind::indexer) {  // fp8 keys read once per sequence, queries, weights, indices
    flop = static_cast<double>(mhacfg::indexer_flops(r.indexer()));
    bytes = static_cast<double>(mhacfg::indexer_bytes(r.indexer()));
    return;
  }
  const AttentionShape& s = r.attention();
  flop = static_cast<double>(mhacfg::attention_flops(s));
  bytes = static_cast<double>(mhacfg::attention_kv_bytes(s, r.dtype));
  if (r.op() == OpKind::attention_block) {
    const std::int64_t tokens = s.batch * s.q_len;
    const std::int64_t qkv_width = (s.num_q_heads + s.num_kv_heads) * s.head_dim + s.num_kv_heads * s.v_head_dim;
    flop += static_cast<double>(mhacfg::gemm_flops({tokens, qkv_width, r.d_model()}) +
                                mhacfg::gemm_flops({tokens, r.d_model(), s.num_q_heads * s.v_head_dim}));
  }
}

// The --targets check (see the file header). Prints to stdout; returns 0 when every median meets
// its target.
int check_targets(int threads, int rounds) {
  namespace d = mhacfg::kernels::detail;
  mhacfg::kernels::BenchOptions o;
  o.threads = threads;
  o.repetitions = 3;
  o.min_time_s = 0.05;
  const MeasurementRecord prefill = attention(Phase::prefill, 1, 4096, 4096, 32, 32, 128, DType::fp32);
  const MeasurementRecord decode32 = attention(Phase::decode, 1, 1, 131072, 32, 8, 128, DType::fp32);
  const MeasurementRecord decode16 = attention(Phase::decode, 1, 1, 131072, 32, 8, 128, DType::bf16);
  const auto gemm_call = d::prepare_gemm_ceiling(threads);
  const auto read_call = d::prepare_read_ceiling(threads);
  const auto prefill_call = d::prepare_cpu_call(prefill, threads);
  const auto decode32_call = d::prepare_cpu_call(decode32, threads);
  const auto decode16_call = d::prepare_cpu_call(decode16, threads);
  const double gemm_flop = static_cast<double>(mhacfg::gemm_flops(d::kCeilingGemm));
  const double prefill_flop = static_cast<double>(mhacfg::attention_flops(prefill.attention()));
  const double kv32 = static_cast<double>(mhacfg::attention_kv_bytes(decode32.attention(), DType::fp32));
  const double kv16 = static_cast<double>(mhacfg::attention_kv_bytes(decode16.attention(), DType::bf16));
  auto seconds = [&](const char* name, const std::function<void()>& call, int repetitions) {
    mhacfg::kernels::BenchOptions oo = o;
    oo.repetitions = repetitions;
    return d::time_call(name, call, oo).median_s;
  };

  std::printf("%s, %d threads\n", mhacfg::kernels::cpu_device_name().c_str(), threads);
  std::printf("round  SGEMM GFLOP/s  prefill GFLOP/s  frac  |  read GB/s  decode fp32 GB/s  frac  decode bf16 GB/s  frac\n");
  std::vector<double> f_prefill, f_d32, f_d16;
  const double read_bytes = static_cast<double>(d::kCeilingReadSliceBytes);  // per call of read_call
  for (int round = 1; round <= rounds; ++round) {
    const double g_before = gemm_flop / seconds("sgemm", gemm_call, 3);
    const double pf = prefill_flop / seconds("prefill", prefill_call, 1);
    const double g = std::sqrt(g_before * gemm_flop / seconds("sgemm", gemm_call, 3));
    const double rd_before = read_bytes / seconds("read", read_call, 3);
    const double d32 = kv32 / seconds("decode fp32", decode32_call, 3);
    const double d16 = kv16 / seconds("decode bf16", decode16_call, 3);
    const double rd = std::sqrt(rd_before * read_bytes / seconds("read", read_call, 3));
    f_prefill.push_back(pf / g);
    f_d32.push_back(d32 / rd);
    f_d16.push_back(d16 / rd);
    std::printf("%5d  %13.1f  %15.1f  %4.2f  |  %9.2f  %16.2f  %4.2f  %16.2f  %4.2f\n", round, g / 1e9, pf / 1e9, pf / g,
                rd / 1e9, d32 / 1e9, d32 / rd, d16 / 1e9, d16 / rd);
  }
  const double m_prefill = d::quantile(f_prefill, 0.5), m_d32 = d::quantile(f_d32, 0.5), m_d16 = d::quantile(f_d16, 0.5);
  std::printf("median fractions: prefill %.2f of SGEMM (target 0.60), decode fp32 %.2f and bf16 %.2f of read (target 0.70)\n",
              m_prefill, m_d32, m_d16);
  return m_prefill >= 0.6 && m_d32 >= 0.7 && m_d16 >= 0.7 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<char*> args;
  int target_rounds = 0;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      threads = std::max(1, std::atoi(argv[i] + 10));
    else if (std::strcmp(argv[i], "--targets") == 0)
      target_rounds = 5;
    else if (std::strncmp(argv[i], "--targets=", 10) == 0)
      target_rounds = std::max(1, std::atoi(argv[i] + 10));
    else
      args.push_back(argv[i]);
  }
  if (target_rounds > 0) return check_targets(threads, target_rounds);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 2;

  // Ceilings first (measure_cpu_ceilings clears the benchmark registry when done).
  mhacfg::kernels::BenchOptions o;
  o.threads = threads;
  o.repetitions = 5;
  o.min_time_s = 0.05;
  const mhacfg::kernels::Ceilings ceil = mhacfg::kernels::measure_cpu_ceilings(o);
  std::fprintf(stderr, "%s, %d threads: Eigen SGEMM %.1f GFLOP/s, streaming read %.1f GB/s\n", ceil.device.c_str(),
               threads, ceil.gemm_flop_per_s / 1e9, ceil.read_bytes_per_s / 1e9);

  const MeasurementRecord records[] = {
      gemm(2048, 2048, 2048),
      gemm(512, 6144, 4096),                                                       // fused QKV, 512 tokens
      attention(Phase::prefill, 1, 4096, 4096, 32, 32, 128, DType::fp32),          // the prefill target
      attention(Phase::prefill, 1, 2048, 2048, 32, 8, 128, DType::fp32),           // GQA
      attention(Phase::decode, 1, 1, 131072, 32, 8, 128, DType::fp32),             // 1 GiB fp32 KV
      attention(Phase::decode, 1, 1, 131072, 32, 8, 128, DType::bf16),             // 512 MiB bf16 KV
      attention(Phase::decode, 16, 1, 8192, 32, 8, 128, DType::bf16),              // batched decode
      mla(1, 32768, 128, DType::bf16),                                             // MLA, 128 heads
      mla(1, 131072, 16, DType::bf16),                                             // MLA, 16 heads
      block(Phase::decode, 8, 1, 4096, 4096, 32, 8, 128, DType::bf16),
      // Qwen3-Next's Gated DeltaNet (16 key / 32 value heads of 128) and Nemotron-H's Mamba2 (8
      // groups, 128 heads of 64, d_state 128): a decode step at batch 16, and a 1024-token prefill.
      linear(mhacfg::LinearKind::gated_deltanet, 16, 1, 16, 32, 128, 128, DType::bf16),
      linear(mhacfg::LinearKind::gated_deltanet, 1, 1024, 16, 32, 128, 128, DType::fp32),
      linear(mhacfg::LinearKind::mamba2, 16, 1, 8, 128, 128, 64, DType::bf16),
      // DeepSeek-V3.2's lightning indexer (64 heads of 128, top 2048): a decode step over 32k keys,
      // and a 1024-token prefill; GLM-5's (32 heads) decoding 4 sequences.
      indexer(1, 1, 32768, 64, 2048),
      indexer(1, 1024, 1024, 64, 2048),
      indexer(4, 1, 16384, 32, 2048),
  };
  for (const MeasurementRecord& r : records) {
    double flop = 0, bytes = 0;
    counts(r, flop, bytes);
    // Inputs are made on the first run of a benchmark, so a --benchmark_filter run allocates only
    // what it times.
    auto call = std::make_shared<std::function<void()>>();
    const double gemm_ceiling = ceil.gemm_flop_per_s, read_ceiling = ceil.read_bytes_per_s;
    benchmark::RegisterBenchmark(name_of(r).c_str(), [=](benchmark::State& state) {
      if (!*call) *call = mhacfg::kernels::detail::prepare_cpu_call(r, threads);
      for (auto _ : state) (*call)();
      state.counters["FLOP/s"] = benchmark::Counter(flop, benchmark::Counter::kIsIterationInvariantRate);
      state.counters["bytes/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
      // Rates divided by the ceilings: the fraction of the machine each kernel reaches.
      state.counters["gemm_frac"] =
          benchmark::Counter(flop / gemm_ceiling, benchmark::Counter::kIsIterationInvariantRate);
      state.counters["read_frac"] =
          benchmark::Counter(bytes / read_ceiling, benchmark::Counter::kIsIterationInvariantRate);
    })->UseRealTime()->Unit(benchmark::kMillisecond)->MinWarmUpTime(0.1)->MinTime(0.3);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
