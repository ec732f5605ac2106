/// \file Creates ops at an insertion point. Used by the tracer, the parser and passes.
#pragma once

#include <vector>

#include "ir.h"

namespace tessera::ir {

/// An integer constant's canonical attribute value: `value` wrapped to the dtype's width,
/// sign-extended for signed dtypes and zero-extended for unsigned ones (i1 is 0 or 1).
int64_t wrap_to_dtype(int64_t value, DType dtype);

class Builder {
 public:
  explicit Builder(Module& module) : module_(module) {}
  Builder(Module& module, Region* region) : module_(module) { set_insertion_end(region); }

  Module& module() const { return module_; }
  Region* region() const { return region_; }

  /// New ops go at the end of `region`.
  void set_insertion_end(Region* region) {
    region_ = region;
    index_ = -1;
  }
  /// New ops go before `op` (which must be in a region).
  void set_insertion_before(Op* op);
  /// New ops go right after `op`.
  void set_insertion_after(Op* op);
  /// New ops go at position `index` of `region` (then after each other).
  void set_insertion_index(Region* region, long index) {
    region_ = region;
    index_ = index;
  }
  /// The insertion index (-1: the end).
  long insertion_index() const { return index_; }

  void set_loc(Location loc) { loc_ = loc; }
  Location loc() const { return loc_; }

  /// Creates an op at the insertion point (at the builder's current location).
  Op* create(OpKind kind, std::vector<Value*> operands, std::vector<Type> result_types,
             std::vector<Attribute> attrs = {});
  /// create() for single-result ops; returns the result.
  Value* create_value(OpKind kind, std::vector<Value*> operands, Type result_type,
                      std::vector<Attribute> attrs = {});
  /// Adds an empty region to `op` (regions are filled by pointing a builder at them).
  Region* add_region(Op* op);

  /// An integer constant; `value` is stored canonically (see wrap_to_dtype).
  Value* constant_int(Type type, int64_t value);
  Value* constant_float(Type type, double value);
  /// An integer or float constant of `type`, from a double (integer types truncate).
  Value* constant(Type type, double value);

 private:
  Module& module_;
  Region* region_ = nullptr;
  long index_ = -1;  ///< insertion index in region_->ops; -1 appends
  Location loc_;
};

}  // namespace tessera::ir
