// mhacfg_cuda_speed: times issue 5's acceptance shapes and the other rows of the industry table of H200 rates (PyTorch FA2, cuDNN) it compares against
// on one CUDA device with the harness's method (events, warm-up, 256 MiB write flush, median of >= 20
// calls), plus variant/split sweeps that only the device can settle. Prints a short table last;
// --json PATH writes every number. FLOPs and bytes come from costmodel/ops.hpp.
//
//   mhacfg_cuda_speed [--json PATH] [--device N] [--calls N] [--repeat N] [--only SUBSTRING] [--skip SUBSTRING]... [--no-sweeps]
// --repeat: fresh workloads per table row (default 3; the row reports the median of their medians).
// Exit codes: 0 every case ran, 2 bad arguments, 3 a case failed or no device.
#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/ops.hpp"
#include "mhacfg/costmodel/records.hpp"
#include "mhacfg/kernels/cuda/bench.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"
#include "workloads.hpp"

namespace {

using mhacfg::AttentionShape;
using mhacfg::MeasurementRecord;
using mhacfg::OpKind;
using mhacfg::Phase;
namespace cu = mhacfg::kernels::cuda;

enum class Metric { kv_bytes_per_s, flop_per_s };

struct Case {
  std::string name;
  MeasurementRecord rec;
  Metric metric = Metric::flop_per_s;
  double fa2 = 0;    // the industry table's PyTorch flash (FA2) figure, in the row's unit (TB/s or TFLOP/s); 0: none
  double cudnn = 0;  // the industry table's cuDNN figure (for MLA: the two-cuBLAS-bmm route); 0: none
  double bar = 0;    // issue 5's acceptance bar; 0: none
  cu::detail::Knobs knobs;
  bool in_table = true;  // sweeps go to the JSON only
};

MeasurementRecord attention(Phase phase, std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t nq,
                            std::int64_t nkv, std::int64_t d, bool causal) {
  MeasurementRecord r;
  r.shape = mhacfg::AttentionOp{phase, {}};
  AttentionShape& s = r.attention();
  s.batch = batch;
  s.q_len = q_len;
  s.kv_len = kv_len;
  s.num_q_heads = nq;
  s.num_kv_heads = nkv;
  s.head_dim = d;
  s.v_head_dim = d;
  s.causal = causal;
  return r;
}

MeasurementRecord mla(std::int64_t batch, std::int64_t heads, std::int64_t kv_len) {
  MeasurementRecord r = attention(Phase::decode, batch, 1, kv_len, heads, 1, 576, false);
  r.attention().kv_lora_rank = 512;
  r.attention().rope_head_dim = 64;
  r.attention().v_head_dim = 512;
  return r;
}

MeasurementRecord gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  MeasurementRecord r;
  r.shape = mhacfg::GemmOp{mhacfg::GemmShape{m, n, k}};
  return r;
}

MeasurementRecord fp8(MeasurementRecord r) {
  r.dtype = mhacfg::DType::fp8;
  return r;
}

MeasurementRecord block(Phase phase, std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t nq,
                        std::int64_t nkv, std::int64_t d, std::int64_t d_model) {
  MeasurementRecord r = attention(phase, batch, q_len, kv_len, nq, nkv, d, phase == Phase::prefill);
  r.shape = mhacfg::AttentionBlockOp{r.phase(), r.attention(), d_model};
  return r;
}

MeasurementRecord indexer(std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, std::int64_t heads, std::int64_t dim,
                          std::int64_t topk) {
  MeasurementRecord r;
  r.shape = mhacfg::IndexerOp{q_len == 1 ? Phase::decode : Phase::prefill, {batch, q_len, kv_len, heads, dim, topk}};
  r.dtype = mhacfg::DType::fp8;
  return r;
}

