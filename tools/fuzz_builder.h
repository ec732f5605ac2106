/// \file Internal to the fuzzer's generator (fuzz_generator.cpp, fuzz_regions.cpp): the
/// builder state, a pool of typed values per open region, and one method per op family.
#pragma once

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ir/builder.h"
#include "tools/fuzz_generator.h"

namespace tessera::tools::fuzz::detail {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::Type;
using ir::Value;

inline bool is_f(DType t) {
  return ir::is_float(t);
}
inline bool is_i(DType t) {
  return !ir::is_float(t);
}

/// One program being generated; run() builds it.
class Gen {
 public:
  Gen(uint64_t seed, const GenOptions& o) : rng_(seed), o_(o), b_(*module_) {}

  Program run();

 private:
  // --- randomness ------------------------------------------------------------------------
  // A seed means one program everywhere: mt19937_64's sequence is fixed by the standard, but
  // uniform_int_distribution's mapping is the library's (libstdc++ and libc++ differ), so the
  // range is taken by a remainder (its bias is irrelevant here). Each draw is its own statement:
  // the order of a call's arguments is unspecified, and GCC and clang differ.
  int64_t uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return uniform(0, 99) < percent; }
  DType any_dtype() { return o_.dtypes[uniform(0, o_.dtypes.size() - 1)]; }
  int64_t dim(int exponent) { return int64_t{1} << std::max(0, exponent - o_.shape_shift); }

  // --- building ----------------------------------------------------------------------------
  Value* make(OpKind k, std::vector<Value*> ops, Type t, std::vector<ir::Attribute> attrs = {}) {
    return b_.create_value(k, std::move(ops), std::move(t), std::move(attrs));
  }
  Value* constant(Type t, double v) { return b_.constant(std::move(t), v); }
  Value* splat(Value* s, const Shape& shape) {
    return shape.empty() ? s : make(OpKind::Splat, {s}, s->type.with_shape(shape));
  }
  Value* random_constant(Type t);
  Value* linear(const Shape& s);
  Value* offsets(const Shape& s);

  // --- the pool of values visible at the insertion point ----------------------------------
  void keep(Value* v) {
    if (v) pools_.back().push_back(v);
  }
  /// A random visible value satisfying `pred` (recent ones more often), or null.
  template <class P>
  Value* find(P pred) {
    std::vector<Value*> all;
    for (const auto& pool : pools_)
      for (Value* v : pool)
        if (pred(v)) all.push_back(v);
    if (all.empty()) return nullptr;
    if (chance(50)) return all[uniform(std::max<int64_t>(0, all.size() - 4), all.size() - 1)];
    return all[uniform(0, all.size() - 1)];
  }
  Value* partner(Value* v);
  Value* convert(Value* v, DType to);

  // --- ops -------------------------------------------------------------------------------
  void emit_ops(int n, int depth);
  Value* emit_one(int depth);
  Value* emit_arith();
  Value* emit_divrem();
  Value* emit_bitwise();
  Value* emit_compare_where();
  Value* emit_unary();
  Value* emit_cast();
  Value* emit_reduce();
  Value* emit_scan();
  Value* emit_layout();
  Value* emit_dot();
  Value* emit_for(int depth);
  Value* emit_if(int depth);
  Value* emit_while(int depth);
  /// Points the builder into `r` with `args` visible, emits a few ops and picks values of
  /// `types` to yield (the caller passes them to close_region).
  std::vector<Value*> open_region(ir::Region* r, const std::vector<Value*>& args,
                                  const std::vector<Type>& types, int depth);
  void close_region(ir::Region* outer, OpKind terminator, const std::vector<Value*>& operands);
  std::vector<Value*> carried_values();

  Value* add_param(const std::string& name, Type t, ParamSpec spec);
  void store_results();

  std::mt19937_64 rng_;
  GenOptions o_;
  std::unique_ptr<ir::Module> module_ = std::make_unique<ir::Module>();
  ir::Builder b_;
  ir::Function* fn_ = nullptr;
  Program prog_;
  std::vector<std::vector<Value*>> pools_;
  Shape shape_;
  Value* pid_ = nullptr;
  Value* n_ = nullptr;
  Value* mask_ = nullptr;
};

}  // namespace tessera::tools::fuzz::detail
