// \file reduce_generic and scan_generic: combine regions run lane-parallel (elementwise only)
// and one lane at a time (with an `if`), argmax-as-generic, Welford, non-commutative combines
// that pin down the operand order, and the documented pairwise tree.
#include <cmath>
#include <cstdint>
#include <random>

#include "tests/core/interp/helpers.h"

using namespace interp_test;

namespace {

using Combine = std::function<std::vector<Value*>(Kernel&, std::vector<Value*> left,
                                                  std::vector<Value*> right)>;

/// A reduce_generic or scan_generic of `inputs` along `axis`.
std::vector<Value*> generic(Kernel& k, OpKind kind, std::vector<Value*> inputs, int axis,
                            const Combine& combine, bool reverse = false) {
  std::vector<Type> results;
  for (Value* v : inputs) {
    Shape s = v->type.shape;
    if (kind == OpKind::ReduceGeneric) s.erase(s.begin() + axis);
    results.push_back(s.empty() ? v->type.element() : v->type.with_shape(s));
  }
  std::vector<Attribute> attrs{{"axis", int64_t{axis}}};
  if (reverse) attrs.push_back({"reverse", int64_t{1}});
  Op* op = k.region_op(kind, inputs, results, attrs, 1, [&](int, Region* r) {
    std::vector<Value*> left, right;
    for (Value* v : inputs) left.push_back(k.arg(r, v->type.element()));
    for (Value* v : inputs) right.push_back(k.arg(r, v->type.element()));
    k.yield(combine(k, left, right));
  });
  return op->results;
}

/// The combine of 2x2 integer matrices (a b; c d) as four operands: left x right.
std::vector<Value*> matmul2(Kernel& k, std::vector<Value*> l, std::vector<Value*> r) {
  auto mul = [&](Value* a, Value* b) { return k.bin(OpKind::Mul, a, b); };
  auto add = [&](Value* a, Value* b) { return k.bin(OpKind::Add, a, b); };
  return {add(mul(l[0], r[0]), mul(l[1], r[2])), add(mul(l[0], r[1]), mul(l[1], r[3])),
          add(mul(l[2], r[0]), mul(l[3], r[2])), add(mul(l[2], r[1]), mul(l[3], r[3]))};
}

using Mat = std::array<int32_t, 4>;
Mat mat_mul(const Mat& l, const Mat& r) {
  return {l[0] * r[0] + l[1] * r[2], l[0] * r[1] + l[1] * r[3], l[2] * r[0] + l[3] * r[2],
          l[2] * r[1] + l[3] * r[3]};
}

/// Loads `count` i32 tiles of `shape` from consecutive segments of one buffer, applies `body`,
/// and stores every result tile back to back.
std::vector<int32_t> run_i32(
    const std::vector<int32_t>& data, int count, Shape shape,
    const std::function<std::vector<Value*>(Kernel&, std::vector<Value*>)>& body) {
  Kernel k;
  Value* in = k.ptr_param(DType::i32);
  Value* out = k.ptr_param(DType::i32);
  const int64_t n = tessera::ir::num_elements(shape);
  std::vector<Value*> tiles;
  for (int i = 0; i < count; ++i) tiles.push_back(k.load_all(k.ptr_add(in, k.i32(i * n)), shape));
  int64_t at = 0, total = 0;
  for (Value* r : body(k, tiles)) {
    k.store_all(k.ptr_add(out, k.i32(at)), r);
    at += r->type.is_tile() ? r->type.numel() : 1;
  }
  total = at;
  std::vector<int32_t> input = data, res(static_cast<size_t>(total), -1);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(input), mem.add(res));
  return res;
}

/// An argmax combine on (value, index): the right side wins only when strictly greater.
std::vector<Value*> argmax_combine(Kernel& k, std::vector<Value*> l, std::vector<Value*> r) {
  Value* right = k.bin(OpKind::CmpGt, r[0], l[0]);
  return {k.op(OpKind::Where, {right, r[0], l[0]}, l[0]->type),
          k.op(OpKind::Where, {right, r[1], l[1]}, l[1]->type)};
}

/// A max combine written with an `if`, so the region cannot run lane-parallel.
std::vector<Value*> max_with_if(Kernel& k, std::vector<Value*> l, std::vector<Value*> r) {
  Value* gt = k.bin(OpKind::CmpGt, l[0], r[0]);
  Op* op = k.region_op(OpKind::If, {gt}, {l[0]->type}, {}, 2,
                       [&](int i, Region*) { k.yield({i == 0 ? l[0] : r[0]}); });
  return {op->result(0)};
}

}  // namespace

