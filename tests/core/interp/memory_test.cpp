// \file Masked loads and stores, atomics (duplicates, masks, floats, cas) and the exact
// messages of out-of-bounds and misaligned accesses.
#include <cmath>
#include <cstdint>
#include <sstream>

#include "core/passes/descriptors.h"
#include "core/support/float16.h"
#include "tests/core/interp/helpers.h"

using namespace interp_test;

namespace {

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

/// out[i] = load(x + i, i < n, other) for a tile of 16 lanes; `other` < 0 means none.
std::vector<float> tail_load(std::vector<float> xs, int32_t n, double other) {
  Kernel k;
  Value* x = k.ptr_param(DType::f32);
  Value* out = k.ptr_param(DType::f32);
  Value* limit = k.param(Type::scalar(DType::i32));
  Value* offs = k.arange(0, 16);
  Value* mask = k.bin(OpKind::CmpLt, offs, k.splat(limit, {16}));
  Value* o = other < 0 ? nullptr : k.cfloat(Type::tile(DType::f32, {16}), other);
  k.store_all(out, k.load(k.ptr_add(x, offs), mask, o));
  std::vector<float> res(16, -1.0f);
  HostMemory mem;
  xs.resize(static_cast<size_t>(n));  // the buffer ends at the tail
  run(k, mem, Grid{}, mem.add(xs), mem.add(res), n);
  return res;
}

}  // namespace

TEST_CASE("interp memory: a tail mask with `other` and without") {
  std::vector<float> xs(16);
  for (int i = 0; i < 16; ++i) xs[i] = static_cast<float>(i) + 0.5f;
  const auto with_other = tail_load(xs, 13, 7.0);
  for (int i = 0; i < 16; ++i) CHECK(with_other[i] == (i < 13 ? i + 0.5f : 7.0f));
  const auto zero_bits = tail_load(xs, 3, -1.0);
  for (int i = 0; i < 16; ++i) CHECK(zero_bits[i] == (i < 3 ? i + 0.5f : 0.0f));
  // A fully masked tile reads nothing: the buffer is empty.
  const auto none = tail_load(xs, 0, 2.0);
  for (float v : none) CHECK(v == 2.0f);
}

TEST_CASE("interp memory: masked-off lanes of a store write nothing") {
  Kernel k;
  Value* out = k.ptr_param(DType::i16);
  Value* offs = k.arange(0, 8);
  Value* odd = k.bin(OpKind::CmpEq, k.bin(OpKind::And, offs, k.splat(k.i32(1), {8})),
                     k.splat(k.i32(1), {8}));
  k.store(k.ptr_add(out, offs), k.cast(offs, DType::i16), odd);
  std::vector<int16_t> buf(8, -99);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(buf));
  CHECK(buf == std::vector<int16_t>{-99, 1, -99, 3, -99, 5, -99, 7});
}

TEST_CASE("interp memory: a fully masked access may name any address") {
  Kernel k;
  Value* bad = k.ptr_param(DType::f32);
  Value* offs = k.arange(0, 4);
  Value* never = k.cint(Type::tile(DType::i1, {4}), 0);
  Value* p = k.ptr_add(bad, offs);
  k.store(p, k.load(p, never), never);
  HostMemory mem;
  CHECK_NOTHROW(run(k, mem, Grid{}, uint64_t{16}));
}

TEST_CASE("interp memory: scalar loads and stores, i1 memory normalizes to 0/1") {
  Kernel k;
  Value* flags = k.ptr_param(DType::i1);
  Value* out = k.ptr_param(DType::i32);
  Value* f = k.load(k.ptr_add(flags, k.i32(1)));
  k.store(out, k.cast(f, DType::i32));
  k.store(k.ptr_add(flags, k.i32(2)), f);
  std::vector<uint8_t> fl{0, 2, 0};
  std::vector<int32_t> res(1);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(fl), mem.add(res));
  CHECK(res[0] == 1);
  CHECK(fl[2] == 1);
}

