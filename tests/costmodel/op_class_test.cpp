// Op classes and the registration table: one text per class, parsed back to the same class; only the
// classes the registered ops produce are accepted; each op's record fields round-trip through JSON.
#include <catch2/catch.hpp>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/records.hpp"

using namespace mhacfg;

TEST_CASE("every op class a record or profile may hold parses back from its text", "[ops]") {
  const std::vector<std::string> classes = {
      "attention/prefill",       "attention/decode",        "attention/prefill/mla",          "attention/decode/mla",
      "gemm",                    "attention_block/prefill", "attention_block/decode",         "attention_block/decode/mla",
      "linear_attention/prefill", "linear_attention/decode", "linear_attention/decode/kda",   "indexer/prefill",
      "indexer/decode",          "gemm/fp8",                "gemm/nvfp4",                     "gemm/mxfp4",
      "gemm/int4",               "gemm/fp8-block",          "attention/decode/fp8"};
  for (const std::string& c : classes) {
    INFO(c);
    const std::optional<OpClass> parsed = OpClass::parse(c);
    REQUIRE(parsed);
    CHECK(parsed->to_string() == c);
    CHECK(is_op_class(c));
  }
}

TEST_CASE("texts no registered op produces are not op classes", "[ops]") {
  for (const char* c : {"", "gemm/prefill", "attention", "attention/", "attention/decode/", "attention/decode/kda",
                        "indexer/decode/mla", "linear_attention/prefill/short_conv", "attention/decoder", "conv/prefill",
                        "gemm/bf16", "gemm/fp32", "gemm/fp6", "attention/prefill/fp8", "attention/decode/mla/fp8",
                        "attention/decode/nvfp4", "attention/decode/int8", "attention/decode/bf16",
                        "attention_block/decode/fp8", "linear_attention/decode/fp8", "indexer/decode/fp8"}) {
    INFO(c);
    CHECK_FALSE(is_op_class(c));
  }
  // A short convolution is predicted under a class of its own, which no profile fits.
  CHECK(LinearAttentionOp{Phase::decode, LinearAttentionShape{1, 1, 1, 8, 0, 1, 4, LinearKind::short_conv}}
            .op_class()
            .to_string() == "linear_attention/decode/short_conv");
  CHECK_THROWS_AS(fit_spec_for(std::string("attention/decoder"), false), InputError);
}

TEST_CASE("each op's record fields survive JSON out and in", "[ops]") {
  std::vector<MeasurementRecord> rs(5);
  rs[0].shape = AttentionOp{Phase::prefill, AttentionShape{2, 64, 128, 8, 2, 64, 64, true, 32, 0, 0}};
  rs[1].shape = GemmOp{GemmShape{3, 5, 7}};
  rs[2].shape = AttentionBlockOp{Phase::decode, AttentionShape{1, 1, 100, 4, 4, 32, 32, false, 0, 0, 0}, 128};
  rs[3].shape = LinearAttentionOp{Phase::decode, LinearAttentionShape{1, 1, 2, 4, 16, 32, 4, LinearKind::kda}};
  rs[4].shape = IndexerOp{Phase::prefill, IndexerShape{1, 8, 16, 4, 64, 4}};
  rs[4].dtype = DType::fp8;
  for (const MeasurementRecord& r : rs) {
    const nlohmann::json j = record_to_json(r);
    INFO(j.dump());
    const MeasurementRecord back = parse_record(j, "r");
    CHECK(back.op() == r.op());
    CHECK(back.op_class() == r.op_class());
    CHECK(record_to_json(back) == j);
  }
}

TEST_CASE("a GEMM record's class is keyed by its dtype when narrower than 16 bits", "[ops]") {
  MeasurementRecord r;
  r.shape = GemmOp{GemmShape{64, 128, 256}};
  r.dtype = DType::fp8;
  CHECK(r.op_class() == "gemm/fp8");
  r.dtype = DType::nvfp4;
  CHECK(r.op_class() == "gemm/nvfp4");
  r.dtype = DType::bf16;
  CHECK(r.op_class() == "gemm");
  r.dtype = DType::fp32;
  CHECK(r.op_class() == "gemm");
}

TEST_CASE("attention decode with an fp8 KV cache has a class of its own, other attention dtypes do not", "[ops]") {
  MeasurementRecord a;
  a.shape = AttentionOp{Phase::decode, AttentionShape{1, 1, 100, 4, 4, 32, 32, false, 0, 0, 0}};
  a.dtype = DType::fp8;
  CHECK(a.op_class() == "attention/decode/fp8");
  CHECK(OpClass::parse("attention/decode/fp8")->dtype == DType::fp8);
  for (DType t : {DType::bf16, DType::fp32, DType::fp16, DType::int8, DType::nvfp4, DType::fp8_block}) {
    a.dtype = t;
    INFO(to_string(t));
    CHECK(a.op_class() == "attention/decode");
  }
  // Prefill and MLA decode keep their plain classes at fp8.
  MeasurementRecord pre = a;
  pre.dtype = DType::fp8;
  pre.set_phase(Phase::prefill);
  CHECK(pre.op_class() == "attention/prefill");
  MeasurementRecord mla;
  mla.shape = AttentionOp{Phase::decode, AttentionShape{1, 1, 100, 16, 1, 576, 512, false, 0, 512, 64}};
  mla.dtype = DType::fp8;
  CHECK(mla.op_class() == "attention/decode/mla");
  // keyed_class is the one rule: the op types' own op_class(dtype) and a record's class agree.
  CHECK(keyed_class(AttentionOp{Phase::decode, {}}.op_class(), DType::fp8).to_string() == "attention/decode/fp8");
  CHECK(GemmOp{}.op_class(DType::nvfp4).to_string() == "gemm/nvfp4");
  CHECK(GemmOp{}.op_class(DType::fp16).to_string() == "gemm");
}
