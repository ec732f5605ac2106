// \file Modules built with the Builder for the IR tests: one valid kernel that uses every op kind,
// and small helpers to build single-op functions.
#pragma once

#include <memory>
#include <string>

#include "core/ir/builder.h"
#include "core/ir/ir.h"

namespace tessera::ir::samples {

/// A valid module whose kernel (its first function) uses every tile-IR op kind of ops.def (with
/// regions for for/if/while/reduce_generic/scan_generic), locations known and unknown, and
/// parameter attributes; its second function, `every_simt_op`, is a SIMT function (function
/// attributes, shared buffers) that uses every kSimt op kind and print/assert with a rank.
std::unique_ptr<Module> every_op_kind();

/// A module whose one function holds `print` ops carrying attributes of every value kind,
/// including NaN, infinities, negative zero, extreme doubles and strings needing escapes.
std::unique_ptr<Module> every_attr_kind();

/// Shorthands.
inline Type i32() {
  return Type::scalar(DType::i32);
}
inline Type f32() {
  return Type::scalar(DType::f32);
}
inline Type tile(DType t, Shape s) {
  return Type::tile(t, std::move(s));
}

/// A function `f` with parameters of the given types (named p0, p1, ...), a Builder at the end
/// of its body, and its parameters' values.
struct FunctionBuilder {
  std::unique_ptr<Module> module = std::make_unique<Module>();
  Function* fn;
  Builder b;
  std::vector<Value*> params;

  explicit FunctionBuilder(const std::vector<Type>& param_types,
                           Location loc = Location::make("/src/k.cpp", 1, 1));
};

}  // namespace tessera::ir::samples
