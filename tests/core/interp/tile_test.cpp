// \file Program identity, the parameter block, constants and the tile-building ops (arange,
// splat, broadcast, expand_dims, reshape, permute, cat, where, ptr_add).
#include <cstdint>
#include <numeric>

#include "core/support/float16.h"
#include "tests/core/interp/helpers.h"

using namespace interp_test;

namespace {

/// Runs a kernel that builds one tile from nothing and returns it (row-major).
template <class Out>
std::vector<Out> build(DType out, const std::function<Value*(Kernel&)>& body) {
  return eval<Out>(out, {1}, [&](Kernel& k, std::vector<Value*>) { return body(k); });
}

/// A [rows x cols] i32 tile holding 0, 1, 2, ... row-major.
Value* iota2(Kernel& k, int64_t rows, int64_t cols) {
  return k.reshape(k.arange(0, rows * cols), {rows, cols});
}

std::vector<int32_t> iota(int n, int start = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

}  // namespace

TEST_CASE("interp tile: program_id and num_programs over a 3-D grid, x fastest") {
  Kernel k;
  Value* out = k.ptr_param(DType::i32);
  Value* x = k.pid(0);
  Value* y = k.pid(1);
  Value* z = k.pid(2);
  auto nprog = [&](int axis) {
    return k.op(OpKind::NumPrograms, {}, Type::scalar(DType::i32), {{"axis", int64_t{axis}}});
  };
  // linear = x + nx * (y + ny * z); out[linear] = x*100 + y*10 + z; out[24] = nx*100+ny*10+nz
  Value* linear =
      k.bin(OpKind::Add, x,
            k.bin(OpKind::Mul, nprog(0), k.bin(OpKind::Add, y, k.bin(OpKind::Mul, nprog(1), z))));
  Value* code = k.bin(OpKind::Add, k.bin(OpKind::Mul, x, k.i32(100)),
                      k.bin(OpKind::Add, k.bin(OpKind::Mul, y, k.i32(10)), z));
  k.store(k.ptr_add(out, linear), code);
  Value* sizes = k.bin(OpKind::Add, k.bin(OpKind::Mul, nprog(0), k.i32(100)),
                       k.bin(OpKind::Add, k.bin(OpKind::Mul, nprog(1), k.i32(10)), nprog(2)));
  k.store(k.ptr_add(out, k.i32(24)), sizes);
  std::vector<int32_t> buf(25, -1);
  HostMemory mem;
  run(k, mem, Grid{4, 3, 2}, mem.add(buf));
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) CHECK(buf[x + 4 * (y + 3 * z)] == x * 100 + y * 10 + z);
  CHECK(buf[24] == 432);
}

TEST_CASE("interp tile: RunOptions selects a range of programs") {
  Kernel k;
  Value* out = k.ptr_param(DType::i32);
  k.store(k.ptr_add(out, k.pid(0)), k.i32(1));
  std::vector<int32_t> buf(8, 0);
  HostMemory mem;
  RunOptions opts;
  opts.first_program = 2;
  opts.last_program = 5;
  run_opts(k, mem, Grid{8}, opts, mem.add(buf));
  CHECK(buf == std::vector<int32_t>{0, 0, 1, 1, 1, 0, 0, 0});
}

TEST_CASE("interp tile: parameters are read from the packed block") {
  Kernel k;
  Value* flag = k.param(Type::scalar(DType::i1), "flag");
  Value* small = k.param(Type::scalar(DType::i8), "small");
  Value* big = k.param(Type::scalar(DType::i64), "big");
  Value* x = k.param(Type::scalar(DType::f32), "x");
  Value* one = k.param(Type::scalar(DType::i32), "one");
  k.fn().params.back().attrs.push_back({"equal_to", int64_t{1}});
  Value* out = k.ptr_param(DType::i64);
  Value* fout = k.ptr_param(DType::f32);
  k.store(out, k.cast(flag, DType::i64));
  k.store(k.ptr_add(out, k.i32(1)), k.cast(small, DType::i64));
  k.store(k.ptr_add(out, k.i32(2)), big);
  k.store(k.ptr_add(out, k.i32(3)), k.cast(one, DType::i64));
  k.store(fout, x);
  std::vector<int64_t> buf(4);
  std::vector<float> fbuf(1);
  HostMemory mem;
  run(k, mem, Grid{}, uint8_t{1}, int8_t{-7}, int64_t{1} << 40, 2.5f, int32_t{1}, mem.add(buf),
      mem.add(fbuf));
  CHECK(buf == std::vector<int64_t>{1, -7, int64_t{1} << 40, 1});
  CHECK(fbuf[0] == 2.5f);
  const auto layout = tessera::ir::param_layout(k.fn());
  CHECK(layout.slots[2].offset == 8);  // i64 aligned after i1, i8
  std::vector<std::byte> short_block(layout.size - 8);
  const std::string msg = error_of([&] { tessera::interp::run(k.fn(), short_block, Grid{}, mem); },
                                   tessera::ErrorKind::Argument);
  CHECK(msg.find("parameter block of 32 bytes is too small for kernel 'k'") == 0);
}

