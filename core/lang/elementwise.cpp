/// \file Operators and elementwise functions: promotion, broadcasting, then one IR op.
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

enum class Operands { Any, Integer, Float };

/// Two operands promoted and broadcast to a common type; returns the op's result.
tensor binary(OpKind kind, const Operand& a, const Operand& b, Operands allowed = Operands::Any) {
  const Here& loc = a.loc();
  std::string_view name = ir::op_name(kind);
  DType dtype = detail::computation_dtype(a, b, name, loc);
  if (allowed == Operands::Integer && ir::is_float(dtype))
    user_error(loc, name, "operands must be integers, got " + std::string(ir::dtype_name(dtype)));
  std::vector<ir::Value*> vs = {detail::materialize(a, dtype, name, loc),
                                detail::materialize(b, dtype, name, loc)};
  detail::broadcast_all(vs, name, loc);
  Type result = vs[0]->type;
  if (ir::has_trait(kind, ir::kCompare)) result.dtype = DType::i1;
  return wrap(builder_at(loc).create_value(kind, {vs[0], vs[1]}, result));
}

bool is_pointer(const Operand& x) {
  return x.is_tensor() && x.as_tensor().defined() && x.as_tensor().type().is_ptr;
}

/// ptr + integer offset (either order) or ptr - offset.
tensor pointer_arith(const Operand& a, const Operand& b, bool subtract) {
  const Here& loc = a.loc();
  const Operand& p = is_pointer(a) ? a : b;
  const Operand& off = is_pointer(a) ? b : a;
  if (subtract && !is_pointer(a))
    user_error(loc, "ptr_add", "cannot subtract a pointer from an integer");
  if (is_pointer(off))
    user_error(loc, "ptr_add",
               "cannot add two pointers (" + p.as_tensor().type().str() + " and " +
                   off.as_tensor().type().str() + ")");
  DType off_dtype = off.is_tensor() ? off.as_tensor().dtype() : detail::natural_dtype(off);
  if (ir::is_float(off_dtype) || off.kind() == Operand::Kind::Float)
    user_error(loc, "ptr_add",
               "the offset must be an integer, got " + std::string(ir::dtype_name(off_dtype)));
  if (off_dtype == DType::i1) off_dtype = DType::i32;
  ir::Value* offset = detail::materialize(off, off_dtype, "ptr_add", loc);
  if (subtract) offset = builder_at(loc).create_value(OpKind::Neg, {offset}, offset->type);
  std::vector<ir::Value*> vs = {detail::value_of(p.as_tensor(), "ptr_add", loc), offset};
  detail::broadcast_all(vs, "ptr_add", loc);
  return wrap(builder_at(loc).create_value(OpKind::PtrAdd, {vs[0], vs[1]}, vs[0]->type));
}

tensor compare(OpKind kind, const Operand& a, const Operand& b) {
  if (is_pointer(a) && is_pointer(b)) {
    const Here& loc = a.loc();
    std::vector<ir::Value*> vs = {a.as_tensor().value(), b.as_tensor().value()};
    if (vs[0]->type.dtype != vs[1]->type.dtype)
      user_error(loc, ir::op_name(kind),
                 "cannot compare pointers to different dtypes (" + vs[0]->type.str() + " and " +
                     vs[1]->type.str() + ")");
    detail::broadcast_all(vs, ir::op_name(kind), loc);
    Type result = Type::tile(DType::i1, vs[0]->type.shape);
    return wrap(builder_at(loc).create_value(kind, {vs[0], vs[1]}, result));
  }
  if (is_pointer(a) || is_pointer(b))
    user_error(a.loc(), ir::op_name(kind), "cannot compare a pointer with a number");
  return binary(kind, a, b);
}

tensor unary(OpKind kind, const Operand& x, Operands allowed, const Here& loc) {
  std::string_view name = ir::op_name(kind);
  ir::Value* v = detail::value_of(x, name, loc);
  if (v->type.is_ptr) user_error(loc, name, "operand is a pointer (" + v->type.str() + ")");
  if (allowed == Operands::Float && !ir::is_float(v->type.dtype))
    user_error(
        loc, name,
        "expects a float operand, got " + v->type.str() + "; convert it with .to(tl::float32)");
  if (allowed == Operands::Integer && ir::is_float(v->type.dtype))
    user_error(loc, name, "expects an integer operand, got " + v->type.str());
  return wrap(builder_at(loc).create_value(kind, {v}, v->type));
}

