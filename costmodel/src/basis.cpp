#include "mhacfg/costmodel/basis.hpp"

#include <algorithm>
#include <cmath>

#include "mhacfg/costmodel/kernel_class.hpp"

namespace mhacfg {

const char* to_string(BasisKind k) {
  switch (k) {
    case BasisKind::measured: return "measured";
    case BasisKind::transferred: return "transferred";
    case BasisKind::kernel_class: return "kernel_class";
    case BasisKind::roofline: return "roofline";
  }
  return "roofline";
}

Basis roofline_op_basis(const std::string& op_class) {
  Basis b;
  b.roofline_ops.insert(op_class);
  return b;
}

Basis kernel_class_op_basis(const std::string& op_class, const std::string& kernel_class) {
  Basis b;
  b.kind = BasisKind::kernel_class;
  b.from = kernel_class;
  if (const KernelClass* k = find_kernel_class(kernel_class)) {
    b.expected_median_ape = k->expected_median_ape;
    b.expected_p90_ape = k->expected_p90_ape;
    b.expected_how = k->expected_how;
  }
  b.kernel_class_ops[op_class] = kernel_class;
  return b;
}

namespace {
bool fitted(const Basis& b) { return b.kind == BasisKind::measured || b.kind == BasisKind::transferred; }
}  // namespace

Basis combine(const Basis& a, const Basis& b) {
  Basis out;
  // Both of one rank (two fits, or two kernel classes): the worse kind and the larger expected error.
  const auto worse_of = [&] {
    out = static_cast<int>(a.kind) >= static_cast<int>(b.kind) ? a : b;
    out.expected_median_ape = std::max(a.expected_median_ape, b.expected_median_ape);
    out.expected_p90_ape = std::max(a.expected_p90_ape, b.expected_p90_ape);
  };
  if (fitted(a) && fitted(b)) {
    worse_of();
  } else if (fitted(a) || fitted(b)) {
    out = fitted(a) ? a : b;
  } else if (a.kind == BasisKind::kernel_class && b.kind == BasisKind::kernel_class) {
    worse_of();
  } else if (a.kind == BasisKind::kernel_class || b.kind == BasisKind::kernel_class) {
    out = a.kind == BasisKind::kernel_class ? a : b;
  }
  out.roofline_ops = a.roofline_ops;
  out.roofline_ops.insert(b.roofline_ops.begin(), b.roofline_ops.end());
  out.dtype_transferred_ops = a.dtype_transferred_ops;
  out.dtype_transferred_ops.insert(b.dtype_transferred_ops.begin(), b.dtype_transferred_ops.end());
  out.kernel_class_ops = a.kernel_class_ops;
  out.kernel_class_ops.insert(b.kernel_class_ops.begin(), b.kernel_class_ops.end());
  return out;
}

bool roofline_for(const Basis& b, const std::string& prefix) {
  if (b.kind == BasisKind::roofline) return true;
  return std::any_of(b.roofline_ops.begin(), b.roofline_ops.end(),
                     [&](const std::string& o) { return o.compare(0, prefix.size(), prefix) == 0; });
}

namespace {
std::string percent(double fraction) { return std::to_string(static_cast<long long>(std::lround(fraction * 100))); }
std::string error_text(double median, double p90) {
  return "expected error ~" + percent(median) + " % median, " + percent(p90) + " % p90";
}
}  // namespace

std::string basis_text(const Basis& b) {
  std::string s = to_string(b.kind);
  if (b.kind == BasisKind::transferred) s += " from " + b.from;
  if (b.kind == BasisKind::kernel_class) {
    const KernelClass* k = find_kernel_class(b.from);
    s = "kernel class " + b.from + (k ? " (" + k->summary + ")" : "");
  }
  if (b.kind != BasisKind::roofline && b.expected_median_ape > 0)
    s += ", " + error_text(b.expected_median_ape, b.expected_p90_ape);
  if (b.kind != BasisKind::kernel_class)
    for (const auto& [op, name] : b.kernel_class_ops) {
      const KernelClass* k = find_kernel_class(name);
      s += "; " + op + " from kernel class " + name +
           (k && k->expected_median_ape > 0 ? " (" + error_text(k->expected_median_ape, k->expected_p90_ape) + ")" : "");
    }
  if (b.kind != BasisKind::roofline && !b.roofline_ops.empty()) {
    std::string ops;
    for (const auto& o : b.roofline_ops) ops += (ops.empty() ? "" : ", ") + o;
    s += "; roofline for " + ops;
  }
  if (b.kind != BasisKind::roofline && !b.dtype_transferred_ops.empty()) {
    std::string ops;
    for (const auto& o : b.dtype_transferred_ops) ops += (ops.empty() ? "" : ", ") + o;
    s += "; " + ops + " from the 16-bit GEMM fit";
  }
  return s;
}

nlohmann::json basis_json(const Basis& b) {
  nlohmann::json j = {{"kind", to_string(b.kind)}};
  const bool named = b.kind == BasisKind::transferred || b.kind == BasisKind::kernel_class;
  j["from"] = named ? nlohmann::json(b.from) : nlohmann::json(nullptr);
  if (b.kind != BasisKind::roofline && b.expected_median_ape > 0)
    j["expected_error"] = {{"median_ape", b.expected_median_ape}, {"p90_ape", b.expected_p90_ape}, {"how", b.expected_how}};
  else
    j["expected_error"] = nullptr;
  nlohmann::json ops = nlohmann::json::array();
  if (b.kind != BasisKind::roofline)
    for (const auto& o : b.roofline_ops) ops.push_back(o);
  j["roofline_ops"] = ops;
  nlohmann::json narrow = nlohmann::json::array();
  if (b.kind != BasisKind::roofline)
    for (const auto& o : b.dtype_transferred_ops) narrow.push_back(o);
  j["dtype_transferred_ops"] = narrow;
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& [op, name] : b.kernel_class_ops) {
    const KernelClass* k = find_kernel_class(name);
    nlohmann::json e = {{"op_class", op}, {"kernel_class", name}, {"source", k ? k->source : ""}, {"expected_error", nullptr}};
    if (k && k->expected_median_ape > 0)
      e["expected_error"] = {{"median_ape", k->expected_median_ape}, {"p90_ape", k->expected_p90_ape}, {"how", k->expected_how}};
    classes.push_back(e);
  }
  j["kernel_class_ops"] = classes;
  return j;
}

}  // namespace mhacfg
