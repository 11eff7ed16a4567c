// GEMM rates per weight dtype: a dtype's own fit, the 16-bit fit transferred to a narrow dtype's peak,
// a datasheet's nearest wider peak, and the notes that say which.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/predict.hpp"

using namespace mhacfg;

namespace {
// An H200-like GPU: bf16 989 TFLOP/s, fp8 twice that, 4.8 TB/s; `gemm` fitted at 88 % of the bf16 peak
// (what h200-sxm-cudnn's cuBLAS fit reaches) plus 7 us a launch.
Profile bf16_fitted() {
  Profile prof;
  prof.name = "h200-like";
  prof.spec.mem_bw_bytes_per_s = 4.8e12;
  prof.spec.peak_flop_per_s = {{"bf16", 989.4e12}, {"fp8", 1978.9e12}};
  OpFit fit;
  fit.model = roofline_model(0.88 * 989.4e12, 4.8e12);
  fit.model.t0_s = 7e-6;
  fit.cv_median_ape = 0.072;
  prof.ops["gemm"] = fit;
  return prof;
}

const GemmShape kLarge{8192, 8192, 8192};  // compute-bound
}  // namespace

TEST_CASE("an fp8 GEMM on a bf16-fitted profile runs at the fit's efficiency of the fp8 peak", "[dtype][model]") {
  const Profile prof = bf16_fitted();
  const Predictor p(prof);
  const Prediction bf16 = p.gemm(kLarge, DType::bf16), fp8 = p.gemm(kLarge, DType::fp8);
  CHECK(bf16.basis.dtype_transferred_ops.empty());
  CHECK(fp8.basis.dtype_transferred_ops == std::set<std::string>{"gemm/fp8"});
  CHECK(fp8.basis.kind == BasisKind::measured);
  const double flop = 2.0 * 8192 * 8192 * 8192;
  CHECK(bf16.time_ms == Approx((7e-6 + flop / (0.88 * 989.4e12)) * 1e3));
  CHECK(fp8.time_ms == Approx((7e-6 + flop / (0.88 * 1978.9e12)) * 1e3));
}

TEST_CASE("a narrow GEMM's bytes are its dtype's: a memory-bound fp8 decode GEMM reads half the weights", "[dtype][model]") {
  const Profile prof = bf16_fitted();
  const Predictor p(prof);
  const GemmShape skinny{1, 8192, 8192};
  // A (1 x 8192) and B in fp8, C (8192) in bf16.
  CHECK(gemm_bytes(skinny, DType::fp8) == 8192 + 8192LL * 8192 + 2 * 8192);
  const double fp8_s = p.gemm(skinny, DType::fp8).time_ms * 1e-3 - 7e-6;
  CHECK(fp8_s == Approx(double(gemm_bytes(skinny, DType::fp8)) / 4.8e12));
  // nvfp4: A and B 4.5 bits an element with their block scales.
  CHECK(gemm_bytes(skinny, DType::nvfp4) == (8192 / 2 + 8192 / 16) + (8192LL * 8192 / 2 + 8192LL * 8192 / 16) + 2 * 8192);
  // int4 weight-only: A in bf16.
  CHECK(gemm_bytes(skinny, DType::int4) == 2 * 8192 + stored_bytes(DType::int4, 8192LL * 8192, "x") + 2 * 8192);
}

TEST_CASE("a profile with a fit of the dtype's own uses it", "[dtype][model]") {
  Profile prof = bf16_fitted();
  OpFit own = prof.ops.at("gemm");
  own.model.peak_flop_per_s = 1000e12;
  prof.ops["gemm/fp8"] = own;
  const Prediction fp8 = Predictor(prof).gemm(kLarge, DType::fp8);
  CHECK(fp8.basis.dtype_transferred_ops.empty());
  CHECK(fp8.basis.kind == BasisKind::measured);
  CHECK(fp8.time_ms == Approx((7e-6 + 2.0 * 8192 * 8192 * 8192 / 1000e12) * 1e3));
  CHECK(gemm_dtype_notes(prof, [] {
          Workload w;
          w.weight_dtype = DType::fp8;
          return w;
        }()).empty());
}

TEST_CASE("a datasheet profile without the fp4 peak runs fp4 GEMMs at fp8's and says so", "[dtype][model]") {
  Profile prof;
  prof.name = "sheet";
  prof.spec.mem_bw_bytes_per_s = 3.35e12;
  prof.spec.peak_flop_per_s = {{"bf16", 989e12}, {"fp8", 1979e12}};
  CHECK(prof.peak_dtype(DType::nvfp4) == "fp8");
  CHECK(prof.peak_dtype(DType::fp8) == "fp8");
  const Prediction p = Predictor(prof).gemm(kLarge, DType::nvfp4);
  CHECK(p.basis.kind == BasisKind::roofline);
  CHECK(p.basis.dtype_transferred_ops.empty());
  CHECK(p.time_ms == Approx(2.0 * 8192 * 8192 * 8192 / 1979e12 * 1e3));
  Workload w;
  w.ffn_weight_dtype = DType::nvfp4;
  const std::vector<std::string> notes = gemm_dtype_notes(prof, w);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("lists no nvfp4 peak: at fp8's rate") != std::string::npos);
  prof.spec.peak_flop_per_s["nvfp4"] = 9000e12;
  CHECK(gemm_dtype_notes(prof, w).empty());
}