void reject_pointers(const Operand& a, const Operand& b, std::string_view name) {
  if (is_pointer(a) || is_pointer(b))
    user_error(a.loc(), name, "pointers support only + and - with integer offsets");
}

/// A two-operand math function: promoted and broadcast as `+`, float operands only.
tensor math2(OpKind kind, const Operand& a, const Operand& b, const Here& loc) {
  std::string_view name = ir::op_name(kind);
  Operand la = a.is_tensor() ? Operand(a.as_tensor(), loc) : a;
  reject_pointers(la, b, name);
  DType dtype = detail::computation_dtype(la, b, name, loc);
  if (!ir::is_float(dtype))
    user_error(loc, name,
               "expects float operands, got " + std::string(ir::dtype_name(dtype)) +
                   "; convert them with .to(tl::float32)");
  return binary(kind, la, b);
}

tensor min_max(OpKind kind, const Operand& a, const Operand& b, PropagateNan nan, const Here& loc) {
  reject_pointers(a, b, ir::op_name(kind));
  Operand la(a.is_tensor() ? Operand(a.as_tensor(), loc) : a);
  tensor r = binary(kind, la, b);
  // The rule concerns floats only: integer min/max keep the IR's plain form.
  if (nan == PropagateNan::None && ir::is_float(r.value()->type.dtype))
    r.value()->def->set_attr(attr::kNan, std::string("ignore"));
  return r;
}

}  // namespace

tensor operator+(const Operand& a, const Operand& b) {
  if (is_pointer(a) || is_pointer(b)) return pointer_arith(a, b, false);
  return binary(OpKind::Add, a, b);
}
tensor operator-(const Operand& a, const Operand& b) {
  if (is_pointer(a) || is_pointer(b)) return pointer_arith(a, b, true);
  return binary(OpKind::Sub, a, b);
}
tensor operator*(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "mul");
  return binary(OpKind::Mul, a, b);
}
tensor operator/(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "div");
  return binary(OpKind::Div, a, b);
}
tensor operator%(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "rem");
  return binary(OpKind::Rem, a, b);
}
tensor operator&(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "and");
  return binary(OpKind::And, a, b, Operands::Integer);
}
tensor operator|(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "or");
  return binary(OpKind::Or, a, b, Operands::Integer);
}
tensor operator^(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "xor");
  return binary(OpKind::Xor, a, b, Operands::Integer);
}
tensor operator<<(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "shl");
  return binary(OpKind::Shl, a, b, Operands::Integer);
}
tensor operator>>(const Operand& a, const Operand& b) {
  reject_pointers(a, b, "shr");
  return binary(OpKind::Shr, a, b, Operands::Integer);
}
tensor operator<(const Operand& a, const Operand& b) {
  return compare(OpKind::CmpLt, a, b);
}
tensor operator<=(const Operand& a, const Operand& b) {
  return compare(OpKind::CmpLe, a, b);
}
tensor operator>(const Operand& a, const Operand& b) {
  return compare(OpKind::CmpGt, a, b);
}
tensor operator>=(const Operand& a, const Operand& b) {
  return compare(OpKind::CmpGe, a, b);
}
tensor operator==(const Operand& a, const Operand& b) {
  return compare(OpKind::CmpEq, a, b);
}
tensor operator!=(const Operand& a, const Operand& b) {
  return compare(OpKind::CmpNe, a, b);
}

tensor operator-(const Operand& a) {
  return unary(OpKind::Neg, a, Operands::Any, a.loc());
}
tensor operator~(const Operand& a) {
  return unary(OpKind::Not, a, Operands::Integer, a.loc());
}
tensor operator!(const Operand& a) {
  ir::Value* v = detail::value_of(a, "not", a.loc());
  if (v->type.dtype == DType::i1 && !v->type.is_ptr)
    return unary(OpKind::Not, a, Operands::Integer, a.loc());
  return a == 0;
}

tensor operator!(const tensor& a) {
  // No source location reaches a unary operator on a tensor: use its definition's.
  Here loc = Here::current();
  return !Operand(a, loc);
}