TEST_CASE("interp memory: out-of-bounds accesses are DeviceFaults with the exact message") {
  Kernel k("copy_kernel");
  Value* x = k.ptr_param(DType::f32);
  Value* y = k.ptr_param(DType::f32);
  Value* offs =
      k.bin(OpKind::Add, k.splat(k.bin(OpKind::Mul, k.pid(0), k.i32(4)), {4}), k.arange(0, 4));
  k.set_line(7);
  Value* v = k.load(k.ptr_add(x, offs));
  k.set_line(8);
  k.store(k.ptr_add(y, offs), v);
  std::vector<float> xs{1, 2, 3, 4, 5, 6}, ys(8);
  HostMemory mem;
  const uint64_t xa = mem.add(xs), ya = mem.add(ys);
  const std::string msg = error_of([&] { run(k, mem, Grid{2}, xa, ya); });
  CHECK(msg ==
        "out-of-bounds load in kernel 'copy_kernel' at kernel.cpp:7, program (1, 0, 0): "
        "address " +
            hex(xa + 24) + " (4 bytes) is not inside a live buffer");
  CHECK(ys[3] == 4.0f);  // program 0 ran before the fault
  std::vector<float> big(12);
  const uint64_t ba = mem.add(big);
  const std::string store_msg = error_of([&] { run(k, mem, Grid{3}, ba, ya); });
  CHECK(store_msg ==
        "out-of-bounds store in kernel 'copy_kernel' at kernel.cpp:8, program "
        "(2, 0, 0): address " +
            hex(ya + 32) + " (4 bytes) is not inside a live buffer");
}

TEST_CASE("interp memory: a misaligned access is a DeviceFault") {
  Kernel k("misaligned");
  Value* x = k.ptr_param(DType::i32);
  Value* out = k.ptr_param(DType::i32);
  k.set_line(3);
  k.store(out, k.load(x));
  std::vector<int32_t> xs(4), res(1);
  HostMemory mem;
  const uint64_t xa = mem.add(xs);
  const std::string msg = error_of([&] { run(k, mem, Grid{}, xa + 2, mem.add(res)); });
  CHECK(msg ==
        "misaligned load in kernel 'misaligned' at kernel.cpp:3, program (0, 0, 0): "
        "address " +
            hex(xa + 2) + " (4 bytes) is not aligned to 4 bytes");
}

TEST_CASE("interp memory: atomic add on one address applies lane by lane, masks skip lanes") {
  Kernel k;
  Value* counter = k.ptr_param(DType::i32);
  Value* olds = k.ptr_param(DType::i32);
  Value* offs = k.arange(0, 8);
  Value* ptrs = k.splat(counter, {8});
  Value* active = k.bin(OpKind::CmpNe, offs, k.splat(k.i32(5), {8}));
  Value* one = k.splat(k.i32(1), {8});
  Value* old =
      k.op(OpKind::AtomicRmw, {ptrs, one, active}, one->type, {{"op", std::string("add")}});
  k.store_all(olds, old);
  std::vector<int32_t> c{10}, res(8, -1);
  HostMemory mem;
  run(k, mem, Grid{3}, mem.add(c), mem.add(res));
  CHECK(c[0] == 10 + 3 * 7);
  // The last program saw 24..30, lane 5 masked (yields 0).
  CHECK(res == std::vector<int32_t>{24, 25, 26, 27, 28, 0, 29, 30});
}

namespace {
/// One atomic_rmw of `op` with per-lane values on per-lane addresses; returns {memory, olds}.
template <class T>
std::pair<std::vector<T>, std::vector<T>> rmw(DType dtype, const std::string& op,
                                              std::vector<T> memory, std::vector<T> vals,
                                              std::vector<int32_t> index) {
  Kernel k;
  Value* m = k.ptr_param(dtype);
  Value* v = k.ptr_param(dtype);
  Value* ix = k.ptr_param(DType::i32);
  Value* olds = k.ptr_param(dtype);
  const auto n = static_cast<int64_t>(vals.size());
  Value* val = k.load_all(v, {n});
  Value* where = k.ptr_add(m, k.load_all(ix, {n}));
  k.store_all(olds, k.op(OpKind::AtomicRmw, {where, val}, val->type, {{"op", op}}));
  std::vector<T> res(vals.size());
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(memory), mem.add(vals), mem.add(index), mem.add(res));
  return {memory, res};
}
}  // namespace