TEST_CASE("interp reduce_generic: argmax as a generic reduce matches the built-in, per axis") {
  std::mt19937 rng(3);
  std::vector<int32_t> data(32);
  for (auto& x : data) x = static_cast<int32_t>(rng() % 4);
  for (int axis = 0; axis < 2; ++axis) {
    const std::vector<int32_t> got = run_i32(data, 1, {4, 8}, [&](Kernel& k, auto t) {
      Value* idx = axis == 0 ? k.op(OpKind::Broadcast,
                                    {k.op(OpKind::ExpandDims, {k.arange(0, 4)},
                                          Type::tile(DType::i32, {4, 1}), {{"axis", int64_t{1}}})},
                                    Type::tile(DType::i32, {4, 8}))
                             : k.op(OpKind::Broadcast,
                                    {k.op(OpKind::ExpandDims, {k.arange(0, 8)},
                                          Type::tile(DType::i32, {1, 8}), {{"axis", int64_t{0}}})},
                                    Type::tile(DType::i32, {4, 8}));
      std::vector<Value*> r = generic(k, OpKind::ReduceGeneric, {t[0], idx}, axis, argmax_combine);
      Value* builtin = k.op(OpKind::Reduce, {t[0]}, r[1]->type,
                            {{"axis", int64_t{axis}}, {"kind", std::string("argmax")}});
      return std::vector<Value*>{r[1], builtin, r[0]};
    });
    const size_t n = axis == 0 ? 8 : 4;
    for (size_t i = 0; i < n; ++i) {
      CHECK(got[i] == got[n + i]);  // generic index == built-in index
      const int32_t idx = got[i];
      const int32_t value = axis == 0 ? data[idx * 8 + i] : data[i * 8 + idx];
      CHECK(got[2 * n + i] == value);
    }
  }
}

TEST_CASE("interp reduce_generic: the left operand is the lower-index range") {
  // 2x2 matrix products are associative but not commutative: the result is x0 x1 ... x7.
  std::mt19937 rng(5);
  std::vector<int32_t> data(4 * 8);
  for (auto& x : data) x = static_cast<int32_t>(rng() % 5) - 2;
  const std::vector<int32_t> got = run_i32(data, 4, {8}, [&](Kernel& k, auto t) {
    return generic(k, OpKind::ReduceGeneric, t, 0, matmul2);
  });
  Mat acc{data[0], data[8], data[16], data[24]};
  for (int i = 1; i < 8; ++i)
    acc = mat_mul(acc, {data[i], data[8 + i], data[16 + i], data[24 + i]});
  CHECK(got == std::vector<int32_t>(acc.begin(), acc.end()));
}

TEST_CASE("interp reduce_generic: a non-associative combine shows the pairwise tree") {
  // combine(l, r) = 10 l + r over 1 2 3 4: tree (12)(34) -> 12*10 + 34 = 154; a left fold
  // would give 1234. The one-lane-at-a-time path (an `if` in the region) agrees.
  auto combine = [](Kernel& k, std::vector<Value*> l, std::vector<Value*> r) {
    return std::vector<Value*>{k.bin(OpKind::Add, k.bin(OpKind::Mul, l[0], k.i32(10)), r[0])};
  };
  auto combine_if = [&](Kernel& k, std::vector<Value*> l, std::vector<Value*> r) {
    Value* yes = k.cint(Type::scalar(DType::i1), 1);
    Op* op = k.region_op(OpKind::If, {yes}, {l[0]->type}, {}, 2,
                         [&](int i, Region*) { k.yield(i == 0 ? combine(k, l, r) : l); });
    return std::vector<Value*>{op->result(0)};
  };
  const std::vector<int32_t> got = run_i32({1, 2, 3, 4}, 1, {4}, [&](Kernel& k, auto t) {
    return std::vector<Value*>{generic(k, OpKind::ReduceGeneric, t, 0, combine)[0],
                               generic(k, OpKind::ReduceGeneric, t, 0, combine_if)[0]};
  });
  CHECK(got == std::vector<int32_t>{154, 154});
}

TEST_CASE("interp reduce_generic: a combine with control flow runs per lane, along each axis") {
  std::mt19937 rng(11);
  std::vector<int32_t> data(2 * 4 * 8);
  for (auto& x : data) x = static_cast<int32_t>(rng() % 100) - 50;
  for (int axis = 0; axis < 3; ++axis) {
    const std::vector<int32_t> got = run_i32(data, 1, {2, 4, 8}, [&](Kernel& k, auto t) {
      Value* generic_max = generic(k, OpKind::ReduceGeneric, t, axis, max_with_if)[0];
      Value* builtin = k.op(OpKind::Reduce, {t[0]}, generic_max->type,
                            {{"axis", int64_t{axis}}, {"kind", std::string("max")}});
      return std::vector<Value*>{generic_max, builtin};
    });
    const size_t half = got.size() / 2;
    INFO("axis " << axis);
    CHECK(std::vector<int32_t>(got.begin(), got.begin() + half) ==
          std::vector<int32_t>(got.begin() + half, got.end()));
  }
}