tensor& tensor::operator+=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) + rhs;
}
tensor& tensor::operator-=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) - rhs;
}
tensor& tensor::operator*=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) * rhs;
}
tensor& tensor::operator/=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) / rhs;
}
tensor& tensor::operator%=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) % rhs;
}
tensor& tensor::operator&=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) & rhs;
}
tensor& tensor::operator|=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) | rhs;
}
tensor& tensor::operator^=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) ^ rhs;
}
tensor& tensor::operator<<=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) << rhs;
}
tensor& tensor::operator>>=(const Operand& rhs) {
  return *this = Operand(*this, rhs.loc()) >> rhs;
}

const ir::Type& tensor::type() const {
  TESSERA_CHECK(value_, "type() of an empty tl::tensor");
  check_trace(nullptr);
  return value_->type;
}

tensor tensor::to(DType dtype, Here loc) const {
  return wrap(detail::cast_to(detail::value_of(*this, "cast", loc), dtype, loc));
}

tensor tensor::bitcast(DType dtype, Here loc) const {
  ir::Value* v = detail::value_of(*this, "bitcast", loc);
  if (v->type.is_ptr)
    user_error(loc, "bitcast", "cannot bitcast a pointer (" + v->type.str() + ")");
  if (ir::dtype_bits(v->type.dtype) != ir::dtype_bits(dtype))
    user_error(loc, "bitcast",
               "bit widths differ: " + std::string(ir::dtype_name(v->type.dtype)) + " has " +
                   std::to_string(ir::dtype_bits(v->type.dtype)) + " bits, " +
                   std::string(ir::dtype_name(dtype)) + " has " +
                   std::to_string(ir::dtype_bits(dtype)));
  if (v->type.dtype == dtype) return *this;
  return wrap(builder_at(loc).create_value(OpKind::Bitcast, {v}, v->type.with_dtype(dtype)));
}

tensor where(const Operand& cond, const Operand& a, const Operand& b, Here loc) {
  ir::Value* c = detail::value_of(cond, "where", loc);
  if (c->type.is_ptr || c->type.dtype != DType::i1)
    user_error(loc, "where", "the condition must be i1 (a comparison), got " + c->type.str());
  bool pa = is_pointer(a), pb = is_pointer(b);
  std::vector<ir::Value*> vs;
  if (pa || pb) {
    if (!(pa && pb) || a.as_tensor().dtype() != b.as_tensor().dtype())
      user_error(loc, "where", "both branches must be pointers of one dtype");
    vs = {c, a.as_tensor().value(), b.as_tensor().value()};
  } else {
    DType dtype = detail::computation_dtype(a, b, "where", loc);
    vs = {c, detail::materialize(a, dtype, "where", loc),
          detail::materialize(b, dtype, "where", loc)};
  }
  detail::broadcast_all(vs, "where", loc);
  return wrap(builder_at(loc).create_value(OpKind::Where, vs, vs[1]->type));
}

tensor minimum(const Operand& a, const Operand& b, PropagateNan nan, Here loc) {
  return min_max(OpKind::Min, a, b, nan, loc);
}
tensor maximum(const Operand& a, const Operand& b, PropagateNan nan, Here loc) {
  return min_max(OpKind::Max, a, b, nan, loc);
}
tensor clamp(const Operand& x, const Operand& lo, const Operand& hi, PropagateNan nan, Here loc) {
  return minimum(maximum(x, lo, nan, loc), hi, nan, loc);
}

tensor fdiv(const Operand& a, const Operand& b, Here loc) {
  return truediv(a, b, loc);
}

tensor truediv(const Operand& a, const Operand& b, Here loc) {
  reject_pointers(a, b, "div");
  DType dtype = detail::computation_dtype(a, b, "div", loc);
  if (!ir::is_float(dtype)) dtype = DType::f32;
  return Operand(wrap(detail::materialize(a, dtype, "div", loc)), loc) /
         Operand(wrap(detail::materialize(b, dtype, "div", loc)), loc);
}

tensor cdiv(const Operand& a, const Operand& b, Here loc) {
  // Library code passes `loc` explicitly: an operator here would record this file's line.
  Operand la = a.is_tensor() ? Operand(a.as_tensor(), loc) : a;
  tensor sum = la + b;
  tensor biased = Operand(sum, loc) - Operand(1, loc);
  return Operand(biased, loc) / b;
}

