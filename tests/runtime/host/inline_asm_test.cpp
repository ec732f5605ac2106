// \file tl::inline_asm_elementwise is PTX: the host and SIMT interpreters refuse a kernel that
// uses it when it compiles (ErrorKind::Unsupported naming the op, the kernel's line and the
// device), before anything runs; the same kernel without the call runs (tests/targets/ptx/
// inline_asm_test.cpp checks the PTX, the conformance catalogue the values on cuda:0).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/tessera.h"
#include "tests/support/errors.h"

namespace tl = tessera::tl;
using tessera::Device;
using tessera::ErrorKind;

namespace {

int g_line = 0;  // the line of the inline asm call

void asm_copy(tl::ptr<int> x, tl::ptr<int> out, tl::i32 n, int ASM) {
  auto offs = tl::program_id(0) * 64 + tl::arange(0, 64);
  auto m = offs < n;
  auto v = tl::load(x + offs, m);
  g_line = __LINE__ + 1;
  if (ASM) v = tl::inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", {v}, tl::int32, ASM == 1);
  tl::store(out + offs, v, m);
}

}  // namespace

TEST_CASE("inline asm: the interpreters refuse it when the kernel compiles, naming op and line") {
  for (const char* name : {"host", "simt:8", "simt:32", "simt:cuda-sm_90a"}) {
    CAPTURE(std::string(name));
    Device dev = Device::open(name);
    std::vector<int> host(100, 7);
    auto x = dev.upload<int>(host);
    auto out = dev.alloc<int>(100);
    auto k = TESSERA_KERNEL(asm_copy, x, out, n, ASM);
    for (int impure : {1, 2}) {
      const std::string op = impure == 2 ? "inline_asm_impure" : "inline_asm";
      const std::string msg = tessera::test::error_of(
          [&] {
            k[{2}](x, out, 100, impure);
            dev.synchronize();
          },
          ErrorKind::Unsupported);
      INFO(msg);
      CHECK(msg.find(std::string(__FILE__) + ":" + std::to_string(g_line) + ": error: '" + op +
                     "' (tl::inline_asm_elementwise) is PTX inline assembly") != std::string::npos);
      CHECK(msg.find("cannot run on device '" + std::string(name) + "'") != std::string::npos);
    }
    k[{2}](x, out, 100, 0);  // without the call the kernel runs
    std::vector<int> got = out.download();
    CHECK(got == host);
  }
}
