// The linear-attention decode step (src/linear_attention.cu) against a float64 reference of the
// recurrences on the same bf16 values: Gated DeltaNet and Mamba2, every pair of state widths 64 and 128,
// grouped value heads, convolutions of 1 to 8 taps, with and without bias (and Mamba2's D); every
// output, state and kept-input element checked; outputs poisoned first.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/linear_attention.hpp"
#include "../linear_reference.hpp"
#include "reference.hpp"

namespace {

using namespace mhacfg;
using namespace mhacfg::test;
namespace la = mhacfg::kernels::cuda::linear_attention;

DeviceBuffer upload_f32(const std::vector<float>& v) {
  DeviceBuffer b(std::max<std::size_t>(v.size(), 1) * sizeof(float));
  kernels::cuda::copy_to_device(b.get(), v.data(), v.size() * sizeof(float));
  return b;
}

void check_step(const LinearAttentionShape& s, bool with_bias, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t C = s.conv_dim(), K = s.conv_kernel, B = s.batch, H = s.num_v_heads;
  const auto x = random_bf16_values(B * C, rng, -1.f, 1.f);
  const auto w = random_bf16_values(K * C, rng, -0.5f, 0.5f);
  const auto bias = with_bias ? random_bf16_values(C, rng, -0.1f, 0.1f) : std::vector<float>{};
  const auto state = random_bf16_values(B * H * s.head_k_dim * s.head_v_dim, rng, -0.5f, 0.5f);
  const auto kept = random_bf16_values(B * (K - 1) * C, rng, -1.f, 1.f);
  std::vector<float> decay(static_cast<std::size_t>(B * H)), beta(decay.size()), skip;
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (std::size_t i = 0; i < decay.size(); ++i) {
    decay[i] = -0.05f - 0.95f * u(rng);
    beta[i] = 0.05f + 0.9f * u(rng);
  }
  if (s.kind == LinearKind::mamba2 && with_bias)  // Mamba2's D with the bias, or neither
    for (std::int64_t h = 0; h < H; ++h) skip.push_back(2.f * u(rng) - 1.f);

  // No padding: the kernel reads and writes nothing past any tensor, and memcheck sees only the
  // allocation's bounds.
  // (A 1-tap convolution keeps no inputs: one unused element then, so no copy touches a null pointer.)
  auto dx = upload_bf16(x), dw = upload_bf16(w), dstate = upload_bf16(state), dkept = upload_bf16(kept, kept.empty() ? 1 : 0);
  DeviceBuffer dbias;
  if (with_bias) dbias = upload_bf16(bias);
  auto ddecay = upload_f32(decay), dbeta = upload_f32(beta), dskip = upload_f32(skip);
  const std::size_t o_elems = static_cast<std::size_t>(B * H * s.head_v_dim);
  auto dout = poisoned_bf16(o_elems);
  DeviceBuffer ws(la::workspace_bytes(s));
  kernels::cuda::fill_bytes(ws.get(), kernels::cuda::kPoisonByte, ws.bytes(), nullptr);

  la::Params p;
  p.shape = s;
  p.x = dx.as<Bf16>();
  p.decay = ddecay.as<float>();
  p.beta = dbeta.as<float>();
  p.conv_weight = dw.as<Bf16>();
  p.conv_bias = with_bias ? dbias.as<Bf16>() : nullptr;
  p.skip = skip.empty() ? nullptr : dskip.as<float>();
  p.state = dstate.as<Bf16>();
  p.conv_state = dkept.as<Bf16>();
  p.o = dout.as<Bf16>();
  p.workspace = ws.get();
  p.workspace_bytes = ws.bytes();
  la::run(p, nullptr);
  kernels::cuda::synchronize(nullptr);

  // The shared float64 reference (tests/kernels/linear_reference.hpp); the kept inputs are bf16
  // values already, so their rounding is exact.
  const test::LinearResult want = test::linear_attention_reference(s, {x, decay, beta, w, bias, skip, state, kept}, 1);
  // Outputs are rounded to bf16 (at most 2^-8 of the value) after fp32 arithmetic: 2^-8 of each element's
  // magnitude plus 1e-4 of the largest (fp32 sums of up to 128 terms). The state is rounded to bf16 on
  // both sides, the device's from fp32 and the reference's from float64: where a value sits at a
  // rounding boundary the two land one bf16 step apart (2^-8 to 2^-7 of the value; with ~10^6 state
  // elements such boundary cases occur), so its tolerance is one step, 2^-7, plus the same 1e-4.
  const auto tolerances = [](const std::vector<double>& ref, double relative) {
    double top = 0;
    for (double e : ref) top = std::max(top, std::abs(e));
    std::vector<double> t(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) t[i] = std::abs(ref[i]) * relative + 1e-4 * std::max(1.0, top);
    return t;
  };
  std::string o_report, state_report, kept_report;
  const std::size_t bad_o =
      count_mismatches(download_bf16(dout, o_elems), want.o, tolerances(want.o, 1.0 / 256), o_report);
  const std::size_t bad_state =
      count_mismatches(download_bf16(dstate, state.size()), want.state, tolerances(want.state, 1.0 / 128), state_report);
  // The kept inputs are moved, not computed: exact.
  const std::size_t bad_kept = count_mismatches(download_bf16(dkept, kept.size()), want.conv_state, 0.0, kept_report);
  INFO("outputs: " << o_report << "\nstate: " << state_report << "\nkept inputs: " << kept_report);
  CHECK(bad_o == 0);
  CHECK(bad_state == 0);
  CHECK(bad_kept == 0);
}

TEST_CASE("CUDA linear-attention decode step matches float64", "[cuda][linear][sanitize]") {
  MHACFG_REQUIRE_CUDA_DEVICE();
  const LinearAttentionShape cases[] = {
      {3, 1, 16, 32, 128, 128, 4, LinearKind::gated_deltanet},  // Qwen3-Next's layer, 2 value heads per key head
      {2, 1, 4, 4, 64, 128, 4, LinearKind::gated_deltanet},
      {1, 1, 2, 8, 128, 64, 2, LinearKind::gated_deltanet},
      {2, 1, 8, 128, 128, 64, 4, LinearKind::mamba2},  // Nemotron-H's layer
      {5, 1, 1, 16, 64, 64, 1, LinearKind::mamba2},    // one group, no kept inputs
      {2, 1, 2, 4, 64, 64, 3, LinearKind::gated_deltanet},
      {2, 1, 2, 8, 64, 128, 4, LinearKind::mamba2},
      {1, 1, 1, 4, 128, 128, 8, LinearKind::mamba2},  // the widest convolution
  };
  std::uint64_t seed = 0x11;
  for (const LinearAttentionShape& s : cases)
    for (bool bias : {false, true}) {
      DYNAMIC_SECTION(to_string(s.kind) << " batch " << s.batch << " heads " << s.num_k_heads << "/" << s.num_v_heads << " "
                                        << s.head_k_dim << "x" << s.head_v_dim << " kernel " << s.conv_kernel
                                        << (bias ? " bias" : "")) {
        check_step(s, bias, ++seed);
      }
    }
}

TEST_CASE("CUDA linear attention names what it does not support", "[cuda][linear]") {
  // No device needed: shapes are checked on the host.
  LinearAttentionShape s{1, 1, 16, 32, 128, 128, 4, LinearKind::gated_deltanet};
  CHECK(la::unsupported_reason(s).empty());
  s.q_len = 16;
  CHECK(la::unsupported_reason(s) == "q_len = 16: the CUDA linear-attention kernel is a decode step (q_len 1)");
  s.q_len = 1;
  s.head_k_dim = 96;
  CHECK(la::unsupported_reason(s) == "head_k_dim = 96: must be 64 or 128");
  s.head_k_dim = 128;
  s.num_k_heads = 3;
  CHECK(la::unsupported_reason(s) == "num_k_heads = 3: must divide num_v_heads = 32");
  la::Params p;
  p.shape = s;
  CHECK_THROWS_AS(la::run(p, nullptr), InputError);
}

}  // namespace