TEST_CASE("interp memory: atomic max/min/and/or/xor/xchg on integers") {
  auto [m1, o1] = rmw<int32_t>(DType::i32, "max", {5, -5}, {3, 7, -9, -1}, {0, 0, 1, 1});
  CHECK(m1 == std::vector<int32_t>{7, -1});
  CHECK(o1 == std::vector<int32_t>{5, 5, -5, -5});
  auto [m2, o2] = rmw<uint32_t>(DType::u32, "min", {5, 0xFFFFFFFFu}, {7, 3, 1, 2}, {0, 0, 1, 1});
  CHECK(m2 == std::vector<uint32_t>{3, 1});
  CHECK(o2 == std::vector<uint32_t>{5, 5, 0xFFFFFFFFu, 1});
  auto [m3, o3] = rmw<uint8_t>(DType::u8, "and", {0xFF, 0x0F}, {0xF0, 0x3C}, {0, 1});
  CHECK(m3 == std::vector<uint8_t>{0xF0, 0x0C});
  auto [m4, o4] = rmw<int64_t>(DType::i64, "or", {1}, {2, 4}, {0, 0});
  CHECK(m4 == std::vector<int64_t>{7});
  CHECK(o4 == std::vector<int64_t>{1, 3});
  auto [m5, o5] = rmw<int16_t>(DType::i16, "xor", {0}, {3, 5}, {0, 0});
  CHECK(m5 == std::vector<int16_t>{6});
  CHECK(o5 == std::vector<int16_t>{0, 3});
  auto [m6, o6] = rmw<int32_t>(DType::i32, "xchg", {9}, {1, 2}, {0, 0});
  CHECK(m6 == std::vector<int32_t>{2});
  CHECK(o6 == std::vector<int32_t>{9, 1});
  auto [m7, o7] = rmw<int8_t>(DType::i8, "add", {120}, {10, 10}, {0, 0});
  CHECK(m7 == std::vector<int8_t>{-116});  // wraps
  CHECK(o7 == std::vector<int8_t>{120, -126});
}

TEST_CASE("interp memory: float atomics: add rounds per dtype, max/min ignore NaN in val") {
  auto [m1, o1] = rmw<float>(DType::f32, "add", {1e8f}, {1.0f, 1.0f, 4.0f, 8.0f}, {0, 0, 0, 0});
  CHECK(m1[0] == ((1e8f + 1.0f) + 1.0f + 4.0f) + 8.0f);
  CHECK(o1[3] == (1e8f + 1.0f) + 1.0f + 4.0f);
  auto [m2, o2] = rmw<float>(DType::f32, "max", {1.0f, -0.0f, NAN, 5.0f}, {NAN, 0.0f, 2.0f, 3.0f},
                             {0, 1, 2, 3});
  CHECK(m2[0] == 1.0f);
  CHECK(bits_f32(m2[1]) == 0u);
  CHECK(m2[2] == 2.0f);
  CHECK(m2[3] == 5.0f);
  auto [m3, o3] = rmw<double>(DType::f64, "min", {1.0, 0.0}, {-2.0, -0.0}, {0, 1});
  CHECK(m3[0] == -2.0);
  CHECK(std::signbit(m3[1]));
  // f16: 2048 + 1 is a tie (stays 2048); adding 1 three times never moves it.
  const uint16_t h2048 = 0x6800, h1 = 0x3C00, h3 = 0x4200;
  auto [m4, o4] = rmw<uint16_t>(DType::f16, "add", {h2048, h2048}, {h1, h1, h3, h1}, {0, 0, 1, 1});
  const uint16_t h2052 = tessera::f16_from_double(2052);
  CHECK(m4 == std::vector<uint16_t>{h2048, h2052});  // 2052 + 1 ties to 2052 too
  CHECK(o4 == std::vector<uint16_t>{h2048, h2048, h2048, h2052});
  auto [m5, o5] = rmw<uint16_t>(DType::bf16, "add", {0x3F80}, {0x3F80, 0x3F80}, {0, 0});
  CHECK(m5[0] == 0x4040);  // 1 + 1 + 1 = 3
  CHECK(o5 == std::vector<uint16_t>{0x3F80, 0x4000});
}

