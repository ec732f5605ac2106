/// \file Test helpers for the host interpreter: a concise kernel builder over ir::Builder, host
/// memory as a MemoryMap, parameter-block packing, and one-call runners that load inputs into
/// tiles, apply an op and read the result tile back.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/interp/interpreter.h"
#include "core/ir/abi.h"
#include "core/ir/builder.h"
#include "core/ir/ops.h"
#include "core/ir/verifier.h"

namespace interp_test {

using tessera::Location;
using tessera::interp::Grid;
using tessera::interp::RunOptions;
using tessera::ir::Attribute;
using tessera::ir::DType;
using tessera::ir::Op;
using tessera::ir::OpKind;
using tessera::ir::Region;
using tessera::ir::Shape;
using tessera::ir::Type;
using tessera::ir::Value;

/// Host buffers registered as live allocations.
class HostMemory : public tessera::interp::MemoryMap {
 public:
  template <class T>
  uint64_t add(std::vector<T>& buffer) {
    const auto begin = reinterpret_cast<uint64_t>(buffer.data());
    ranges_.push_back({begin, begin + buffer.size() * sizeof(T)});
    return begin;
  }
  bool contains(uint64_t address, uint64_t bytes) const override {
    for (const auto& [begin, end] : ranges_)
      if (address >= begin && address <= end && bytes <= end - address) return true;
    return false;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

/// Builds one kernel; every op records `kernel.cpp:<line>` (set_line changes the line).
class Kernel {
 public:
  explicit Kernel(std::string name = "k")
      : fn_(module_.add_function(std::move(name))), b_(module_) {
    b_.set_insertion_end(fn_->body);
    set_line(1);
  }
  tessera::ir::Function& fn() { return *fn_; }
  tessera::ir::Module& module() { return module_; }
  tessera::ir::Builder& builder() { return b_; }
  void set_line(uint32_t line) { b_.set_loc(Location::make("kernel.cpp", line)); }

  Value* param(Type type, std::string name = "") {
    if (name.empty()) name = "p" + std::to_string(fn_->params.size());
    Value* v = module_.add_arg(fn_->body, type);
    fn_->params.push_back({name, v, {}});
    return v;
  }
  Value* ptr_param(DType pointee) { return param(Type::pointer(pointee)); }

  Value* op(OpKind kind, std::vector<Value*> operands, Type type,
            std::vector<Attribute> attrs = {}) {
    return b_.create_value(kind, std::move(operands), std::move(type), std::move(attrs));
  }
  Value* cint(Type type, int64_t v) { return b_.constant_int(std::move(type), v); }
  Value* cfloat(Type type, double v) { return b_.constant_float(std::move(type), v); }
  Value* i32(int64_t v) { return cint(Type::scalar(DType::i32), v); }
  Value* pid(int axis) {
    return op(OpKind::ProgramId, {}, Type::scalar(DType::i32), {{"axis", int64_t{axis}}});
  }
  Value* arange(int64_t start, int64_t end) {
    return op(OpKind::Arange, {}, Type::tile(DType::i32, {end - start}),
              {{"start", start}, {"end", end}});
  }
  Value* splat(Value* v, Shape shape) { return op(OpKind::Splat, {v}, v->type.with_shape(shape)); }
  Value* reshape(Value* v, Shape shape) {
    return op(OpKind::Reshape, {v}, v->type.with_shape(shape));
  }
  /// Binary op with the operands' type (i1 for comparisons).
  Value* bin(OpKind kind, Value* a, Value* b, std::vector<Attribute> attrs = {}) {
    Type t = tessera::ir::has_trait(kind, tessera::ir::kCompare) ? a->type.with_dtype(DType::i1)
                                                                 : a->type;
    return op(kind, {a, b}, t, std::move(attrs));
  }
  Value* un(OpKind kind, Value* a) { return op(kind, {a}, a->type); }
  Value* cast(Value* v, DType to) { return op(OpKind::Cast, {v}, v->type.with_dtype(to)); }
  /// %p + %off, splatting a scalar pointer to the offsets' shape.
  Value* ptr_add(Value* p, Value* off) {
    if (off->type.is_tile() && !p->type.is_tile()) p = splat(p, off->type.shape);
    return op(OpKind::PtrAdd, {p, off}, p->type);
  }
  Value* load(Value* ptr, Value* mask = nullptr, Value* other = nullptr) {
    std::vector<Value*> ops{ptr};
    if (mask) ops.push_back(mask);
    if (other) ops.push_back(other);
    return op(OpKind::Load, ops, Type{ptr->type.dtype, false, ptr->type.shape});
  }
  void store(Value* ptr, Value* value, Value* mask = nullptr) {
    std::vector<Value*> ops{ptr, value};
    if (mask) ops.push_back(mask);
    b_.create(OpKind::Store, ops, {});
  }
  /// Loads numel(shape) consecutive elements at `base` as a tile of `shape`.
  Value* load_all(Value* base, Shape shape) {
    const int64_t n = tessera::ir::num_elements(shape);
    Value* flat = load(ptr_add(base, arange(0, n)));
    return shape.size() == 1 ? flat : reshape(flat, shape);
  }
  /// Stores a scalar or a tile of any shape at base[0..numel), row-major.
  void store_all(Value* base, Value* v) {
    if (!v->type.is_tile()) return store(base, v);
    const int64_t n = v->type.numel();
    if (v->type.rank() != 1) v = reshape(v, {n});
    store(ptr_add(base, arange(0, n)), v);
  }

  /// Creates an op with regions; `fill(i, region)` builds region i (the builder then returns
  /// to the current region).
  Op* region_op(OpKind kind, std::vector<Value*> operands, std::vector<Type> results,
                std::vector<Attribute> attrs, int regions,
                const std::function<void(int, Region*)>& fill) {
    Op* o = b_.create(kind, std::move(operands), std::move(results), std::move(attrs));
    Region* here = b_.region();
    for (int i = 0; i < regions; ++i) {
      Region* r = b_.add_region(o);
      b_.set_insertion_end(r);
      fill(i, r);
    }
    b_.set_insertion_end(here);
    return o;
  }
  Value* arg(Region* r, Type type) { return module_.add_arg(r, type); }
  void yield(std::vector<Value*> values) { b_.create(OpKind::Yield, std::move(values), {}); }

 private:
  tessera::ir::Module module_;
  tessera::ir::Function* fn_;
  tessera::ir::Builder b_;
};

/// The packed parameter block for `args` (each the C++ value of its slot: uint64_t for a
/// pointer, the scalar's type otherwise).
template <class... Args>
std::vector<std::byte> pack(const tessera::ir::Function& fn, Args... args) {
  const tessera::ir::ParamLayout layout = tessera::ir::param_layout(fn);
  REQUIRE(layout.slots.size() == sizeof...(Args));
  std::vector<std::byte> block(layout.size);
  size_t i = 0;
  auto put = [&](auto v) {
    REQUIRE(layout.slots[i].size == sizeof(v));
    std::memcpy(block.data() + layout.slots[i].offset, &v, sizeof(v));
    ++i;
  };
  (put(args), ...);
  (void)put;  // unused when the kernel takes no parameters
  return block;
}

/// Every test kernel must be valid IR: the interpreter defines verified kernels only.
inline void check_verified(const tessera::ir::Function& fn) {
  for (const std::string& d : tessera::ir::verify_all(fn)) FAIL_CHECK("verifier: " << d);
}

template <class... Args>
void run(Kernel& k, const HostMemory& memory, Grid grid, Args... args) {
  check_verified(k.fn());
  tessera::interp::run(k.fn(), pack(k.fn(), args...), grid, memory);
}
template <class... Args>
void run_opts(Kernel& k, const HostMemory& memory, Grid grid, const RunOptions& options,
              Args... args) {
  check_verified(k.fn());
  tessera::interp::run(k.fn(), pack(k.fn(), args...), grid, memory, options);
}

/// The message of the tessera::Error (of `kind`) that `f` throws, or "" if it throws none.
inline std::string error_of(const std::function<void()>& f,
                            tessera::ErrorKind kind = tessera::ErrorKind::DeviceFault) {
  try {
    f();
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  return "";
}

/// Builds a kernel `(in0, ..., out)`, loads each input as a tile of `shape`, applies `body`,
/// stores the result, and returns the output buffer. Input vectors hold numel(shape) elements.
template <class Out, class... In>
std::vector<Out> eval(DType out_dtype, Shape shape,
                      const std::function<Value*(Kernel&, std::vector<Value*>)>& body,
                      std::pair<DType, std::vector<In>>... inputs) {
  Kernel k;
  std::vector<Value*> ptrs{k.ptr_param(inputs.first)...};
  Value* out = k.ptr_param(out_dtype);
  std::vector<Value*> tiles;
  for (Value* p : ptrs) tiles.push_back(k.load_all(p, shape));
  Value* r = body(k, tiles);
  k.store_all(out, r);
  HostMemory mem;
  std::vector<Out> result(static_cast<size_t>(r->type.is_tile() ? r->type.numel() : 1));
  const uint64_t out_addr = mem.add(result);
  [&](auto&... bufs) { run(k, mem, Grid{}, mem.add(bufs.second)..., out_addr); }(inputs...);
  return result;
}

/// Pads `v` to a power-of-two length (tiles are powers of two) by repeating its first element.
template <class T>
std::vector<T> padded(std::vector<T> v) {
  v.resize(std::bit_ceil(v.size()), v.front());
  return v;
}

/// One binary op on two 1-D inputs of one dtype.
template <class Out, class In>
std::vector<Out> binary(OpKind kind, DType in, DType out, std::vector<In> a, std::vector<In> b,
                        std::vector<Attribute> attrs = {}) {
  const size_t size = a.size();
  const auto n = static_cast<int64_t>(std::bit_ceil(size));
  std::vector<Out> r = eval<Out, In, In>(
      out, {n}, [&](Kernel& k, std::vector<Value*> t) { return k.bin(kind, t[0], t[1], attrs); },
      std::pair{in, padded(a)}, std::pair{in, padded(b)});
  r.resize(size);
  return r;
}

/// One unary op (or cast: `to` differs from `in`) on a 1-D input.
template <class Out, class In>
std::vector<Out> unary(OpKind kind, DType in, DType out, std::vector<In> a) {
  const size_t size = a.size();
  const auto n = static_cast<int64_t>(std::bit_ceil(size));
  std::vector<Out> r = eval<Out, In>(
      out, {n},
      [&](Kernel& k, std::vector<Value*> t) {
        return k.op(kind, {t[0]}, t[0]->type.with_dtype(out));
      },
      std::pair{in, padded(a)});
  r.resize(size);
  return r;
}

inline float f32_bits(uint32_t bits) {
  return std::bit_cast<float>(bits);
}
inline uint32_t bits_f32(float f) {
  return std::bit_cast<uint32_t>(f);
}

}  // namespace interp_test
