// The fitter: parameters recovered from synthetic timings; cross-validated accuracy on real H200
// timings (shared/data, copied to tests/fixtures) against shapes left out of the fit.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/predict.hpp"

using namespace mhacfg;

namespace {

MeasurementRecord decode(std::int64_t batch, std::int64_t kv, std::int64_t nq, std::int64_t nkv, std::int64_t hd) {
  MeasurementRecord r;
  r.shape = AttentionOp{Phase::decode, AttentionShape{batch, 1, kv, nq, nkv, hd, hd, false, 0, 0, 0}};
  r.dtype = DType::bf16;
  return r;
}

SpecCeilings h200_spec() {
  SpecCeilings s;
  s.memory_bytes = 141'000'000'000;
  s.mem_bw_bytes_per_s = 4.8e12;
  s.peak_flop_per_s["bf16"] = 989e12;
  s.compute_units = 132;
  return s;
}

// One CPU thread's measured ceilings (a warm-cache fit: no fill or span terms).
SpecCeilings one_cpu_thread(double peak_flop_per_s, double read_bytes_per_s) {
  SpecCeilings cpu;
  cpu.mem_bw_bytes_per_s = read_bytes_per_s;
  cpu.peak_flop_per_s["fp32"] = peak_flop_per_s;
  cpu.compute_units = 1;
  return cpu;
}

// Times each record with `truth` (exact synthetic data from the model family) and fits the class
// on one warm-cache CPU thread.
OpFit fit_cpu_truth(const std::string& op_class, std::vector<MeasurementRecord> rs, const OpModel& truth,
                    const SpecCeilings& cpu) {
  std::vector<const MeasurementRecord*> ptrs;
  for (auto& r : rs) {
    r.time_ms = predict_seconds(truth, record_features(r)) * 1e3;
    ptrs.push_back(&r);
  }
  return fit_op_class(op_class, ptrs, cpu, false, true);
}

std::vector<MeasurementRecord> h200(const std::string& backend) {
  std::vector<MeasurementRecord> out;
  for (auto& r : read_records(std::string(MHACFG_FIXTURES_DIR) + "/h200-torch.train.jsonl"))
    if (r.op() == OpKind::gemm || r.backend == backend) out.push_back(r);
  return out;
}

}  // namespace

TEST_CASE("decode parameters are recovered from synthetic timings", "[fit]") {
  // Known model: t0 8 us, 4 TB/s, 300 TFLOP/s, half_streams 6, gamma 0.8, no overlap.
  OpModel truth;
  truth.t0_s = 8e-6;
  truth.bw_bytes_per_s = 4e12;
  truth.peak_flop_per_s = 3e14;
  truth.half_streams = 6;
  truth.stream_exponent = 0.8;
  std::vector<MeasurementRecord> rs;
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);  // 1 % timing noise
  for (std::int64_t b : {1, 2, 4, 8, 16, 32, 64})
    for (std::int64_t kv : {512, 2048, 8192, 32768})
      for (auto [nq, nkv] : {std::pair{32, 8}, std::pair{32, 1}, std::pair{16, 16}}) {
        MeasurementRecord r = decode(b, kv, nq, nkv, 128);
        r.time_ms = predict_seconds(truth, op_features(r.attention(), r.dtype)) * 1e3 * std::exp(noise(rng));
        rs.push_back(r);
      }
  std::vector<const MeasurementRecord*> ptrs;
  for (const auto& r : rs) ptrs.push_back(&r);
  const OpFit fit = fit_op_class("attention/decode", ptrs, h200_spec(), false);
  // Named tolerance: 1 % noise on 84 points pins each scale to a few per cent.
  constexpr double kRecovery = 0.10;
  CHECK(fit.model.t0_s == Approx(truth.t0_s).epsilon(kRecovery));
  CHECK(fit.model.bw_bytes_per_s == Approx(truth.bw_bytes_per_s).epsilon(kRecovery));
  CHECK(fit.model.peak_flop_per_s == Approx(truth.peak_flop_per_s).epsilon(0.25));  // compute is a small share
  CHECK(fit.model.half_streams == Approx(truth.half_streams).epsilon(0.25));
  CHECK(fit.fit_median_ape < 0.015);
  CHECK(fit.records == 84);
  CHECK(fit.range.at("parallel_units").first == 1);    // one MQA sequence
  CHECK(fit.range.at("parallel_units").second == 64 * 16);  // 64 sequences of 16 KV heads
}

TEST_CASE("prefill span and softmax terms are recovered", "[fit]") {
  OpModel truth;
  truth.t0_s = 5e-6;
  truth.peak_flop_per_s = 6e14;
  truth.softmax_rate = 2e12;  // exponentials per second
  truth.causal_factor = 0.05;
  truth.slots = 264;
  truth.half_streams = 50;
  truth.bw_bytes_per_s = 4.8e12;
  truth.overlap = true;
  std::vector<MeasurementRecord> rs;
  for (std::int64_t len : {512, 1024, 2048, 4096, 8192, 16384})
    for (auto [nq, nkv, hd] : {std::tuple{32, 8, 128}, std::tuple{16, 16, 64}, std::tuple{16, 4, 256}})
      for (bool causal : {true, false}) {
        MeasurementRecord r;
        r.shape = AttentionOp{Phase::prefill, AttentionShape{1, len, len, nq, nkv, hd, hd, causal, 0, 0, 0}};
        r.time_ms = predict_seconds(truth, op_features(r.attention(), DType::bf16)) * 1e3;
        rs.push_back(r);
      }
  std::vector<const MeasurementRecord*> ptrs;
  for (const auto& r : rs) ptrs.push_back(&r);
  const OpFit fit = fit_op_class("attention/prefill", ptrs, h200_spec(), false);
  CHECK(fit.fit_p90_ape < 0.02);  // exact synthetic data: the model family contains the truth
  CHECK(fit.model.peak_flop_per_s == Approx(truth.peak_flop_per_s).epsilon(0.05));
  CHECK(fit.model.softmax_rate == Approx(truth.softmax_rate).epsilon(0.10));
  CHECK(fit.model.slots == Approx(truth.slots).epsilon(0.10));
}

