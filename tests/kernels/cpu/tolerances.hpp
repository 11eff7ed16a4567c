// Named tolerances of the CPU kernel tests, each with its reason.
#pragma once

namespace mhacfg::kernels::cpu::test {

// fp32 attention against float64 on the same inputs. Scores come from fp32 dot products of <= 576
// terms of [-1, 1) values (relative rounding ~1e-7 * sqrt(terms)), exp is Eigen's vectorised fp32
// exp (~2 ulp), and the softmax sum and P V accumulate <= ~3000 fp32 terms. Outputs are convex
// combinations of V in [-1, 1]; the worst error seen over these tests is 1.8e-7, so 2e-6 leaves a
// 10x margin and is still far below any indexing or masking mistake (~1e-2 or more).
inline constexpr double kFp32AttentionTol = 2e-6;

// Relative error of one fp32 -> bf16 conversion: bf16 keeps 8 significant bits, so round to
// nearest is off by at most the unit roundoff 2^-8 of |x|.
inline constexpr double kBf16RelativeRounding = 1.0 / 256.0;

// bf16 K/V (or latent) storage against the float64 attention on the unrounded fp32 values. Each
// stored V element in [-1, 1] is off by at most 2^-8, so an output (a convex combination of V rows)
// moves by at most 2^-8 ~ 3.9e-3 from V; rounding K moves each score by ~2^-8 of a score below 1 and
// the outputs by far less (worst seen: 2.0e-3). 8e-3 is that bound with room for the score term.
// The kernel's arithmetic itself is checked at kFp32AttentionTol against the reference on the
// rounded values.
inline constexpr double kBf16StorageTol = 8e-3;

// fp32 GEMM against float64: the classic dot-product bound |error| <= k * u * sum |a_i b_i| with
// u = 2^-24 (fp32 unit roundoff), evaluated per element from the reference.
inline constexpr double kFp32UnitRoundoff = 1.0 / 16777216.0;

// fp32 linear-attention recurrences against float64, relative to the largest element (at least 1)
// of the output or state compared. Each step is a dot product of head_k_dim (<= 128) terms over a
// state that carries ~20 steps' rounding (decays down to exp(-0.05) per step); the worst error seen
// over these tests is 1.6e-7 (Gated DeltaNet, 70 tokens, 8 x 8), so 2e-6 leaves a 10x margin and
// stays far below an indexing or gating mistake (~1e-2 or more).
inline constexpr double kFp32RecurrenceTol = 2e-6;
// The same with a bf16 state over several token blocks: where a state value sits at a rounding
// boundary the kernel's fp32 value and the reference's float64 one can round one bf16 step (2^-8
// relative) apart, and the next block reads it: an output (a dot product with an L2-normalised q)
// moves by at most 2^-8 of the state's scale per such element. The worst error seen is 1.2e-7 (no
// boundary case occurred); 4e-3 is one step's bound.
inline constexpr double kBf16RecurrenceTol = 4e-3;
// One bf16 step relative to the value: bf16 keeps 8 significant bits, so neighbouring values of
// magnitude |x| are 2^-8 to 2^-7 of |x| apart.
inline constexpr double kBf16Step = 1.0 / 128.0;

}  // namespace mhacfg::kernels::cpu::test
