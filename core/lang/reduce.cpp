/// \file Reductions, scans (builtin and generic with a traced combine region) and dot.
#include <string>

#include "core/ir/ops.h"
#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace {

using detail::builder_at;
using detail::wrap;
using ir::OpKind;
using ir::Type;

ir::Value* tile_value(const tensor& x, std::string_view op, const Here& loc) {
  ir::Value* v = detail::value_of(x, op, loc);
  if (!v->type.is_tile()) user_error(loc, op, "expects a tile, got the scalar " + v->type.str());
  if (v->type.is_ptr) user_error(loc, op, "cannot reduce pointers (" + v->type.str() + ")");
  return v;
}

ir::Shape drop_axis(const ir::Shape& s, int axis) {
  ir::Shape out = s;
  out.erase(out.begin() + axis);
  return out;
}

tensor keep(const tensor& r, bool keep_dims, int axis, const Here& loc) {
  return keep_dims ? expand_dims(r, axis, loc) : r;
}

/// Triton's accumulation dtype for sums: narrow integers in 32 bits, narrow floats in f32.
DType sum_dtype(DType t) {
  if (t == DType::i1 || t == DType::i8 || t == DType::i16) return DType::i32;
  if (t == DType::u8 || t == DType::u16) return DType::u32;
  if (t == DType::f16 || t == DType::bf16) return DType::f32;
  return t;
}

/// Triton's dtype for tl.max/tl.min: narrow floats in f32, narrow integers in i32.
DType min_max_dtype(DType t) {
  if (ir::dtype_bits(t) >= 32) return t;
  return ir::is_float(t) ? DType::f32 : DType::i32;
}

tensor builtin_reduce(ir::ReduceKind kind, const tensor& x, int axis, bool keep_dims,
                      const Here& loc, PropagateNan nan = PropagateNan::All) {
  ir::Value* v = tile_value(x, "reduce", loc);
  int ax = detail::normalize_axis(axis, v->type.rank(), "reduce", loc);
  const bool min_max = kind == ir::ReduceKind::Max || kind == ir::ReduceKind::Min;
  if (kind == ir::ReduceKind::Sum) v = detail::cast_to(v, sum_dtype(v->type.dtype), loc);
  if (min_max) v = detail::cast_to(v, min_max_dtype(v->type.dtype), loc);
  if (kind == ir::ReduceKind::Prod && v->type.dtype == DType::i1)
    v = detail::cast_to(v, DType::i32, loc);
  if (kind == ir::ReduceKind::XorSum && ir::is_float(v->type.dtype))
    user_error(loc, "reduce", "xor_sum needs integers, got " + v->type.str());
  DType out = (kind == ir::ReduceKind::ArgMax || kind == ir::ReduceKind::ArgMin) ? DType::i32
                                                                                 : v->type.dtype;
  Type result{out, false, drop_axis(v->type.shape, ax)};
  std::vector<ir::Attribute> attrs = {{attr::kAxis, int64_t{ax}},
                                      {attr::kKind, std::string(ir::to_string(kind))}};
  if (min_max && ir::is_float(out) && nan == PropagateNan::None)
    attrs.push_back({attr::kNan, std::string("ignore")});
  ir::Value* r = builder_at(loc).create_value(OpKind::Reduce, {v}, result, attrs);
  return keep(wrap(r), keep_dims, ax, loc);
}

/// Traces `combine` into a region with 2N scalar arguments (left values, then right values).
void trace_combine(ir::Op* op, const std::vector<ir::Value*>& inputs, const Combine& combine,
                   std::string_view name, const Here& loc) {
  Tracer& tracer = Tracer::current(loc);
  tracer.enter_region(name, loc);
  ir::Builder& b = tracer.builder();
  ir::Region* outer = b.region();
  ir::Region* region = b.add_region(op);
  std::vector<tensor> lhs, rhs;
  for (ir::Value* v : inputs)
    lhs.push_back(wrap(tracer.module().add_arg(region, v->type.element())));
  for (ir::Value* v : inputs)
    rhs.push_back(wrap(tracer.module().add_arg(region, v->type.element())));
  b.set_insertion_end(region);
  std::vector<tensor> out = combine(lhs, rhs);
  if (out.size() != inputs.size())
    user_error(loc, name,
               "the combine function returned " + std::to_string(out.size()) + " values for " +
                   std::to_string(inputs.size()) + " inputs");
  std::vector<ir::Value*> yields;
  for (size_t i = 0; i < out.size(); ++i) {
    ir::Value* y = detail::value_of(out[i], name, loc);
    if (y->type != inputs[i]->type.element())
      user_error(loc, name,
                 "the combine function returned " + y->type.str() + " for input " +
                     std::to_string(i) + " of element type " + inputs[i]->type.element().str());
    yields.push_back(y);
  }
  tracer.at(loc).create(OpKind::Yield, yields, {});
  b.set_insertion_end(outer);
  tracer.leave_region();
}