// The industry table's rows and the cases beyond it, each with its published FA2 and cuDNN rates and its bar.
void add_table_cases(std::vector<Case>& v) {
  auto add = [&](std::string name, MeasurementRecord r, Metric m, double fa2, double cudnn, double bar) {
    Case c;
    c.name = std::move(name);
    c.rec = std::move(r);
    c.metric = m;
    c.fa2 = fa2;
    c.cudnn = cudnn;
    c.bar = bar;
    v.push_back(std::move(c));
  };
  const auto F = Metric::flop_per_s;
  const auto B = Metric::kv_bytes_per_s;
  // The industry table of H200 rates, in its order; bars are issue 5's acceptance.
  add("prefill causal B4 N4096 32/32 d128", attention(Phase::prefill, 4, 4096, 4096, 32, 32, 128, true), F, 330, 594, 0);
  add("prefill causal B4 N4096 32/8 d128", attention(Phase::prefill, 4, 4096, 4096, 32, 8, 128, true), F, 329, 596, 330);
  add("prefill non-causal B4 N4096 32/32 d128", attention(Phase::prefill, 4, 4096, 4096, 32, 32, 128, false), F, 346, 682, 0);
  add("prefill causal B4 N4096 16/16 d64", attention(Phase::prefill, 4, 4096, 4096, 16, 16, 64, true), F, 265, 412, 0);
  add("decode B64 L32768 32/8 d128", attention(Phase::decode, 64, 1, 32768, 32, 8, 128, false), B, 2.55, 4.62, 4.3);
  add("decode B8 L32768 32/8 d128", attention(Phase::decode, 8, 1, 32768, 32, 8, 128, false), B, 4.18, 4.28, 0);
  add("decode B1 L32768 32/8 d128", attention(Phase::decode, 1, 1, 32768, 32, 8, 128, false), B, 2.31, 2.71, 2.7);
  add("decode MQA B1 L32768 32/1 d128", attention(Phase::decode, 1, 1, 32768, 32, 1, 128, false), B, 0.41, 0.89, 1.0);
  add("MLA decode B64 L32768 16 heads", mla(64, 16, 32768), B, 0, 1.78, 3.5);
  // Beyond the table: compute-bound MLA, head_dim 256, projections, blocks.
  add("MLA decode B64 L32768 128 heads", mla(64, 128, 32768), F, 0, 0, 0);
  add("prefill causal B2 N4096 16/16 d256", attention(Phase::prefill, 2, 4096, 4096, 16, 16, 256, true), F, 0, 0, 0);
  add("decode B64 L8192 32/8 d64", attention(Phase::decode, 64, 1, 8192, 32, 8, 64, false), B, 0, 0, 0);
  add("gemm 8192x4096x4096", gemm(8192, 4096, 4096), F, 0, 0, 0);
  add("gemm 64x6144x4096 (decode QKV)", gemm(64, 6144, 4096), F, 0, 0, 0);
  add("block prefill B1 N4096 32/8 d128 dm4096", block(Phase::prefill, 1, 4096, 4096, 32, 8, 128, 4096), F, 0, 0, 0);
  add("block decode B64 L8192 32/8 d128 dm4096", block(Phase::decode, 64, 1, 8192, 32, 8, 128, 4096), B, 0, 0, 0);
  // The lightning indexer (DeepSeek Sparse Attention; issue 28 step 5): DeepSeek-V3.2's 64 heads of 128
  // and GLM-5's 32, topk 2048; decode in bytes (indexer_bytes: the fp8 keys and their scales, the
  // queries, weights and indices), prefill in FLOPs (indexer_flops). Predictions: kernels/cuda/NOTES.md.
  add("indexer decode B64 L32768 64x128 topk2048", indexer(64, 1, 32768, 64, 128, 2048), B, 0, 0, 0);
  add("indexer decode B64 L32768 32x128 topk2048", indexer(64, 1, 32768, 32, 128, 2048), B, 0, 0, 0);
  add("indexer prefill B1 N4096 64x128 topk2048", indexer(1, 4096, 4096, 64, 128, 2048), F, 0, 0, 0);
  // fp8 (issue 28, step 4): e4m3 GEMMs through cuBLASLt, per-tensor scales, bf16 out; their ceiling
  // column is the fp8 8192^3 rate (measure_fp8_ceiling), the bar issue 28's 1,300 TFLOP/s.
  add("GEMM 8192x8192x8192 fp8 e4m3 (cuBLASLt)", fp8(gemm(8192, 8192, 8192)), F, 0, 0, 1300);
  add("GEMM 64x6144x4096 fp8 e4m3 (decode QKV)", fp8(gemm(64, 6144, 4096)), F, 0, 0, 0);
  // Decode over an fp8 (e4m3) KV cache: TB/s of fp8 K/V bytes (half the bf16 rows' bytes per key). Named
  // so that no bf16 row's name is a substring of theirs (--only matches substrings; h200_check.sh's
  // profile step selects "decode B1 L32768 32/8 d128").
  add("decode fp8 KV B64 L32768 32/8 d128", fp8(attention(Phase::decode, 64, 1, 32768, 32, 8, 128, false)), B, 0, 0, 0);
  add("decode fp8 KV B1 L32768 32/8 d128", fp8(attention(Phase::decode, 1, 1, 32768, 32, 8, 128, false)), B, 0, 0, 0);
}

