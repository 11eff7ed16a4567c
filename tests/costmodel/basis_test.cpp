#include <catch2/catch.hpp>

#include "mhacfg/costmodel/basis.hpp"

using namespace mhacfg;

namespace {
Basis fitted(BasisKind k, double median, double p90) {
  Basis b;
  b.kind = k;
  b.from = k == BasisKind::transferred ? "h200-sxm-cudnn" : "";
  b.expected_median_ape = median;
  b.expected_p90_ape = p90;
  return b;
}
}  // namespace

TEST_CASE("a sum of predictions takes the worst fitted basis and names the roofline ops", "[basis]") {
  const Basis measured = fitted(BasisKind::measured, 0.05, 0.12);
  const Basis moved = fitted(BasisKind::transferred, 0.077, 0.229);
  const Basis both = combine(measured, moved);
  CHECK(both.kind == BasisKind::transferred);
  CHECK(both.from == "h200-sxm-cudnn");
  CHECK(both.expected_median_ape == 0.077);
  CHECK(basis_text(both) == "transferred from h200-sxm-cudnn, expected error ~8 % median, 23 % p90");
  // A roofline op beside fitted ones is named, the kind stays the fitted ones'.
  const Basis partly = combine(moved, roofline_op_basis("indexer/decode"));
  CHECK(partly.kind == BasisKind::transferred);
  CHECK(roofline_for(partly, "indexer/"));
  CHECK_FALSE(roofline_for(partly, "linear_attention/"));
  CHECK(basis_text(partly) == "transferred from h200-sxm-cudnn, expected error ~8 % median, 23 % p90; roofline for indexer/decode");
  CHECK(basis_json(partly)["roofline_ops"] == nlohmann::json::array({"indexer/decode"}));
  // Nothing fitted: the roofline, every op.
  const Basis none = combine(roofline_op_basis("gemm"), roofline_op_basis("attention/decode"));
  CHECK(none.kind == BasisKind::roofline);
  CHECK(basis_text(none) == "roofline");
  CHECK(basis_json(none)["expected_error"].is_null());
  CHECK(basis_json(none)["roofline_ops"].empty());
  // A measured basis without a held-out figure states none.
  CHECK(basis_text(fitted(BasisKind::measured, 0, 0)) == "measured");
}

TEST_CASE("a kernel-class op beside fitted ones is named with its own error, alone it sets the kind", "[basis]") {
  const Basis moved = fitted(BasisKind::transferred, 0.077, 0.229);
  const Basis mla = kernel_class_op_basis("attention/decode/mla", "flashmla");
  CHECK(mla.kind == BasisKind::kernel_class);
  CHECK(mla.from == "flashmla");
  CHECK(mla.expected_median_ape > 0);
  const Basis model = combine(combine(moved, mla), roofline_op_basis("indexer/decode"));
  CHECK(model.kind == BasisKind::transferred);  // the fitted parts set the kind and the error
  CHECK(model.from == "h200-sxm-cudnn");
  CHECK(model.expected_median_ape == 0.077);
  CHECK(model.kernel_class_ops.at("attention/decode/mla") == "flashmla");
  CHECK(basis_text(model) ==
        "transferred from h200-sxm-cudnn, expected error ~8 % median, 23 % p90; attention/decode/mla from kernel class "
        "flashmla (expected error ~6 % median, 23 % p90); roofline for indexer/decode");
  const nlohmann::json j = basis_json(model);
  REQUIRE(j["kernel_class_ops"].size() == 1);
  CHECK(j["kernel_class_ops"][0]["op_class"] == "attention/decode/mla");
  CHECK(j["kernel_class_ops"][0]["kernel_class"] == "flashmla");
  CHECK_THAT(j["kernel_class_ops"][0]["source"].get<std::string>(), Catch::Contains("FlashMLA README"));
  CHECK(j["kernel_class_ops"][0]["expected_error"]["median_ape"] == mla.expected_median_ape);
  // Nothing fitted but a kernel class: the kernel class, with the roofline ops beside it.
  const Basis datasheet = combine(roofline_op_basis("gemm"), mla);
  CHECK(datasheet.kind == BasisKind::kernel_class);
  CHECK(roofline_for(datasheet, "gemm"));
  CHECK_FALSE(roofline_for(datasheet, "attention/decode/mla"));
  CHECK_THAT(basis_text(datasheet), Catch::StartsWith("kernel class flashmla (FlashMLA-class"));
  CHECK_THAT(basis_text(datasheet), Catch::EndsWith("; roofline for gemm"));
  CHECK(basis_json(datasheet)["from"] == "flashmla");
}