tensor fma(const Operand& a, const Operand& b, const Operand& c, Here loc) {
  DType dtype = detail::promote(detail::computation_dtype(a, b, "fma", loc),
                                detail::computation_dtype(b, c, "fma", loc));
  if (!ir::is_float(dtype))
    user_error(loc, "fma", "expects float operands, got " + std::string(ir::dtype_name(dtype)));
  std::vector<ir::Value*> vs = {detail::materialize(a, dtype, "fma", loc),
                                detail::materialize(b, dtype, "fma", loc),
                                detail::materialize(c, dtype, "fma", loc)};
  detail::broadcast_all(vs, "fma", loc);
  return wrap(builder_at(loc).create_value(OpKind::Fma, vs, vs[0]->type));
}

tensor exp(const Operand& x, Here loc) {
  return unary(OpKind::Exp, x, Operands::Float, loc);
}
tensor exp2(const Operand& x, Here loc) {
  return unary(OpKind::Exp2, x, Operands::Float, loc);
}
tensor log(const Operand& x, Here loc) {
  return unary(OpKind::Log, x, Operands::Float, loc);
}
tensor log2(const Operand& x, Here loc) {
  return unary(OpKind::Log2, x, Operands::Float, loc);
}
tensor sqrt(const Operand& x, Here loc) {
  return unary(OpKind::Sqrt, x, Operands::Float, loc);
}
tensor rsqrt(const Operand& x, Here loc) {
  return unary(OpKind::Rsqrt, x, Operands::Float, loc);
}
tensor sin(const Operand& x, Here loc) {
  return unary(OpKind::Sin, x, Operands::Float, loc);
}
tensor cos(const Operand& x, Here loc) {
  return unary(OpKind::Cos, x, Operands::Float, loc);
}
tensor tanh(const Operand& x, Here loc) {
  return unary(OpKind::Tanh, x, Operands::Float, loc);
}
tensor erf(const Operand& x, Here loc) {
  return unary(OpKind::Erf, x, Operands::Float, loc);
}
tensor log1p(const Operand& x, Here loc) {
  return unary(OpKind::Log1p, x, Operands::Float, loc);
}
tensor expm1(const Operand& x, Here loc) {
  return unary(OpKind::Expm1, x, Operands::Float, loc);
}
tensor log10(const Operand& x, Here loc) {
  return unary(OpKind::Log10, x, Operands::Float, loc);
}
tensor sinh(const Operand& x, Here loc) {
  return unary(OpKind::Sinh, x, Operands::Float, loc);
}
tensor cosh(const Operand& x, Here loc) {
  return unary(OpKind::Cosh, x, Operands::Float, loc);
}
tensor asin(const Operand& x, Here loc) {
  return unary(OpKind::Asin, x, Operands::Float, loc);
}
tensor acos(const Operand& x, Here loc) {
  return unary(OpKind::Acos, x, Operands::Float, loc);
}
tensor atan(const Operand& x, Here loc) {
  return unary(OpKind::Atan, x, Operands::Float, loc);
}
tensor cbrt(const Operand& x, Here loc) {
  return unary(OpKind::Cbrt, x, Operands::Float, loc);
}
tensor erfinv(const Operand& x, Here loc) {
  return unary(OpKind::Erfinv, x, Operands::Float, loc);
}
tensor pow(const Operand& a, const Operand& b, Here loc) {
  return math2(OpKind::Pow, a, b, loc);
}
tensor atan2(const Operand& a, const Operand& b, Here loc) {
  return math2(OpKind::Atan2, a, b, loc);
}
tensor hypot(const Operand& a, const Operand& b, Here loc) {
  return math2(OpKind::Hypot, a, b, loc);
}
tensor floor(const Operand& x, Here loc) {
  return unary(OpKind::Floor, x, Operands::Float, loc);
}
tensor ceil(const Operand& x, Here loc) {
  return unary(OpKind::Ceil, x, Operands::Float, loc);
}
tensor abs(const Operand& x, Here loc) {
  return unary(OpKind::Abs, x, Operands::Any, loc);
}
tensor sigmoid(const Operand& x, Here loc) {
  tensor v = unary(OpKind::Neg, x, Operands::Float, loc);
  return fdiv(1.0f, Operand(1.0f, loc) + exp(v, loc), loc);
}

}  // namespace tessera::tl