// Kernel variants, split counts and merges of the table's shapes: rows outside the table.
void add_sweep_cases(std::vector<Case>& v) {
  const auto F = Metric::flop_per_s;
  const auto B = Metric::kv_bytes_per_s;
  auto sweep = [&](const std::string& name, const MeasurementRecord& r, Metric m, cu::detail::Knobs k) {
    Case c;
    c.name = name;
    c.rec = r;
    c.metric = m;
    c.knobs = k;
    c.in_table = false;
    v.push_back(std::move(c));
  };
  for (auto variant : {cu::prefill::Variant::rows16, cu::prefill::Variant::rows32, cu::prefill::Variant::rows32_keys64}) {
    cu::detail::Knobs k;
    k.variant = variant;
    const std::string tag = " [" + cu::prefill::to_string(variant) + "]";
    sweep("prefill causal B4 N4096 32/8 d128" + tag, attention(Phase::prefill, 4, 4096, 4096, 32, 8, 128, true), F, k);
    sweep("prefill non-causal B4 N4096 32/32 d128" + tag, attention(Phase::prefill, 4, 4096, 4096, 32, 32, 128, false), F, k);
    sweep("prefill causal B4 N4096 16/16 d64" + tag, attention(Phase::prefill, 4, 4096, 4096, 16, 16, 64, true), F, k);
  }
  auto splits = [&](const std::string& name, const MeasurementRecord& r, std::initializer_list<int> counts) {
    for (int s : counts) {
      cu::detail::Knobs k;
      k.num_splits = s;
      sweep(name + " [splits " + std::to_string(s) + "]", r, B, k);
    }
  };
  splits("decode B64 L32768 32/8 d128", attention(Phase::decode, 64, 1, 32768, 32, 8, 128, false), {1, 2, 4});
  splits("decode B1 L32768 32/8 d128", attention(Phase::decode, 1, 1, 32768, 32, 8, 128, false), {16, 24, 32, 40});
  splits("decode B8 L32768 32/8 d128", attention(Phase::decode, 8, 1, 32768, 32, 8, 128, false), {2, 3, 4});
  splits("decode MQA B1 L32768 32/1 d128", attention(Phase::decode, 1, 1, 32768, 32, 1, 128, false), {32, 64, 128, 256});
  splits("MLA decode B64 L32768 16 heads", mla(64, 16, 32768), {2, 4, 8});
  // The same plans with the merge inside the grid (decode::Params::fused_merge) instead of the
  // combine kernel.
  for (const auto& [name, r] : {std::pair{std::string("decode MQA B1 L32768 32/1 d128"),
                                          attention(Phase::decode, 1, 1, 32768, 32, 1, 128, false)},
                                std::pair{std::string("decode B1 L32768 32/8 d128"),
                                          attention(Phase::decode, 1, 1, 32768, 32, 8, 128, false)},
                                std::pair{std::string("decode B8 L32768 32/8 d128"),
                                          attention(Phase::decode, 8, 1, 32768, 32, 8, 128, false)}}) {
    cu::detail::Knobs k;
    k.fused_merge = true;
    sweep(name + " [merged in the grid]", r, B, k);
  }
  {  // fp8 GEMM with cuBLASLt's fast accumulation (no periodic promotion; gemm::Fp8Params::fast_accum)
    cu::detail::Knobs k;
    k.fp8_fast_accum = true;
    sweep("GEMM 8192x8192x8192 fp8 e4m3 [fast accumulation]", fp8(gemm(8192, 8192, 8192)), F, k);
  }
  // MQA's split count with the merge in the grid (the planner models the combine kernel's rounds): 256
  // splits fit one wave at 2 blocks per SM on 132 SMs.
  for (int s : {64, 256}) {
    cu::detail::Knobs k;
    k.fused_merge = true;
    k.num_splits = s;
    sweep("decode MQA B1 L32768 32/1 d128 [merged in the grid, splits " + std::to_string(s) + "]",
          attention(Phase::decode, 1, 1, 32768, 32, 1, 128, false), B, k);
  }
  // The Hopper prefills (wgmma + TMA; with FA3's producer warpgroup; and its ping-pong; prepared in
  // session 22, opt-in until measured) on the industry table's four prefill shapes and d256. Last, so a
  // fault in a new kernel cannot spoil the rows above.
  for (auto variant :
       {cu::prefill::Variant::hopper, cu::prefill::Variant::hopper_ws, cu::prefill::Variant::hopper_pingpong}) {
    cu::detail::Knobs k;
    k.variant = variant;
    const std::string tag = " [" + cu::prefill::to_string(variant) + "]";
    auto prefill = [](std::int64_t b, std::int64_t nq, std::int64_t nkv, std::int64_t d, bool causal) {
      return attention(Phase::prefill, b, 4096, 4096, nq, nkv, d, causal);
    };
    sweep("prefill causal B4 N4096 32/32 d128" + tag, prefill(4, 32, 32, 128, true), F, k);
    sweep("prefill causal B4 N4096 32/8 d128" + tag, prefill(4, 32, 8, 128, true), F, k);
    sweep("prefill non-causal B4 N4096 32/32 d128" + tag, prefill(4, 32, 32, 128, false), F, k);
    sweep("prefill causal B4 N4096 16/16 d64" + tag, prefill(4, 16, 16, 64, true), F, k);
    sweep("prefill causal B2 N4096 16/16 d256" + tag, prefill(2, 16, 16, 256, true), F, k);
  }
  // MLA decode on wgmma (issue 28 step 3; prepared in session 22, opt-in until measured), beside the
  // table's mma.sync rows "MLA decode B64 L32768 128 heads" (154 TFLOP/s in run 9) and "... 16 heads";
  // 64 heads on both kernels. After the Hopper prefills, last: a fault here spoils no row above.
  {
    cu::detail::Knobs k;
    k.mla_variant = cu::mla_decode::Variant::wgmma;
    sweep("MLA decode B64 L32768 128 heads [wgmma]", mla(64, 128, 32768), F, k);
    sweep("MLA decode B64 L32768 64 heads [wgmma]", mla(64, 64, 32768), F, k);
    for (int s : {1, 2, 4}) {
      k.num_splits = s;
      sweep("MLA decode B64 L32768 128 heads [wgmma, splits " + std::to_string(s) + "]", mla(64, 128, 32768), F, k);
    }
    sweep("MLA decode B64 L32768 64 heads [mma_sync]", mla(64, 64, 32768), F, cu::detail::Knobs{});
  }
}