TEST_CASE("CPU prefill: the pairs and key tiles its query tiles compute, masked ones included, match a walk of the tiles", "[fit][model]") {
  // The kernel (kernels/cpu/src/prefill_attention.cpp): tiles of prefill_tile_rows / group
  // positions, each against keys [begin(first position), last position + 1). The walk counts pairs
  // per query head, and rows x key tiles as the kernel's key loop makes them: tiles of
  // prefill_key_tile keys end at the block's last visible key, the first one takes what is left.
  struct Walked {
    double pairs = 0, rows_x_tiles = 0;
  };
  auto walk = [](const AttentionShape& s) {
    const std::int64_t group = s.num_q_heads / s.num_kv_heads;
    const std::int64_t block = std::min(s.q_len, std::max<std::int64_t>(1, CpuKernelFacts{}.prefill_tile_rows / group));
    Walked w;
    for (std::int64_t first = 0; first < s.q_len; first += block) {
      const std::int64_t n = std::min(block, s.q_len - first);
      const std::int64_t p0 = s.kv_len - s.q_len + first, p1 = p0 + n - 1;
      std::int64_t begin = 0;
      if (s.causal && s.window > 0) begin = std::max<std::int64_t>(0, p0 - s.window + 1);
      if (s.causal && s.chunk > 0) begin = p0 / s.chunk * s.chunk;
      const std::int64_t end = s.causal ? p1 + 1 : s.kv_len;
      w.pairs += double(n) * double(end - begin);
      for (std::int64_t k1 = end; k1 > begin; k1 -= CpuKernelFacts{}.prefill_key_tile) w.rows_x_tiles += double(n * group);
    }
    return w;
  };
  for (auto [q, kv, nq, nkv, causal, window, chunk] :
       {std::tuple{768, 768, 8, 2, true, 0, 0}, std::tuple{1000, 1000, 8, 8, true, 0, 0},
        std::tuple{300, 1200, 12, 4, true, 0, 0}, std::tuple{513, 513, 28, 4, true, 0, 0},
        std::tuple{2048, 2048, 32, 8, true, 256, 0}, std::tuple{700, 900, 7, 1, true, 100, 0},
        std::tuple{384, 384, 8, 8, false, 0, 0}, std::tuple{5, 5, 256, 1, true, 0, 0},
        std::tuple{2048, 2048, 40, 8, true, 0, 512}, std::tuple{700, 1000, 8, 2, true, 0, 300}}) {
    const AttentionShape s{1, q, kv, nq, nkv, 128, 128, causal, window, 0, 0, chunk};
    CAPTURE(q, kv, nq, nkv, causal, window, chunk);
    const Walked w = walk(s);
    CHECK(cpu_prefill_pairs_computed(s) == w.pairs);
    CHECK(cpu_prefill_tile_rows(s) == w.rows_x_tiles);
    if (q > kDecodeMaxQueries) CHECK(op_features(s, DType::fp32).tile_elements == w.rows_x_tiles * nkv * (128 + 128));
    const double exact = double(attention_pairs(s));
    const OpFeatures f = op_features(s, DType::fp32);
    CHECK(f.masked_flop == Approx(f.flop * (w.pairs / exact - 1)).margin(1e-6 * f.flop));
    if (!causal) CHECK(f.masked_flop == 0);
  }
  // Group 1 tiles 128 positions (8 tiles of 128 x 127 / 2 masked pairs per head), group 4 tiles 32
  // (32 tiles of 32 x 31 / 2): the same useful work, 127 / 31 times the masked work.
  const OpFeatures g1 = op_features(AttentionShape{1, 1024, 1024, 8, 8, 128, 128, true, 0, 0, 0}, DType::fp32);
  const OpFeatures g4 = op_features(AttentionShape{1, 1024, 1024, 8, 2, 128, 128, true, 0, 0, 0}, DType::fp32);
  CHECK(g1.flop == g4.flop);
  CHECK(g1.masked_flop == Approx(g4.masked_flop * 127.0 / 31.0));
}

TEST_CASE("the CPU prefill model recovers the masked work's weight, the per-tile rate and the causal factor", "[fit]") {
  OpModel truth;
  truth.t0_s = 40e-6;
  truth.peak_flop_per_s = 145e9;
  truth.softmax_rate = 1.1e9;
  truth.causal_factor = 0.08;
  truth.masked_weight = 1.8;
  truth.tile_rate = 2e9;
  const SpecCeilings cpu = one_cpu_thread(145e9, 16e9);
  std::vector<MeasurementRecord> rs;
  for (std::int64_t len : {200, 256, 512, 1024})
    for (auto [nq, nkv, hd] : {std::tuple{8, 8, 64}, std::tuple{8, 2, 64}, std::tuple{8, 2, 128}, std::tuple{4, 1, 256}})
      for (bool causal : {true, false}) {
        MeasurementRecord r;
        r.shape = AttentionOp{Phase::prefill, AttentionShape{1, len, len, nq, nkv, hd, hd, causal, 0, 0, 0}};
        r.dtype = DType::fp32;
        rs.push_back(r);
      }
  const OpFit fit = fit_cpu_truth("attention/prefill", rs, truth, cpu);
  CHECK(fit.fit_p90_ape < 0.02);  // exact synthetic data from the model family
  CHECK(fit.model.masked_weight == Approx(truth.masked_weight).epsilon(0.15));
  CHECK(fit.model.tile_rate == Approx(truth.tile_rate).epsilon(0.2));
  CHECK(fit.model.causal_factor == Approx(truth.causal_factor).epsilon(0.3));
  CHECK(fit.model.peak_flop_per_s == Approx(truth.peak_flop_per_s).epsilon(0.05));
}

