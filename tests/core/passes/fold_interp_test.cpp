/// \file Folding against the interpreter, op kind by op kind from ops.def: for every elementwise
/// kind that folding evaluates, every dtype the verifier accepts and edge-case operands (wrapping
/// integers, MIN / -1, division by zero, shift counts at the width, -0.0, inf, NaN, subnormals,
/// narrow-float rounding), the interpreter's stored result has the same bits before and after
/// fold_constants (any NaN matches any NaN), and an op is left unfolded exactly where ops.h calls
/// its result undefined.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/interp/evaluate.h"
#include "core/interp/interpreter.h"
#include "core/ir/abi.h"
#include "core/ir/op_table.h"
#include "core/ir/printer.h"
#include "core/passes/fold.h"
#include "pass_test_util.h"

namespace tessera::test {
namespace {

constexpr DType kAll[] = {DType::i1,   DType::i8,  DType::i16, DType::i32,    DType::i64,
                          DType::u8,   DType::u16, DType::u32, DType::u64,    DType::f16,
                          DType::bf16, DType::f32, DType::f64, DType::f8e4m3, DType::f8e5m2};

class OneBuffer : public interp::MemoryMap {
 public:
  OneBuffer(const void* p, size_t bytes) : begin_(reinterpret_cast<uint64_t>(p)), bytes_(bytes) {}
  bool contains(uint64_t address, uint64_t bytes) const override {
    return address >= begin_ && bytes <= bytes_ && address - begin_ <= bytes_ - bytes;
  }

 private:
  uint64_t begin_;
  uint64_t bytes_;
};

/// Edge-case operand values of `t`, as constants of `t` hold them (rounded, duplicates dropped).
std::vector<passes::Scalar> values(DType t) {
  std::vector<passes::Scalar> out;
  auto add = [&](passes::Scalar s) {
    for (const passes::Scalar& o : out)
      if (passes::same_bits(o, s) || (std::isnan(o.f) && std::isnan(s.f) && ir::is_float(t)))
        return;
    out.push_back(s);
  };
  if (ir::is_float(t)) {
    const double inf = std::numeric_limits<double>::infinity();
    for (double v :
         {0.0,        -0.0,   1.0,     -1.0,         0.5,     0.1,   3.0,         -7.25, 2.5,
          65504.0,    448.0,  57344.0, 1e-5,         0x1p-20, 1e-40, 1e30,        1e10,  2049.0,
          16777217.0, 0x1p62, -0x1p63, 4294967296.0, inf,     -inf,  std::nan("")})
      add(passes::Scalar::from_double(t, v));
    return out;
  }
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  const int64_t max64 = std::numeric_limits<int64_t>::max();
  const int bits = ir::dtype_bits(t);
  const int64_t min = bits == 64 ? min64 : -(int64_t{1} << (bits - 1));
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{2}, int64_t{7}, int64_t{-7},
                    int64_t{bits - 1}, int64_t{bits}, int64_t{100}, int64_t{255}, int64_t{256},
                    int64_t{-32768}, int64_t{2147483647}, min, min + 1, max64, min64})
    add(passes::Scalar::from_bits(t, static_cast<uint64_t>(v)));
  return out;
}

/// Whether `bits` are a NaN of dtype `t`.
bool is_nan_bits(DType t, uint64_t bits) {
  if (!ir::is_float(t)) return false;
  interp::RuntimeValue v = interp::int_scalar(DType::u64, static_cast<int64_t>(bits));
  v.dtype = t;
  v.bytes.resize(static_cast<size_t>(ir::dtype_bytes(t)));
  return std::isnan(interp::float_element(v));
}

/// The bits of a constant's value in its dtype.
uint64_t value_bits(const passes::Scalar& s) {
  const interp::RuntimeValue v =
      s.is_float() ? interp::float_scalar(s.dtype, s.f) : interp::int_scalar(s.dtype, s.i);
  uint64_t bits = 0;
  std::memcpy(&bits, v.raw(), v.bytes.size());
  return bits;
}