std::vector<Case> cases(bool sweeps) {
  std::vector<Case> v;
  add_table_cases(v);
  if (sweeps) add_sweep_cases(v);
  return v;
}

double work_of(const Case& c) {
  const MeasurementRecord& r = c.rec;
  if (r.op() == OpKind::indexer)  // costmodel's counts (ops/indexer.hpp)
    return c.metric == Metric::kv_bytes_per_s ? static_cast<double>(mhacfg::indexer_bytes(r.indexer()))
                                              : static_cast<double>(mhacfg::indexer_flops(r.indexer()));
  if (c.metric == Metric::kv_bytes_per_s) {
    if (r.op() == OpKind::attention_block)  // the block's bytes: weights + KV cache read (projections' activations are small)
      return static_cast<double>(mhacfg::attention_kv_bytes(r.attention(), r.dtype)) +
             2.0 * r.d_model() * (r.attention().num_q_heads + 2 * r.attention().num_kv_heads) * r.attention().head_dim +
             2.0 * r.attention().num_q_heads * r.attention().head_dim * r.d_model();
    return static_cast<double>(mhacfg::attention_kv_bytes(r.attention(), r.dtype));
  }
  if (r.op() == OpKind::gemm) return static_cast<double>(mhacfg::gemm_flops(r.gemm()));
  double f = static_cast<double>(mhacfg::attention_flops(r.attention()));
  if (r.op() == OpKind::attention_block) {
    const AttentionShape& s = r.attention();
    const std::int64_t tokens = s.batch * s.q_len;
    f += static_cast<double>(mhacfg::gemm_flops({tokens, (s.num_q_heads + 2 * s.num_kv_heads) * s.head_dim, r.d_model()}));
    f += static_cast<double>(mhacfg::gemm_flops({tokens, r.d_model(), s.num_q_heads * s.head_dim}));
  }
  return f;
}

