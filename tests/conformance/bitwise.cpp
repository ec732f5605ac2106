/// \file Bitwise `& | ^ ~ !` on every integer dtype (and i1), mixed-dtype promotion, weakly
/// typed literals, and shifts `<< >>` per dtype with counts below the bit width (arithmetic
/// shr for signed dtypes, logical for unsigned).
#include "tests/conformance/framework.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

enum class BitOp { And, Or, Xor, Shl, Shr };
const char* op_name(BitOp op) {
  constexpr const char* kNames[] = {"and", "or", "xor", "shl", "shr"};
  return kNames[static_cast<int>(op)];
}

tl::tensor apply(BitOp op, const tl::Operand& a, const tl::Operand& b) {
  switch (op) {
    case BitOp::And:
      return a & b;
    case BitOp::Or:
      return a | b;
    case BitOp::Xor:
      return a ^ b;
    case BitOp::Shl:
      return a << b;
    case BitOp::Shr:
      return a >> b;
  }
  return a & b;
}

void bit_kernel(tl::pointer x, tl::pointer y, tl::pointer out, tl::i32 n, BitOp OP,
                tl::DType EXPECT, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto r = apply(OP, tl::load(x + offs, m), tl::load(y + offs, m));
  expect_dtype(r, EXPECT, "bitwise promotion");
  tl::store(out + offs, r, m);
}

enum class UnOp { Not, LogicalNot };

void unary_bit_kernel(tl::pointer x, tl::pointer out, tl::i32 n, UnOp OP, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  // `!a` does not compile on a tl::tensor: the deleted explicit operator bool makes the built-in
  // `!` a candidate too (ambiguous overload); reported, and called by name here.
  tl::store(out + offs, OP == UnOp::Not ? ~a : tl::operator!(a), m);
}

void literal_kernel(tl::pointer x, tl::pointer o1, tl::pointer o2, tl::pointer o3, tl::i32 n,
                    int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  auto r1 = a & 0x5A;
  auto r2 = a | 1;
  auto r3 = a ^ 0x7F;
  expect_dtype(r1, a.dtype(), "a & literal");
  expect_dtype(r3, a.dtype(), "a ^ literal");
  tl::store(o1 + offs, r1, m);
  tl::store(o2 + offs, r2, m);
  tl::store(o3 + offs, r3, m);
}

int64_t reference(BitOp op, DType r, int64_t a, int64_t b) {
  const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  const int w = ir::dtype_bits(r);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  switch (op) {
    case BitOp::And:
      return ref::wrap(r, x & y);
    case BitOp::Or:
      return ref::wrap(r, x | y);
    case BitOp::Xor:
      return ref::wrap(r, x ^ y);
    case BitOp::Shl:
      return ref::wrap(r, x << (y & 63));
    case BitOp::Shr:
      if (ir::is_signed_int(r)) return ref::wrap(r, static_cast<uint64_t>(a >> (y & 63)));
      return ref::wrap(r, (x & mask) >> (y & 63));
  }
  return 0;
}

void run_pair(Context& ctx, BitOp op, DType ta, DType tb, int n) {
  auto k = TESSERA_KERNEL(bit_kernel, x, y, out, n, OP, EXPECT, BLOCK);
  const DType r = ref::promote(ta, tb);
  HostArray a = ctx.random_full(ta, n), b = ctx.random_full(tb, n);
  if (op == BitOp::Shl || op == BitOp::Shr) {
    const int w = ir::dtype_bits(r);
    for (int i = 0; i < n; ++i) b.set_int(i, i < w ? i : ctx.uniform_int(0, w - 1));  // every count
  }
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(r, n);
  k[{cdiv(n, 64)}](da.buf, db.buf, o.buf, n, op, r, 64);
  HostArray ca = ref::convert(a, r), cb = ref::convert(b, r);
  std::vector<int64_t> want;
  for (int i = 0; i < n; ++i) want.push_back(reference(op, r, ca.i(i), cb.i(i)));
  ctx.check_ints(dname(ta) + " " + op_name(op) + " " + dname(tb), ctx.download(o), want);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"bitwise/" + std::move(name), std::move(needs), "", std::move(body)});
}

}  // namespace

