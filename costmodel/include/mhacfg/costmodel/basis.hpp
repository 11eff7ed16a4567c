// What a prediction stands on: a fit measured on this device, a fit measured on another device and
// scaled by the two datasheets (transferred), or the bare datasheet roofline. Each prediction and each
// whole-model aggregate carries one, with the expected error where one was measured.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace mhacfg {

// Ordered from best to worst: an aggregate takes the worst of its parts.
enum class BasisKind { measured, transferred, roofline };

const char* to_string(BasisKind k);

struct Basis {
  BasisKind kind = BasisKind::roofline;
  std::string from;                // transferred: the profile whose fits were scaled
  double expected_median_ape = 0;  // fraction; 0: not known
  double expected_p90_ape = 0;
  std::string expected_how;        // how the expected error was obtained
  // Op classes a profile with fits has none for, predicted by the bare roofline (a linear-attention
  // core or indexer no GPU profile measures). Empty when kind is roofline: then every op is.
  std::set<std::string> roofline_ops;
  // Op classes a fit of another dtype predicts (gemm/fp8 from a 16-bit gemm fit: its efficiencies at
  // the dtype's datasheet peak), with no error measured for that step.
  std::set<std::string> dtype_transferred_ops;
};

// A basis for an op predicted by the roofline because the profile has no fit of its class.
Basis roofline_op_basis(const std::string& op_class);
// The basis of a sum of two predictions: the worse kind among the fitted parts, the larger expected
// error, and the union of the op classes that fell back to the roofline.
Basis combine(const Basis& a, const Basis& b);

// Whether op classes starting with `prefix` (e.g. "indexer/") were the roofline in `b`.
bool roofline_for(const Basis& b, const std::string& prefix);

// One phrase: "measured, expected error ~5 % median", "transferred from h200-sxm-cudnn, expected
// error ~12 % median", "roofline", with "; roofline for indexer/decode" where some classes fell back.
std::string basis_text(const Basis& b);
// {"kind", "from", "expected_error": {"median_ape", "p90_ape", "how"} or null, "roofline_ops"}.
nlohmann::json basis_json(const Basis& b);

}  // namespace mhacfg