struct Args {
  std::string json_path;
  std::string only;
  std::vector<std::string> skip;  // rows whose name holds any of these are not run (h200_check.sh: a kernel whose tests failed)
  int device = 0;
  int calls = cu::detail::kMinTimedCalls;
  int repeat = 3;  // fresh workloads per table row
  bool sweeps = true;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw mhacfg::InputError(k, "", "needs a value");
      return argv[++i];
    };
    if (k == "--json") a.json_path = value();
    else if (k == "--only") a.only = value();
    else if (k == "--skip") a.skip.push_back(value());
    else if (k == "--device") a.device = std::stoi(value());
    else if (k == "--calls") a.calls = std::max(cu::detail::kMinTimedCalls, std::stoi(value()));
    else if (k == "--repeat") a.repeat = std::max(1, std::stoi(value()));
    else if (k == "--no-sweeps") a.sweeps = false;
    else throw mhacfg::InputError(k, "", "unknown option (known: --json, --device, --calls, --repeat, --only, --skip, --no-sweeps)");
  }
  return a;
}

// Whether a row runs: its name holds --only's text (when given) and none of --skip's.
bool selected(const Args& a, const std::string& name) {
  if (!a.only.empty() && name.find(a.only) == std::string::npos) return false;
  return std::none_of(a.skip.begin(), a.skip.end(), [&](const std::string& s) { return name.find(s) != std::string::npos; });
}