/// ops.h's undefined cases, written from its text (not from the folding code).
bool undefined_by_ops_h(OpKind kind, const std::vector<passes::Scalar>& a, DType to) {
  const DType t = a[0].dtype;
  const bool is_signed = ir::is_signed_int(t) && t != DType::i1;
  const int bits = ir::dtype_bits(t);
  switch (kind) {
    case OpKind::Div:
    case OpKind::Rem:
      if (ir::is_float(t)) return false;
      if (a[1].i == 0) return true;  // by zero
      return is_signed && a[1].i == -1 &&
             a[0].i == (bits == 64 ? std::numeric_limits<int64_t>::min()
                                   : -(int64_t{1} << (bits - 1)));  // overflows
    case OpKind::Shl:
    case OpKind::Shr: {  // a count >= the bit width (a negative count is a huge one)
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      return (a[1].bits() & mask) >= static_cast<uint64_t>(bits);
    }
    case OpKind::Cast: {  // float -> integer of NaN or out of range
      if (!ir::is_float(t) || ir::is_float(to) || to == DType::i1) return false;
      const double x = std::trunc(a[0].f);
      const int w = ir::dtype_bits(to);
      const bool s = ir::is_signed_int(to);
      return !(x >= (s ? -std::ldexp(1.0, w - 1) : 0.0) && x < std::ldexp(1.0, s ? w - 1 : w));
    }
    case OpKind::Bitcast:  // a NaN's payload is not kept by a constant
      return is_nan_bits(t, value_bits(a[0])) || is_nan_bits(to, value_bits(a[0]));
    default:
      return false;
  }
}

/// One (kind, operand dtype, result dtype) family of cases in one kernel: each case's operands
/// are constants, its result is stored to its own slot of the output buffer.
struct Family {
  OpKind kind;
  DType operand;
  DType result;
  std::vector<ir::Attribute> attrs;

  std::string name() const {
    std::ostringstream os;
    os << ir::op_name(kind) << " " << ir::dtype_name(operand) << " -> " << ir::dtype_name(result);
    for (const ir::Attribute& a : attrs) os << " {" << a.name << "}";
    return os.str();
  }
  /// The operand dtypes of the kind (where's condition is i1).
  std::vector<DType> operand_types() const {
    const int n = ir::op_info(kind).min_operands;
    std::vector<DType> types(n, operand);
    if (kind == OpKind::Where) types[0] = DType::i1;
    return types;
  }
};

struct Case {
  std::vector<passes::Scalar> args;
  Value* result;
};

/// Every operand tuple of `f` over values(): all pairs for binary kinds, a reduced cube for the
/// ternary ones.
std::vector<std::vector<passes::Scalar>> tuples(const Family& f) {
  const std::vector<DType> types = f.operand_types();
  std::vector<std::vector<passes::Scalar>> out = {{}};
  for (size_t i = 0; i < types.size(); ++i) {
    std::vector<passes::Scalar> vs = values(types[i]);
    if (types.size() == 3 && vs.size() > 9) vs.resize(9);  // 9^3 fma or where cases
    std::vector<std::vector<passes::Scalar>> next;
    for (const auto& prefix : out)
      for (const passes::Scalar& v : vs) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    out = std::move(next);
  }
  return out;
}

Value* constant(Kernel& k, const passes::Scalar& s) {
  return s.is_float() ? k.cfloat(scalar(s.dtype), s.f) : k.cint(scalar(s.dtype), s.i);
}

/// Whether the verifier accepts `f` (one op of it, in a kernel of its own).
bool accepted(const Family& f) {
  Kernel k;
  std::vector<Value*> operands;
  for (DType t : f.operand_types()) operands.push_back(constant(k, values(t)[0]));
  k.op(f.kind, operands, scalar(f.result), f.attrs);
  return ir::verify_all(k.m).empty();
}

/// The output buffer of one interpreter run of `fn` with `slots` results of `dtype`.
std::vector<uint8_t> run(const ir::Function& fn, DType dtype, size_t slots) {
  std::vector<uint8_t> out(slots * ir::dtype_bytes(dtype), 0xAB);
  OneBuffer memory(out.data(), out.size());
  std::vector<std::byte> block(ir::param_layout(fn).size);
  const uint64_t address = reinterpret_cast<uint64_t>(out.data());
  std::memcpy(block.data() + ir::param_layout(fn).slots[0].offset, &address, 8);
  interp::run(fn, block, {}, memory);
  return out;
}