TEST_CASE("a model's GEMMs take their component's dtype and the transfer is stated", "[dtype][model]") {
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/qwen3-30b-a3b.json");
  Profile prof = bf16_fitted();
  for (const char* cls : {"attention/prefill", "attention/decode"}) prof.ops[cls] = prof.ops.at("gemm");
  const Predictor p(prof);
  Workload w;
  w.batch = 64;
  const ModelTimes bf16 = predict_model(m, w, p);
  w.ffn_weight_dtype = DType::fp8;
  const ModelTimes mixed = predict_model(m, w, p);
  CHECK(mixed.decode_ffn_ms < bf16.decode_ffn_ms);
  CHECK(mixed.decode_projections_ms == Approx(bf16.decode_projections_ms));  // attention stays bf16
  CHECK(bf16.basis.dtype_transferred_ops.empty());
  CHECK(mixed.basis.dtype_transferred_ops == std::set<std::string>{"gemm/fp8"});
  CHECK(time_basis(bf16) == "measured");
  CHECK(time_basis(mixed) == "measured; gemm/fp8 from the 16-bit GEMM fit");
  const std::vector<std::string> notes = gemm_dtype_notes(prof, w);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("fp8 GEMMs: transferred from h200-like's 16-bit GEMM fit") != std::string::npos);
  CHECK(notes[0].find("x2.00 the bf16 one") != std::string::npos);
  CHECK(notes[0].find("7.2 % median") != std::string::npos);
}

TEST_CASE("fp8 GEMM records fit a class of their own, which predictions of fp8 GEMMs then use", "[dtype][fit]") {
  Profile prof = bf16_fitted();
  prof.ops.clear();
  prof.device = "NVIDIA H200";
  prof.spec.memory_bytes = 141000000000;
  prof.spec.compute_units = 132;
  // Synthetic timings: bf16 GEMMs at 800 TFLOP/s, fp8 ones at 1500, each + 10 us, memory at 4.8 TB/s.
  const auto truth = [](double peak) {
    OpModel m = roofline_model(peak, 4.8e12);
    m.t0_s = 10e-6;
    return m;
  };
  std::vector<MeasurementRecord> rs;
  for (DType t : {DType::bf16, DType::fp8})
    for (std::int64_t m : {1, 16, 256, 2048, 8192})
      for (std::int64_t n : {4096, 14336}) {
        MeasurementRecord r;
        r.shape = GemmOp{GemmShape{m, n, 4096}};
        r.dtype = t;
        r.time_ms = predict_seconds(truth(t == DType::fp8 ? 1500e12 : 800e12), r.features()) * 1e3;
        rs.push_back(r);
      }
  fit_profile(prof, rs, false);
  REQUIRE(prof.ops.count("gemm"));
  REQUIRE(prof.ops.count("gemm/fp8"));
  const Profile back = profile_from_json(profile_to_json(prof), "round trip");
  CHECK(back.ops.count("gemm/fp8"));
  const Prediction fp8 = Predictor(prof).gemm(kLarge, DType::fp8);
  CHECK(fp8.basis.dtype_transferred_ops.empty());
  constexpr double kFitTolerance = 0.05;  // a fit of exact synthetic times recovers them closely
  CHECK(fp8.time_ms == Approx((10e-6 + 2.0 * 8192 * 8192 * 8192 / 1500e12) * 1e3).epsilon(kFitTolerance));
}

TEST_CASE("an fp8-KV decode uses its own fit where the profile has one, else the plain decode fit with fp8 bytes",
          "[dtype][model][ops]") {
  Profile prof = bf16_fitted();
  OpFit decode;
  decode.model = roofline_model(0.5 * 989.4e12, 0.9 * 4.8e12);
  decode.model.t0_s = 10e-6;
  prof.ops["attention/decode"] = decode;
  AttentionShape s;
  s.batch = 64;
  s.kv_len = 32768;
  s.num_q_heads = 32;
  s.num_kv_heads = 8;
  s.causal = false;
  const double fp8_bytes = double(attention_bytes(s, DType::fp8));
  CHECK(fp8_bytes < 0.51 * double(attention_bytes(s, DType::bf16)));
  {
    const Predictor p(prof);  // no fp8 decode fit: the bf16 decode fit, fp8's bytes (as before the class)
    const Prediction fp8 = p.attention(s, Phase::decode, DType::fp8);
    CHECK(fp8.basis.kind == BasisKind::measured);
    CHECK(fp8.time_ms == Approx((10e-6 + fp8_bytes / (0.9 * 4.8e12)) * 1e3));
    MeasurementRecord r;
    r.shape = AttentionOp{Phase::decode, s};
    r.dtype = DType::fp8;
    CHECK(p.record(r).time_ms == Approx(fp8.time_ms));  // a record predicts as the op does
  }
  OpFit own = decode;
  own.model.t0_s = 20e-6;  // a distinguishable fit of the class of its own
  prof.ops["attention/decode/fp8"] = own;
  const Predictor p(prof);
  CHECK(p.attention(s, Phase::decode, DType::fp8).time_ms == Approx((20e-6 + fp8_bytes / (0.9 * 4.8e12)) * 1e3));
  CHECK(p.attention(s, Phase::decode, DType::bf16).time_ms ==
        Approx((10e-6 + double(attention_bytes(s, DType::bf16)) / (0.9 * 4.8e12)) * 1e3));
  // Without either fit: the roofline of the class of its own.
  Profile bare = bf16_fitted();
  CHECK(Predictor(bare).attention(s, Phase::decode, DType::fp8).basis.kind == BasisKind::roofline);
}