std::string fmt(double v, int prec) {
  if (v <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

// The device's bf16 GEMM and copy ceilings, each case's fraction's denominator; zeros and `failed`
// set when they cannot be measured.
mhacfg::kernels::Ceilings measure_ceilings(const Args& args, bool& failed) {
  mhacfg::kernels::BenchOptions bo;
  bo.device = args.device;
  bo.repetitions = args.calls;
  mhacfg::kernels::Ceilings ceil;
  try {
    ceil = mhacfg::kernels::measure_cuda_ceilings(bo);
    std::cout << "ceilings: bf16 GEMM 8192^3 " << fmt(ceil.gemm_flop_per_s / 1e12, 1) << " TFLOP/s, D2D copy "
              << fmt(ceil.read_bytes_per_s / 1e12, 2) << " TB/s (read+write)\n";
  } catch (const std::exception& e) {
    std::cout << "ceilings FAILED: " << e.what() << "\n";
    failed = true;
  }
  return ceil;
}

// The fp8 e4m3 GEMM 8192^3 rate (cuBLASLt, the harness's method): the ceiling of the fp8 GEMM rows;
// 0 when it cannot be measured.
double measure_fp8_ceiling(const Args& args, cu::Stream stream) {
  try {
    auto w = cu::detail::make_workload(fp8(gemm(8192, 8192, 8192)), {}, 0x66703863, stream);
    const auto t = cu::detail::time_calls([&](cu::Stream s) { w->run(s); }, args.calls, cu::detail::kWarmupCalls,
                                          cu::detail::Flush::write, stream);
    const double rate = static_cast<double>(mhacfg::gemm_flops({8192, 8192, 8192})) / (t.median_ms * 1e-3);
    std::cout << "ceilings: fp8 e4m3 GEMM 8192^3 " << fmt(rate / 1e12, 1) << " TFLOP/s\n";
    return rate;
  } catch (const std::exception& e) {
    std::cout << "fp8 ceiling FAILED: " << e.what() << "\n";
    return 0;
  }
}

// Times one case and fills its JSON row and, for a table row, its line of the table; false when it
// failed (the row then holds the error).
bool time_case(const Case& c, const Args& args, const mhacfg::kernels::Ceilings& ceil, double fp8_ceiling,
               cu::Stream stream, std::uint64_t& seed, nlohmann::json& j, std::vector<std::string>& table) {
  char line[256];
  j["case"] = c.name;
  j["record"] = mhacfg::record_to_json(c.rec);
  const bool bytes = c.metric == Metric::kv_bytes_per_s;
  constexpr double unit = 1e12;  // TB/s or TFLOP/s
  const char* unit_name = bytes ? "TB/s" : "TFLOP/s";
  try {
    // The table's rows are timed on `repeat` fresh workloads (new allocations and inputs) and the
    // median of their medians is reported: one allocation's timing can sit 5-10 % off another's
    // on the same kernel (prefill and small decodes on the H200), which a median of calls on one
    // workload does not show.
    const int reps = c.in_table ? args.repeat : 1;
    std::vector<cu::detail::Timing> runs;
    std::unique_ptr<cu::detail::Workload> w;
    for (int rep = 0; rep < reps; ++rep) {
      w.reset();  // free the previous inputs before allocating the next
      w = cu::detail::make_workload(c.rec, c.knobs, seed++, stream);
      auto fn = [&](cu::Stream s) { w->run(s); };
      runs.push_back(cu::detail::time_calls(fn, args.calls, cu::detail::kWarmupCalls, cu::detail::Flush::write, stream));
    }
    std::sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) { return x.median_ms < y.median_ms; });
    const cu::detail::Timing t = runs[runs.size() / 2];
    auto fn = [&](cu::Stream s) { w->run(s); };
    if (reps > 1) {
      nlohmann::json each = nlohmann::json::array();
      for (const auto& x : runs) each.push_back(x.median_ms);
      j["workload_medians_ms"] = each;
    }
    const double work = work_of(c);
    const double rate = work / (t.median_ms * 1e-3);
    const bool fp8_gemm = c.rec.op() == OpKind::gemm && c.rec.dtype == mhacfg::DType::fp8;
    const double ceiling = bytes ? ceil.read_bytes_per_s : fp8_gemm ? fp8_ceiling : ceil.gemm_flop_per_s;
    j["kernel"] = w->kernel();
    j["num_splits"] = w->num_splits();
    j["time_ms"] = t.median_ms;
    j["p25_ms"] = t.p25_ms;
    j["p75_ms"] = t.p75_ms;
    j["spread"] = t.spread();
    j["calls"] = t.calls;
    j[bytes ? "kv_bytes" : "flops"] = work;
    j[bytes ? "bytes_per_s" : "flop_per_s"] = rate;
    j["fraction_of_ceiling"] = ceiling > 0 ? rate / ceiling : 0;
    if (c.fa2 > 0) j["fa2"] = c.fa2;
    if (c.cudnn > 0) j["cudnn"] = c.cudnn;
    if (c.bar > 0) {
      j["bar"] = c.bar;
      j["pass"] = rate / unit >= c.bar;
    }
    if (bytes && c.rec.op() == OpKind::attention) {  // diagnostic: the same call after a clean (read) flush
      const auto tc = cu::detail::time_calls(fn, args.calls, 1, cu::detail::Flush::write_and_read, stream);
      j["time_ms_clean_l2"] = tc.median_ms;
    }
    std::cout << c.name << ": " << fmt(t.median_ms, 4) << " ms, " << fmt(rate / unit, 3) << " " << unit_name
              << " (" << w->kernel() << ", spread " << fmt(t.spread() * 100, 1) << "%)" << std::endl;
    if (c.in_table) {
      std::snprintf(line, sizeof line, "%-42s %9s %-7s %6s %6s %7s%% %6s %s", c.name.c_str(),
                    fmt(rate / unit, bytes ? 2 : 1).c_str(), unit_name, fmt(c.fa2, 2).c_str(), fmt(c.cudnn, 2).c_str(),
                    fmt(ceiling > 0 ? 100 * rate / ceiling : 0, 1).c_str(), fmt(c.bar, 2).c_str(),
                    c.bar > 0 ? (rate / unit >= c.bar ? "PASS" : "MISS") : "");
      table.push_back(line);
    }
  } catch (const std::exception& e) {
    j["error"] = e.what();
    std::cout << c.name << ": FAILED: " << e.what() << std::endl;
    if (c.in_table) {
      std::snprintf(line, sizeof line, "%-42s FAILED", c.name.c_str());
      table.push_back(line);
    }
    return false;
  }
  return true;
}

