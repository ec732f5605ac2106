// \file Structured control flow: for loops (i32/i64 bounds, negative steps, empty ranges,
// bounds at the type's limits, step 0), if with and without results, while loops, nesting and
// loop-carried tiles (the row-sum kernel).
#include <cstdint>
#include <limits>

#include "tests/core/interp/helpers.h"

using namespace interp_test;

namespace {

/// for iv in [lb, ub) step st: sum += iv; count += 1. Returns {sum, count} as i64.
template <class I>
std::pair<int64_t, int64_t> loop(DType dtype, I lb, I ub, I step) {
  Kernel k;
  const Type t = Type::scalar(dtype);
  Value* lo = k.param(t);
  Value* hi = k.param(t);
  Value* st = k.param(t);
  Value* out = k.ptr_param(DType::i64);
  Value* zero = k.cint(Type::scalar(DType::i64), 0);
  Op* f = k.region_op(
      OpKind::For, {lo, hi, st, zero, zero}, {zero->type, zero->type}, {}, 1, [&](int, Region* r) {
        Value* iv = k.arg(r, t);
        Value* sum = k.arg(r, zero->type);
        Value* count = k.arg(r, zero->type);
        Value* wide = dtype == DType::i64 ? iv : k.cast(iv, DType::i64);
        k.yield({k.bin(OpKind::Add, sum, wide), k.bin(OpKind::Add, count, k.cint(zero->type, 1))});
      });
  k.store(out, f->result(0));
  k.store(k.ptr_add(out, k.i32(1)), f->result(1));
  std::vector<int64_t> res(2, -1);
  HostMemory mem;
  run(k, mem, Grid{}, lb, ub, step, mem.add(res));
  return {res[0], res[1]};
}

}  // namespace

TEST_CASE("interp for: positive and negative steps, empty ranges") {
  CHECK(loop<int32_t>(DType::i32, 0, 10, 1) == std::pair<int64_t, int64_t>{45, 10});
  CHECK(loop<int32_t>(DType::i32, 0, 10, 3) == std::pair<int64_t, int64_t>{0 + 3 + 6 + 9, 4});
  CHECK(loop<int32_t>(DType::i32, 10, 0, -3) == std::pair<int64_t, int64_t>{10 + 7 + 4 + 1, 4});
  CHECK(loop<int32_t>(DType::i32, -2, -9, -2) == std::pair<int64_t, int64_t>{-2 - 4 - 6 - 8, 4});
  CHECK(loop<int32_t>(DType::i32, 5, 5, 1) == std::pair<int64_t, int64_t>{0, 0});
  CHECK(loop<int32_t>(DType::i32, 0, 10, -1) == std::pair<int64_t, int64_t>{0, 0});
  CHECK(loop<int32_t>(DType::i32, 10, 0, 1) == std::pair<int64_t, int64_t>{0, 0});
}

TEST_CASE("interp for: i64 bounds beyond 2^31 and bounds at the limits do not overflow") {
  const int64_t base = int64_t{1} << 32;
  CHECK(loop<int64_t>(DType::i64, base, base + 10, 3) ==
        std::pair<int64_t, int64_t>{4 * base + 0 + 3 + 6 + 9, 4});
  const int32_t imax = std::numeric_limits<int32_t>::max();
  CHECK(loop<int32_t>(DType::i32, imax - 5, imax, 4) ==
        std::pair<int64_t, int64_t>{int64_t{imax - 5} + (imax - 1), 2});
  const int32_t imin = std::numeric_limits<int32_t>::min();
  CHECK(loop<int32_t>(DType::i32, imin + 3, imin, -2) ==
        std::pair<int64_t, int64_t>{int64_t{imin + 3} + (imin + 1), 2});
  const int64_t lmax = std::numeric_limits<int64_t>::max();
  CHECK(loop<int64_t>(DType::i64, lmax - 10, lmax, 7).second == 2);
  CHECK(loop<int64_t>(DType::i64, -base, base, base).second == 2);
}

