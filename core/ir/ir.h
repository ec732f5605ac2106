/// \file The tile IR: SSA values in single-block regions, owned by a Module.
///
/// A kernel is one Function whose body is a Region (one block with the kernel parameters as
/// its arguments). Ops are generic records (kind, operands, results, attributes, regions,
/// location); ops.h gives each kind a thin typed view and states its semantics. Control flow
/// is structured: `for`, `if` and `while` own regions that end in `yield` (or `condition`)
/// and produce results, so there are no branches and no block lists.
///
/// Semantics shared by every op (the host interpreter is the executable definition):
///  - Values are immutable. A tile of shape S holds num_elements(S) elements, row-major.
///  - Integer arithmetic wraps (two's complement); signedness lives in the dtype (i32 vs u32).
///    Integer division or remainder by zero is undefined; so is a shift by >= the bit width.
///  - Floats follow IEEE 754 with round-to-nearest-even and no fast-math: no FMA contraction
///    unless written (`fma`), no reassociation except inside reductions and scans.
///  - Masked-off lanes of a load yield `other` (or an undefined value) and touch no memory;
///    masked-off lanes of a store or atomic touch no memory.
///  - Programs of a grid run in an unspecified order and may run concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "../support/location.h"
#include "attr_names.h"
#include "types.h"

namespace tessera::ir {

enum class OpKind : uint16_t {
#define OP(name, text, min_ops, max_ops, results, regions, traits) name,
#include "ops.def"
#undef OP
};

/// Op traits, as data (one bit each).
enum OpTrait : uint32_t {
  kPure = 1u << 0,         ///< no side effects: may be CSE'd, folded, deleted when unused
  kElementwise = 1u << 1,  ///< operates element by element on operands of one shape
  kCommutative = 1u << 2,
  kCompare = 1u << 3,  ///< result dtype is i1
  kMath = 1u << 4,     ///< a floating-point math function
  kMemRead = 1u << 5,
  kMemWrite = 1u << 6,
  kSideEffect = 1u << 7,  ///< must not be removed or reordered across other effects
  kTerminator = 1u << 8,  ///< ends a region
  kTileOnly = 1u << 9,    ///< exists only in the tile IR (not in SIMT functions)
  kSimt = 1u << 10,       ///< exists only in the SIMT IR (core/ir/simt.h)
  kStep = 1u << 11,       ///< a step function (floor, ceil): a 1-ulp input change moves it by 1
};

/// The static facts of an op kind, from ops.def.
struct OpInfo {
  std::string_view name;
  int min_operands;
  int max_operands;  ///< -1: variadic
  int num_results;   ///< -1: variadic
  int num_regions;
  uint32_t traits;
};
const OpInfo& op_info(OpKind kind);
std::string_view op_name(OpKind kind);
/// Finds an op kind by its text name; returns false if unknown.
bool parse_op_kind(std::string_view name, OpKind* out);
int num_op_kinds();
inline bool has_trait(OpKind kind, OpTrait t) {
  return (op_info(kind).traits & t) != 0;
}

class Op;
class Region;

/// An SSA value: the result of an op or an argument of a region.
class Value {
 public:
  Type type;
  Op* def = nullptr;        ///< defining op; null for region arguments
  Region* owner = nullptr;  ///< the region whose argument this is; null for op results
  uint32_t index = 0;       ///< result index in `def`, or argument index in `owner`

  bool is_arg() const { return def == nullptr; }
};

/// An attribute value: integer, float, string, integer list or type.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, Type>;

/// An attribute: a name (attr_names.h spells every one) and its value.
struct Attribute {
  Attribute() = default;
  Attribute(std::string_view n, AttrValue v) : name(n), value(std::move(v)) {}
  std::string name;
  AttrValue value;
  bool operator==(const Attribute& o) const { return name == o.name && value == o.value; }
};

/// A single-block region: arguments and an op list ending (for control flow) in a terminator.
class Region {
 public:
  std::vector<Value*> args;
  std::vector<Op*> ops;
  Op* parent = nullptr;  ///< owning op; null for a function body

