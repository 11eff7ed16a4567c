// The registration table of op kinds: an op kind is a folder under costmodel/ops/ with a header
// under ops/ whose op type (AttentionOp, IndexerOp, ...) publishes its name, phases, fitted variant,
// dtype rule, JSON fields, op class, features and fit spec. Records hold one of these types;
// parsing, op-class text and fit specs find an op by walking this list, so adding an op kind is its
// folder, one line here and one in OpKind.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <variant>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg {

// In OpKind's order.
using OpRecord = std::variant<AttentionOp, GemmOp, AttentionBlockOp, LinearAttentionOp, IndexerOp>;

template <class Op>
struct OpTag {
  using type = Op;
};

namespace detail {
template <class F, std::size_t... I>
void for_each_op(F& f, std::index_sequence<I...>) {
  (f(OpTag<std::variant_alternative_t<I, OpRecord>>{}), ...);
}
template <std::size_t... I>
constexpr bool kinds_in_order(std::index_sequence<I...>) {
  return ((static_cast<std::size_t>(std::variant_alternative_t<I, OpRecord>::kind) == I) && ...);
}
}  // namespace detail

inline constexpr std::size_t kOpKinds = std::variant_size_v<OpRecord>;
static_assert(detail::kinds_in_order(std::make_index_sequence<kOpKinds>{}),
              "OpRecord lists the op types in OpKind's order");

// Calls f(OpTag<Op>{}) for every registered op type, in OpKind's order.
template <class F>
void for_each_op(F&& f) {
  detail::for_each_op(f, std::make_index_sequence<kOpKinds>{});
}

// The op kind a record's op fields are (the variant's index is the OpKind).
inline OpKind op_kind(const OpRecord& r) { return static_cast<OpKind>(r.index()); }

}  // namespace mhacfg
