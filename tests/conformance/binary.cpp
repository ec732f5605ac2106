/// \file Binary arithmetic `+ - * / %` for every pair of numeric dtypes with Triton's promotion
/// (checked on the traced result, since a store would convert silently), strongly typed scalar
/// operands, weakly typed literals, and broadcasting of either side.
#include <cmath>

#include "tests/conformance/framework.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

using tl::_;
using tl::None;

enum class BinOp { Add, Sub, Mul, Div, Rem };
constexpr BinOp kOps[] = {BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem};
const char* op_name(BinOp op) {
  constexpr const char* kNames[] = {"add", "sub", "mul", "div", "rem"};
  return kNames[static_cast<int>(op)];
}

tl::tensor apply(BinOp op, const tl::Operand& a, const tl::Operand& b) {
  switch (op) {
    case BinOp::Add:
      return a + b;
    case BinOp::Sub:
      return a - b;
    case BinOp::Mul:
      return a * b;
    case BinOp::Div:
      return a / b;
    case BinOp::Rem:
      return a % b;
  }
  return a + b;
}

void binary_kernel(tl::pointer x, tl::pointer y, tl::pointer out, tl::i32 n, BinOp OP,
                   tl::DType EXPECT, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto r = apply(OP, tl::load(x + offs, m), tl::load(y + offs, m));
  expect_dtype(r, EXPECT, "promotion of the tile operands");
  tl::store(out + offs, r, m);
}

void scalar_rhs_kernel(tl::pointer x, tl::scalar s, tl::pointer out, tl::i32 n, BinOp OP,
                       tl::DType EXPECT, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto r = apply(OP, tl::load(x + offs, m), s);
  expect_dtype(r, EXPECT, "promotion with a scalar operand");
  tl::store(out + offs, r, m);
}

void literal_kernel(tl::pointer x, tl::pointer out, tl::i32 n, BinOp OP, bool FLOAT_LIT,
                    tl::DType EXPECT, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  auto r = FLOAT_LIT ? apply(OP, a, 0.75f) : apply(OP, a, 3);
  expect_dtype(r, EXPECT, "promotion with a literal");
  tl::store(out + offs, r, m);
}

void broadcast_kernel(tl::pointer x, tl::pointer y, tl::pointer out, BinOp OP, bool ROW, int M,
                      int N) {
  auto rows = tl::arange(0, M);
  auto cols = tl::arange(0, N);
  auto a = tl::load(x + rows[{_, None}]);                                   // [M, 1]
  tl::tensor b = ROW ? tl::load(y + cols[{None, _}]) : tl::load(y + cols);  // [1, N] or [N]
  auto r = apply(OP, a, b);
  tl::store(out + rows[{_, None}] * N + cols[{None, _}], r);
}

/// The expected value of `a op b` computed in dtype r (operands already converted to r).
struct Expected {
  bool is_int;
  int64_t i;
  double f;
};

Expected compute(BinOp op, DType r, const HostArray& ca, const HostArray& cb, size_t i) {
  if (!ir::is_float(r)) {
    const uint64_t x = static_cast<uint64_t>(ca.i(i)), y = static_cast<uint64_t>(cb.i(i));
    const bool s = ir::is_signed_int(r);
    uint64_t v = 0;
    switch (op) {
      case BinOp::Add:
        v = x + y;
        break;
      case BinOp::Sub:
        v = x - y;
        break;
      case BinOp::Mul:
        v = x * y;
        break;
      case BinOp::Div:
        v = s ? static_cast<uint64_t>(ca.i(i) / cb.i(i)) : ca.u(i) / cb.u(i);
        break;
      case BinOp::Rem:
        v = s ? static_cast<uint64_t>(ca.i(i) % cb.i(i)) : ca.u(i) % cb.u(i);
        break;
    }
    return {true, ref::wrap(r, v), 0};
  }
  const double x = ca.f(i), y = cb.f(i);
  double v = 0;
  switch (op) {
    case BinOp::Add:
      v = x + y;
      break;
    case BinOp::Sub:
      v = x - y;
      break;
    case BinOp::Mul:
      v = x * y;
      break;
    case BinOp::Div:
      v = x / y;
      break;
    case BinOp::Rem:
      v = std::fmod(x, y);
      break;
  }
  return {false, 0, v};
}

Tol float_tol(BinOp op, DType r) {
  if (op == BinOp::Div) return tol::division(r);
  if (op == BinOp::Rem) return tol::remainder(r);
  return tol::arith(r);
}