TEST_CASE("register blocks of 4, 2 and 1 rows re-read K/V once per block", "[fit][model]") {
  CHECK(row_passes(1, 4) == 1);
  CHECK(row_passes(4, 4) == 1);
  CHECK(row_passes(7, 4) == 3);   // 4 + 2 + 1
  CHECK(row_passes(8, 4) == 2);
  CHECK(row_passes(12, 4) == 3);
  CHECK(row_passes(16, 4) == 4);
  CHECK(row_passes(7, 0) == 1);   // no blocking: one pass
}

TEST_CASE("GEMM features: a blocked GEMM packs B per call, the skinny CPU GEMM reads it in place", "[fit][model]") {
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows, 3072, 1024}, DType::fp32).elements == 0);
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows + 1, 3072, 1024}, DType::fp32).elements == 3072.0 * 1024.0);
  CHECK(op_features(GemmShape{4096, 3072, 1024}, DType::fp32).elements == 3072.0 * 1024.0);
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows, 3072, 1024}, DType::fp32).skinny_elements == 3072.0 * 1024.0);
  CHECK(op_features(GemmShape{CpuKernelFacts{}.skinny_gemm_rows + 1, 3072, 1024}, DType::fp32).skinny_elements == 0);
}

TEST_CASE("the CPU GEMM model: the skinny kernel's time follows its passes over B", "[fit]") {
  OpModel truth;
  truth.peak_flop_per_s = 140e9;
  truth.load_rate = 4e9;      // B packed by the blocked GEMM (no rows curve on CPU GEMMs)
  truth.skinny_rate = 12e9;   // B elements per second per pass of the skinny kernel
  truth.bw_bytes_per_s = 16e9;
  truth.cache_bytes = 80e6;
  truth.cache_bw_bytes_per_s = 26e9;
  truth.combine_excess = 20;
  const SpecCeilings cpu = one_cpu_thread(140e9, 16e9);
  std::vector<MeasurementRecord> rs;
  for (std::int64_t m : {1, 4, 16, 64, 256, 1024})
    for (auto [n, k] : {std::pair{1024, 1024}, std::pair{3072, 1024}, std::pair{1024, 4096}, std::pair{4096, 2048},
                        std::pair{8192, 4096}}) {
      MeasurementRecord r;
      r.shape = GemmOp{GemmShape{m, n, k}};
      r.dtype = DType::fp32;
      rs.push_back(r);
    }
  const OpFit fit = fit_cpu_truth("gemm", rs, truth, cpu);
  CHECK(fit.fit_p90_ape < 0.03);  // exact synthetic data from the model family
  CHECK(fit.model.skinny_rate == Approx(truth.skinny_rate).epsilon(0.15));
  // One pass for 1 to 4 rows: m = 4 costs what m = 1 does; rows left out of the fit (2, 7: three
  // passes, 12: three) are predicted as the truth predicts them.
  const auto at = [](const OpModel& m, std::int64_t rows) {
    return predict_seconds(m, op_features(GemmShape{rows, 2048, 2048}, DType::fp32));
  };
  CHECK(at(fit.model, 4) == Approx(at(fit.model, 1)).epsilon(0.05));
  for (std::int64_t rows : {2, 7, 12}) CHECK(at(fit.model, rows) == Approx(at(truth, rows)).epsilon(0.03));
  CHECK(at(fit.model, 12) > 1.5 * at(fit.model, 4));  // three passes against one streamed from the cache
}

