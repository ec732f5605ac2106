/// \file Op families as compile-time data drawn from ops.def.
///
/// Every consumer that routes op kinds to code (the interpreters, folding, the verifier, the
/// emitters, the fuzz generator, the tests) builds an OpTable at compile time: a trait picks a
/// whole family (every `kMath` row, whatever its arity), explicit lists name the rest, and a
/// `static_assert(ir::complete(table))` fails the build while a kind in ops.def has no entry. A
/// new math row therefore needs no edit outside the table, its semantics and its math code.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>

#include "ir.h"

namespace tessera::ir {

/// The number of op kinds in ops.def.
inline constexpr size_t kNumOpKinds = 0
#define OP(name, text, min_ops, max_ops, results, regions, traits) +1
#include "ops.def"
#undef OP
    ;

/// The compile-time facts of one row of ops.def (OpInfo's, without the name).
struct OpRow {
  OpKind kind;
  int min_operands;
  int max_operands;  ///< -1: variadic
  uint32_t traits;
};

/// Every row of ops.def in enum order.
inline constexpr OpRow kOpRows[] = {
#define OP(name, text, min_ops, max_ops, results, regions, traits) \
  {OpKind::name, min_ops, max_ops, static_cast<uint32_t>(traits)},
#include "ops.def"
#undef OP
};
static_assert(std::size(kOpRows) == kNumOpKinds);

/// has_trait, usable in constant expressions.
constexpr bool row_has(OpKind kind, OpTrait t) {
  return (kOpRows[static_cast<size_t>(kind)].traits & t) != 0;
}

/// A math function of one operand (exp, log1p, floor, ...): a `kMath` row of arity 1.
constexpr bool is_unary_math(OpKind kind) {
  const OpRow& r = kOpRows[static_cast<size_t>(kind)];
  return (r.traits & kMath) != 0 && r.min_operands == 1 && r.max_operands == 1;
}

/// A math function of two operands (pow, atan2, ...): a `kMath` row of arity 2.
constexpr bool is_binary_math(OpKind kind) {
  const OpRow& r = kOpRows[static_cast<size_t>(kind)];
  return (r.traits & kMath) != 0 && r.min_operands == 2 && r.max_operands == 2;
}

/// One entry per op kind; `T{}` (null, or an enum's first value) means "no entry yet".
template <class T>
struct OpTable {
  std::array<T, kNumOpKinds> entry{};
  std::array<bool, kNumOpKinds> set{};

  /// Gives `kinds` the entry `v`. Giving a kind two entries is not a constant expression, so a
  /// table that names one kind twice fails the build.
  constexpr OpTable& add(T v, std::initializer_list<OpKind> kinds) {
    for (OpKind k : kinds) put(k, v);
    return *this;
  }
  /// Gives every kind whose row has trait `t` the entry `v`.
  constexpr OpTable& add_trait(T v, OpTrait t) {
    for (const OpRow& r : kOpRows)
      if ((r.traits & t) != 0) put(r.kind, v);
    return *this;
  }
  /// Gives every kind for which `pred(kind)` holds the entry `v`.
  template <class Pred>
  constexpr OpTable& add_if(T v, Pred pred) {
    for (const OpRow& r : kOpRows)
      if (pred(r.kind)) put(r.kind, v);
    return *this;
  }
  constexpr void put(OpKind k, T v) {
    const size_t i = static_cast<size_t>(k);
    if (set[i]) throw "op kind listed twice in an OpTable";  // not constant: a build error
    entry[i] = v;
    set[i] = true;
  }
  /// The entry of `k`.
  constexpr T operator[](OpKind k) const { return entry[static_cast<size_t>(k)]; }
  /// Whether `k` has an entry.
  constexpr bool has(OpKind k) const { return set[static_cast<size_t>(k)]; }
};

/// Whether every op kind of ops.def has an entry in `t` (for a static_assert).
template <class T>
constexpr bool complete(const OpTable<T>& t) {
  for (bool b : t.set)
    if (!b) return false;
  return true;
}

/// The op kinds for which `pred` holds, in ops.def order (for test and generator lists).
template <class Pred>
std::vector<OpKind> kinds_where(Pred pred) {
  std::vector<OpKind> out;
  for (const OpRow& r : kOpRows)
    if (pred(r.kind)) out.push_back(r.kind);
  return out;
}

}  // namespace tessera::ir
