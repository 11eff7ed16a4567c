// An op class: the unit the fitter calibrates one time model for and a profile's fits are keyed by
// ("attention/decode/mla", "gemm", "indexer/prefill"). Its text is built by one to_string and read by
// one parse; op kinds themselves are registered in op_registry.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mhacfg/costmodel/dtype.hpp"

namespace mhacfg {

class JsonFields;

// One enumerator per op kind, in the order of op_registry.hpp's OpRecord (a static_assert there keeps
// the two in step).
enum class OpKind {
  attention,        // one attention call (prefill or decode; MLA absorbed decode when kv_lora_rank > 0)
  gemm,             // C[m,n] = A[m,k] B[k,n]
  attention_block,  // fused QKV GEMM + attention + O GEMM for a d_model
  linear_attention, // a linear-attention layer's core: convolution and recurrence
  indexer,          // a sparse-attention layer's lightning indexer: scores and top-k
};
enum class Phase { prefill, decode };
// A variant of an op kind whose kernels differ enough to need a time model of their own. short_conv
// and lightning classes are predicted (as the roofline) but never fitted, so no profile or record holds one.
enum class OpVariant { none, mla, kda, short_conv, lightning };

std::string_view to_string(OpKind k);
std::string_view to_string(Phase p);

struct OpClass {
  OpKind op = OpKind::attention;
  Phase phase = Phase::prefill;  // unused by ops without phases (gemm)
  OpVariant variant = OpVariant::none;
  // Ops whose kernels differ by dtype fit a class per such dtype (keyed_class): GEMMs per storage dtype
  // narrower than 16 bits ("gemm/fp8", "gemm/nvfp4"), attention decode with an fp8 KV cache
  // ("attention/decode/fp8"); every other dtype shares the plain class (bf16 here).
  DType dtype = DType::bf16;

  // "<op>[/<phase>][/<variant>][/<dtype>]", e.g. "attention/decode/mla"; "gemm"; "gemm/fp8".
  std::string to_string() const;
  // The class a record or a profile may hold (the op's phases and the one variant it fits); nullopt
  // for any other text.
  static std::optional<OpClass> parse(std::string_view text);
};

// The class `c` of an op whose operands are stored in `t`: c keyed by t where c's op type keys that
// class by t (an op type's keys_dtype(phase, variant, dtype), or dtype_keyed = true for every dtype
// narrower than 16 bits), else c with the plain dtype. The one rule that records, fits and predictions
// key classes by.
OpClass keyed_class(OpClass c, DType t);

// Whether `c` is a class that records and profiles hold: OpClass::parse accepts it.
bool is_op_class(const std::string& c);

// A record's "phase" field: "prefill" or "decode". Throws InputError naming the field.
Phase phase_from_json(const JsonFields& f);

}  // namespace mhacfg