TEST_CASE("interp tile: constants of every kind") {
  CHECK(build<uint16_t>(DType::f16, [](Kernel& k) {
          return k.cfloat(Type::tile(DType::f16, {2}), 0.1);
        }) == std::vector<uint16_t>{tessera::f16_from_double(0.1), tessera::f16_from_double(0.1)});
  CHECK(build<float>(DType::f32, [](Kernel& k) {
          return k.cint(Type::tile(DType::f32, {2}), 3);
        }) == std::vector<float>{3.0f, 3.0f});
  CHECK(build<uint8_t>(DType::i1, [](Kernel& k) {
          return k.cint(Type::tile(DType::i1, {2}), 1);
        }) == std::vector<uint8_t>{1, 1});
  CHECK(build<uint16_t>(DType::bf16, [](Kernel& k) {
          return k.cint(Type::scalar(DType::bf16), 257);
        }) == std::vector<uint16_t>{0x4380});  // 257 rounds to 256 in bf16
  CHECK(build<double>(DType::f64, [](Kernel& k) {
          return k.cfloat(Type::scalar(DType::f64), 0.1);
        }) == std::vector<double>{0.1});
}

TEST_CASE("interp tile: arange, splat and size-1 tiles") {
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) { return k.arange(4, 12); }) == iota(8, 4));
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) { return k.arange(7, 8); }) ==
        std::vector<int32_t>{7});
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) { return k.splat(k.i32(-3), {2, 2}); }) ==
        std::vector<int32_t>{-3, -3, -3, -3});
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          return k.bin(OpKind::Add, k.arange(0, 1), k.splat(k.i32(41), {1}));
        }) == std::vector<int32_t>{41});
}

TEST_CASE("interp tile: broadcast and expand_dims") {
  // [1,4] -> [2,4] repeats the row; [4,1] -> [4,2] repeats each element.
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          Value* row = k.op(OpKind::ExpandDims, {k.arange(0, 4)}, Type::tile(DType::i32, {1, 4}),
                            {{"axis", int64_t{0}}});
          return k.op(OpKind::Broadcast, {row}, Type::tile(DType::i32, {2, 4}));
        }) == std::vector<int32_t>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          Value* col = k.op(OpKind::ExpandDims, {k.arange(0, 4)}, Type::tile(DType::i32, {4, 1}),
                            {{"axis", int64_t{1}}});
          return k.op(OpKind::Broadcast, {col}, Type::tile(DType::i32, {4, 2}));
        }) == std::vector<int32_t>{0, 0, 1, 1, 2, 2, 3, 3});
  // [2,1,2] -> [2,4,2]
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          Value* t = k.reshape(k.arange(0, 4), {2, 1, 2});
          return k.op(OpKind::Broadcast, {t}, Type::tile(DType::i32, {2, 4, 2}));
        }) == std::vector<int32_t>{0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3});
}

TEST_CASE("interp tile: permute moves elements by the order") {
  // 2-D transpose of [[0,1,2,3],[4,5,6,7]].
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          return k.op(OpKind::Permute, {iota2(k, 2, 4)}, Type::tile(DType::i32, {4, 2}),
                      {{"order", std::vector<int64_t>{1, 0}}});
        }) == std::vector<int32_t>{0, 4, 1, 5, 2, 6, 3, 7});
  // 3-D [2,4,2] with order {2,0,1}: out[c][a][b] = in[a][b][c].
  const std::vector<int32_t> out = build<int32_t>(DType::i32, [](Kernel& k) {
    Value* t = k.reshape(k.arange(0, 16), {2, 4, 2});
    return k.op(OpKind::Permute, {t}, Type::tile(DType::i32, {2, 2, 4}),
                {{"order", std::vector<int64_t>{2, 0, 1}}});
  });
  for (int c = 0; c < 2; ++c)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 4; ++b) CHECK(out[(c * 2 + a) * 4 + b] == (a * 4 + b) * 2 + c);
}