TEST_CASE("the CPU decode model: cache, miss slowdown, per-element terms and partial overlap are fitted", "[fit]") {
  // Known model in the CPU decode family (fit_spec_for("attention/decode", warm_cache = true)).
  OpModel truth;
  truth.t0_s = 20e-6;
  truth.peak_flop_per_s = 150e9;
  truth.softmax_rate = 2e9;
  truth.load_rate = 8e9;
  truth.row_block = 4;
  truth.bw_bytes_per_s = 20e9;
  truth.cache_bytes = 40e6;
  truth.cache_bw_bytes_per_s = 60e9;
  truth.miss_slowdown = 0.5;
  truth.combine_excess = 0.5;
  truth.widen_rate = 25e9;
  const SpecCeilings cpu = one_cpu_thread(110e9, 15e9);
  std::vector<MeasurementRecord> rs;
  for (std::int64_t b : {1, 4})
    for (std::int64_t kv : {1024, 4096, 16384})
      for (auto [nq, nkv, hd] : {std::tuple{16, 16, 64}, std::tuple{32, 8, 128}, std::tuple{32, 4, 128}, std::tuple{8, 1, 256},
                                 std::tuple{28, 4, 80}, std::tuple{8, 2, 128}}) {
        MeasurementRecord r = decode(b, kv, nq, nkv, hd);
        for (DType dt : {DType::fp32, DType::bf16}) {
          if (dt == DType::bf16 && nkv != 8) continue;  // bf16 KV: 32q/8kv only, as in the CPU grid
          r.dtype = dt;
          r.time_ms = predict_seconds(truth, op_features(r.attention(), r.dtype)) * 1e3;
          rs.push_back(r);
        }
      }
  std::vector<const MeasurementRecord*> ptrs;
  for (const auto& r : rs) ptrs.push_back(&r);
  const OpFit fit = fit_op_class("attention/decode", ptrs, cpu, true, true);
  CHECK(fit.model.row_block == 4);  // the kernel's blocking, not fitted
  CHECK(fit.model.miss_slowdown > 0);
  CHECK(fit.model.load_rate > 0);
  CHECK(fit.model.widen_rate == Approx(truth.widen_rate).epsilon(0.25));
  // bf16 K/V: half the bytes, each element widened: in cache it costs more than fp32, not less.
  const AttentionShape cached{1, 1, 2048, 32, 8, 128, 128, false, 0, 0, 0};
  CHECK(op_features(cached, DType::bf16).widened == op_features(cached, DType::fp32).elements);
  CHECK(op_features(cached, DType::fp32).widened == 0);
  CHECK(predict_seconds(fit.model, op_features(cached, DType::bf16)) >
        predict_seconds(fit.model, op_features(cached, DType::fp32)));
  // Exact synthetic data from the model family: fitted and left-out shapes are reproduced.
  CHECK(fit.fit_p90_ape < 0.03);
  CHECK(fit.cv_p90_ape < 0.06);
  // Group 7 (4 + 2 + 1 rows) costs more per K/V element than group 8 (4 + 4) at the same bytes.
  const OpFeatures g7 = op_features(AttentionShape{1, 1, 4096, 28, 4, 128, 128, false, 0, 0, 0}, DType::fp32);
  const OpFeatures g8 = op_features(AttentionShape{1, 1, 4096, 32, 4, 128, 128, false, 0, 0, 0}, DType::fp32);
  CHECK(g7.elements == g8.elements);
  CHECK(predict_seconds(fit.model, g7) > 0.95 * predict_seconds(fit.model, g8));
}

TEST_CASE("a block's ops share a warm cache: its prediction uses the block's bytes", "[fit][model]") {
  Profile p;
  p.name = "warm";
  p.kind = "cpu";
  p.spec.mem_bw_bytes_per_s = 10e9;
  p.spec.peak_flop_per_s["fp32"] = 100e9;
  OpModel m;
  m.peak_flop_per_s = 100e9;
  m.bw_bytes_per_s = 10e9;
  m.cache_bytes = 48e6;
  m.cache_bw_bytes_per_s = 100e9;
  OpFit fit;
  fit.model = m;
  p.ops["gemm"] = fit;
  p.ops["attention/decode"] = fit;
  const Predictor pred(p);
  MeasurementRecord block;
  block.shape = AttentionBlockOp{Phase::decode, AttentionShape{4, 1, 2048, 16, 4, 128, 128, false, 0, 0, 0}, 2048};  // 33.6 MB of K/V
  block.dtype = DType::fp32;
  const GemmShape qkv{4, 16 * 128 + 4 * 256, 2048}, o{4, 2048, 16 * 128};  // 25 + 16.8 MB of weights
  const double alone = pred.gemm(qkv, DType::fp32).time_ms + pred.attention(block.attention(), Phase::decode, DType::fp32).time_ms +
                       pred.gemm(o, DType::fp32).time_ms;
  const double together = pred.record(block).time_ms;
  // Alone each op (17-34 MB) mostly fits the 48 MB cache; together their 75 MB mostly come from memory.
  CHECK(together > 1.5 * alone);
  const double bytes = op_features(qkv, DType::fp32).bytes + op_features(block.attention(), DType::fp32).bytes +
                       op_features(o, DType::fp32).bytes;
  CHECK(together == Approx(pred.with_working_set(bytes).gemm(qkv, DType::fp32).time_ms +
                           pred.with_working_set(bytes).attention(block.attention(), Phase::decode, DType::fp32).time_ms +
                           pred.with_working_set(bytes).gemm(o, DType::fp32).time_ms));
}

TEST_CASE("too few records is an input error naming the class", "[fit][errors]") {
  MeasurementRecord r = decode(1, 1024, 32, 8, 128);
  r.time_ms = 0.01;
  CHECK_THROWS_WITH(fit_op_class("attention/decode", {&r, &r}, h200_spec()),
                    "records = attention/decode: need at least 3 timed records to fit an op class, got 2");
}

TEST_CASE("H200 cuDNN: shapes left out of the fit are predicted within the acceptance bounds", "[fit][h200]") {
  // Leave out every record of one configuration (e.g. all 32/8 decode batches and lengths), fit the
  // rest, predict the left-out ones: other batches, lengths and head counts than the fit saw.
  const auto all = h200("cudnn");
  std::vector<double> ape;
  for (auto [nq, nkv, hd] : {std::tuple{32, 8, 128}, std::tuple{32, 32, 128}, std::tuple{16, 16, 64}, std::tuple{32, 1, 128}}) {
    std::vector<MeasurementRecord> train, test;
    for (const auto& r : all) {
      const bool held = r.op() == OpKind::attention && r.attention().num_q_heads == nq &&
                        r.attention().num_kv_heads == nkv && r.attention().head_dim == hd;
      (held ? test : train).push_back(r);
    }
    Profile p;
    p.spec = h200_spec();
    fit_profile(p, train, false);
    const Predictor pred(p);
    for (const auto& r : test) ape.push_back(std::fabs(pred.record(r).time_ms / *r.time_ms - 1.0));
  }
  const ErrorStats s = error_stats(ape);
  INFO("leave-configuration-out: median " << s.median_ape << ", p90 " << s.p90_ape << ", n " << s.n);
  CHECK(s.n >= 40);
  CHECK(s.median_ape <= 0.06);
  CHECK(s.p90_ape <= 0.15);
}