/// Random operands for `op` in dtypes (ta, tb): full-range integers when the computation is in
/// integers, small ones when they are converted to a float; divisors that are zero (or -1 under
/// MIN) after promotion are replaced by 1, since those quotients are undefined.
void make_operands(Context& ctx, BinOp op, DType ta, DType tb, size_t n, HostArray& a,
                   HostArray& b) {
  const DType r = ref::promote(ta, tb);
  auto gen = [&](DType t) {
    if (ir::is_float(t)) return ctx.random_full(t, n, ir::is_float(r) && r != t ? 4 : 6);
    if (ir::is_float(r)) return ctx.random(t, n, -1000, 1000);
    return ctx.random_full(t, n);
  };
  a = gen(ta);
  b = gen(tb);
  if ((op == BinOp::Div || op == BinOp::Rem) && !ir::is_float(r)) {
    for (size_t i = 0; i < n; i += 2) b.set_int(i, ctx.uniform_int(-9, 9));  // small divisors too
    HostArray ca = ref::convert(a, r), cb = ref::convert(b, r);
    for (size_t i = 0; i < n; ++i)
      if (cb.i(i) == 0 || (ir::is_signed_int(r) && cb.i(i) == -1 && ca.i(i) == ref::int_min(r)))
        b.set_int(i, 1);
  }
  if (ir::is_float(ta) && ir::is_float(tb) && n >= 8) {  // IEEE special values
    const double inf = INFINITY;
    const double sa[] = {0.0, -0.0, inf, NAN, 1.0, -inf, 2.0, -0.0};
    const double sb[] = {3.0, 2.0, 5.0, 1.0, NAN, -inf, -0.0, inf};
    const bool no_inf = op == BinOp::Rem;  // x - trunc(x / y) * y is how GPUs do fmod
    for (size_t i = 0; i < 8; ++i) {
      a.set_f(i, no_inf && std::isinf(sa[i]) ? 7.0 : sa[i]);
      b.set_f(i, no_inf && std::isinf(sb[i]) ? 3.0 : sb[i]);
    }
  }
}

/// Compares an output in dtype r against `a op b` element by element.
void check_result(Context& ctx, const std::string& what, BinOp op, const HostArray& a,
                  const HostArray& b, const HostArray& got) {
  const DType r = got.dtype();
  HostArray ca = ref::convert(a, r), cb = ref::convert(b, r);
  if (!ir::is_float(r)) {
    std::vector<int64_t> want;
    for (size_t i = 0; i < got.size(); ++i) want.push_back(compute(op, r, ca, cb, i).i);
    return ctx.check_ints(what, got, want);
  }
  std::vector<double> want, scale;
  for (size_t i = 0; i < got.size(); ++i) {
    want.push_back(compute(op, r, ca, cb, i).f);
    scale.push_back(op == BinOp::Rem ? std::fabs(ca.f(i)) : std::fabs(want.back()));
  }
  ctx.check_close(what, got, want, float_tol(op, r), &scale);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"binary/" + std::move(name), std::move(needs), "", std::move(body)});
}

std::vector<Need> all_numeric_needs() {
  return needs_of({DType::i8, DType::i16, DType::i64, DType::f16, DType::bf16, DType::f64});
}

void register_pairs(std::vector<Case>& out) {
  for (BinOp op : kOps) {
    for (DType ta : kNumericDTypes) {
      add(out, std::string(op_name(op)) + "/" + dname(ta), all_numeric_needs(),
          [op, ta](Context& ctx) {
            auto k = TESSERA_KERNEL(binary_kernel, x, y, out, n, OP, EXPECT, BLOCK);
            const int n = static_cast<int>(ctx.uniform_int(130, 300));
            for (DType tb : kNumericDTypes) {
              const DType r = ref::promote(ta, tb);
              HostArray a, b;
              make_operands(ctx, op, ta, tb, n, a, b);
              DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(r, n);
              k[{cdiv(n, 64)}](da.buf, db.buf, o.buf, n, op, r, 64);
              check_result(ctx, dname(ta) + " " + op_name(op) + " " + dname(tb) + " -> " + dname(r),
                           op, a, b, ctx.download(o));
            }
          });
    }
  }
}

