/// \file The fuzzer's generator, part 2: the program's frame (parameters, index tiles, masked
/// loads, stores of results), dot, and the region ops `for`, `if` and `while` carrying values.
#include <cmath>

#include "core/ir/verifier.h"
#include "core/support/error.h"
#include "tools/fuzz_builder.h"

namespace tessera::tools::fuzz {
namespace detail {

void Gen::emit_ops(int n, int depth) {
  for (int i = 0; i < n; ++i) keep(emit_one(depth));
}

Value* Gen::emit_one(int depth) {
  const int64_t r = uniform(0, 99);
  if (depth < 2 && r < 7) {
    switch (uniform(0, 2)) {
      case 0:
        return emit_for(depth);
      case 1:
        return emit_if(depth);
      default:
        return emit_while(depth);
    }
  }
  if (r < 25) return emit_arith();
  if (r < 32) return emit_divrem();
  if (r < 42) return emit_bitwise();
  if (r < 52) return emit_compare_where();
  if (r < 64) return emit_unary();
  if (r < 74) return emit_cast();
  if (r < 82) return emit_reduce();
  if (r < 87) return emit_scan();
  if (r < 94) return emit_layout();
  return emit_dot();
}

Value* Gen::emit_dot() {
  Value* x = find([](Value* v) {
    return v->type.rank() == 2 && v->type.shape[0] <= 64 && v->type.shape[1] <= 64;
  });
  std::vector<DType> ins;
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8})
    if (std::find(o_.dtypes.begin(), o_.dtypes.end(), t) != o_.dtypes.end()) ins.push_back(t);
  if (!x || ins.empty()) return nullptr;
  const DType in = ins[uniform(0, ins.size() - 1)];
  DType acc = in == DType::i8 ? DType::i32 : in == DType::f64 ? DType::f64 : DType::f32;
  if (in == DType::f16 && chance(30)) acc = DType::f16;
  const int64_t m = x->type.shape[0], k = x->type.shape[1];
  Value* a = convert(x, in);           // [m, k]
  Value* y = convert(partner(x), in);  // [m, k]
  Value* bt = make(OpKind::Permute, {y}, Type::tile(in, {k, m}),
                   {{attr::kOrder, std::vector<int64_t>{1, 0}}});
  Value* c =
      chance(50) ? constant(Type::tile(acc, {m, m}), 0) : random_constant(Type::tile(acc, {m, m}));
  std::vector<ir::Attribute> attrs;
  if (in == DType::f32)
    attrs.push_back({attr::kPrecision, std::string(chance(50) ? "tf32" : "ieee")});
  return make(OpKind::Dot, {a, bt, c}, Type::tile(acc, {m, m}), attrs);
}

std::vector<Value*> Gen::open_region(ir::Region* r, const std::vector<Value*>& args,
                                     const std::vector<Type>& types, int depth) {
  b_.set_insertion_end(r);
  pools_.push_back(args);
  emit_ops(static_cast<int>(uniform(1, 4)), depth + 1);
  std::vector<Value*> ys;
  for (const Type& t : types) {
    Value* y = nullptr;
    for (auto it = pools_.back().rbegin(); it != pools_.back().rend() && !y; ++it)
      if ((*it)->type == t && chance(70)) y = *it;  // prefer this region's own values
    if (!y) y = find([&](Value* v) { return v->type == t; });
    ys.push_back(y ? y : random_constant(t));
  }
  return ys;
}

void Gen::close_region(ir::Region* outer, OpKind terminator, const std::vector<Value*>& operands) {
  b_.create(terminator, operands, {});
  pools_.pop_back();
  b_.set_insertion_end(outer);
}

std::vector<Value*> Gen::carried_values() {
  std::vector<Value*> vs;
  for (int64_t i = 0, n = uniform(1, 2); i < n; ++i)
    vs.push_back(find([](Value*) { return true; }));
  return vs;
}