std::vector<ir::Value*> same_shape_tiles(const std::vector<tensor>& xs, std::string_view op,
                                         const Here& loc) {
  if (xs.empty()) user_error(loc, op, "needs at least one input tile");
  std::vector<ir::Value*> vs;
  for (const tensor& x : xs) vs.push_back(tile_value(x, op, loc));
  for (ir::Value* v : vs)
    if (v->type.shape != vs[0]->type.shape)
      user_error(loc, op,
                 "input shapes differ: " + ir::shape_str(vs[0]->type.shape) + " and " +
                     ir::shape_str(v->type.shape));
  return vs;
}

std::vector<tensor> generic(OpKind kind, const std::vector<tensor>& xs, int axis,
                            const Combine& combine, bool reverse, bool keep_dims, const Here& loc) {
  std::string_view name = ir::op_name(kind);
  std::vector<ir::Value*> vs = same_shape_tiles(xs, name, loc);
  int ax = detail::normalize_axis(axis, vs[0]->type.rank(), name, loc);
  std::vector<Type> types;
  for (ir::Value* v : vs)
    types.push_back(kind == OpKind::ReduceGeneric
                        ? Type{v->type.dtype, false, drop_axis(v->type.shape, ax)}
                        : v->type);
  std::vector<ir::Attribute> attrs = {{attr::kAxis, int64_t{ax}}};
  if (reverse) attrs.push_back({attr::kReverse, int64_t{1}});
  ir::Op* op = builder_at(loc).create(kind, vs, types, attrs);
  trace_combine(op, vs, combine, name, loc);
  std::vector<tensor> out;
  for (ir::Value* r : op->results)
    out.push_back(kind == OpKind::ReduceGeneric ? keep(wrap(r), keep_dims, ax, loc) : wrap(r));
  return out;
}

tensor builtin_scan(ir::ReduceKind kind, const tensor& x, int axis, bool reverse, const Here& loc) {
  ir::Value* v = tile_value(x, "scan", loc);
  int ax = detail::normalize_axis(axis, v->type.rank(), "scan", loc);
  if (kind == ir::ReduceKind::Sum) v = detail::cast_to(v, sum_dtype(v->type.dtype), loc);
  if (kind == ir::ReduceKind::Prod && v->type.dtype == DType::bf16)
    v = detail::cast_to(v, DType::f32, loc);  // Triton's cumprod widens bf16
  std::vector<ir::Attribute> attrs = {{attr::kAxis, int64_t{ax}},
                                      {attr::kKind, std::string(ir::to_string(kind))}};
  if (reverse) attrs.push_back({attr::kReverse, int64_t{1}});
  return wrap(builder_at(loc).create_value(OpKind::Scan, {v}, v->type, attrs));
}

Combine wrap_binary(const std::function<tensor(const tensor&, const tensor&)>& f) {
  return [f](const std::vector<tensor>& l, const std::vector<tensor>& r) {
    return std::vector<tensor>{f(l[0], r[0])};
  };
}

}  // namespace

