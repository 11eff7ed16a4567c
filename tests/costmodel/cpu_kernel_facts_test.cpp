// CPU kernel facts in a profile: read and written with the profile, absent means the defaults, and
// predictions count with the profile's facts.
#include <catch2/catch.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/predict.hpp"

using namespace mhacfg;

namespace {
Profile cpu_profile() {
  Profile p;
  p.name = "cpu-test";
  p.device = "test";
  p.kind = "cpu";
  p.spec.memory_bytes = 1 << 30;
  p.spec.mem_bw_bytes_per_s = 1e10;
  p.spec.peak_flop_per_s["fp32"] = 1e11;
  p.spec.compute_units = 1;
  return p;
}
}  // namespace

TEST_CASE("a profile without cpu_kernel_facts keeps none and counts with the defaults", "[profile]") {
  const Profile p = profile_from_json(profile_to_json(cpu_profile()), "p.json");
  CHECK_FALSE(p.cpu_kernel_facts);
  CHECK_FALSE(profile_to_json(p).contains("cpu_kernel_facts"));
  CHECK(p.cpu_facts().prefill_tile_rows == CpuKernelFacts{}.prefill_tile_rows);
}

TEST_CASE("cpu_kernel_facts round-trip and reach the features the predictor uses", "[profile]") {
  Profile p = cpu_profile();
  CpuKernelFacts facts;
  facts.skinny_gemm_rows = 8;
  p.cpu_kernel_facts = facts;
  const Profile back = profile_from_json(profile_to_json(p), "p.json");
  REQUIRE(back.cpu_kernel_facts);
  CHECK(back.cpu_kernel_facts->skinny_gemm_rows == 8);
  CHECK(back.cpu_kernel_facts->row_block == CpuKernelFacts{}.row_block);
  // A GEMM of 12 rows is skinny under the defaults, blocked (packing B) under these facts.
  const GemmShape g{12, 256, 256};
  CHECK(op_features(g, DType::fp32).skinny_elements > 0);
  CHECK(op_features(g, DType::fp32, facts).skinny_elements == 0);
  CHECK(op_features(g, DType::fp32, facts).elements > 0);
}

TEST_CASE("cpu_kernel_facts hold positive integers", "[profile]") {
  nlohmann::json j = profile_to_json(cpu_profile());
  j["cpu_kernel_facts"] = {{"row_block", 0}};
  CHECK_THROWS_AS(profile_from_json(j, "p.json"), InputError);
  j["cpu_kernel_facts"] = {{"prefill_key_tile", 128}};
  CHECK(profile_from_json(j, "p.json").cpu_facts().prefill_key_tile == 128);
}