Value* Gen::emit_for(int depth) {
  ir::Region* outer = b_.region();
  const std::vector<Value*> inits = carried_values();
  const int64_t trips = uniform(0, 3), form = uniform(0, 3);
  const DType bt = form == 3 ? DType::i64 : DType::i32;
  const Type t = Type::scalar(bt);
  Value *lb, *ub, *step = b_.constant_int(t, form == 1 ? -1 : 1);
  switch (form) {
    case 1:
      lb = b_.constant_int(t, trips), ub = b_.constant_int(t, 0);
      break;
    case 2:
      lb = b_.constant_int(t, 0), ub = make(OpKind::And, {n_, b_.constant_int(t, 3)}, t);
      break;  // n & 3
    case 3:
      lb = b_.constant_int(t, int64_t{1} << 33),
      ub = b_.constant_int(t, (int64_t{1} << 33) + trips);
      break;
    default:
      lb = b_.constant_int(t, 0), ub = b_.constant_int(t, trips);
      break;
  }
  std::vector<Value*> operands = {lb, ub, step};
  std::vector<Type> types;
  for (Value* v : inits) operands.push_back(v), types.push_back(v->type);
  ir::Op* op = b_.create(OpKind::For, operands, types);
  ir::Region* body = b_.add_region(op);
  std::vector<Value*> args = {module_->add_arg(body, t)};
  for (Value* v : inits) args.push_back(module_->add_arg(body, v->type));
  if (bt != DType::i32)
    args.erase(args.begin());  // an i64 induction variable stays out of the pool
  close_region(outer, OpKind::Yield, open_region(body, args, types, depth));
  for (size_t i = 1; i < op->results.size(); ++i) keep(op->result(i));
  return op->result(0);
}

Value* Gen::emit_if(int depth) {
  ir::Region* outer = b_.region();
  Value* s =
      find([&](Value* v) { return !v->type.is_tile() && (o_.exact || is_i(v->type.dtype)); });
  static const OpKind kCmp[] = {OpKind::CmpLt, OpKind::CmpEq, OpKind::CmpGe, OpKind::CmpNe};
  Value* cond = s;
  if (s->type.dtype != DType::i1) {  // the kind, then the constant: one draw per statement
    const OpKind k = kCmp[uniform(0, 3)];
    Value* c = random_constant(s->type);
    cond = make(k, {s, c}, Type::scalar(DType::i1));
  }
  std::vector<Type> types;
  for (Value* v : carried_values()) types.push_back(v->type);
  ir::Op* op = b_.create(OpKind::If, {cond}, types);
  ir::Region* then_r = b_.add_region(op);
  ir::Region* else_r = b_.add_region(op);
  close_region(outer, OpKind::Yield, open_region(then_r, {}, types, depth));
  close_region(outer, OpKind::Yield, open_region(else_r, {}, types, depth));
  for (size_t i = 1; i < op->results.size(); ++i) keep(op->result(i));
  return op->result(0);
}

Value* Gen::emit_while(int depth) {
  ir::Region* outer = b_.region();
  Value* v = find([](Value*) { return true; });
  const Type i32 = Type::scalar(DType::i32);
  ir::Op* op = b_.create(OpKind::While, {b_.constant_int(i32, 0), v}, {i32, v->type});
  ir::Region* before = b_.add_region(op);
  Value* cb = module_->add_arg(before, i32);
  Value* vb = module_->add_arg(before, v->type);
  b_.set_insertion_end(before);
  pools_.push_back({vb});
  Value* cond =
      make(OpKind::CmpLt, {cb, b_.constant_int(i32, uniform(0, 3))}, Type::scalar(DType::i1));
  close_region(outer, OpKind::Condition, {cond, cb, vb});
  ir::Region* after = b_.add_region(op);
  Value* ca = module_->add_arg(after, i32);
  Value* va = module_->add_arg(after, v->type);
  std::vector<Value*> ys = open_region(after, {va}, {v->type}, depth);
  Value* next = make(OpKind::Add, {ca, b_.constant_int(i32, 1)}, i32);
  close_region(outer, OpKind::Yield, {next, ys[0]});
  return op->result(1);
}