  Op* terminator() const;
};

class Op {
 public:
  OpKind kind;
  Location loc;
  std::vector<Value*> operands;
  std::vector<Value*> results;
  std::vector<Attribute> attrs;  ///< sorted by name
  std::vector<Region*> regions;
  Region* parent = nullptr;

  const OpInfo& info() const { return op_info(kind); }
  std::string_view name() const { return op_name(kind); }
  bool has(OpTrait t) const { return (info().traits & t) != 0; }
  Value* operand(size_t i) const { return operands.at(i); }
  Value* result(size_t i = 0) const { return results.at(i); }
  Region* region(size_t i) const { return regions.at(i); }

  const AttrValue* find_attr(std::string_view name) const;
  bool has_attr(std::string_view name) const { return find_attr(name) != nullptr; }
  /// Sets (or replaces) an attribute, keeping the list sorted by name.
  void set_attr(std::string_view name, AttrValue value);
  void erase_attr(std::string_view name);
  /// Typed getters; a missing attribute or a wrong variant is an internal error.
  int64_t int_attr(std::string_view name) const;
  double float_attr(std::string_view name) const;
  const std::string& str_attr(std::string_view name) const;
  const std::vector<int64_t>& ints_attr(std::string_view name) const;
  const Type& type_attr(std::string_view name) const;
  int64_t int_attr_or(std::string_view name, int64_t fallback) const;
  std::string str_attr_or(std::string_view name, std::string_view fallback) const;
};

/// A kernel parameter's name and specialization facts (what the launch proved about it).
struct Param {
  std::string name;
  Value* value = nullptr;
  std::vector<Attribute> attrs;  ///< e.g. divisibility = 16, equal_to = 1; sorted by name
};

/// Attribute-list helpers (lists are kept sorted by name).
const AttrValue* find_attr(const std::vector<Attribute>& attrs, std::string_view name);
void set_attr(std::vector<Attribute>& attrs, std::string_view name, AttrValue value);

class Function {
 public:
  std::string name;
  Location loc;
  std::vector<Param> params;
  Region* body = nullptr;
  /// Function-level facts; SIMT functions carry stage, threads, subgroup, shared buffers and
  /// target here (core/ir/simt.h). Sorted by name; printed as `attributes {...}`.
  std::vector<Attribute> attrs;

  int64_t int_attr_or(std::string_view name, int64_t fallback) const;
  std::string str_attr_or(std::string_view name, std::string_view fallback) const;
  const std::vector<int64_t>* ints_attr(std::string_view name) const;
  void set_attr(std::string_view name, AttrValue value) {
    ir::set_attr(attrs, name, std::move(value));
  }
};

/// Owns every op, value and region of its functions. Nothing is freed before the module: erased
/// ops stay allocated (arena semantics), which keeps pointers held by passes valid.
class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  std::vector<std::unique_ptr<Function>> functions;

  Function* add_function(std::string name, Location loc = {});
  Function& kernel() const;  ///< the (first) function; internal error if none

  Value* new_value(Type type);
  Region* new_region(Op* parent);
  /// Makes an op with fresh results of `result_types`; the caller inserts it into a region.
  Op* new_op(OpKind kind, std::vector<Value*> operands, std::vector<Type> result_types,
             std::vector<Attribute> attrs, Location loc);
  /// Adds an argument of `type` to `region`.
  Value* add_arg(Region* region, Type type);

  /// Deep copy (used to keep a traced kernel while passes mutate a copy).
  std::unique_ptr<Module> clone() const;

 private:
  std::deque<Value> values_;
  std::deque<Op> ops_;
  std::deque<Region> regions_;
};

/// Replaces every use of `from` by `to` inside `region` (recursively).
void replace_all_uses(Region* region, Value* from, Value* to);
/// Visits every op in `region` in order, pre-order (an op before the ops of its regions).
template <class F>
void walk(Region* region, F&& f) {
  for (Op* op : region->ops) {
    f(op);
    for (Region* r : op->regions) walk(r, f);
  }
}
/// walk over a region it may not change: `f` receives `const Op*`.
template <class F>
void walk(const Region* region, F&& f) {
  for (const Op* op : region->ops) {
    f(op);
    for (const Region* r : op->regions) walk(r, f);
  }
}

}  // namespace tessera::ir