TEST_CASE("interp reduce_generic: Welford mean and variance") {
  Kernel k;
  Value* x = k.ptr_param(DType::f32);
  Value* out = k.ptr_param(DType::f32);
  Value* mean = k.load_all(x, {64});
  Value* m2 = k.cfloat(Type::tile(DType::f32, {64}), 0.0);
  Value* count = k.cfloat(Type::tile(DType::f32, {64}), 1.0);
  auto welford = [](Kernel& k, std::vector<Value*> l, std::vector<Value*> r) {
    auto add = [&](Value* a, Value* b) { return k.bin(OpKind::Add, a, b); };
    auto mul = [&](Value* a, Value* b) { return k.bin(OpKind::Mul, a, b); };
    auto div = [&](Value* a, Value* b) { return k.bin(OpKind::Div, a, b); };
    Value* n = add(l[2], r[2]);
    Value* delta = k.bin(OpKind::Sub, r[0], l[0]);
    Value* mean = add(l[0], div(mul(delta, r[2]), n));
    Value* m2 = add(add(l[1], r[1]), div(mul(mul(delta, delta), mul(l[2], r[2])), n));
    return std::vector<Value*>{mean, m2, n};
  };
  std::vector<Value*> r = generic(k, OpKind::ReduceGeneric, {mean, m2, count}, 0, welford);
  k.store(out, r[0]);
  k.store(k.ptr_add(out, k.i32(1)), r[1]);
  k.store(k.ptr_add(out, k.i32(2)), r[2]);
  std::vector<float> xs(64), res(3);
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(3.0f, 2.0f);
  double sum = 0;
  for (auto& v : xs) sum += v = dist(rng);
  const double mu = sum / 64;
  double ss = 0;
  for (float v : xs) ss += (v - mu) * (v - mu);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(xs), mem.add(res));
  CHECK(res[0] == doctest::Approx(mu).epsilon(1e-5));
  CHECK(res[1] == doctest::Approx(ss).epsilon(1e-5));
  CHECK(res[2] == 64.0f);
}

TEST_CASE("interp reduce_generic: a size-1 axis returns the input, constant yields broadcast") {
  auto combine = [](Kernel& k, std::vector<Value*> l, std::vector<Value*>) {
    return std::vector<Value*>{l[0], k.i32(7)};
  };
  const std::vector<int32_t> got = run_i32({5, 6, 8, 9}, 2, {2, 1}, [&](Kernel& k, auto t) {
    std::vector<Value*> one = generic(k, OpKind::ReduceGeneric, t, 1, combine);  // n == 1
    std::vector<Value*> two = generic(k, OpKind::ReduceGeneric, t, 0, combine);  // n == 2
    return std::vector<Value*>{one[0], one[1], two[0], two[1]};
  });
  CHECK(got == std::vector<int32_t>{5, 6, 8, 9, 5, 7});
}

TEST_CASE("interp scan_generic: matrix products forward and reverse along each axis") {
  std::mt19937 rng(17);
  std::vector<int32_t> data(4 * 8);
  for (auto& x : data) x = static_cast<int32_t>(rng() % 3) - 1;
  // Four [2,4] tiles (one per matrix entry); scan along axis 1 (length 4) and axis 0 (length 2).
  for (int axis = 0; axis < 2; ++axis)
    for (bool reverse : {false, true}) {
      const std::vector<int32_t> got = run_i32(data, 4, {2, 4}, [&](Kernel& k, auto t) {
        return generic(k, OpKind::ScanGeneric, t, axis, matmul2, reverse);
      });
      auto mat = [&](int e) { return Mat{data[e], data[8 + e], data[16 + e], data[24 + e]}; };
      INFO("axis " << axis << (reverse ? " reverse" : ""));
      const int n = axis == 0 ? 2 : 4, lines = axis == 0 ? 4 : 2;
      for (int line = 0; line < lines; ++line) {
        auto elem = [&](int k) { return axis == 0 ? k * 4 + line : line * 4 + k; };
        Mat acc{};
        for (int step = 0; step < n; ++step) {
          const int k = reverse ? n - 1 - step : step;
          // Forward: x0 ... xk. Reverse (carry on the left): x[n-1] ... x[k].
          acc = step == 0 ? mat(elem(k)) : mat_mul(acc, mat(elem(k)));
          for (int c = 0; c < 4; ++c) CHECK(got[c * 8 + elem(k)] == acc[c]);
        }
      }
    }
}

TEST_CASE("interp scan_generic: a linear recurrence h = a h + b") {
  Kernel k;
  Value* a_ptr = k.ptr_param(DType::f32);
  Value* b_ptr = k.ptr_param(DType::f32);
  Value* out = k.ptr_param(DType::f32);
  Value* a = k.load_all(a_ptr, {16});
  Value* b = k.load_all(b_ptr, {16});
  auto recur = [](Kernel& k, std::vector<Value*> l, std::vector<Value*> r) {
    return std::vector<Value*>{k.bin(OpKind::Mul, l[0], r[0]),
                               k.bin(OpKind::Add, k.bin(OpKind::Mul, l[1], r[0]), r[1])};
  };
  k.store_all(out, generic(k, OpKind::ScanGeneric, {a, b}, 0, recur)[1]);
  std::vector<float> as(16), bs(16), res(16);
  for (int i = 0; i < 16; ++i) {
    as[i] = i % 3 == 0 ? 0.5f : 2.0f;
    bs[i] = static_cast<float>(i % 5);
  }
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(as), mem.add(bs), mem.add(res));
  float h = 0;
  for (int i = 0; i < 16; ++i) {
    h = i == 0 ? bs[0] : as[i] * h + bs[i];
    CHECK(res[i] == h);
  }
}