tensor sum(const tensor& x, int axis, bool k, Here loc) {
  return builtin_reduce(ir::ReduceKind::Sum, x, axis, k, loc);
}
tensor prod(const tensor& x, int axis, bool k, Here loc) {
  return builtin_reduce(ir::ReduceKind::Prod, x, axis, k, loc);
}
tensor max(const tensor& x, int axis, bool k, PropagateNan nan, Here loc) {
  return builtin_reduce(ir::ReduceKind::Max, x, axis, k, loc, nan);
}
tensor min(const tensor& x, int axis, bool k, PropagateNan nan, Here loc) {
  return builtin_reduce(ir::ReduceKind::Min, x, axis, k, loc, nan);
}
tensor argmax(const tensor& x, int axis, bool k, Here loc) {
  return builtin_reduce(ir::ReduceKind::ArgMax, x, axis, k, loc);
}
tensor argmin(const tensor& x, int axis, bool k, Here loc) {
  return builtin_reduce(ir::ReduceKind::ArgMin, x, axis, k, loc);
}
tensor xor_sum(const tensor& x, int axis, bool k, Here loc) {
  return builtin_reduce(ir::ReduceKind::XorSum, x, axis, k, loc);
}

std::vector<tensor> reduce(const std::vector<tensor>& xs, int axis, const Combine& combine,
                           bool keep_dims, Here loc) {
  return generic(OpKind::ReduceGeneric, xs, axis, combine, false, keep_dims, loc);
}

tensor reduce(const tensor& x, int axis,
              const std::function<tensor(const tensor&, const tensor&)>& combine, bool keep_dims,
              Here loc) {
  return generic(OpKind::ReduceGeneric, {x}, axis, wrap_binary(combine), false, keep_dims, loc)[0];
}

tensor cumsum(const tensor& x, int axis, bool reverse, Here loc) {
  return builtin_scan(ir::ReduceKind::Sum, x, axis, reverse, loc);
}
namespace {
/// `x` converted to a sum's requested dtype; narrow dtypes (which a builtin sum would widen)
/// accumulate through a generic combine in that dtype, as Triton's do.
tensor sum_input(const tensor& x, DType dtype, std::string_view op, const Here& loc) {
  ir::Value* v = tile_value(x, op, loc);
  if (dtype == DType::i1) user_error(loc, op, "dtype must be a number, got i1");
  return wrap(detail::cast_to(v, dtype, loc));
}
/// The combine of a sum in the input's own dtype, recorded at the caller's line.
std::function<tensor(const tensor&, const tensor&)> add_at(const Here& loc) {
  return [loc](const tensor& a, const tensor& b) { return Operand(a, loc) + Operand(b, loc); };
}
}  // namespace

tensor sum(const tensor& x, int axis, bool k, DType dtype, Here loc) {
  tensor c = sum_input(x, dtype, "sum", loc);
  if (sum_dtype(dtype) == dtype) return builtin_reduce(ir::ReduceKind::Sum, c, axis, k, loc);
  return reduce(c, axis, add_at(loc), k, loc);
}
tensor cumsum(const tensor& x, int axis, bool reverse, DType dtype, Here loc) {
  tensor c = sum_input(x, dtype, "cumsum", loc);
  if (sum_dtype(dtype) == dtype) return builtin_scan(ir::ReduceKind::Sum, c, axis, reverse, loc);
  return associative_scan(c, axis, add_at(loc), reverse, loc);
}
tensor cumprod(const tensor& x, int axis, bool reverse, Here loc) {
  return builtin_scan(ir::ReduceKind::Prod, x, axis, reverse, loc);
}

std::vector<tensor> associative_scan(const std::vector<tensor>& xs, int axis,
                                     const Combine& combine, bool reverse, Here loc) {
  return generic(OpKind::ScanGeneric, xs, axis, combine, reverse, false, loc);
}

tensor associative_scan(const tensor& x, int axis,
                        const std::function<tensor(const tensor&, const tensor&)>& combine,
                        bool reverse, Here loc) {
  return generic(OpKind::ScanGeneric, {x}, axis, wrap_binary(combine), reverse, false, loc)[0];
}

namespace {

DType default_acc(DType in) {
  if (in == DType::i8) return DType::i32;
  if (in == DType::f64) return DType::f64;
  return DType::f32;
}

}  // namespace

tensor dot(const tensor& a, const tensor& b, Here loc) {
  ir::Value* va = detail::value_of(a, "dot", loc);
  ir::Value* vb = detail::value_of(b, "dot", loc);
  if (va->type.rank() != 2 || vb->type.rank() != 2)
    user_error(loc, "dot",
               "operands must be 2-D tiles, got " + va->type.str() + " and " + vb->type.str());
  ir::Shape shape = {va->type.shape[0], vb->type.shape[1]};
  tensor acc = zeros(shape, default_acc(va->type.dtype), loc);
  return dot(a, b, acc, InputPrecision::Tf32, loc);
}