TEST_CASE("H200 cuDNN profile predicts GPU.md's independent prefill measurements", "[fit][h200]") {
  Profile p;
  p.spec = h200_spec();
  fit_profile(p, h200("cudnn"), false);
  const Predictor pred(p);
  std::vector<double> ape;
  for (const auto& r : read_records(std::string(MHACFG_FIXTURES_DIR) + "/h200-gpu-md-check.jsonl")) {
    const Prediction x = pred.record(r);
    CHECK(x.calibrated);
    CHECK_FALSE(x.extrapolated);  // batch 4 at 4096: FLOPs and units inside what the fit saw
    ape.push_back(std::fabs(x.time_ms / *r.time_ms - 1.0));
  }
  const ErrorStats s = error_stats(ape);
  INFO("median " << s.median_ape << " max " << s.max_ape);
  CHECK(s.median_ape <= 0.10);
  CHECK(s.max_ape <= 0.20);
}

TEST_CASE("a model's decode step on a warm-cache profile reads its weights from memory", "[fit][model]") {
  // Every layer's ops run in turn: Llama-3-8B's 16 GB of weights never stay in a 48 MB cache, so
  // the step must cost the same as on a profile with no cache at all, not a cache-speed figure.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-3-8b.json");
  Profile warm;
  warm.name = "warm";
  warm.kind = "cpu";
  warm.spec.mem_bw_bytes_per_s = 10e9;
  warm.spec.peak_flop_per_s["fp32"] = 100e9;
  warm.spec.peak_flop_per_s["bf16"] = 100e9;
  OpModel model;
  model.peak_flop_per_s = 100e9;
  model.bw_bytes_per_s = 10e9;
  model.cache_bytes = 48e6;
  model.cache_bw_bytes_per_s = 100e9;
  OpFit fit;
  fit.model = model;
  for (const char* cls : {"gemm", "attention/decode", "attention/prefill"}) warm.ops[cls] = fit;
  Profile cold = warm;
  for (auto& [cls, f] : cold.ops) f.model.cache_bytes = 0;
  Workload w;
  w.batch = 1;
  w.context = 4096;
  w.prompt_len = 512;
  const ModelTimes hot = predict_model(m, w, Predictor(warm));
  const ModelTimes none = predict_model(m, w, Predictor(cold));
  CHECK(hot.decode_step_ms == Approx(none.decode_step_ms).epsilon(0.01));
  // Alone, one 4096 x 4096 bf16 projection (32 MB) would have come from the cache.
  const GemmShape o{1, 4096, 4096};
  CHECK(Predictor(warm).gemm(o, DType::bf16).time_ms < 0.5 * Predictor(cold).gemm(o, DType::bf16).time_ms);
}

namespace {
// A GPU of 800 TFLOP/s and 4 TB/s whose `classes` are fitted as the roofline plus 10 us per launch.
Profile launch_profile(std::initializer_list<const char*> classes) {
  Profile prof;
  prof.name = "launch";
  prof.kind = "gpu";
  prof.spec.mem_bw_bytes_per_s = 4e12;
  prof.spec.peak_flop_per_s["bf16"] = 800e12;
  OpFit fit;
  fit.model = roofline_model(800e12, 4e12);
  fit.model.t0_s = 10e-6;
  for (const char* cls : classes) prof.ops[cls] = fit;
  return prof;
}
}  // namespace

TEST_CASE("a MoE layer's routed experts are predicted as one grouped GEMM per matrix", "[fit][model]") {
  // On a profile whose GEMMs cost 10 us per launch plus their bytes, Mixtral's decode at batch 1 (2 of
  // 8 experts, each 3 x 4096 x 14336) pays per layer: the router, one gate+up GEMM over both experts'
  // weights, one down GEMM. One launch per expert would add 2 x 10 us per layer.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/mixtral-8x7b.json");
  const Profile prof = launch_profile({"gemm"});
  const Predictor p(prof);
  Workload w;
  w.batch = 1;
  w.context = 4096;
  const ModelTimes t = predict_model(m, w, p);
  const double per_layer = p.gemm({1, 8, 4096}, DType::bf16).time_ms + p.gemm({1, 2 * 2 * 14336, 4096}, DType::bf16).time_ms +
                           p.gemm({1, 4096, 2 * 14336}, DType::bf16).time_ms;
  CHECK(t.decode_ffn_ms == Approx(32 * per_layer).epsilon(1e-9));
  // The grouped GEMMs read exactly the two active experts' weights: beside the launches, the FFN time
  // is their bytes at the profile's bandwidth.
  const double expert_bytes = 32.0 * 2 * 3 * 4096 * 14336 * 2;
  CHECK(t.decode_ffn_ms - 32 * 3 * 0.010 == Approx(expert_bytes / 4e12 * 1e3).epsilon(0.01));
}