Value* Gen::add_param(const std::string& name, Type t, ParamSpec spec) {
  Value* v = module_->add_arg(fn_->body, std::move(t));
  fn_->params.push_back(ir::Param{name, v, {}});
  prog_.params.push_back(spec);
  return v;
}

void Gen::store_results() {
  const std::vector<Value*>& top = pools_.front();
  for (int64_t i = 0, n = uniform(1, 4); i < n; ++i) {
    Value* v = top[uniform(std::max<int64_t>(0, top.size() - 8), top.size() - 1)];
    const Shape& s = v->type.shape;
    const size_t count = prog_.grid * static_cast<size_t>(ir::num_elements(s));
    Value* out = add_param("out" + std::to_string(i), Type::pointer(v->type.dtype),
                           {ParamSpec::Kind::Output, v->type.dtype, count});
    Value* offs = offsets(s);
    Value* ptr = make(OpKind::PtrAdd, {splat(out, s), offs}, out->type.with_shape(s));
    if (s == shape_ && chance(50))
      b_.create(OpKind::Store, {ptr, v, mask_}, {});
    else
      b_.create(OpKind::Store, {ptr, v}, {});
  }
}

Program Gen::run() {
  fn_ = module_->add_function("fuzz_kernel");
  b_.set_insertion_end(fn_->body);
  pools_.emplace_back();
  if (chance(40))
    shape_ = {dim(static_cast<int>(uniform(0, 7)))};
  else
    shape_ = {dim(static_cast<int>(uniform(0, 4))), dim(static_cast<int>(uniform(0, 4)))};
  prog_.grid = static_cast<uint32_t>(uniform(1, 3));
  const int64_t numel = ir::num_elements(shape_), tail = chance(30) ? 0 : uniform(0, 999);
  prog_.n = static_cast<int32_t>(prog_.grid * numel - tail * numel / 1000);
  std::vector<Value*> inputs;
  for (int64_t i = 0, k = uniform(1, 3); i < k; ++i) {
    const DType t = any_dtype();
    inputs.push_back(
        add_param("in" + std::to_string(i), Type::pointer(t),
                  {ParamSpec::Kind::Input, t, prog_.grid * static_cast<size_t>(numel)}));
  }
  n_ = add_param("n", Type::scalar(DType::i32), {ParamSpec::Kind::Count, DType::i32, 0});
  pid_ = make(OpKind::ProgramId, {}, Type::scalar(DType::i32), {{attr::kAxis, int64_t{0}}});
  Value* offs = offsets(shape_);
  mask_ = make(OpKind::CmpLt, {offs, splat(n_, shape_)}, offs->type.with_dtype(DType::i1));
  for (Value* v : {pid_, n_, offs}) keep(v);
  for (Value* in : inputs) {
    Value* ptr = make(OpKind::PtrAdd, {splat(in, shape_), offs}, in->type.with_shape(shape_));
    const Type t = Type::tile(in->type.dtype, shape_);
    keep(chance(70) ? make(OpKind::Load, {ptr, mask_, random_constant(t)}, t)
                    : make(OpKind::Load, {ptr}, t));
  }
  emit_ops(o_.ops, 0);
  store_results();
  prog_.module = std::move(module_);
  return std::move(prog_);
}

}  // namespace detail

Program generate(uint64_t seed, const GenOptions& options) {
  TESSERA_CHECK(!options.dtypes.empty(), "fuzz: no dtypes to generate");
  Program p = detail::Gen(seed, options).run();
  std::vector<std::string> errors = ir::verify_all(*p.module);
  TESSERA_CHECK(errors.empty(), "fuzz: program ", seed, " does not verify: ", errors.front());
  return p;
}

}  // namespace tessera::tools::fuzz
