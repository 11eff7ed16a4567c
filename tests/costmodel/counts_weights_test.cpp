// Served weight bytes per GPU: each component in its dtype with its scales.
#include <catch2/catch.hpp>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/hf_config.hpp"

using namespace mhacfg;

namespace {
ModelSpec fixture(const std::string& name) { return load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/" + name + ".json"); }
}  // namespace

TEST_CASE("served weights: each component in its dtype with its scales", "[counts][dtype]") {
  const ModelSpec m = fixture("qwen3-30b-a3b");
  const ParamCounts p = count_params(m);
  Workload w;
  const double bf16 = served_weight_bytes_per_gpu(p, w);
  CHECK(bf16 == Approx(2.0 * double(p.total)));
  // Experts in nvfp4 (4.5 bits with their scales), attention and the rest in bf16.
  w.ffn_weight_dtype = DType::nvfp4;
  const double rest = double(p.total - p.ffn);
  CHECK(served_weight_bytes_per_gpu(p, w) == Approx(2.0 * rest + double(p.ffn) * 4.5 / 8.0));
  // Attention in fp8 as well: its parameters at one byte.
  w.attention_weight_dtype = DType::fp8;
  CHECK(served_weight_bytes_per_gpu(p, w) ==
        Approx(2.0 * (rest - double(p.attention)) + double(p.attention) + double(p.ffn) * 4.5 / 8.0));
  // Under tp the components split as before: the uniform overload is the same sum.
  Workload t;
  t.tp = 4;
  CHECK(served_weight_bytes_per_gpu(p, t) == Approx(served_weight_bytes_per_gpu(p, DType::bf16, 4)));
}

TEST_CASE("gpt-oss-20b with mxfp4 experts: its published checkpoint size, scales included", "[counts][dtype]") {
  // OpenAI's gpt-oss model card lists a 12.8 GiB checkpoint for gpt-oss-20b (quoted by
  // fitmygpu.com/models/gpt-oss-20b): MoE weights in MXFP4, the rest bf16. Without the E8M0 scales
  // (4.25 -> 4 bits an expert weight) the count would be 12.25 GiB.
  const ParamCounts p = count_params(fixture("gpt-oss-20b"));
  Workload w;
  w.ffn_weight_dtype = DType::mxfp4;
  constexpr double kPublishedRounding = 0.05;  // GiB: the card's one decimal
  CHECK(served_weight_bytes_per_gpu(p, w) / double(1LL << 30) == Approx(12.8).margin(kPublishedRounding));
}