TEST_CASE("a linear-attention layer: calibrated projections, its core the roofline of its state and FLOPs", "[fit][model]") {
  // Qwen3-Next decoding 4 sequences at 8192 tokens on a profile that calibrates GEMMs and softmax
  // attention (10 us per launch) but has no linear_attention class: the 36 Gated DeltaNet layers' cores
  // are each max(FLOPs / peak, bytes / bandwidth), the bytes being the bf16 state read and written once
  // (32 x 128 x 128 recurrent + 8192 x 3 conv elements per sequence) and the 4 tokens' q, k, v, beta,
  // alpha and output; the FLOPs the delta rule's 6 x 128 x 128 per value head and the convolution's
  // 2 x 8192 x 4, per token.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/qwen3-next-80b-a3b-instruct.json");
  Profile prof = launch_profile({"gemm", "attention/decode", "attention/prefill"});
  const Predictor p(prof);
  Workload w;
  w.batch = 4;
  w.context = 8192;
  w.prompt_len = 1024;
  const ModelTimes t = predict_model(m, w, p);
  CHECK_FALSE(t.calibrated);
  CHECK(t.calibrated_but_roofline_cores);
  CHECK(t.linear_core_roofline);
  CHECK_FALSE(t.indexer_roofline);
  CHECK(time_basis(t) == "calibrated, linear attention roofline");
  const double state_bytes = 2.0 * 4 * (32 * 128 * 128 + 8192 * 3) * 2;
  const double io_bytes = 4.0 * (8192 + 4096 + 64) * 2;
  const double flops = 4.0 * (6 * 32 * 128 * 128 + 2 * 8192 * 4);
  const double linear_ms = std::max(flops / 800e12, (state_bytes + io_bytes) / 4e12) * 1e3;
  AttentionShape s = layer_attention_shape(m, m.layers[3], 4, 1, 8192, true);
  const double softmax_ms = p.attention(s, Phase::decode, DType::bf16).time_ms;
  CHECK(t.decode_attention_core_ms == Approx(36 * linear_ms + 12 * softmax_ms).epsilon(1e-9));
  CHECK(t.decode_linear_core_ms == Approx(36 * linear_ms).epsilon(1e-9));  // the uncalibrated part, reported apart
  // The projections: in_proj_qkvz with in_proj_ba, and out_proj, in each linear layer; q (with the
  // gate), k and v as one GEMM, and o, in each softmax layer.
  const double projections = 36 * (p.gemm({4, 12288 + 64, 2048}, DType::bf16).time_ms + p.gemm({4, 2048, 4096}, DType::bf16).time_ms) +
                             12 * (p.gemm({4, 8192 + 1024, 2048}, DType::bf16).time_ms + p.gemm({4, 2048, 4096}, DType::bf16).time_ms);
  CHECK(t.decode_projections_ms == Approx(projections).epsilon(1e-9));
  // A profile that carries the class uses it, and the times are calibrated.
  prof.ops["linear_attention/decode"] = prof.ops.at("gemm");
  prof.ops["linear_attention/prefill"] = prof.ops.at("gemm");
  const ModelTimes all = predict_model(m, w, Predictor(prof));
  CHECK(all.calibrated);
  CHECK(time_basis(all) == "calibrated");
  CHECK(all.decode_attention_core_ms == Approx(36 * (linear_ms + 0.010) + 12 * softmax_ms).epsilon(1e-9));
}

TEST_CASE("a parallel hybrid layer (Falcon-H1) pays for its attention and its Mamba2 mixer", "[fit][model]") {
  // Falcon-H1-0.5B decoding 4 sequences at 4096 tokens: every one of its 36 layers runs the softmax
  // attention core and the Mamba2 core (the roofline: no linear_attention class), both mixers'
  // projections, then the MLP once; under tp 2 each layer ends in three all-reduces.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/falcon-h1-0.5b-base.json");
  const Profile prof = launch_profile({"gemm", "attention/decode", "attention/prefill"});
  const Predictor p(prof);
  Workload w;
  w.batch = 4;
  w.context = 4096;
  w.prompt_len = 512;
  const ModelTimes t = predict_model(m, w, p);
  CHECK(time_basis(t) == "calibrated, linear attention roofline");
  const double linear_ms = p.linear_attention(layer_linear_attention_shape(m, 4, 1), Phase::decode, DType::bf16).time_ms;
  const double softmax_ms = p.attention(layer_attention_shape(m, m.layers[0], 4, 1, 4096, true), Phase::decode, DType::bf16).time_ms;
  CHECK(t.decode_attention_core_ms == Approx(36 * (linear_ms + softmax_ms)).epsilon(1e-9));
  CHECK(t.decode_linear_core_ms == Approx(36 * linear_ms).epsilon(1e-9));
  const double projections = p.gemm({4, 2 * 1536 + 2 * 128 + 24, 1024}, DType::bf16).time_ms + p.gemm({4, 1024, 1536}, DType::bf16).time_ms +
                             p.gemm({4, 512 + 2 * 128, 1024}, DType::bf16).time_ms + p.gemm({4, 1024, 512}, DType::bf16).time_ms;
  CHECK(t.decode_projections_ms == Approx(36 * projections).epsilon(1e-9));
  const double mlp = p.gemm({4, 2 * 2048, 1024}, DType::bf16).time_ms + p.gemm({4, 1024, 2048}, DType::bf16).time_ms;
  CHECK(t.decode_ffn_ms == Approx(36 * mlp).epsilon(1e-9));
  // The same layers without the attention (a Mamba2-only model) save exactly its share.
  ModelSpec mamba_only = m;
  for (auto& l : mamba_only.layers) l.mixer = Mixer::linear;
  const ModelTimes u = predict_model(mamba_only, w, p);
  CHECK(t.decode_attention_core_ms - u.decode_attention_core_ms == Approx(36 * softmax_ms).epsilon(1e-9));
}

