#include "mhacfg/costmodel/op_class.hpp"

#include <type_traits>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/op_registry.hpp"

namespace mhacfg {

namespace {

std::string_view variant_text(OpVariant v) {
  switch (v) {
    case OpVariant::none: return "";
    case OpVariant::mla: return "mla";
    case OpVariant::kda: return "kda";
    case OpVariant::short_conv: return "short_conv";
    case OpVariant::lightning: return "lightning";
  }
  MHACFG_CHECK(false, "unknown OpVariant");
}

// The registered op type's traits for `kind`: its name, whether it has phases, its fitted variant.
struct OpTraits {
  std::string_view name;
  bool phased = false;
  OpVariant fitted_variant = OpVariant::none;
};

// An op type's `dtype_keyed` constant where it declares one, else false.
template <class Op, class = void>
struct DtypeKeyed : std::false_type {};
template <class Op>
struct DtypeKeyed<Op, std::void_t<decltype(Op::dtype_keyed)>> : std::bool_constant<Op::dtype_keyed> {};

// Whether an op type declares its own rule, keys_dtype(phase, variant, dtype).
template <class Op, class = void>
struct HasKeysDtype : std::false_type {};
template <class Op>
struct HasKeysDtype<Op, std::void_t<decltype(Op::keys_dtype(Phase::prefill, OpVariant::none, DType::bf16))>>
    : std::true_type {};

bool narrow_dtype(DType t) { return dtype_bits(t) < 16; }

// Whether op type Op keys its class (phase, variant) by dtype t.
template <class Op>
bool op_keys(Phase phase, OpVariant variant, DType t) {
  if constexpr (HasKeysDtype<Op>::value) return Op::keys_dtype(phase, variant, t);
  else return DtypeKeyed<Op>::value && narrow_dtype(t);
}

bool keys(OpKind kind, Phase phase, OpVariant variant, DType t) {
  bool out = false;
  for_each_op([&](auto tag) {
    using Op = typename decltype(tag)::type;
    if (Op::kind == kind) out = op_keys<Op>(Op::phased ? phase : Phase::prefill, variant, t);
  });
  return out;
}


OpTraits traits(OpKind kind) {
  OpTraits t;
  for_each_op([&](auto tag) {
    using Op = typename decltype(tag)::type;
    if (Op::kind == kind) t = {Op::name, Op::phased, Op::fitted_variant};
  });
  MHACFG_CHECK(!t.name.empty(), "OpKind without a registered op type");
  return t;
}

}  // namespace

std::string_view to_string(OpKind k) { return traits(k).name; }

std::string_view to_string(Phase p) { return p == Phase::prefill ? "prefill" : "decode"; }

std::string OpClass::to_string() const {
  const OpTraits t = traits(op);
  std::string text(t.name);
  if (t.phased) text += "/" + std::string(mhacfg::to_string(phase));
  if (variant != OpVariant::none) text += "/" + std::string(variant_text(variant));
  if (keys(op, phase, variant, dtype)) text += "/" + std::string(mhacfg::to_string(dtype));
  return text;
}

OpClass keyed_class(OpClass c, DType t) {
  c.dtype = keys(c.op, c.phase, c.variant, t) ? t : DType::bf16;
  return c;
}

std::optional<OpClass> OpClass::parse(std::string_view text) {
  // Every class the registered ops may hold, compared by its one text (to_string).
  std::optional<OpClass> found;
  for_each_op([&](auto tag) {
    using Op = typename decltype(tag)::type;
    for (Phase phase : {Phase::prefill, Phase::decode})
      for (OpVariant variant : {OpVariant::none, Op::fitted_variant})
        for (DType dtype : all_dtypes()) {
          const Phase ph = Op::phased ? phase : Phase::prefill;
          if (dtype != DType::bf16 && !op_keys<Op>(ph, variant, dtype)) continue;  // the plain class: once, as bf16
          const OpClass c{Op::kind, ph, variant, dtype};
          if (!found && c.to_string() == text) found = c;
        }
  });
  return found;
}

bool is_op_class(const std::string& c) { return OpClass::parse(c).has_value(); }

Phase phase_from_json(const JsonFields& f) {
  const std::string p = f.require_string("phase");
  if (p == "prefill") return Phase::prefill;
  if (p == "decode") return Phase::decode;
  throw InputError(f.name("phase"), "\"" + p + "\"", "must be \"prefill\" or \"decode\"");
}

}  // namespace mhacfg
