// The machine probe: its JSON through a profile, the drift correction's arithmetic, the errors.
#include <catch2/catch.hpp>

#include <string>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/machine_probe.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/records.hpp"

using namespace mhacfg;

namespace {

MachineProbe probe(std::vector<double> gemm, std::vector<double> stream) {
  MachineProbe p;
  p.gemm_rounds_flop_per_s = std::move(gemm);
  p.stream_rounds_bytes_per_s = std::move(stream);
  p.measured_at = "2026-12-02T05:00:00Z";
  p.what = "test";
  return p;
}

// A shipped measured CPU profile (fits of every CPU op class) with a probe of 140 GFLOP/s, 20 GB/s.
Profile cpu_profile() {
  Profile p = load_profile_file(std::string(MHACFG_SOURCE_DIR) + "/profiles/cpu-epyc-2vcpu.json");
  p.machine_probe = probe({139e9, 140e9, 140e9}, {19e9, 20e9, 20e9});
  return p;
}

std::vector<MeasurementRecord> holdout_shapes() {
  std::vector<MeasurementRecord> rs;
  for (const char* set : {"", "-2", "-3", "-5", "-7"})
    for (const auto& r : read_records(std::string(MHACFG_SOURCE_DIR) + "/tests/fixtures/cpu-holdout-shapes" + set + ".jsonl"))
      rs.push_back(r);
  return rs;
}

// Floating-point reassociation only: the scaled model computes the same sums with scaled terms.
constexpr double kRoundingTolerance = 1e-12;

}  // namespace

TEST_CASE("a machine probe round-trips through a profile's JSON", "[machine_probe]") {
  const Profile p = cpu_profile();
  const Profile back = profile_from_json(profile_to_json(p), "test");
  REQUIRE(back.machine_probe);
  CHECK(back.machine_probe->gemm_rounds_flop_per_s == p.machine_probe->gemm_rounds_flop_per_s);
  CHECK(back.machine_probe->stream_rounds_bytes_per_s == p.machine_probe->stream_rounds_bytes_per_s);
  CHECK(back.machine_probe->measured_at == "2026-12-02T05:00:00Z");
  CHECK(back.machine_probe->gemm_flop_per_s() == 140e9);
  CHECK(back.machine_probe->stream_bytes_per_s() == 20e9);
  CHECK(profile_to_json(p)["machine_probe"]["rounds"] == 3);
  Profile none = p;
  none.machine_probe.reset();
  CHECK_FALSE(profile_to_json(none).contains("machine_probe"));
  CHECK_FALSE(profile_from_json(profile_to_json(none), "test").machine_probe);
}

TEST_CASE("a probe's statistic is the upper decile over rounds, pooled across probes", "[machine_probe]") {
  const MachineProbe a = probe({100, 300, 200}, {10, 30, 20});  // 200 + 0.8 x (300 - 200)
  const MachineProbe b = probe({400, 500}, {40, 50});            // 400 + 0.9 x (500 - 400)
  CHECK(a.gemm_flop_per_s() == Approx(280));
  CHECK(b.gemm_flop_per_s() == Approx(490));
  CHECK(pooled({a, b}).rounds() == 5);
  CHECK(pooled({a, b}).gemm_flop_per_s() == Approx(460));  // 400 + 0.6 x (500 - 400)
  CHECK(pooled({a, b}).stream_bytes_per_s() == Approx(46));
  std::vector<double> many;
  for (int i = 1; i <= 11; ++i) many.push_back(i);  // the decile of 1..11 is 10: one lucky round moves nothing
  many.back() = 1000;
  CHECK(probe(many, many).gemm_flop_per_s() == 10);
  const MachineDrift d = machine_drift(a, b);
  CHECK(d.gemm_ratio == Approx(490.0 / 280));
  CHECK(d.stream_ratio == Approx(49.0 / 28));
}

TEST_CASE("one drift ratio for compute and memory scales every prediction by exactly its inverse", "[machine_probe]") {
  const Profile p = cpu_profile();
  const Predictor before(p);
  for (const double ratio : {0.8, 1.25}) {
    const Profile c = corrected_for(p, probe({140e9 * ratio}, {20e9 * ratio}));
    CHECK(c.provenance["machine_correction"]["gemm_ratio"].get<double>() == Approx(ratio));
    const Predictor after(c);
    for (const MeasurementRecord& r : holdout_shapes()) {
      INFO(r.op_class() << " ratio " << ratio);
      CHECK(after.record(r).time_ms * ratio == Approx(before.record(r).time_ms).epsilon(kRoundingTolerance));
    }
  }
}

