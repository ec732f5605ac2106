// \file Device print (format, round-trip float digits, hex, several operands), device assert
// and assume, with their exact messages.
#include <cstdint>
#include <limits>
#include <sstream>

#include "core/support/float16.h"
#include "tests/core/interp/helpers.h"

using namespace interp_test;

namespace {

/// Runs a kernel whose body prints, and returns what it printed.
std::string printed(const std::function<void(Kernel&)>& body, Grid grid = {}) {
  Kernel k;
  body(k);
  std::ostringstream os;
  RunOptions opts;
  opts.print_out = &os;
  HostMemory mem;
  run_opts(k, mem, grid, opts);
  return os.str();
}

void print(Kernel& k, std::vector<Value*> values, std::string prefix, bool hex = false) {
  std::vector<Attribute> attrs{{"prefix", prefix}};
  if (hex) attrs.push_back({"hex", int64_t{1}});
  k.builder().create(OpKind::Print, std::move(values), {}, attrs);
}

}  // namespace

TEST_CASE("interp print: a scalar per program, a tile per element in row-major order") {
  CHECK(printed([](Kernel& k) { print(k, {k.bin(OpKind::Add, k.pid(0), k.i32(5))}, "x: "); },
                Grid{2, 1, 2}) ==
        "pid (0, 0, 0) x: 5\npid (1, 0, 0) x: 6\npid (0, 0, 1) x: 5\npid (1, 0, 1) x: 6\n");
  CHECK(printed([](Kernel& k) { print(k, {k.reshape(k.arange(0, 4), {2, 2})}, "t = "); }) ==
        "pid (0, 0, 0) idx (0, 0) t = 0\npid (0, 0, 0) idx (0, 1) t = 1\n"
        "pid (0, 0, 0) idx (1, 0) t = 2\npid (0, 0, 0) idx (1, 1) t = 3\n");
  CHECK(printed([](Kernel& k) { print(k, {k.arange(3, 5)}, ""); }) ==
        "pid (0, 0, 0) idx (0) 3\npid (0, 0, 0) idx (1) 4\n");
  CHECK(printed([](Kernel& k) { print(k, {}, "hello"); }) == "pid (0, 0, 0) hello\n");
}

TEST_CASE("interp print: floats in the shortest form that reads back exactly") {
  auto one = [](Type t, double v) {
    return printed([&](Kernel& k) { print(k, {k.cfloat(t, v)}, ""); });
  };
  CHECK(one(Type::scalar(DType::f32), 0.1) == "pid (0, 0, 0) 0.1\n");
  CHECK(one(Type::scalar(DType::f32), 1.0 / 3.0) == "pid (0, 0, 0) 0.33333334\n");
  CHECK(one(Type::scalar(DType::f32), 1e10) == "pid (0, 0, 0) 1e+10\n");
  CHECK(one(Type::scalar(DType::f64), 0.1) == "pid (0, 0, 0) 0.1\n");
  CHECK(one(Type::scalar(DType::f64), 1.0 / 3.0) == "pid (0, 0, 0) 0.3333333333333333\n");
  CHECK(one(Type::scalar(DType::f16), 0.1) == "pid (0, 0, 0) 0.1\n");
  CHECK(one(Type::scalar(DType::f16), 1.0 / 3.0) == "pid (0, 0, 0) 0.3333\n");
  CHECK(one(Type::scalar(DType::bf16), 0.1) == "pid (0, 0, 0) 0.1\n");
  CHECK(one(Type::scalar(DType::f32), -std::numeric_limits<double>::infinity()) ==
        "pid (0, 0, 0) -inf\n");
  CHECK(one(Type::scalar(DType::f32), std::numeric_limits<double>::quiet_NaN()) ==
        "pid (0, 0, 0) nan\n");
  CHECK(one(Type::scalar(DType::f32), -0.0) == "pid (0, 0, 0) -0\n");
}

