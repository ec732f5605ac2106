/// \file Which op kinds the math library computes, the one list both targets dispatch from.
///
/// TESSERA_MATH_FUNCTIONS names each library function once: its enumerator, the Algorithms
/// member that computes it (also its name in emitted code: `__tessera_exp_f32`), its arity and
/// the op kind it computes. Everything else is derived: `Fn`, `name`, `arity`, `function(kind)`
/// and `apply`, a switch over `Fn` without `default:` (-Wall -Werror: a missing case fails the
/// build). The static_asserts below tie the list to ops.def: every `kMath` row is computed either
/// by the library or by an instruction every target has (`is_native`), never both and never
/// neither, with the row's arity. A new `kMath` row therefore fails the build until it is added
/// to one of the two lists, and added to the library only with an algorithm of that name.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/ir/op_table.h"
#include "core/support/error.h"

namespace tessera::math {

// clang-format off
/// X(enumerator, Algorithms member, arity, op kind). Rem is a float op's fmod.
#define TESSERA_MATH_FUNCTIONS(X) \
  X(Exp, exp, 1, Exp)             \
  X(Exp2, exp2, 1, Exp2)          \
  X(Log, log, 1, Log)             \
  X(Log2, log2, 1, Log2)          \
  X(Log1p, log1p, 1, Log1p)       \
  X(Expm1, expm1, 1, Expm1)       \
  X(Log10, log10, 1, Log10)       \
  X(Sinh, sinh, 1, Sinh)          \
  X(Cosh, cosh, 1, Cosh)          \
  X(Asin, asin, 1, Asin)          \
  X(Acos, acos, 1, Acos)          \
  X(Atan, atan, 1, Atan)          \
  X(Cbrt, cbrt, 1, Cbrt)          \
  X(Sin, sin, 1, Sin)             \
  X(Cos, cos, 1, Cos)             \
  X(Tanh, tanh, 1, Tanh)          \
  X(Erf, erf, 1, Erf)             \
  X(Erfinv, erfinv, 1, Erfinv)    \
  X(Fmod, fmod, 2, Rem)           \
  X(Pow, pow, 2, Pow)             \
  X(Atan2, atan2, 2, Atan2)       \
  X(Hypot, hypot, 2, Hypot)
// clang-format on

/// A function of the library; None: an op kind the library does not compute.
enum class Fn : uint8_t {
  None,
#define TESSERA_X(fn, member, n, kind) fn,
  TESSERA_MATH_FUNCTIONS(TESSERA_X)
#undef TESSERA_X
};

/// The function's name in emitted code ("exp", "fmod", ...); "" for None.
constexpr std::string_view name(Fn f) {
  switch (f) {
    case Fn::None:
      return "";
#define TESSERA_X(fn, member, n, kind) \
  case Fn::fn:                         \
    return #member;
      TESSERA_MATH_FUNCTIONS(TESSERA_X)
#undef TESSERA_X
  }
  return "";
}

/// The number of operands of `f` (0 for None).
constexpr int arity(Fn f) {
  switch (f) {
    case Fn::None:
      return 0;
#define TESSERA_X(fn, member, n, kind) \
  case Fn::fn:                         \
    return n;
      TESSERA_MATH_FUNCTIONS(TESSERA_X)
#undef TESSERA_X
  }
  return 0;
}

/// The library function of every op kind (None where the library computes none).
inline constexpr ir::OpTable<Fn> kFunctions = [] {
  ir::OpTable<Fn> t;
#define TESSERA_X(fn, member, n, kind) t.add(Fn::fn, {ir::OpKind::kind});
  TESSERA_MATH_FUNCTIONS(TESSERA_X)
#undef TESSERA_X
  t.add_if(Fn::None, [&t](ir::OpKind k) { return !t.has(k); });
  return t;
}();

/// The library function that computes `kind` (None if none does).
constexpr Fn function(ir::OpKind kind) {
  return kFunctions[kind];
}

/// The `kMath` rows every target computes with an instruction of its own (PTX: LLVM intrinsics,
/// SPIR-V: GLSL.std.450), never through the library.
constexpr bool is_native(ir::OpKind kind) {
  using K = ir::OpKind;
  return kind == K::Sqrt || kind == K::Rsqrt || kind == K::Floor || kind == K::Ceil;
}

/// Whether the library list agrees with ops.def (see the file comment); static_asserted below
/// and by tests/targets/math/functions_test.cpp.
constexpr bool agrees_with_ops_def() {
  for (const ir::OpRow& r : ir::kOpRows) {
    const Fn f = function(r.kind);
    const bool math = (r.traits & ir::kMath) != 0;
    if (is_native(r.kind) && (!math || f != Fn::None)) return false;
    if (f == Fn::None) {
      if (math && !is_native(r.kind)) return false;  // a kMath row nothing computes
      continue;
    }
    if (r.min_operands != arity(f) || r.max_operands != arity(f)) return false;
    if (!math && r.kind != ir::OpKind::Rem) return false;  // only Rem borrows fmod
  }
  return true;
}
static_assert(agrees_with_ops_def(),
              "a kMath row of ops.def is in neither (or both) of the math library's list "
              "(TESSERA_MATH_FUNCTIONS) and is_native, or its arity differs");

/// `f` of `x` (and `y` for two-operand functions; one-operand ones ignore it) through the
/// Algorithms object `a` (targets/math/algorithms.h). `f` must not be None.
template <class A, class F>
F apply(A& a, Fn f, F x, F y) {
  switch (f) {
    case Fn::None:
      break;
#define TESSERA_X(fn, member, n, kind) \
  case Fn::fn:                         \
    if constexpr (n == 1)              \
      return a.member(x);              \
    else                               \
      return a.member(x, y);
      TESSERA_MATH_FUNCTIONS(TESSERA_X)
#undef TESSERA_X
  }
  // None: a compiler bug (callers route only kinds with a function).
  ::tessera::detail::internal_failure(__FILE__, __LINE__, "f != Fn::None",
                                      "math::apply without a library function");
}

}  // namespace tessera::math