TEST_CASE("interp memory: atomic_cas as a ticket lock serializes programs") {
  // Program p takes its turn with cas(turn, p, p + 1); programs run in order, so each one
  // succeeds and sees old == p.
  Kernel k;
  Value* turn = k.ptr_param(DType::i32);
  Value* seen = k.ptr_param(DType::i32);
  Value* p = k.pid(0);
  Value* next = k.bin(OpKind::Add, p, k.i32(1));
  Value* old = k.op(OpKind::AtomicCas, {turn, p, next}, Type::scalar(DType::i32));
  k.store(k.ptr_add(seen, p), old);
  std::vector<int32_t> t{0}, s(5, -1);
  HostMemory mem;
  run(k, mem, Grid{5}, mem.add(t), mem.add(s));
  CHECK(t[0] == 5);
  CHECK(s == std::vector<int32_t>{0, 1, 2, 3, 4});
  // A mismatch leaves memory alone and yields the old value.
  std::vector<int32_t> t2{7}, s2(1, -1);
  HostMemory mem2;
  run(k, mem2, Grid{1}, mem2.add(t2), mem2.add(s2));
  CHECK(t2[0] == 7);
  CHECK(s2[0] == 7);
}

TEST_CASE("interp memory: tile atomic_cas compares bits lane by lane") {
  Kernel k;
  Value* m = k.ptr_param(DType::f32);
  Value* out = k.ptr_param(DType::f32);
  Value* ptrs = k.splat(m, {4});
  Value* cmp = k.cast(k.arange(0, 4), DType::f32);  // 0, 1, 2, 3
  Value* val = k.bin(OpKind::Add, cmp, k.cfloat(Type::tile(DType::f32, {4}), 1.0));
  k.store_all(out, k.op(OpKind::AtomicCas, {ptrs, cmp, val}, cmp->type));
  std::vector<float> mem_v{0.0f}, res(4);
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(mem_v), mem.add(res));
  CHECK(mem_v[0] == 4.0f);
  CHECK(res == std::vector<float>{0, 1, 2, 3});
  std::vector<float> neg_zero{-0.0f}, res2(4);
  HostMemory mem2;
  run(k, mem2, Grid{}, mem2.add(neg_zero), mem2.add(res2));
  CHECK(bits_f32(neg_zero[0]) == 0x80000000u);  // -0 != +0 bitwise: no swap
}

TEST_CASE("interp memory: an out-of-bounds atomic names the access") {
  Kernel k("atomics");
  Value* c = k.ptr_param(DType::i32);
  k.set_line(12);
  k.op(OpKind::AtomicRmw, {k.ptr_add(c, k.i32(1)), k.i32(1)}, Type::scalar(DType::i32),
       {{"op", std::string("add")}});
  std::vector<int32_t> buf(1);
  HostMemory mem;
  const uint64_t a = mem.add(buf);
  CHECK(error_of([&] { run(k, mem, Grid{}, a); }) ==
        "out-of-bounds atomic in kernel 'atomics' at kernel.cpp:12, program (0, 0, 0): address " +
            hex(a + 4) + " (4 bytes) is not inside a live buffer");
}