void run_scalar_rhs(Context& ctx, BinOp op) {
  auto k = TESSERA_KERNEL(scalar_rhs_kernel, x, s, out, n, OP, EXPECT, BLOCK);
  const int n = 77;
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::f32},   {DType::i32, DType::i64},
                                           {DType::u8, DType::i32},    {DType::f16, DType::f32},
                                           {DType::i16, DType::f64},   {DType::u32, DType::i32},
                                           {DType::bf16, DType::bf16}, {DType::i64, DType::u16}};
  for (auto [ta, ts] : pairs) {
    const DType r = ref::promote(ta, ts);
    HostArray a, s;
    make_operands(ctx, op, ta, ts, n, a, s);
    HostArray b(ts, n);  // the scalar, repeated, for the reference
    for (int i = 0; i < n; ++i) b.set_bits(i, s.bits(n - 1));
    DevArray da = ctx.upload(a), o = ctx.poisoned(r, n);
    with_ctype(ts, [&](auto tag) {
      k[{cdiv(n, 32)}](da.buf, host_value<decltype(tag)>(s, n - 1), o.buf, n, op, r, 32);
    });
    check_result(ctx, dname(ta) + " " + op_name(op) + " scalar " + dname(ts), op, a, b,
                 ctx.download(o));
  }
}

void run_literal(Context& ctx, BinOp op, bool float_lit) {
  auto k = TESSERA_KERNEL(literal_kernel, x, out, n, OP, FLOAT_LIT, EXPECT, BLOCK);
  const int n = 100;
  for (DType ta : kNumericDTypes) {
    // Literals are weakly typed: the tensor's dtype wins, except that a float literal with an
    // integer tensor computes in f32.
    const DType r = float_lit && !ir::is_float(ta) ? DType::f32 : ta;
    const DType lit_t = float_lit ? r : ta;
    HostArray a = ir::is_float(r) ? ctx.random_full(ta, n, 4) : ctx.random_full(ta, n);
    if (!ir::is_float(ta) && ir::is_float(r)) a = ctx.random(ta, n, -1000, 1000);
    HostArray b(lit_t, n);
    for (int i = 0; i < n; ++i) b.set_f(i, float_lit ? 0.75 : 3.0);
    DevArray da = ctx.upload(a), o = ctx.poisoned(r, n);
    k[{cdiv(n, 64)}](da.buf, o.buf, n, op, float_lit, r, 64);
    check_result(ctx, dname(ta) + " " + op_name(op) + (float_lit ? " 0.75" : " 3"), op, a, b,
                 ctx.download(o));
  }
}

void run_broadcast(Context& ctx, BinOp op) {
  auto k = TESSERA_KERNEL(broadcast_kernel, x, y, out, OP, ROW, M, N);
  const int M = 16, N = 8;
  for (DType t : {DType::f32, DType::i32, DType::f16, DType::u8}) {
    for (bool row : {true, false}) {
      HostArray x, yfull;
      make_operands(ctx, op, t, t, M, x, yfull);
      HostArray y(t, N);
      for (int j = 0; j < N; ++j) y.set_bits(j, yfull.bits(j));
      if (op == BinOp::Div || op == BinOp::Rem)  // keep integer divisors nonzero
        for (int j = 0; j < N; ++j)
          if (!ir::is_float(t) && y.i(j) == 0) y.set_int(j, 5);
      DevArray dx = ctx.upload(x), dy = ctx.upload(y), o = ctx.poisoned(t, M * N);
      k[{1}](dx.buf, dy.buf, o.buf, op, row, M, N);
      HostArray a(t, M * N), b(t, M * N);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
          a.set_bits(i * N + j, x.bits(i)), b.set_bits(i * N + j, y.bits(j));
      check_result(ctx, dname(t) + (row ? " [M,1] op [1,N]" : " [M,1] op [N]"), op, a, b,
                   ctx.download(o));
    }
  }
}

void register_variants(std::vector<Case>& out) {
  for (BinOp op : kOps) {
    const std::string name = op_name(op);
    add(out, "scalar_rhs/" + name, all_numeric_needs(),
        [op](Context& ctx) { run_scalar_rhs(ctx, op); });
    add(out, "literal_int/" + name, all_numeric_needs(),
        [op](Context& ctx) { run_literal(ctx, op, false); });
    add(out, "literal_float/" + name, all_numeric_needs(),
        [op](Context& ctx) { run_literal(ctx, op, true); });
    add(out, "broadcast/" + name, needs_of({DType::i8, DType::f16}),
        [op](Context& ctx) { run_broadcast(ctx, op); });
  }
}

}  // namespace

void register_binary(std::vector<Case>& out) {
  register_pairs(out);
  register_variants(out);
}

}  // namespace tessera::conformance
