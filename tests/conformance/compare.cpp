/// \file Comparisons `== != < <= > >=`: floats with NaN, infinities and signed zeros (ordered
/// compares are false on NaN, != is true), integers of every dtype with C-style promotion of
/// mixed signedness, int-float mixes, and comparisons of pointer tiles.
#include <cmath>

#include "tests/conformance/framework.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };
constexpr Cmp kCmps[] = {Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge};
const char* cmp_name(Cmp c) {
  constexpr const char* kNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return kNames[static_cast<int>(c)];
}

tl::tensor apply(Cmp c, const tl::Operand& a, const tl::Operand& b) {
  switch (c) {
    case Cmp::Eq:
      return a == b;
    case Cmp::Ne:
      return a != b;
    case Cmp::Lt:
      return a < b;
    case Cmp::Le:
      return a <= b;
    case Cmp::Gt:
      return a > b;
    case Cmp::Ge:
      return a >= b;
  }
  return a == b;
}

template <class T>
bool reference(Cmp c, T a, T b) {
  switch (c) {
    case Cmp::Eq:
      return a == b;
    case Cmp::Ne:
      return a != b;  // true on NaN, as in C
    case Cmp::Lt:
      return a < b;
    case Cmp::Le:
      return a <= b;
    case Cmp::Gt:
      return a > b;
    case Cmp::Ge:
      return a >= b;
  }
  return false;
}

void cmp_kernel(tl::pointer x, tl::pointer y, tl::ptr<bool> out, tl::i32 n, Cmp OP, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto r = apply(OP, tl::load(x + offs, m), tl::load(y + offs, m));
  expect_dtype(r, DType::i1, "a comparison");
  tl::store(out + offs, r, m);
}

void ptr_cmp_kernel(tl::ptr<float> base, tl::ptr<int32_t> idx, tl::ptr<bool> out, Cmp OP,
                    int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto p = base + tl::load(idx + offs);
  auto q = base + (BLOCK / 2);
  tl::store(out + offs, apply(OP, p, q));
}

/// Values for comparisons: many equal pairs, NaN, infinities and signed zeros for floats.
void make_inputs(Context& ctx, DType ta, DType tb, int n, HostArray& a, HostArray& b) {
  const bool ints = !ir::is_float(ta) && !ir::is_float(tb);
  a = ints ? ctx.random_full(ta, n) : ctx.random(ta, n, -4, 4);
  b = ints ? ctx.random_full(tb, n) : ctx.random(tb, n, -4, 4);
  for (int i = 0; i < n; i += 3) b.set_bits(i, ref::convert_bits(a, i, tb));  // equal values
  if (ir::is_float(ta) && ir::is_float(tb)) {
    const double sa[] = {NAN, 1.0, NAN, INFINITY, -INFINITY, 0.0, -0.0, INFINITY, -1.0};
    const double sb[] = {1.0, NAN, NAN, INFINITY, INFINITY, -0.0, 0.0, 1e30, -INFINITY};
    for (int i = 0; i < 9 && i < n; ++i) a.set_f(i, sa[i]), b.set_f(i, sb[i]);
  }
  if (ta == DType::i64 && tb == DType::f32) {  // 2^24 + 1 becomes 2^24 in f32 before comparing
    a.set_int(1, 16777217);
    b.set_f(1, 16777216.0);
  }
}

void run_pair(Context& ctx, Cmp c, DType ta, DType tb) {
  auto k = TESSERA_KERNEL(cmp_kernel, x, y, out, n, OP, BLOCK);
  const int n = 120;
  HostArray a, b;
  make_inputs(ctx, ta, tb, n, a, b);
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(DType::i1, n);
  k[{cdiv(n, 64)}](da.buf, db.buf, o.buf, n, c, 64);
  const DType r = ref::promote(ta, tb);
  HostArray ca = ref::convert(a, r), cb = ref::convert(b, r);
  std::vector<int64_t> want;
  for (int i = 0; i < n; ++i) {
    if (ir::is_float(r))
      want.push_back(reference(c, ca.f(i), cb.f(i)));
    else if (ir::is_signed_int(r))
      want.push_back(reference(c, ca.i(i), cb.i(i)));
    else
      want.push_back(reference(c, ca.u(i), cb.u(i)));
  }
  ctx.check_ints(dname(ta) + " " + cmp_name(c) + " " + dname(tb), ctx.download(o), want);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"compare/" + std::move(name), std::move(needs), "", std::move(body)});
}

}  // namespace

void register_compare(std::vector<Case>& out) {
  for (Cmp c : kCmps) {
    add(out, std::string(cmp_name(c)) + "/float", needs_of({DType::f16, DType::bf16, DType::f64}),
        [c](Context& ctx) {
          for (DType t : kFloatDTypes) run_pair(ctx, c, t, t);
          run_pair(ctx, c, DType::f16, DType::bf16);  // both go to f32
          run_pair(ctx, c, DType::f32, DType::f64);
        });
    add(out, std::string(cmp_name(c)) + "/int", needs_of({DType::i8, DType::i16, DType::i64}),
        [c](Context& ctx) {
          for (DType t : kIntDTypes) run_pair(ctx, c, t, t);
          run_pair(ctx, c, DType::i1, DType::i1);
          // Mixed signedness: i32 with u32 compares as u32 (so -1 > 1), i64 with u32 as i64.
          const std::pair<DType, DType> mixed[] = {{DType::i32, DType::u32},
                                                   {DType::i8, DType::u8},
                                                   {DType::i64, DType::u32},
                                                   {DType::u16, DType::i8},
                                                   {DType::u64, DType::i64}};
          for (auto [a, b] : mixed) run_pair(ctx, c, a, b);
        });
  }
  add(out, "int_float_mixed", needs_of({DType::i8, DType::f16, DType::i64}), [](Context& ctx) {
    for (Cmp c : kCmps) {
      run_pair(ctx, c, DType::i32, DType::f32);
      run_pair(ctx, c, DType::f16, DType::i8);
      run_pair(ctx, c, DType::u8, DType::bf16);
      run_pair(ctx, c, DType::i64, DType::f32);  // 2^24 + 1 rounds before comparing
    }
  });
  add(out, "pointers", {}, [](Context& ctx) {
    auto k = TESSERA_KERNEL(ptr_cmp_kernel, base, idx, out, OP, BLOCK);
    const int BLOCK = 32;
    HostArray idx(DType::i32, BLOCK);
    for (int i = 0; i < BLOCK; ++i) idx.set_int(i, ctx.uniform_int(0, BLOCK - 1));
    DevArray base = ctx.poisoned(DType::f32, BLOCK), di = ctx.upload(idx);
    for (Cmp c : kCmps) {
      DevArray o = ctx.poisoned(DType::i1, BLOCK);
      k[{1}](base.buf, di.buf, o.buf, c, BLOCK);
      std::vector<int64_t> want;
      for (int i = 0; i < BLOCK; ++i) want.push_back(reference(c, idx.i(i), int64_t{BLOCK / 2}));
      ctx.check_ints(std::string("ptr ") + cmp_name(c), ctx.download(o), want);
    }
  });
}

}  // namespace tessera::conformance
