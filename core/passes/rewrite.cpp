/// \file Constant values and in-place IR edits shared by the tile-IR passes.
#include "core/passes/rewrite.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/support/error.h"
#include "core/support/float16.h"
#include "core/support/float8.h"

namespace tessera::passes {

using ir::DType;

int64_t wrap_int(DType dtype, uint64_t bits) {
  const int width = ir::dtype_bits(dtype);
  if (width >= 64) return static_cast<int64_t>(bits);
  const uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  // i1 is 0 or 1 (i1 -> int casts give 0/1), whatever the table says about its sign.
  if (dtype == DType::i1 || ir::is_unsigned_int(dtype)) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

double round_float(DType dtype, double x) {
  switch (dtype) {
    case DType::f16:
      return f16_to_double(f16_from_double(x));
    case DType::bf16:
      return bf16_to_double(bf16_from_double(x));
    case DType::f8e4m3:
      return f8e4m3_to_double(f8e4m3_from_double(x));
    case DType::f8e5m2:
      return f8e5m2_to_double(f8e5m2_from_double(x));
    case DType::f32:
      return static_cast<double>(static_cast<float>(x));
    default:
      return x;
  }
}

Scalar Scalar::from_bits(DType dtype, uint64_t bits) {
  TESSERA_CHECK(ir::is_int(dtype), "Scalar::from_bits needs an integer dtype");
  return Scalar{dtype, wrap_int(dtype, bits), 0.0};
}

Scalar Scalar::from_double(DType dtype, double x) {
  TESSERA_CHECK(ir::is_float(dtype), "Scalar::from_double needs a float dtype");
  return Scalar{dtype, 0, round_float(dtype, x)};
}

bool same_bits(const Scalar& a, const Scalar& b) {
  if (a.dtype != b.dtype) return false;
  if (a.is_float()) return std::bit_cast<uint64_t>(a.f) == std::bit_cast<uint64_t>(b.f);
  return a.i == b.i;
}

std::optional<Scalar> constant_value(const ir::Value* v) {
  if (!v || !v->def || v->def->kind != ir::OpKind::Constant || v->type.is_ptr) return std::nullopt;
  const ir::AttrValue* attr = v->def->find_attr(attr::kValue);
  if (!attr) return std::nullopt;
  const DType dtype = v->type.dtype;
  if (const auto* i = std::get_if<int64_t>(attr)) {
    if (!ir::is_float(dtype)) return Scalar::from_bits(dtype, static_cast<uint64_t>(*i));
    // An integer value for a float dtype: past 2^53 the conversion to double could round
    // before the dtype rounds again, so such constants are left uninterpreted.
    if (dtype != DType::f64 && (*i >= (int64_t{1} << 53) || *i <= -(int64_t{1} << 53)))
      return std::nullopt;
    return Scalar::from_double(dtype, static_cast<double>(*i));
  }
  if (const auto* d = std::get_if<double>(attr)) {
    if (!ir::is_float(dtype)) return std::nullopt;
    return Scalar::from_double(dtype, *d);
  }
  return std::nullopt;
}

bool is_zero(const ir::Value* v) {
  auto c = constant_value(v);
  if (!c) return false;
  return c->is_float() ? c->f == 0.0 : c->i == 0;
}

bool is_one(const ir::Value* v) {
  auto c = constant_value(v);
  if (!c) return false;
  return c->is_float() ? c->f == 1.0 : c->i == 1;
}

bool is_all_ones(const ir::Value* v) {
  auto c = constant_value(v);
  if (!c || c->is_float()) return false;
  return c->i == wrap_int(c->dtype, ~uint64_t{0});
}

bool is_float_bits(const ir::Value* v, double x) {
  auto c = constant_value(v);
  return c && c->is_float() && std::bit_cast<uint64_t>(c->f) == std::bit_cast<uint64_t>(x);
}

void make_constant_in_place(ir::Op* op, const Scalar& s) {
  TESSERA_CHECK(op->regions.empty() && op->results.size() == 1,
                "only a one-result op without regions becomes a constant");
  TESSERA_CHECK(op->result()->type.dtype == s.dtype, "constant of dtype ", ir::dtype_name(s.dtype),
                " for a result of type ", op->result()->type.str());
  op->kind = ir::OpKind::Constant;
  op->operands.clear();
  op->attrs.clear();
  // Integer dtypes store an int64 attribute, float dtypes a double.
  op->set_attr(attr::kValue, s.is_float() ? ir::AttrValue(s.f) : ir::AttrValue(s.i));
}

ir::Region* function_body(const ir::Op* op) {
  ir::Region* region = op->parent;
  TESSERA_CHECK(region, "op '", op->name(), "' is not in a region");
  while (region->parent) {
    region = region->parent->parent;
    TESSERA_CHECK(region, "an op with regions is not in a region");
  }
  return region;
}

void replace_uses(const ir::Op* op, ir::Value* from, ir::Value* to) {
  ir::replace_all_uses(function_body(op), from, to);
}

void replace_op(ir::Op* op, ir::Value* to) {
  TESSERA_CHECK(op->results.size() == 1, "replace_op needs a one-result op");
  TESSERA_CHECK(op->result()->type == to->type, "replacing a ", op->result()->type.str(), " by a ",
                to->type.str());
  replace_uses(op, op->result(), to);
  erase_op(op);
}

void erase_op(ir::Op* op) {
  ir::Region* region = op->parent;
  TESSERA_CHECK(region, "erasing an op that is not in a region");
  auto it = std::find(region->ops.begin(), region->ops.end(), op);
  TESSERA_CHECK(it != region->ops.end(), "op not found in its parent region");
  region->ops.erase(it);
  op->parent = nullptr;
}

std::vector<ir::Op*> collect_ops(ir::Region* region) {
  std::vector<ir::Op*> ops;
  ir::walk(region, [&](ir::Op* op) { ops.push_back(op); });
  return ops;
}

int count_uses_of(const ir::Op* op, const ir::Value* v) {
  int n = 0;
  ir::walk(function_body(op), [&](ir::Op* user) {
    n += static_cast<int>(std::count(user->operands.begin(), user->operands.end(), v));
  });
  return n;
}

namespace {

template <class T>
void filter(std::vector<T>& items, const std::vector<bool>& keep) {
  TESSERA_CHECK(keep.size() == items.size(), "filter: ", keep.size(), " flags for ", items.size(),
                " items");
  size_t out = 0;
  for (size_t i = 0; i < items.size(); ++i)
    if (keep[i]) items[out++] = items[i];
  items.resize(out);
}

void renumber(std::vector<ir::Value*>& values) {
  for (size_t i = 0; i < values.size(); ++i) values[i]->index = static_cast<uint32_t>(i);
}

}  // namespace

void filter_operands(ir::Op* op, const std::vector<bool>& keep) {
  filter(op->operands, keep);
}

void filter_results(ir::Op* op, const std::vector<bool>& keep) {
  filter(op->results, keep);
  renumber(op->results);
}

void filter_args(ir::Region* region, const std::vector<bool>& keep) {
  filter(region->args, keep);
  renumber(region->args);
}

}  // namespace tessera::passes