TEST_CASE("compute terms follow the GEMM ratio, memory bandwidth the stream ratio", "[machine_probe]") {
  OpModel m;
  m.t0_s = 4e-6;
  m.peak_flop_per_s = 100e9;
  m.bw_bytes_per_s = 20e9;
  m.cache_bw_bytes_per_s = 60e9;
  m.softmax_rate = m.load_rate = m.tile_rate = m.widen_rate = m.skinny_rate = 1e9;
  m.head_dim_scale = 32;
  m.cache_bytes = 1e6;
  const OpModel c = corrected_for(m, MachineDrift{0.5, 0.8});
  CHECK(c.t0_s == 8e-6);
  CHECK(c.peak_flop_per_s == 50e9);
  CHECK(c.cache_bw_bytes_per_s == 30e9);
  for (double OpModel::*rate : {&OpModel::softmax_rate, &OpModel::load_rate, &OpModel::tile_rate, &OpModel::widen_rate,
                                &OpModel::skinny_rate})
    CHECK(c.*rate == 0.5e9);
  CHECK(c.bw_bytes_per_s == 16e9);
  CHECK(c.head_dim_scale == 32);
  CHECK(c.cache_bytes == 1e6);

  // The roofline of a datasheet-like profile: a memory-bound op slows by the stream ratio alone, a
  // compute-bound one by the GEMM ratio alone.
  Profile roof;
  roof.name = "roof";
  roof.kind = "cpu";
  roof.spec.mem_bw_bytes_per_s = 20e9;
  roof.spec.peak_flop_per_s["fp32"] = 100e9;
  roof.machine_probe = probe({100e9}, {20e9});
  const Profile slow = corrected_for(roof, probe({50e9}, {16e9}));
  CHECK(slow.spec.peak_flop_per_s.at("fp32") == 50e9);
  CHECK(slow.spec.mem_bw_bytes_per_s == 16e9);
  const GemmShape matvec{1, 8192, 8192};     // 2 FLOP per 4-byte weight: memory-bound
  const GemmShape square{2048, 2048, 2048};  // 2048 FLOP per byte: compute-bound
  CHECK(Predictor(slow).gemm(matvec, DType::fp32).time_ms ==
        Approx(Predictor(roof).gemm(matvec, DType::fp32).time_ms / 0.8).epsilon(kRoundingTolerance));
  CHECK(Predictor(slow).gemm(square, DType::fp32).time_ms ==
        Approx(Predictor(roof).gemm(square, DType::fp32).time_ms / 0.5).epsilon(kRoundingTolerance));
}

TEST_CASE("a profile without a probe, and a malformed probe, are input errors", "[machine_probe]") {
  Profile datasheet;
  datasheet.name = "h100-sxm";
  CHECK_THROWS_WITH(corrected_for(datasheet, probe({1e9}, {1e9})),
                    Catch::Contains("--profile = h100-sxm: stores no machine_probe (a datasheet profile"));
  Profile imported = cpu_profile();
  imported.machine_probe.reset();
  imported.provenance["from"] = "timings.jsonl";
  CHECK_THROWS_WITH(stored_probe(imported), Catch::Contains("fitted to imported timings"));

  nlohmann::json j = machine_probe_to_json(probe({1e9, 3e9, 2e9}, {1e9, 1e9, 1e9}));
  CHECK(machine_probe_from_json(j, "p").gemm_flop_per_s() == Approx(2.8e9));
  nlohmann::json edited = j;
  edited["gemm_flop_per_s"] = 2.5e9;
  CHECK_THROWS_AS(machine_probe_from_json(edited, "p"), InputError);
  edited = j;
  edited["stream_rounds_bytes_per_s"] = {1e9, 1e9};
  CHECK_THROWS_WITH(machine_probe_from_json(edited, "p"), Catch::Contains("as many rounds"));
  edited = j;
  edited["stream_bytes_per_s"] = 0;
  CHECK_THROWS_WITH(machine_probe_from_json(edited, "p"), Catch::Contains("p: stream_bytes_per_s"));
  edited = j;
  edited.erase("gemm_rounds_flop_per_s");  // a hand-written probe: its values alone
  edited.erase("stream_rounds_bytes_per_s");
  CHECK(machine_probe_from_json(edited, "p").rounds() == 1);
}
