/// \file The interpreter's execution state for one program (its environment of runtime values
/// and its program id) and the entry points of the op families, one source file each.
#pragma once

#include <array>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/interp/interpreter.h"
#include "core/interp/value.h"
#include "core/ir/ops.h"

namespace tessera::interp {

class Exec {
 public:
  Exec(const ir::Function& fn, const MemoryMap& memory, const RunOptions& options, Grid grid);

  const ir::Function& fn() const { return fn_; }
  const MemoryMap& memory() const { return memory_; }
  std::ostream& out() const { return out_; }
  Grid grid() const { return grid_; }
  const std::array<uint32_t, 3>& program() const { return pid_; }

  /// Starts a program: forgets every value and sets the program id.
  void begin_program(uint32_t x, uint32_t y, uint32_t z);

  const RuntimeValue& get(const ir::Value* v) const;
  void set(const ir::Value* v, RuntimeValue value);
  /// Moves a value out of the environment (for values that are dead afterwards).
  RuntimeValue take(const ir::Value* v);

  /// Runs one op (not a terminator) through the dispatch table.
  void exec(const ir::Op& op);
  /// Binds `args` to the region's arguments, runs its ops, and returns the operands of its
  /// terminator (none when it has no terminator).
  std::vector<RuntimeValue> run_region(const ir::Region& region, std::vector<RuntimeValue> args);

  /// "in kernel 'k' at file:line, program (x, y, z)": where a device fault happened.
  std::string site(const ir::Op& op) const;
  /// Throws a DeviceFault: "<what> <site><detail>".
  [[noreturn]] void fault(const ir::Op& op, std::string_view what, std::string_view detail) const;

  /// Counts one iteration of loop `op`; every 256th looks at the run's deadline and, once it has
  /// passed, stops the run with a DeviceFault naming the loop (a clock read per iteration would
  /// cost more than a small loop body).
  void tick(const ir::Op& op) {
    if ((++ticks_ & 255) == 0 && deadline_.passed()) fault(op, deadline_.describe(), "");
  }
  const Deadline& deadline() const { return deadline_; }

 private:
  const ir::Function& fn_;
  const MemoryMap& memory_;
  std::ostream& out_;
  Grid grid_;
  std::array<uint32_t, 3> pid_{};
  Deadline deadline_;
  uint64_t ticks_ = 0;
  std::unordered_map<const ir::Value*, RuntimeValue> env_;
};

/// "(i, j)": a row-major linear index of `shape` as coordinates.
std::string index_str(const ir::Shape& shape, int64_t linear);

/// Converts every element of `src` to `dtype` (or to a pointer when `to_ptr`) with the `cast`
/// op's rules. Used by cast itself and by constant.
RuntimeValue convert(const RuntimeValue& src, ir::DType dtype, bool to_ptr);

// The elementwise families on values rather than on the environment: exec_arith, exec_unary and
// exec_cast bind what these return, and constant folding evaluates through them (evaluate.h), so
// a folded constant is computed by this code. `shape` is the result's shape when every operand
// is a scalar (the op's declared shape for the interpreter, {} for folding).
RuntimeValue arith_value(const ir::Op& op, std::span<const RuntimeValue* const> operands,
                         const ir::Shape& shape);  ///< elementwise.cpp
RuntimeValue unary_value(const ir::Op& op, std::span<const RuntimeValue* const> operands,
                         const ir::Shape& shape);  ///< math.cpp
RuntimeValue cast_value(const ir::Op& op, std::span<const RuntimeValue* const> operands,
                        const ir::Shape& shape);  ///< cast.cpp

// The op families. Each reads its operands from `ex` and binds its results.
void exec_tile(Exec& ex, const ir::Op& op);     ///< tile.cpp: ids, constants, shapes, ptr_add
void exec_arith(Exec& ex, const ir::Op& op);    ///< elementwise.cpp: binary ops, compares
void exec_unary(Exec& ex, const ir::Op& op);    ///< math.cpp: unary ops, math, fma, where
void exec_cast(Exec& ex, const ir::Op& op);     ///< cast.cpp: cast, bitcast
void exec_memory(Exec& ex, const ir::Op& op);   ///< memory.cpp: load, store, atomics
void exec_reduce(Exec& ex, const ir::Op& op);   ///< reduce.cpp: reduce, scan
void exec_combine(Exec& ex, const ir::Op& op);  ///< combine.cpp: reduce/scan_generic
void exec_dot(Exec& ex, const ir::Op& op);      ///< dot.cpp
void exec_debug(Exec& ex, const ir::Op& op);    ///< debug.cpp: print, assert, hints
void exec_control(Exec& ex, const ir::Op& op);  ///< control.cpp: for, if, while

/// The shape of an elementwise result: operands are all of one element count n or scalars
/// (count 1), which broadcast. n == 1 gives `fallback` (the op's declared result shape). The
/// broadcast is what lets a combine region run on many lanes at once (combine.cpp).
ir::Shape elementwise_shape(std::initializer_list<const RuntimeValue*> operands,
                            const ir::Shape& fallback);

}  // namespace tessera::interp