// Writes the JSON report; false (and a line on stderr) when the file cannot be written.
bool write_json(const std::string& path, const nlohmann::json& out) {
  std::ofstream f(path);
  f << out.dump(2) << "\n";
  if (f) return true;
  std::cerr << "mhacfg_cuda_speed: cannot write " << path << "\n";
  return false;
}

int run(const Args& args) {
  if (mhacfg::kernels::cuda_device_count() == 0) {
    std::cerr << "mhacfg_cuda_speed: no CUDA device\n";
    return mhacfg::kExitRuntime;
  }
  cu::set_device(args.device);
  const cu::DeviceInfo& info = cu::device_info(args.device);
  std::cout << "device " << args.device << ": " << info.name << ", sm_" << info.compute_capability_major
            << info.compute_capability_minor << ", " << info.sm_count << " SMs, L2 " << (info.l2_bytes >> 20) << " MiB\n";

  nlohmann::json out;
  out["device"] = info.name;
  out["sm_count"] = info.sm_count;
  out["method"] = "CUDA events; 3 warm-up calls; 256 MiB written before each timed call; median of >= 20 calls; "
                  "table rows: median over " + std::to_string(args.repeat) + " fresh workloads";
  bool failed = false;
  const mhacfg::kernels::Ceilings ceil = measure_ceilings(args, failed);
  cu::Stream stream = cu::create_stream();
  bool any_fp8_gemm = false;  // the fp8 ceiling is timed only for runs that have an fp8 GEMM row
  for (const Case& c : cases(args.sweeps))
    if (selected(args, c.name) && c.rec.op() == OpKind::gemm &&
        c.rec.dtype == mhacfg::DType::fp8)
      any_fp8_gemm = true;
  const double fp8_ceiling = any_fp8_gemm ? measure_fp8_ceiling(args, stream) : 0.0;
  if (any_fp8_gemm && fp8_ceiling <= 0) failed = true;
  out["ceilings"] = {{"gemm_flop_per_s", ceil.gemm_flop_per_s},
                     {"copy_bytes_per_s", ceil.read_bytes_per_s},
                     {"gemm_fp8_flop_per_s", fp8_ceiling}};

  std::vector<std::string> table;
  char line[256];
  std::snprintf(line, sizeof line, "%-42s %9s %-7s %6s %6s %8s %6s %s", "case", "ours", "unit", "FA2", "cuDNN",
                "ceiling", "bar", "verdict");
  table.push_back(line);
  nlohmann::json rows = nlohmann::json::array();
  std::uint64_t seed = 1;
  for (const Case& c : cases(args.sweeps)) {
    if (!selected(args, c.name)) continue;
    nlohmann::json j;
    if (!time_case(c, args, ceil, fp8_ceiling, stream, seed, j, table)) failed = true;
    rows.push_back(j);
  }
  cu::destroy_stream(stream);
  out["cases"] = rows;
  if (!args.json_path.empty() && !write_json(args.json_path, out)) failed = true;
  std::cout << "\n";
  for (const auto& l : table) std::cout << l << "\n";
  return failed ? mhacfg::kExitRuntime : mhacfg::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const mhacfg::InputError& e) {
    std::cerr << "mhacfg_cuda_speed: " << e.what() << "\n";
    return mhacfg::kExitInvalidInput;
  } catch (const std::exception& e) {
    std::cerr << "mhacfg_cuda_speed: " << e.what() << "\n";
    return mhacfg::kExitRuntime;
  }
}
