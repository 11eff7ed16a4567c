// What a prediction stands on: a fit measured on this device, a fit measured on another device and
// scaled by the two datasheets (transferred), a kernel class (a published kernel's stated efficiencies
// on this device's datasheet, kernel_class.hpp), or the bare datasheet roofline. Each prediction and
// each whole-model aggregate carries one, with the expected error where one was measured.
#pragma once

#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace mhacfg {

// Ordered from best to worst: an aggregate takes the worst of its fitted parts (measured,
// transferred); kernel-class and roofline parts are listed beside them (kernel_class_ops,
// roofline_ops) and set the kind only where nothing else is fitted.
enum class BasisKind { measured, transferred, kernel_class, roofline };

const char* to_string(BasisKind k);

struct Basis {
  BasisKind kind = BasisKind::roofline;
  std::string from;                // transferred: the profile whose fits were scaled; kernel_class: its name
  double expected_median_ape = 0;  // fraction; 0: not known
  double expected_p90_ape = 0;
  std::string expected_how;        // how the expected error was obtained
  // Op classes a profile with fits has none for, predicted by the bare roofline (a linear-attention
  // core or indexer no GPU profile measures). Empty when kind is roofline: then every op is.
  std::set<std::string> roofline_ops;
  // Op classes a fit of another dtype predicts (gemm/fp8 from a 16-bit gemm fit: its efficiencies at
  // the dtype's datasheet peak), with no error measured for that step.
  std::set<std::string> dtype_transferred_ops;
  // Op classes priced by a kernel class instead of the profile's fits: op class -> kernel class name.
  std::map<std::string, std::string> kernel_class_ops;
};

// A basis for an op predicted by the roofline because the profile has no fit of its class.
Basis roofline_op_basis(const std::string& op_class);
// A basis for an op priced by the kernel class named `kernel_class` (kernel_class.hpp): its expected
// error and source.
Basis kernel_class_op_basis(const std::string& op_class, const std::string& kernel_class);
// The basis of a sum of two predictions: the worse kind among the fitted parts (kernel class, then
// roofline, where neither is fitted), the larger expected error of the fitted parts, and the unions of
// the op classes that fell back to the roofline or were priced by a kernel class.
Basis combine(const Basis& a, const Basis& b);

// Whether op classes starting with `prefix` (e.g. "indexer/") were the roofline in `b`.
bool roofline_for(const Basis& b, const std::string& prefix);

// One phrase: "measured, expected error ~5 % median", "transferred from h200-sxm-cudnn, expected
// error ~12 % median", "kernel class flashmla (...)", "roofline", with "; attention/decode/mla from
// kernel class flashmla (expected error ~6 % median, 23 % p90)" where a kernel class priced some and
// "; roofline for indexer/decode" where some classes fell back.
std::string basis_text(const Basis& b);
// {"kind", "from", "expected_error": {"median_ape", "p90_ape", "how"} or null, "roofline_ops",
// "dtype_transferred_ops", "kernel_class_ops": [{"op_class", "kernel_class", "source", "expected_error"}]}.
nlohmann::json basis_json(const Basis& b);

}  // namespace mhacfg
