// \file The interpreter's deadline: a while loop that never ends and a for loop far too long stop
// with a DeviceFault naming the kernel, the loop and the limit; no deadline means none.
#include <chrono>
#include <string>
#include <vector>

#include "tests/core/interp/helpers.h"

using namespace interp_test;
using tessera::interp::Deadline;

namespace {

/// while (x != 1) x = x, from x = *flag: endless unless *flag == 1; stores the result.
void endless_while(Kernel& k) {
  Value* flag = k.ptr_param(DType::i32);
  const Type i32 = Type::scalar(DType::i32);
  Value* start = k.load(flag);
  k.set_line(7);
  Op* w = k.region_op(OpKind::While, {start}, {i32}, {}, 2, [&](int i, Region* r) {
    Value* x = k.arg(r, i32);
    if (i == 0) {
      k.builder().create(OpKind::Condition, {k.bin(OpKind::CmpNe, x, k.i32(1)), x}, {});
      return;
    }
    k.yield({x});
  });
  k.store(flag, w->result(0));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("interp deadline: an endless while stops once the deadline passes, naming the loop") {
  Kernel k("endless");
  endless_while(k);
  std::vector<int32_t> flag{0};
  HostMemory mem;
  RunOptions options;
  options.deadline = Deadline::after(0.05, "TESSERA_TIMEOUT");
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg = error_of([&] { run_opts(k, mem, Grid{}, options, mem.add(flag)); });
  CHECK(seconds_since(t0) >= 0.05);
  CHECK(seconds_since(t0) < 2.0);
  CHECK(msg.find("timed out: still running after the time limit of 0.05 s (TESSERA_TIMEOUT) in "
                 "kernel 'endless' at kernel.cpp:7, program (0, 0, 0)") == 0);
  CHECK(flag[0] == 0);  // stopped before its store

  // The same kernel ends by itself when its loop does; no deadline is none.
  flag[0] = 1;
  run(k, mem, Grid{}, mem.add(flag));
  CHECK(flag[0] == 1);
  CHECK(Deadline{}.none());
  CHECK(!Deadline{}.passed());
  CHECK(Deadline::after(0).none());
}

TEST_CASE("interp deadline: a grid whose programs outlast the deadline stops between programs") {
  Kernel k("long_grid");
  endless_while(k);
  std::vector<int32_t> flag{1};
  HostMemory mem;
  RunOptions options;
  options.deadline = Deadline::after(1e-9);
  std::string msg = error_of([&] { run_opts(k, mem, Grid{4}, options, mem.add(flag)); });
  // A deadline already passed stops the run before its first program.
  CHECK(msg ==
        "timed out: still running after the time limit of 1e-09 s in kernel 'long_grid' "
        "before program (0, 0, 0) of grid (4, 1, 1)");
}