TEST_CASE("interp for: step 0 is a DeviceFault") {
  Kernel k("spin");
  Value* step = k.param(Type::scalar(DType::i32));
  k.set_line(42);
  k.region_op(OpKind::For, {k.i32(0), k.i32(4), step}, {}, {}, 1, [&](int, Region* r) {
    k.arg(r, Type::scalar(DType::i32));
    k.yield({});
  });
  HostMemory mem;
  CHECK(error_of([&] { run(k, mem, Grid{2}, int32_t{0}); }) ==
        "for loop with step 0 in kernel 'spin' at kernel.cpp:42, program (0, 0, 0)");
}

TEST_CASE("interp for: a loop-carried tile accumulator with a tail mask (row sum)") {
  // out[row] = sum(x[row, :n]) in tiles of BLOCK = 32, n = 100.
  const int32_t n = 100, rows = 3;
  Kernel k("row_sum");
  Value* x = k.ptr_param(DType::f32);
  Value* out = k.ptr_param(DType::f32);
  Value* len = k.param(Type::scalar(DType::i32));
  Value* row = k.pid(0);
  Value* zeros = k.cfloat(Type::tile(DType::f32, {32}), 0.0);
  Op* f = k.region_op(
      OpKind::For, {k.i32(0), len, k.i32(32), zeros}, {zeros->type}, {}, 1, [&](int, Region* r) {
        Value* start = k.arg(r, Type::scalar(DType::i32));
        Value* acc = k.arg(r, zeros->type);
        Value* cols = k.bin(OpKind::Add, k.splat(start, {32}), k.arange(0, 32));
        Value* mask = k.bin(OpKind::CmpLt, cols, k.splat(len, {32}));
        Value* offs = k.bin(OpKind::Add, k.splat(k.bin(OpKind::Mul, row, len), {32}), cols);
        Value* v = k.load(k.ptr_add(x, offs), mask, zeros);
        k.yield({k.bin(OpKind::Add, acc, v)});
      });
  Value* total = k.op(OpKind::Reduce, {f->result(0)}, Type::scalar(DType::f32),
                      {{"axis", int64_t{0}}, {"kind", std::string("sum")}});
  k.store(k.ptr_add(out, row), total);
  std::vector<float> xs(n * rows), res(rows, -1.0f);
  for (int i = 0; i < n * rows; ++i) xs[i] = static_cast<float>(i % 7);
  HostMemory mem;
  run(k, mem, Grid{rows}, mem.add(xs), mem.add(res), n);
  for (int r = 0; r < rows; ++r) {
    float ref = 0;
    for (int c = 0; c < n; ++c) ref += xs[r * n + c];  // small integers: exact in any order
    CHECK(res[r] == ref);
  }
}

TEST_CASE("interp if: results from the taken region, a store only in one branch") {
  Kernel k;
  Value* out = k.ptr_param(DType::i32);
  Value* pid = k.pid(0);
  Value* even = k.bin(OpKind::CmpEq, k.bin(OpKind::Rem, pid, k.i32(2)), k.i32(0));
  Op* pick =
      k.region_op(OpKind::If, {even}, {Type::tile(DType::i32, {2})}, {}, 2,
                  [&](int i, Region*) { k.yield({i == 0 ? k.arange(0, 2) : k.arange(10, 12)}); });
  Value* base = k.ptr_add(out, k.bin(OpKind::Mul, pid, k.i32(2)));
  k.store_all(base, pick->result(0));
  // No results, no else: odd programs also write a marker at out[8 + pid].
  k.region_op(OpKind::If, {k.op(OpKind::Not, {even}, even->type)}, {}, {}, 2, [&](int i, Region*) {
    if (i == 0) k.store(k.ptr_add(out, k.bin(OpKind::Add, pid, k.i32(8))), pid);
    k.yield({});
  });
  std::vector<int32_t> buf(12, -1);
  HostMemory mem;
  run(k, mem, Grid{4}, mem.add(buf));
  CHECK(buf == std::vector<int32_t>{0, 1, 10, 11, 0, 1, 10, 11, -1, 1, -1, 3});
}