TEST_CASE("interp tile: cat along each axis") {
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          return k.op(OpKind::Cat, {k.arange(0, 2), k.arange(10, 12)}, Type::tile(DType::i32, {4}),
                      {{"axis", int64_t{0}}});
        }) == std::vector<int32_t>{0, 1, 10, 11});
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          Value* a = iota2(k, 2, 2);
          Value* b = k.bin(OpKind::Add, iota2(k, 2, 2), k.splat(k.i32(10), {2, 2}));
          return k.op(OpKind::Cat, {a, b}, Type::tile(DType::i32, {2, 4}), {{"axis", int64_t{1}}});
        }) == std::vector<int32_t>{0, 1, 10, 11, 2, 3, 12, 13});
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          Value* a = iota2(k, 2, 2);
          Value* b = k.bin(OpKind::Add, iota2(k, 2, 2), k.splat(k.i32(10), {2, 2}));
          return k.op(OpKind::Cat, {a, b}, Type::tile(DType::i32, {4, 2}), {{"axis", int64_t{0}}});
        }) == std::vector<int32_t>{0, 1, 2, 3, 10, 11, 12, 13});
}

TEST_CASE("interp tile: where selects per element, for values and pointers") {
  CHECK(build<float>(DType::f32, [](Kernel& k) {
          Value* idx = k.arange(0, 4);
          Value* even = k.bin(OpKind::CmpEq, k.bin(OpKind::And, idx, k.splat(k.i32(1), {4})),
                              k.splat(k.i32(0), {4}));
          Value* a = k.cfloat(Type::tile(DType::f32, {4}), 1.5);
          Value* b = k.cast(idx, DType::f32);
          return k.op(OpKind::Where, {even, a, b}, a->type);
        }) == std::vector<float>{1.5f, 1.0f, 1.5f, 3.0f});
  // where on pointer tiles picks which buffer a lane reads.
  Kernel k;
  Value* x = k.ptr_param(DType::i32);
  Value* y = k.ptr_param(DType::i32);
  Value* out = k.ptr_param(DType::i32);
  Value* offs = k.arange(0, 4);
  Value* first_half = k.bin(OpKind::CmpLt, offs, k.splat(k.i32(2), {4}));
  Value* px = k.ptr_add(x, offs);
  Value* py = k.ptr_add(y, offs);
  Value* p = k.op(OpKind::Where, {first_half, px, py}, px->type);
  k.store_all(out, k.load(p));
  std::vector<int32_t> xs{1, 2, 3, 4}, ys{5, 6, 7, 8}, res(4);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(xs), mem.add(ys), mem.add(res));
  CHECK(res == std::vector<int32_t>{1, 2, 7, 8});
}

TEST_CASE("interp tile: ptr_add scales by the pointee size, with signed and i64 offsets") {
  Kernel k;
  Value* base = k.ptr_param(DType::f64);
  Value* out = k.ptr_param(DType::f64);
  Value* mid = k.ptr_add(base, k.i32(3));
  Value* back = k.ptr_add(mid, k.cast(k.bin(OpKind::Sub, k.arange(0, 4), k.splat(k.i32(3), {4})),
                                      DType::i64));  // offsets -3..0 from element 3
  k.store_all(out, k.load(back));
  std::vector<double> xs{10, 11, 12, 13}, res(4);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(xs), mem.add(res));
  CHECK(res == xs);
}

TEST_CASE("interp tile: hints are the identity") {
  CHECK(build<int32_t>(DType::i32, [](Kernel& k) {
          Value* t = k.op(OpKind::MultipleOf, {k.arange(0, 4)}, Type::tile(DType::i32, {4}),
                          {{"values", std::vector<int64_t>{4}}});
          return k.op(OpKind::MaxContiguous, {t}, t->type, {{"values", std::vector<int64_t>{4}}});
        }) == iota(4));
}