TEST_CASE("the CPU linear-attention model: passes over the state, widening, and its rates recovered", "[fit][model]") {
  // Features: the CPU kernel walks a Gated DeltaNet state twice per token and a Mamba2 state once, and
  // widens and rounds back a bf16 state once per 64-token block.
  const LinearAttentionShape gdn{2, 130, 4, 8, 64, 32, 4, LinearKind::gated_deltanet};
  const OpFeatures g32 = op_features(gdn, DType::fp32), g16 = op_features(gdn, DType::bf16);
  CHECK(g32.elements == 2.0 * 8 * 64 * 32 * 130 * 2);
  CHECK(g32.widened == 0);
  CHECK(g16.widened == 2.0 * (2 * 8 * 64 * 32) * 3);  // blocks of 64, 64 and 2 tokens
  CHECK(g32.streams == 16);
  LinearAttentionShape m2 = gdn;
  m2.kind = LinearKind::mamba2;
  CHECK(op_features(m2, DType::fp32).elements == g32.elements / 2);
  // A known model of the CPU prefill family is recovered from its own timings.
  OpModel truth;
  truth.t0_s = 30e-6;
  truth.peak_flop_per_s = 150e9;
  truth.load_rate = 9e9;
  truth.widen_rate = 2e9;
  truth.bw_bytes_per_s = 15e9;
  const SpecCeilings cpu = one_cpu_thread(110e9, 15e9);
  std::vector<MeasurementRecord> rs;
  for (LinearKind kind : {LinearKind::gated_deltanet, LinearKind::mamba2})
    for (std::int64_t q : {64, 200, 512})
      for (auto [kh, vh, dk, dv] : {std::tuple{4, 8, 64, 64}, std::tuple{8, 16, 128, 128}, std::tuple{1, 32, 128, 64}})
        for (DType dt : {DType::fp32, DType::bf16}) {
          MeasurementRecord r;
          r.shape = LinearAttentionOp{Phase::prefill, LinearAttentionShape{1, q, kh, vh, dk, dv, 4, kind}};
          r.dtype = dt;
          r.time_ms = predict_seconds(truth, op_features(r.linear(), dt)) * 1e3;
          rs.push_back(r);
        }
  std::vector<const MeasurementRecord*> ptrs;
  for (const auto& r : rs) ptrs.push_back(&r);
  const OpFit fit = fit_op_class("linear_attention/prefill", ptrs, cpu, true, true);
  CHECK(fit.model.bw_bytes_per_s == 15e9);  // the measured read ceiling, not fitted
  CHECK(fit.fit_p90_ape < 0.03);
  CHECK(fit.cv_p90_ape < 0.06);
  CHECK(fit.model.widen_rate == Approx(truth.widen_rate).epsilon(0.25));
}

TEST_CASE("under tensor parallelism each mixer and each FFN ends in an all-reduce", "[fit][model]") {
  // Nemotron-3-Nano's 52 blocks hold one module each: 52 all-reduces per step, where Llama-3-8B's 32
  // layers of attention and FFN need 64. Each: 5 us + 2 (tp - 1) / tp x the activations / link bandwidth.
  Profile prof = launch_profile({});
  prof.spec.interconnect_bw_bytes_per_s = 450e9;
  Workload w;
  w.batch = 8;
  w.context = 4096;
  w.prompt_len = 512;
  w.tp = 2;
  const auto one = [&](std::int64_t d) { return (5e-6 + 2.0 * 1 / 2 * 2.0 * double(d) * 8 / 450e9) * 1e3; };
  const ModelSpec nano = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/nemotron-3-nano-30b-a3b.json");
  CHECK(predict_model(nano, w, Predictor(prof)).decode_comm_ms == Approx(52 * one(2688)).epsilon(1e-9));
  const ModelSpec llama = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-3-8b.json");
  CHECK(predict_model(llama, w, Predictor(prof)).decode_comm_ms == Approx(64 * one(4096)).epsilon(1e-9));
}

TEST_CASE("a sparse model's indexer: the roofline of its FLOPs at the fp8 peak and its bytes, and said so", "[fit][model]") {
  // DeepSeek-V3.2 decoding 2 sequences at 131072 tokens on a profile that calibrates GEMMs and MLA
  // decode but has no indexer class: each of its 61 layers' indexers costs max(FLOPs / fp8 peak, bytes /
  // bandwidth) over every cached key, and its MLA core reads the top 2048 latents only.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/deepseek-v3.2.json");
  const Profile prof = launch_profile({"gemm", "attention/decode/mla", "attention/prefill"});
  const Predictor p(prof);
  Workload w;
  w.batch = 2;
  w.context = 131072;
  w.prompt_len = 1024;
  const ModelTimes t = predict_model(m, w, p);
  CHECK_FALSE(t.calibrated);
  CHECK(t.indexer_roofline);
  CHECK_FALSE(t.linear_core_roofline);
  CHECK(time_basis(t) == "calibrated, indexer roofline");
  const IndexerShape decode = layer_indexer_shape(m, 2, 1, 131072);
  const double roofline_ms = std::max(double(indexer_flops(decode)) / prof.peak_flop_per_s(DType::fp8),
                                      double(indexer_bytes(decode)) / prof.spec.mem_bw_bytes_per_s) * 1e3;
  CHECK(t.decode_indexer_ms == Approx(61 * roofline_ms).epsilon(1e-9));
  const AttentionShape core = layer_attention_shape(m, m.layers[0], 2, 1, 131072, true);
  CHECK(attention_kv_tokens_read(core) == 2048);
  const double mla_ms = p.attention(core, Phase::decode, DType::bf16).time_ms;
  CHECK(t.decode_attention_core_ms == Approx(61 * (roofline_ms + mla_ms)).epsilon(1e-9));
}

