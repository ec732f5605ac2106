// \file print, assert and assume in the SIMT interpreter: print lines in the tile interpreter's
// format (the same text as the tile interpreter for a tile spread over threads), in thread order,
// which also shows the thread -> (lane, subgroup) mapping; hex and pointer values; assert and
// assume faults naming the thread and the element.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;
using interp_test::DType;
using interp_test::OpKind;

TEST_CASE(
    "simt debug: print runs once per active thread, in thread order t = subgroup * S + lane") {
  const std::string text =
      kernel(R"(func @order(%s: i32) attributes {stage = "simt", threads = 16, subgroup = 4} {)",
             R"(
  %c1000 = constant {value = 1000} : i32
  %hi = mul %sg, %c1000 : i32
  %v = add %hi, %lane : i32
  %odd = and %tid, %c1 : i32
  %is_odd = cmp_ne %odd, %c0 : i1
  if %is_odd ({
    print %v {prefix = "v="}
    yield
  }, {
    yield
  })
)");
  for (int s : {2, 4, 8}) {
    SimtKernel k(text, s);
    HostMemory mem;
    std::string want;
    for (int t = 1; t < 16; t += 2)
      want += "pid (2, 0, 0) v=" + std::to_string(t / s * 1000 + t % s) + "\n";
    // Program 2 of 3; the print runs in every program, so pick its lines out.
    const std::string all = k.printed(mem, Grid{3}, int32_t{s});
    CHECK(all.substr(all.find("pid (2, 0, 0)")) == want);
  }
}

TEST_CASE("simt debug: a tile spread over threads prints the tile interpreter's lines") {
  // Tile interpreter: print a [4, 4] f32 tile loaded from x.
  interp_test::Kernel tile("tile");
  interp_test::Value* x = tile.ptr_param(DType::f32);
  interp_test::Value* v = tile.load_all(x, {4, 4});
  tile.builder().create(OpKind::Print, {v}, {}, {{"prefix", std::string("x = ")}});
  std::vector<float> data(16);
  for (int i = 0; i < 16; ++i) data[static_cast<size_t>(i)] = 0.1f * static_cast<float>(i) - 0.5f;
  HostMemory mem;
  std::ostringstream tile_out;
  tessera::interp::RunOptions tile_options;
  tile_options.print_out = &tile_out;
  interp_test::run_opts(tile, mem, Grid{2}, tile_options, mem.add(data));

  // SIMT: thread t holds element (t / 4, t % 4) and prints it with its index.
  SimtKernel simt(kernel(
      R"(func @simt(%x: ptr<f32>, %s: i32) attributes {stage = "simt", threads = 16, subgroup = 8} {)",
      R"(
  %c2 = constant {value = 2} : i32
  %c3 = constant {value = 3} : i32
  %row = shr %tid, %c2 : i32
  %col = and %tid, %c3 : i32
  %p = ptr_add %x, %tid : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %e = global_load %p, %true, %zero {align = 4, width = 1} : f32
  print %row, %col, %e {prefix = "x = ", rank = 2}
)"));
  CHECK(simt.printed(mem, Grid{2}, mem.add(data), int32_t{8}) == tile_out.str());
  CHECK(tile_out.str().find("pid (1, 0, 0) idx (2, 3) x = 0.6\n") != std::string::npos);
}

TEST_CASE("simt debug: hex, pointer, i1 and f16 values print as the tile interpreter prints them") {
  SimtKernel k(kernel(
      R"(func @kinds(%x: ptr<f32>, %s: i32) attributes {stage = "simt", threads = 2, subgroup = 2} {)",
      R"(
  print %lane {hex = 1, prefix = "h "}
  %p = ptr_add %x, %lane : ptr<f32>
  print %p {prefix = "p "}
  %b = cmp_eq %lane, %c0 : i1
  print %b {prefix = "b "}
  %f = cast %lane : f16
  %third = constant {value = 0.333} : f16
  %g = add %f, %third : f16
  print %g
)"));
  std::vector<float> x(2);
  HostMemory mem;
  const uint64_t base = mem.add(x);
  char p0[32], p1[32];
  std::snprintf(p0, sizeof p0, "0x%016llx", static_cast<unsigned long long>(base));
  std::snprintf(p1, sizeof p1, "0x%016llx", static_cast<unsigned long long>(base + 4));
  CHECK(k.printed(mem, Grid{}, base, int32_t{2}) ==
        "pid (0, 0, 0) h 0x00000000\npid (0, 0, 0) h 0x00000001\n"
        "pid (0, 0, 0) p " +
            std::string(p0) + "\npid (0, 0, 0) p " + std::string(p1) +
            "\n"
            "pid (0, 0, 0) b 1\npid (0, 0, 0) b 0\n"
            "pid (0, 0, 0) 0.333\npid (0, 0, 0) 1.333\n");
}

namespace {

const std::string kChecks = kernel(
    R"(func @checks(%x: ptr<i32>, %s: i32, %limit: i32) attributes {stage = "simt", threads = 32, subgroup = 8} {)",
    R"(
  %p = ptr_add %x, %tid : ptr<i32>
  %v = global_load %p, %true, %c0 {align = 4, width = 1} : i32
  %c3 = constant {value = 3} : i32
  %row = shr %tid, %c3 : i32
  %c7 = constant {value = 7} : i32
  %col = and %tid, %c7 : i32
  %ok = cmp_ge %v, %c0 : i1
  assert %row, %col, %ok {message = "x must not be negative", rank = 2} loc("chk.cpp":8:1)
  %small = cmp_lt %v, %limit : i1
  assume %small loc("chk.cpp":10:1)
)");

}  // namespace

TEST_CASE("simt debug: a failed assert names the lowest failing thread and its element") {
  SimtKernel k(kChecks);
  std::vector<int32_t> x(32, 1);
  HostMemory mem;
  k.run(mem, Grid{2}, mem.add(x), int32_t{8}, int32_t{100});
  x[13] = -4;
  x[20] = -1;
  CHECK(error_of([&] { k.run(mem, Grid{2}, mem.add(x), int32_t{8}, int32_t{100}); }) ==
        "device assert failed in kernel 'checks' at chk.cpp:8, program (0, 0, 0), thread 13, "
        "index (1, 5): x must not be negative");
}

TEST_CASE("simt debug: a false assume is a DeviceFault") {
  SimtKernel k(kChecks);
  std::vector<int32_t> x(32, 1);
  x[30] = 100;
  HostMemory mem;
  CHECK(error_of([&] { k.run(mem, Grid{2}, mem.add(x), int32_t{8}, int32_t{100}); }) ==
        "assumption violated in kernel 'checks' at chk.cpp:10, program (0, 0, 0), thread 30");
}
