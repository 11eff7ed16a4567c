// The fitter: parameters recovered from synthetic timings; cross-validated accuracy on real H200
// timings (tests/fixtures) against shapes left out of the fit.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
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

TEST_CASE("H200 cuDNN profile predicts independent H200 prefill measurements", "[fit][h200]") {
  Profile p;
  p.spec = h200_spec();
  fit_profile(p, h200("cudnn"), false);
  const Predictor pred(p);
  std::vector<double> ape;
  for (const auto& r : read_records(std::string(MHACFG_FIXTURES_DIR) + "/h200-gpu-md-check.jsonl")) {
    const Prediction x = pred.record(r);
    CHECK(x.basis.kind == BasisKind::measured);
    CHECK_FALSE(x.extrapolated);  // batch 4 at 4096: FLOPs and units inside what the fit saw
    ape.push_back(std::fabs(x.time_ms / *r.time_ms - 1.0));
  }
  const ErrorStats s = error_stats(ape);
  INFO("median " << s.median_ape << " max " << s.max_ape);
  CHECK(s.median_ape <= 0.10);
  CHECK(s.max_ape <= 0.20);
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