namespace {

void not_case(Context& ctx) {
  auto k = TESSERA_KERNEL(unary_bit_kernel, x, out, n, OP, BLOCK);
  std::vector<DType> ts = kIntDTypes;
  ts.push_back(DType::i1);
  for (DType t : ts) {
    const int n = 99;
    HostArray a = ctx.random_full(t, n);
    DevArray da = ctx.upload(a), o = ctx.poisoned(t, n);
    k[{cdiv(n, 32)}](da.buf, o.buf, n, UnOp::Not, 32);
    std::vector<int64_t> want;
    for (int i = 0; i < n; ++i) want.push_back(ref::wrap(t, ~static_cast<uint64_t>(a.i(i))));
    ctx.check_ints("~" + dname(t), ctx.download(o), want);
  }
}

void logical_not_case(Context& ctx) {
  auto k = TESSERA_KERNEL(unary_bit_kernel, x, out, n, OP, BLOCK);
  std::vector<DType> ts = kIntDTypes;
  ts.push_back(DType::i1);
  for (DType t : ts) {
    const int n = 99;
    HostArray a = t == DType::i1 ? ctx.random_full(t, n) : ctx.random(t, n, -2, 2);  // zeros
    DevArray da = ctx.upload(a), o = ctx.poisoned(DType::i1, n);
    k[{cdiv(n, 32)}](da.buf, o.buf, n, UnOp::LogicalNot, 32);
    std::vector<int64_t> want;
    for (int i = 0; i < n; ++i) want.push_back(a.i(i) == 0 ? 1 : 0);
    ctx.check_ints("!" + dname(t), ctx.download(o), want);
  }
}

void literals_case(Context& ctx) {
  auto k = TESSERA_KERNEL(literal_kernel, x, o1, o2, o3, n, BLOCK);
  for (DType t : kIntDTypes) {
    const int n = 70;
    HostArray a = ctx.random_full(t, n);
    DevArray da = ctx.upload(a), o1 = ctx.poisoned(t, n), o2 = ctx.poisoned(t, n),
             o3 = ctx.poisoned(t, n);
    k[{cdiv(n, 32)}](da.buf, o1.buf, o2.buf, o3.buf, n, 32);
    std::vector<int64_t> w1, w2, w3;
    for (int i = 0; i < n; ++i) {
      const uint64_t x = static_cast<uint64_t>(a.i(i));
      w1.push_back(ref::wrap(t, x & 0x5A));
      w2.push_back(ref::wrap(t, x | 1));
      w3.push_back(ref::wrap(t, x ^ 0x7F));
    }
    ctx.check_ints(dname(t) + " & 0x5A", ctx.download(o1), w1);
    ctx.check_ints(dname(t) + " | 1", ctx.download(o2), w2);
    ctx.check_ints(dname(t) + " ^ 0x7F", ctx.download(o3), w3);
  }
}

}  // namespace

void register_bitwise(std::vector<Case>& out) {
  const std::vector<Need> int_needs = needs_of({DType::i8, DType::i16, DType::i64});
  for (BitOp op : {BitOp::And, BitOp::Or, BitOp::Xor}) {
    add(out, op_name(op), int_needs, [op](Context& ctx) {
      std::vector<DType> ts = kIntDTypes;
      ts.push_back(DType::i1);
      for (DType t : ts) run_pair(ctx, op, t, t, 150);
      // Mixed dtypes promote first (sign- or zero-extending the narrower operand).
      const std::pair<DType, DType> mixed[] = {{DType::i8, DType::u16},  {DType::u8, DType::i32},
                                               {DType::i32, DType::u32}, {DType::i16, DType::i64},
                                               {DType::u64, DType::i8},  {DType::i1, DType::i16}};
      for (auto [a, b] : mixed) run_pair(ctx, op, a, b, 150);
    });
  }
  for (BitOp op : {BitOp::Shl, BitOp::Shr}) {
    for (DType t : kIntDTypes) {
      add(out, std::string(op_name(op)) + "/" + dname(t), needs_of({t}),
          [op, t](Context& ctx) { run_pair(ctx, op, t, t, 200); });
    }
  }
  add(out, "not", int_needs, not_case);
  add(out, "logical_not", int_needs, logical_not_case);
  add(out, "literals", int_needs, literals_case);
}

}  // namespace tessera::conformance
