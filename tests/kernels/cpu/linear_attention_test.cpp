// linear_attention (Gated DeltaNet, KDA and Mamba2 cores) against a float64 reference written from the
// recurrences' definitions: every output, state and conv-state element checked, outputs poisoned
// with NaN before each run; fp32 and bf16 states, decode steps and multi-block prefills, grouped
// value heads, 1 and 2 threads.
#include "mhacfg/kernels/cpu/linear_attention.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "mhacfg/costmodel/errors.hpp"
#include "../linear_reference.hpp"
#include "reference.hpp"
#include "tolerances.hpp"

namespace mhacfg::kernels::cpu {
namespace {

using Vec = std::vector<double>;

using Inputs = mhacfg::test::LinearInputs;
using Result = mhacfg::test::LinearResult;

std::vector<float> uniform(std::int64_t n, std::uint32_t seed, float lo, float hi) {
  std::vector<float> v = test::random_values(n, seed);  // [-1, 1)
  for (float& e : v) e = lo + (hi - lo) * (e + 1.0f) / 2.0f;
  return v;
}

Inputs make_inputs(const LinearAttentionShape& s, std::uint32_t seed) {
  const std::int64_t tokens = s.batch * s.q_len, conv = s.conv_dim();
  Inputs in;
  in.x = test::random_values(tokens * conv, seed);
  // Decays exp(-1) .. exp(-0.05): a Mamba2 state holds at most ~20 steps' updates.
  in.decay = uniform(tokens * s.num_v_heads * (s.kind == LinearKind::kda ? s.head_k_dim : 1), seed + 1, -1.0f, -0.05f);
  in.beta = uniform(tokens * s.num_v_heads, seed + 2, 0.05f, s.kind == LinearKind::mamba2 ? 0.5f : 1.0f);
  in.conv_w = uniform(s.conv_kernel * conv, seed + 3, -0.5f, 0.5f);
  in.conv_b = uniform(conv, seed + 4, -0.1f, 0.1f);
  in.skip = test::random_values(s.num_v_heads, seed + 5);
  in.state = uniform(s.batch * s.num_v_heads * s.head_k_dim * s.head_v_dim, seed + 6, -0.5f, 0.5f);
  in.conv_state = test::random_values(s.batch * (s.conv_kernel - 1) * conv, seed + 7);
  return in;
}

// The shared float64 reference on these inputs, with or without the bias and D, fp32 storage
// (round_block 0) or a bf16 state rounded every round_block tokens.
Result reference(const LinearAttentionShape& s, Inputs in, bool with_bias, bool with_skip, std::int64_t round_block) {
  if (!with_bias) in.conv_b.clear();
  if (!with_skip) in.skip.clear();
  return mhacfg::test::linear_attention_reference(s, in, round_block, kLinearAttentionNormEps);
}

template <class StateT>
struct Outputs {
  std::vector<float> o, state, conv_state;  // the states widened to fp32
};

template <class StateT>
Outputs<StateT> run_kernel(const LinearAttentionShape& s, const Inputs& in, bool with_bias, bool with_skip, int threads) {
  std::vector<StateT> state(in.state.size()), conv_state(in.conv_state.size());
  if constexpr (std::is_same_v<StateT, float>) {
    state = in.state;
    conv_state = in.conv_state;
  } else {
    state = test::to_bf16(in.state);
    conv_state = test::to_bf16(in.conv_state);
  }
  Outputs<StateT> out;
  out.o.assign(static_cast<std::size_t>(s.batch * s.q_len * s.num_v_heads * s.head_v_dim), NAN);
  LinearAttentionParams<StateT> p;
  p.shape = s;
  p.x = in.x.data();
  p.decay = in.decay.data();
  p.beta = in.beta.data();
  p.conv_weight = in.conv_w.data();
  p.conv_bias = with_bias ? in.conv_b.data() : nullptr;
  p.skip = with_skip ? in.skip.data() : nullptr;
  p.state = state.data();
  p.conv_state = conv_state.data();
  p.o = out.o.data();
  p.threads = threads;
  linear_attention::run(p);
  const auto widen = [](const std::vector<StateT>& v) {
    std::vector<float> f(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<StateT, float>) f[i] = v[i];
      else f[i] = bf16_to_fp32(v[i]);
    }
    return f;
  };
  out.state = widen(state);
  out.conv_state = widen(conv_state);
  return out;
}

// Inputs whose stored values a bf16 state holds exactly (what the kernel starts from).
Inputs with_bf16_states(Inputs in) {
  for (float& v : in.state) v = bf16_to_fp32(fp32_to_bf16(v));
  for (float& v : in.conv_state) v = bf16_to_fp32(fp32_to_bf16(v));
  return in;
}

double largest(const Vec& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}

LinearAttentionShape shape(LinearKind kind, std::int64_t batch, std::int64_t q_len, std::int64_t kh, std::int64_t vh,
                           std::int64_t dk, std::int64_t dv, std::int64_t conv) {
  return LinearAttentionShape{batch, q_len, kh, vh, dk, dv, conv, kind};
}

TEST_CASE("linear attention matches float64: Gated DeltaNet, KDA and Mamba2, fp32 and bf16 states", "[kernels][cpu][linear]") {
  const LinearAttentionShape cases[] = {
      shape(LinearKind::gated_deltanet, 1, 1, 2, 4, 32, 48, 4),     // a decode step, 2 value heads per key head
      shape(LinearKind::gated_deltanet, 3, 1, 4, 4, 64, 64, 4),     // batch 3
      shape(LinearKind::gated_deltanet, 2, 150, 1, 2, 16, 24, 4),   // prefill over 3 token blocks
      shape(LinearKind::gated_deltanet, 1, 2, 3, 3, 128, 128, 2),   // q_len 2 (the kept input and a new one)
      shape(LinearKind::mamba2, 2, 1, 1, 8, 32, 16, 4),             // one group, 8 heads
      shape(LinearKind::mamba2, 1, 130, 2, 4, 16, 8, 4),            // prefill, 2 groups
      shape(LinearKind::mamba2, 1, 3, 2, 2, 64, 32, 1),             // no kept inputs (kernel 1)
      shape(LinearKind::gated_deltanet, 1, 70, 1, 1, 8, 8, 64),     // the widest kernel: tokens read the kept inputs
      shape(LinearKind::kda, 2, 1, 4, 4, 32, 32, 4),                // KDA decode steps: a decay per key channel
      shape(LinearKind::kda, 1, 140, 2, 2, 16, 24, 4),              // KDA prefill over 3 token blocks
      shape(LinearKind::kda, 1, 1, 1, 2, 128, 128, 4),              // Kimi Linear's head width, grouped
  };
  for (const LinearAttentionShape& s : cases) {
    DYNAMIC_SECTION(to_string(s.kind) << " batch " << s.batch << " q_len " << s.q_len << " heads " << s.num_k_heads << "/"
                                      << s.num_v_heads << " dims " << s.head_k_dim << "x" << s.head_v_dim << " kernel "
                                      << s.conv_kernel) {
      const Inputs in = make_inputs(s, static_cast<std::uint32_t>(s.q_len * 31 + s.head_k_dim + s.num_v_heads));
      const bool mamba = s.kind == LinearKind::mamba2;
      for (const bool bias : {false, true}) {
        const Result want = reference(s, in, bias, mamba, 0);
        // Outputs are sums of up to head_k_dim state-times-input products over states that held up to
        // ~20 steps' updates, so errors are measured against the largest output.
        const double scale = std::max(1.0, largest(want.o));
        for (int threads : {1, 2}) {
          const auto got = run_kernel<float>(s, in, bias, mamba, threads);
          test::check_every_element(got.o, want.o, test::kFp32RecurrenceTol * scale);
          test::check_every_element(got.state, want.state, test::kFp32RecurrenceTol * std::max(1.0, largest(want.state)));
          test::check_every_element(got.conv_state, want.conv_state, 0.0);  // copies of inputs
        }
      }
      // bf16 state: the kernel's arithmetic against the reference rounding at the same points.
      const Inputs in16 = with_bf16_states(in);
      const Result want16 = reference(s, in16, true, mamba, kLinearAttentionTokenBlock);
      const auto got16 = run_kernel<bf16_bits>(s, in, true, mamba, 2);
      const double scale = std::max(1.0, largest(want16.o));
      test::check_every_element(got16.conv_state, want16.conv_state, 0.0);
      if (s.q_len <= kLinearAttentionTokenBlock) {  // one block: outputs come before any rounding
        test::check_every_element(got16.o, want16.o, test::kFp32RecurrenceTol * scale);
      } else {
        // A state rounded at a block's end may land one bf16 step from the reference's: every output
        // within that bound. The rounding schedule itself: the outputs just after a rounding differ
        // from an unrounded state's (the decays wash the difference out within ~20 tokens), so the
        // kernel matches the reference that rounds every 64 tokens at fp32 accuracy in far more outputs
        // than one that rounds only at the end or every 16 tokens.
        test::check_every_element(got16.o, want16.o, test::kBf16RecurrenceTol * scale);
        const auto off = [&](const Result& r) {
          std::size_t n = 0;
          for (std::size_t i = 0; i < r.o.size(); ++i) n += std::abs(got16.o[i] - r.o[i]) > test::kFp32RecurrenceTol * scale;
          return n;
        };
        const std::size_t scheduled = off(want16), at_end = off(reference(s, in16, true, mamba, s.q_len)),
                          every16 = off(reference(s, in16, true, mamba, 16));
        INFO("outputs off at fp32 accuracy: " << scheduled << " (every 64), " << at_end << " (at the end), " << every16
                                              << " (every 16) of " << got16.o.size());
        CHECK(at_end > 4 * scheduled + 5);
        CHECK(every16 > 4 * scheduled + 5);
      }
      // The stored state: each element the reference's rounded value, or its neighbour (one bf16
      // step, at most 2^-7 of the value) where the fp32 value sat at a rounding boundary.
      REQUIRE(got16.state.size() == want16.state.size());
      std::size_t state_off = 0;
      for (std::size_t i = 0; i < got16.state.size(); ++i)
        state_off += !(std::abs(got16.state[i] - want16.state[i]) <= test::kBf16Step * std::abs(want16.state[i]) + 1e-30);
      CHECK(state_off == 0);
    }
  }
}

TEST_CASE("KDA with one decay for every key channel of a head is Gated DeltaNet", "[kernels][cpu][linear]") {
  const LinearAttentionShape gdn = shape(LinearKind::gated_deltanet, 2, 70, 2, 4, 32, 16, 4);
  LinearAttentionShape kda = gdn;
  kda.kind = LinearKind::kda;
  const Inputs in = make_inputs(gdn, 7);
  Inputs spread = in;  // each head's decay repeated over its 32 key channels
  spread.decay.clear();
  for (float g : in.decay) spread.decay.insert(spread.decay.end(), 32, g);
  const auto a = run_kernel<float>(gdn, in, true, false, 2);
  const auto b = run_kernel<float>(kda, spread, true, false, 2);
  // The same arithmetic, up to the order the compiler fuses it in.
  const auto widen = [](const std::vector<float>& v) { return Vec(v.begin(), v.end()); };
  test::check_every_element(b.o, widen(a.o), test::kFp32RecurrenceTol * std::max(1.0, largest(widen(a.o))));
  test::check_every_element(b.state, widen(a.state), test::kFp32RecurrenceTol * std::max(1.0, largest(widen(a.state))));
  // ... and different decays per channel give a different state.
  Inputs varied = spread;
  for (std::size_t i = 0; i < varied.decay.size(); i += 2) varied.decay[i] *= 0.5f;
  CHECK(run_kernel<float>(kda, varied, true, false, 2).state != a.state);
}

TEST_CASE("linear attention refuses shapes it cannot run, naming the field", "[kernels][cpu][linear]") {
  const auto why = [](LinearAttentionShape s, DType d = DType::fp32) { return linear_attention::unsupported_reason(s, d); };
  const LinearAttentionShape ok = shape(LinearKind::gated_deltanet, 1, 1, 2, 4, 32, 32, 4);
  CHECK(why(ok).empty());
  CHECK(why(ok, DType::bf16).empty());
  CHECK(why(ok, DType::fp8).rfind("dtype = fp8", 0) == 0);
  auto s = ok;
  s.num_k_heads = 3;
  CHECK(why(s).rfind("num_k_heads = 3: must divide num_v_heads = 4", 0) == 0);
  s = ok;
  s.head_v_dim = 0;
  CHECK(why(s).rfind("head_v_dim = 0", 0) == 0);
  s = ok;
  s.conv_kernel = 65;
  CHECK(why(s).rfind("conv_kernel = 65", 0) == 0);
  s = ok;
  s.kind = LinearKind::short_conv;
  CHECK(why(s).rfind("kind = short_conv", 0) == 0);
  s = ok;
  s.kind = LinearKind::lightning;  // MiniMax's: priced on the roofline, no kernel of mhacfg's
  CHECK(why(s).rfind("kind = lightning", 0) == 0);
  s = ok;
  s.q_len = 0;
  CHECK(why(s).rfind("q_len = 0", 0) == 0);
  LinearAttentionParams<float> p;
  p.shape = s;
  CHECK_THROWS_AS(linear_attention::run(p), InputError);
}

}  // namespace
}  // namespace mhacfg::kernels::cpu