TEST_CASE("interp while: Collatz steps, and the results are the condition's values") {
  Kernel k;
  Value* start = k.param(Type::scalar(DType::i32));
  Value* out = k.ptr_param(DType::i32);
  const Type i32 = Type::scalar(DType::i32);
  Op* w = k.region_op(OpKind::While, {start, k.i32(0)}, {i32, i32}, {}, 2, [&](int i, Region* r) {
    Value* x = k.arg(r, i32);
    Value* steps = k.arg(r, i32);
    if (i == 0) {
      k.builder().create(OpKind::Condition, {k.bin(OpKind::CmpNe, x, k.i32(1)), x, steps}, {});
      return;
    }
    Value* even = k.bin(OpKind::CmpEq, k.bin(OpKind::And, x, k.i32(1)), k.i32(0));
    Value* half = k.bin(OpKind::Div, x, k.i32(2));
    Value* triple = k.bin(OpKind::Add, k.bin(OpKind::Mul, x, k.i32(3)), k.i32(1));
    k.yield({k.op(OpKind::Where, {even, half, triple}, i32), k.bin(OpKind::Add, steps, k.i32(1))});
  });
  k.store(out, w->result(1));
  // A second loop whose before-region passes 2*i on: the result is that value, not i.
  Op* w2 = k.region_op(OpKind::While, {k.i32(0)}, {i32}, {}, 2, [&](int i, Region* r) {
    Value* v = k.arg(r, i32);
    if (i == 0) {
      k.builder().create(OpKind::Condition,
                         {k.bin(OpKind::CmpLt, v, k.i32(100)), k.bin(OpKind::Mul, v, k.i32(2))},
                         {});
      return;
    }
    k.yield({k.bin(OpKind::Add, v, k.i32(1))});
  });
  k.store(k.ptr_add(out, k.i32(1)), w2->result(0));
  std::vector<int32_t> res(2);
  HostMemory mem;
  run(k, mem, Grid{}, int32_t{27}, mem.add(res));
  CHECK(res[0] == 111);
  CHECK(res[1] == 254);
  run(k, mem, Grid{}, int32_t{1}, mem.add(res));
  CHECK(res[0] == 0);
}

TEST_CASE("interp for: nested loops with an if inside carry values across both levels") {
  // total = sum over i < 4, j < i of (j odd ? j : 10 * j)
  Kernel k;
  Value* out = k.ptr_param(DType::i32);
  const Type i32 = Type::scalar(DType::i32);
  Op* outer = k.region_op(
      OpKind::For, {k.i32(0), k.i32(4), k.i32(1), k.i32(0)}, {i32}, {}, 1, [&](int, Region* r) {
        Value* i = k.arg(r, i32);
        Value* acc = k.arg(r, i32);
        Op* inner = k.region_op(
            OpKind::For, {k.i32(0), i, k.i32(1), acc}, {i32}, {}, 1, [&](int, Region* r2) {
              Value* j = k.arg(r2, i32);
              Value* a = k.arg(r2, i32);
              Value* odd = k.bin(OpKind::CmpEq, k.bin(OpKind::And, j, k.i32(1)), k.i32(1));
              Op* term = k.region_op(OpKind::If, {odd}, {i32}, {}, 2, [&](int b, Region*) {
                k.yield({b == 0 ? j : k.bin(OpKind::Mul, j, k.i32(10))});
              });
              k.yield({k.bin(OpKind::Add, a, term->result(0))});
            });
        k.yield({inner->result(0)});
      });
  k.store(out, outer->result(0));
  std::vector<int32_t> res(1);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(res));
  int32_t ref = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < i; ++j) ref += j % 2 ? j : 10 * j;
  CHECK(res[0] == ref);
}