TEST_CASE("interp print: integers in decimal or hex, pointers in hex, several operands") {
  CHECK(printed([](Kernel& k) { print(k, {k.cint(Type::scalar(DType::i8), -1)}, ""); }) ==
        "pid (0, 0, 0) -1\n");
  CHECK(printed([](Kernel& k) {
          print(k, {k.cint(Type::scalar(DType::u64), -1)}, "");  // canonical u64 max
        }) == "pid (0, 0, 0) 18446744073709551615\n");
  CHECK(printed([](Kernel& k) { print(k, {k.cint(Type::scalar(DType::i32), -1)}, "", true); }) ==
        "pid (0, 0, 0) 0xffffffff\n");
  CHECK(printed([](Kernel& k) { print(k, {k.cint(Type::scalar(DType::i8), 10)}, "", true); }) ==
        "pid (0, 0, 0) 0x0a\n");
  CHECK(printed([](Kernel& k) { print(k, {k.cfloat(Type::scalar(DType::f32), 1.0)}, "", true); }) ==
        "pid (0, 0, 0) 0x3f800000\n");
  CHECK(printed([](Kernel& k) { print(k, {k.cint(Type::tile(DType::i1, {2}), 1)}, "b "); }) ==
        "pid (0, 0, 0) idx (0) b 1\npid (0, 0, 0) idx (1) b 1\n");
  CHECK(printed([](Kernel& k) {
          print(k, {k.i32(1), k.cfloat(Type::scalar(DType::f32), 2.5)}, "v: ");
        }) == "pid (0, 0, 0) v: (operand 0) 1\npid (0, 0, 0) v: (operand 1) 2.5\n");
  // A pointer parameter prints as its address.
  Kernel k;
  Value* p = k.ptr_param(DType::f32);
  print(k, {p}, "p=");
  std::ostringstream os;
  RunOptions opts;
  opts.print_out = &os;
  HostMemory mem;
  run_opts(k, mem, Grid{}, opts, uint64_t{0xdeadbeef0});
  CHECK(os.str() == "pid (0, 0, 0) p=0x0000000deadbeef0\n");
}

TEST_CASE("interp assert: the first false element is a DeviceFault naming program and index") {
  Kernel k("checked");
  Value* offs = k.arange(0, 4);
  // Program 0: all of 0..3 < 6. Program 1: lanes 2 and 3 fail (< 2).
  Value* limit = k.bin(OpKind::Sub, k.i32(6), k.bin(OpKind::Mul, k.pid(0), k.i32(4)));
  k.set_line(5);
  k.builder().create(OpKind::Assert, {k.bin(OpKind::CmpLt, offs, k.splat(limit, {4}))}, {},
                     {{"message", std::string("offs < limit")}});
  HostMemory mem;
  CHECK(error_of([&] { run(k, mem, Grid{1}); }).empty());
  CHECK(error_of([&] { run(k, mem, Grid{3}); }) ==
        "device assert failed in kernel 'checked' at kernel.cpp:5, program (1, 0, 0), "
        "index (2): offs < limit");
}

TEST_CASE("interp assert: 2-D and scalar conditions") {
  Kernel k("checked2");
  Value* t = k.reshape(k.arange(0, 4), {2, 2});
  k.set_line(9);
  k.builder().create(OpKind::Assert, {k.bin(OpKind::CmpNe, t, k.splat(k.i32(2), {2, 2}))}, {},
                     {{"message", std::string("no twos")}});
  HostMemory mem;
  CHECK(error_of([&] { run(k, mem, Grid{}); }) ==
        "device assert failed in kernel 'checked2' at kernel.cpp:9, program (0, 0, 0), "
        "index (1, 0): no twos");
  Kernel s("scalar");
  Value* n = s.param(Type::scalar(DType::i32));
  s.set_line(3);
  s.builder().create(OpKind::Assert, {s.bin(OpKind::CmpGt, n, s.i32(0))}, {},
                     {{"message", std::string("n > 0")}});
  CHECK(error_of([&] { run(s, mem, Grid{}, int32_t{1}); }).empty());
  CHECK(error_of([&] { run(s, mem, Grid{}, int32_t{0}); }) ==
        "device assert failed in kernel 'scalar' at kernel.cpp:3, program (0, 0, 0): n > 0");
}

TEST_CASE("interp assume: a false promise is a DeviceFault") {
  Kernel k("promises");
  Value* n = k.param(Type::scalar(DType::i32));
  k.set_line(11);
  k.builder().create(OpKind::Assume,
                     {k.bin(OpKind::CmpEq, k.bin(OpKind::Rem, n, k.i32(16)), k.i32(0))}, {});
  HostMemory mem;
  CHECK(error_of([&] { run(k, mem, Grid{}, int32_t{64}); }).empty());
  CHECK(error_of([&] { run(k, mem, Grid{}, int32_t{65}); }) ==
        "assumption violated in kernel 'promises' at kernel.cpp:11, program (0, 0, 0)");
}