tensor dot(const tensor& a, const tensor& b, const tensor& acc, InputPrecision precision,
           Here loc) {
  ir::Value* va = detail::value_of(a, "dot", loc);
  ir::Value* vb = detail::value_of(b, "dot", loc);
  ir::Value* vc = detail::value_of(acc, "dot", loc);
  if (va->type.rank() != 2 || vb->type.rank() != 2 || va->type.is_ptr || vb->type.is_ptr)
    user_error(
        loc, "dot",
        "operands must be 2-D tiles of numbers, got " + va->type.str() + " and " + vb->type.str());
  if (va->type.shape[1] != vb->type.shape[0])
    user_error(loc, "dot",
               "inner dimensions differ: lhs is " + ir::shape_str(va->type.shape) + ", rhs is " +
                   ir::shape_str(vb->type.shape));
  if (va->type.dtype != vb->type.dtype)
    user_error(loc, "dot",
               "operand dtypes differ: " + std::string(ir::dtype_name(va->type.dtype)) + " and " +
                   std::string(ir::dtype_name(vb->type.dtype)));
  ir::Shape shape = {va->type.shape[0], vb->type.shape[1]};
  if (vc->type.shape != shape)
    user_error(loc, "dot",
               "accumulator shape " + ir::shape_str(vc->type.shape) + " differs from " +
                   ir::shape_str(shape));
  DType in = va->type.dtype;
  if (!ir::is_float(in) && in != DType::i8)
    user_error(loc, "dot",
               "unsupported input dtype " + std::string(ir::dtype_name(in)) +
                   " (use f16, bf16, f32, f64, i8, float8e4nv or float8e5)");
  if (vc->type.dtype != default_acc(in) && !(vc->type.dtype == in && in == DType::f16))
    user_error(loc, "dot",
               "accumulator dtype " + std::string(ir::dtype_name(vc->type.dtype)) +
                   " does not fit " + std::string(ir::dtype_name(in)) + " inputs (use " +
                   std::string(ir::dtype_name(default_acc(in))) + ")");
  std::vector<ir::Attribute> attrs;
  if (in == DType::f32)
    attrs.push_back(
        {attr::kPrecision, std::string(precision == InputPrecision::Tf32 ? "tf32" : "ieee")});
  return wrap(builder_at(loc).create_value(OpKind::Dot, {va, vb, vc}, vc->type, attrs));
}

namespace {
/// The accumulator dtype Triton's out_dtype gives inputs of dtype `in`.
DType out_dtype_for(DType in, std::optional<DType> out, const Here& loc) {
  if (out == DType::bf16)
    user_error(loc, "dot", "out_dtype bf16 is not supported (as in Triton): use f32 and convert");
  if (in == DType::f16 && out == DType::f16) return DType::f16;
  return default_acc(in);
}
}  // namespace

tensor dot(const tensor& a, const tensor& b, const DotOptions& options, Here loc) {
  ir::Value* va = detail::value_of(a, "dot", loc);
  ir::Value* vb = detail::value_of(b, "dot", loc);
  if (va->type.rank() != 2 || vb->type.rank() != 2)
    user_error(loc, "dot",
               "operands must be 2-D tiles, got " + va->type.str() + " and " + vb->type.str());
  ir::Shape shape = {va->type.shape[0], vb->type.shape[1]};
  tensor acc = zeros(shape, out_dtype_for(va->type.dtype, options.out_dtype, loc), loc);
  return dot(a, b, acc, options.input_precision, loc);
}

tensor dot(const tensor& a, const tensor& b, const tensor& acc, const DotOptions& options,
           Here loc) {
  ir::Value* vc = detail::value_of(acc, "dot", loc);
  if (options.out_dtype && *options.out_dtype != vc->type.dtype)
    user_error(loc, "dot",
               "out_dtype " + std::string(ir::dtype_name(*options.out_dtype)) +
                   " differs from the accumulator's dtype " +
                   std::string(ir::dtype_name(vc->type.dtype)));
  return dot(a, b, acc, options.input_precision, loc);
}

}  // namespace tessera::tl