/// Counts of one family's cases.
struct Counts {
  int cases = 0;
  int folded = 0;
};

Counts check_family(const Family& f) {
  Kernel k;
  Value* out = k.param(Type::pointer(f.result), "out");
  std::vector<Case> cases;
  for (const auto& args : tuples(f)) {
    std::vector<Value*> operands;
    for (const passes::Scalar& s : args) operands.push_back(constant(k, s));
    Value* r = k.op(f.kind, operands, scalar(f.result), f.attrs);
    Value* at =
        k.op(OpKind::PtrAdd, {out, k.cint(scalar(DType::i32), int64_t(cases.size()))}, out->type);
    k.b.create(OpKind::Store, {at, r}, {});
    cases.push_back({args, r});
  }
  k.verify();
  const std::vector<uint8_t> before = run(*k.fn, f.result, cases.size());
  passes::fold_constants(k.m);
  k.verify();
  const std::vector<uint8_t> after = run(*k.fn, f.result, cases.size());
  Counts counts;
  const int bytes = ir::dtype_bytes(f.result);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::ostringstream what;
    what << f.name() << " of";
    for (const passes::Scalar& s : c.args) {
      if (s.is_float())
        what << " " << s.f;
      else
        what << " " << s.i;
    }
    INFO(what.str());
    const bool folded = is_op(c.result, OpKind::Constant);
    CHECK(folded != undefined_by_ops_h(f.kind, c.args, f.result));
    uint64_t x = 0, y = 0;
    std::memcpy(&x, before.data() + i * bytes, bytes);
    std::memcpy(&y, after.data() + i * bytes, bytes);
    if (x != y && !(is_nan_bits(f.result, x) && is_nan_bits(f.result, y))) {
      INFO("interpreted " << x << ", folded to " << y);
      CHECK(x == y);
    }
    ++counts.cases;
    counts.folded += folded;
  }
  return counts;
}

/// The families of `kind`: each dtype as operand (and, for casts, each result dtype), both NaN
/// rules for float min and max; only those the verifier accepts.
std::vector<Family> families(OpKind kind) {
  std::vector<Family> out;
  for (DType t : kAll) {
    std::vector<DType> results;
    if (kind == OpKind::Cast || kind == OpKind::Bitcast)
      results.assign(std::begin(kAll), std::end(kAll));
    else
      results.push_back(ir::has_trait(kind, ir::kCompare) ? DType::i1 : t);
    for (DType r : results) {
      Family f{kind, t, r, {}};
      if (!accepted(f)) continue;
      out.push_back(f);
      if ((kind == OpKind::Min || kind == OpKind::Max) && ir::is_float(t))
        out.push_back({kind, t, r, {{"nan", std::string("ignore")}}});
    }
  }
  return out;
}

TEST_CASE("fold: every elementwise kind folds to the interpreter's bits, undefined cases stay") {
  const std::vector<OpKind> kinds = ir::kinds_where(interp::evaluates);
  // Every kElementwise row but ptr_add is evaluated (the table, not a hand-kept list).
  CHECK(kinds.size() == ir::kinds_where([](OpKind k) {
                          return ir::has_trait(k, ir::kElementwise) && k != OpKind::PtrAdd;
                        }).size());
  int total = 0, total_folded = 0;
  for (OpKind kind : kinds) {
    const std::vector<Family> fs = families(kind);
    INFO(ir::op_name(kind));
    CHECK_FALSE(fs.empty());  // some dtype of every kind is checked
    int folded = 0;
    for (const Family& f : fs) {
      const Counts c = check_family(f);
      total += c.cases;
      folded += c.folded;
    }
    CHECK(folded > 0);
    total_folded += folded;
  }
  MESSAGE(total << " cases of " << kinds.size() << " op kinds, " << total_folded << " folded");
}

}  // namespace
}  // namespace tessera::test