namespace {

/// A 5 x 6 f32 tensor with row stride 8, read as 4 x 8 blocks at (r0, c0) by desc_load and
/// stored densely; with `expand`, after core/passes/descriptors.h rewrote the desc_load.
std::vector<float> desc_block(int32_t r0, int32_t c0, bool expand) {
  Kernel k("desc");
  Value* x = k.ptr_param(DType::f32);
  Value* out = k.ptr_param(DType::f32);
  Value* r = k.param(Type::scalar(DType::i32));
  Value* c = k.param(Type::scalar(DType::i32));
  k.set_line(7);
  Value* block = k.op(OpKind::DescLoad, {x, k.i32(5), k.i32(6), k.i32(8), k.i32(1), r, c},
                      Type::tile(DType::f32, {4, 8}));
  k.store_all(out, block);
  check_verified(k.fn());
  if (expand) {
    CHECK(tessera::passes::expand_descriptors(k.module()));
    check_verified(k.fn());
  }
  std::vector<float> xs(5 * 8), res(32, -1.0f);
  for (int i = 0; i < 40; ++i) xs[i] = static_cast<float>(i) + 0.25f;
  HostMemory mem;
  const uint64_t px = mem.add(xs), po = mem.add(res);
  run(k, mem, Grid{}, px, po, r0, c0);
  return res;
}

}  // namespace

TEST_CASE("interp memory: desc_load reads the block's elements inside the tensor, zero outside") {
  for (bool expand : {false, true}) {
    CAPTURE(expand);
    for (auto [r0, c0] : {std::pair{0, 0}, {-1, 2}, {3, -5}, {-4, 0}, {5, 0}, {2, 6}}) {
      CAPTURE(r0);
      CAPTURE(c0);
      const std::vector<float> got = desc_block(r0, c0, expand);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j) {
          const int row = r0 + i, col = c0 + j;
          const bool inside = row >= 0 && row < 5 && col >= 0 && col < 6;
          CHECK(got[i * 8 + j] == (inside ? static_cast<float>(row * 8 + col) + 0.25f : 0.0f));
        }
    }
  }
}

TEST_CASE("interp memory: desc_store writes only the elements inside the tensor") {
  for (bool expand : {false, true}) {
    CAPTURE(expand);
    Kernel k("desc");
    Value* y = k.ptr_param(DType::i16);
    Value* r = k.param(Type::scalar(DType::i64));
    // A rank-1 tensor of 10 elements at stride 2 (i64 indices), written by an 8-element block.
    Value* v = k.cast(k.arange(100, 108), DType::i16);
    k.builder().create(
        OpKind::DescStore,
        {y, k.cint(Type::scalar(DType::i64), 10), k.cint(Type::scalar(DType::i64), 2), r, v}, {});
    check_verified(k.fn());
    if (expand) CHECK(tessera::passes::expand_descriptors(k.module()));
    for (int64_t r0 : {-3, 0, 5}) {
      std::vector<int16_t> ys(20, -1);
      HostMemory mem;
      run(k, mem, Grid{}, mem.add(ys), r0);
      for (int i = 0; i < 20; ++i) {
        const int64_t j = i / 2 - r0;  // the block element at tensor index i / 2
        const bool written = i % 2 == 0 && j >= 0 && j < 8;
        CHECK(ys[i] == (written ? 100 + j : -1));
      }
    }
  }
}

TEST_CASE("interp memory: a desc_load past its buffer names the access") {
  // The descriptor claims 4 rows, the buffer holds 2: row 2 is inside the tensor, not the buffer.
  Kernel k("desc");
  Value* x = k.ptr_param(DType::f32);
  k.set_line(9);
  k.op(OpKind::DescLoad, {x, k.i32(4), k.i32(2), k.i32(2), k.i32(1), k.i32(0), k.i32(0)},
       Type::tile(DType::f32, {4, 2}));
  std::vector<float> xs(4);
  HostMemory mem;
  const uint64_t a = mem.add(xs);
  CHECK(error_of([&] { run(k, mem, Grid{}, a); }) ==
        "out-of-bounds load in kernel 'desc' at kernel.cpp:9, program (0, 0, 0): address " +
            hex(a + 16) + " (4 bytes) is not inside a live buffer");
}