TEST_CASE("the CPU indexer model: keys dequantised and scores selected match a walk of the kernel's tiles, and its rates are recovered", "[fit][model]") {
  // Brute force over the kernel's decomposition: query tiles of 256 / heads queries, each dequantising
  // its last query's keys; each query that sees more than topk keys scanning them all.
  const auto walk = [](const IndexerShape& s, double& dequantised, double& selected) {
    dequantised = selected = 0;
    const std::int64_t tile = CpuKernelFacts{}.indexer_tile_queries(s.num_heads);
    for (std::int64_t q0 = 0; q0 < s.q_len; q0 += tile)
      dequantised += double(s.kv_len - s.q_len + std::min(q0 + tile, s.q_len)) * double(s.head_dim);
    for (std::int64_t t = 0; t < s.q_len; ++t) {
      const std::int64_t visible = s.kv_len - s.q_len + t + 1;
      if (visible > s.topk) selected += double(visible);
    }
    dequantised *= double(s.batch);
    selected *= double(s.batch);
  };
  for (const IndexerShape& s : {IndexerShape{3, 1, 5000, 64, 128, 2048}, IndexerShape{1, 1, 1000, 64, 128, 2048},
                                IndexerShape{2, 700, 900, 64, 128, 512}, IndexerShape{1, 333, 333, 7, 64, 100},
                                IndexerShape{1, 5, 4096, 300, 128, 4094}}) {
    INFO(s.batch << " x " << s.q_len << " of " << s.kv_len << ", " << s.num_heads << " heads, top " << s.topk);
    double dequantised = 0, selected = 0;
    walk(s, dequantised, selected);
    const OpFeatures f = op_features(s);
    CHECK(f.elements == dequantised);
    CHECK(f.tile_elements == selected);
    CHECK(f.softmax == double(s.batch) * double(attention_pairs(s.q_len, s.kv_len, true, 0)) * double(s.num_heads));
    CHECK(f.flop == double(indexer_flops(s)));
  }
  CHECK(op_features(IndexerShape{1, 1, 1000, 64, 128, 2048}).tile_elements == 0);  // keeps every key: no selection
  // A known decode model (products, per-score, per-key-element and per-selected-score rates) is
  // recovered from its own timings, the read ceiling taken as measured; widths of 32-256 and 4-128
  // heads tell the per-FLOP, per-score and per-element terms apart.
  OpModel truth;
  truth.peak_flop_per_s = 130e9;
  truth.softmax_rate = 1.5e9;
  truth.load_rate = 5e9;
  truth.tile_rate = 250e6;
  truth.bw_bytes_per_s = 20e9;
  std::vector<MeasurementRecord> rs;
  for (auto [batch, kv, heads, dim, topk] : {std::tuple{1, 8192, 64, 128, 2048}, std::tuple{1, 32768, 32, 128, 2048},
                                             std::tuple{4, 4096, 32, 128, 2048}, std::tuple{16, 1024, 64, 128, 2048},
                                             std::tuple{4, 8192, 64, 64, 1024}, std::tuple{8, 2048, 16, 64, 256},
                                             std::tuple{2, 16384, 8, 128, 512}, std::tuple{1, 65536, 4, 64, 1024},
                                             std::tuple{32, 512, 32, 128, 128}, std::tuple{1, 131072, 16, 128, 2048},
                                             std::tuple{2, 8192, 16, 32, 512}, std::tuple{1, 16384, 48, 96, 2048},
                                             std::tuple{2, 4096, 8, 256, 1024}, std::tuple{4, 2048, 128, 64, 2048}}) {
    MeasurementRecord r;
    r.shape = IndexerOp{Phase::decode, IndexerShape{batch, 1, kv, heads, dim, topk}};
    r.dtype = DType::fp8;
    rs.push_back(r);
  }
  const OpFit fit = fit_cpu_truth("indexer/decode", rs, truth, one_cpu_thread(140e9, 20e9));
  CHECK(fit.model.bw_bytes_per_s == 20e9);
  CHECK(fit.fit_p90_ape < 0.02);
  CHECK(fit.model.peak_flop_per_s == Approx(truth.peak_flop_per_s).epsilon(0.1));
  CHECK(fit.model.load_rate == Approx(truth.load_rate).epsilon(0.25));
}

TEST_CASE("a sparse model's indexer on a profile that fits it is calibrated", "[fit][model]") {
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/deepseek-v3.2.json");
  Profile prof = launch_profile({"gemm", "attention/decode/mla", "attention/prefill", "indexer/decode", "indexer/prefill"});
  OpFit slow = prof.ops.at("indexer/decode");
  slow.model.t0_s = 1e-3;  // 1 ms per call: the fit, not the roofline, is what the layers pay
  prof.ops["indexer/decode"] = slow;
  Workload w;
  w.batch = 2;
  w.context = 32768;
  w.prompt_len = 1024;
  const ModelTimes t = predict_model(m, w, Predictor(prof));
  CHECK(t.calibrated);
  CHECK_FALSE(t.indexer_roofline);
  CHECK(time_basis(t) == "calibrated");
  CHECK(t.decode_indexer_ms > 61 * 1.0);
}
