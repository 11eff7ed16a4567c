#include "mhacfg/costmodel/basis.hpp"

#include <algorithm>
#include <cmath>

namespace mhacfg {

const char* to_string(BasisKind k) {
  switch (k) {
    case BasisKind::measured: return "measured";
    case BasisKind::transferred: return "transferred";
    case BasisKind::roofline: return "roofline";
  }
  return "roofline";
}

Basis roofline_op_basis(const std::string& op_class) {
  Basis b;
  b.roofline_ops.insert(op_class);
  return b;
}

Basis combine(const Basis& a, const Basis& b) {
  Basis out;
  const bool a_fitted = a.kind != BasisKind::roofline, b_fitted = b.kind != BasisKind::roofline;
  if (a_fitted && b_fitted) {
    out = static_cast<int>(a.kind) >= static_cast<int>(b.kind) ? a : b;
    out.expected_median_ape = std::max(a.expected_median_ape, b.expected_median_ape);
    out.expected_p90_ape = std::max(a.expected_p90_ape, b.expected_p90_ape);
  } else if (a_fitted || b_fitted) {
    out = a_fitted ? a : b;
  }
  out.roofline_ops = a.roofline_ops;
  out.roofline_ops.insert(b.roofline_ops.begin(), b.roofline_ops.end());
  out.dtype_transferred_ops = a.dtype_transferred_ops;
  out.dtype_transferred_ops.insert(b.dtype_transferred_ops.begin(), b.dtype_transferred_ops.end());
  return out;
}

bool roofline_for(const Basis& b, const std::string& prefix) {
  if (b.kind == BasisKind::roofline) return true;
  return std::any_of(b.roofline_ops.begin(), b.roofline_ops.end(),
                     [&](const std::string& o) { return o.compare(0, prefix.size(), prefix) == 0; });
}

namespace {
std::string percent(double fraction) { return std::to_string(static_cast<long long>(std::lround(fraction * 100))); }
}  // namespace

std::string basis_text(const Basis& b) {
  std::string s = to_string(b.kind);
  if (b.kind == BasisKind::transferred) s += " from " + b.from;
  if (b.kind != BasisKind::roofline && b.expected_median_ape > 0)
    s += ", expected error ~" + percent(b.expected_median_ape) + " % median, " + percent(b.expected_p90_ape) + " % p90";
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
  j["from"] = b.kind == BasisKind::transferred ? nlohmann::json(b.from) : nlohmann::json(nullptr);
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
  return j;
}

}  // namespace mhacfg
