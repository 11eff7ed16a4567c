// Storage dtypes: element widths, names, and the quantisation scales each format stores.
#include <catch2/catch.hpp>

#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/errors.hpp"

using namespace mhacfg;

TEST_CASE("every dtype's name parses back to it", "[dtype]") {
  for (DType t : all_dtypes()) CHECK(parse_dtype(to_string(t), "--weight-dtype") == t);
  CHECK(parse_dtype("bfloat16", "x") == DType::bf16);
  CHECK(dtype_names().find("nvfp4") != std::string::npos);
  CHECK(dtype_names().find("mxfp4") != std::string::npos);
}

TEST_CASE("an unknown dtype is an input error naming the field and every accepted name", "[dtype]") {
  try {
    parse_dtype("fp6", "--ffn-weight-dtype");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("--ffn-weight-dtype") != std::string::npos);
    CHECK(what.find("fp8-block") != std::string::npos);
  }
}

TEST_CASE("16- and 32-bit dtypes and per-tensor fp8 store no block scales", "[dtype]") {
  for (DType t : {DType::fp32, DType::bf16, DType::fp16, DType::fp8, DType::int8}) {
    CHECK(scale_bytes(t, 1 << 20, "x") == 0);
    CHECK(storage_bits_per_element(t) == double(dtype_bits(t)));
    CHECK(stored_bytes(t, 4096, "x") == dtype_bytes(t, 4096, "x"));
  }
}

TEST_CASE("block formats store one scale per started block", "[dtype]") {
  // nvfp4: 16 elements in 8 bytes + one E4M3 byte = 9 bytes, 4.5 bits an element.
  CHECK(stored_bytes(DType::nvfp4, 16, "x") == 9);
  CHECK(storage_bits_per_element(DType::nvfp4) == 4.5);
  CHECK(scale_bytes(DType::nvfp4, 17, "x") == 2);  // a second block started
  // mxfp4: 32 elements in 16 bytes + one E8M0 byte.
  CHECK(stored_bytes(DType::mxfp4, 32, "x") == 17);
  CHECK(storage_bits_per_element(DType::mxfp4) == 4.25);
  // int4 (AWQ groups of 128): 64 bytes + an fp16 scale and a 4-bit zero = 20 bits, rounded up to 3 bytes.
  CHECK(stored_bytes(DType::int4, 128, "x") == 64 + 3);
  CHECK(storage_bits_per_element(DType::int4) == Approx(4.0 + 20.0 / 128.0));
  // fp8-block (DeepSeek-V3): one fp32 per 128 x 128 block.
  CHECK(stored_bytes(DType::fp8_block, 128 * 128, "x") == 128 * 128 + 4);
  CHECK(storage_bits_per_element(DType::fp8_block) == Approx(8.0 + 32.0 / 16384.0));
  CHECK(scale_bytes(DType::nvfp4, 0, "x") == 0);
}

TEST_CASE("a GEMM computes in the dtype its kernels multiply in and writes bf16", "[dtype]") {
  CHECK(compute_dtype(DType::int4) == DType::bf16);  // weight-only: dequantised to bf16
  CHECK(compute_dtype(DType::fp8_block) == DType::fp8);
  CHECK(compute_dtype(DType::nvfp4) == DType::nvfp4);
  CHECK(compute_dtype(DType::mxfp4) == DType::mxfp4);
  CHECK(gemm_output_dtype(DType::fp8) == DType::bf16);
  CHECK(gemm_output_dtype(DType::fp32) == DType::fp32);
}
