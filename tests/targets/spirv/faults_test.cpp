/// \file The fault channel of SPIR-V kernels (target::FaultWords): device asserts on every Vulkan
/// target, and the loop counting of targets whose driver ends loops early (Target::loop_limit,
/// lavapipe's 65535). What runs on lavapipe is in tests/runtime/vulkan/fault_channel_test.cpp.
#include "kernels.h"

namespace spirv_test {
namespace {

std::string assert_kernel(int subgroup) {
  return kernel("%c: i1, %i: i32", "  assert %i, %c {rank = 1, message = \"boom\"}", "", 64,
                subgroup);
}

/// A loop counting to %n inside a loop counting to %m, then a while loop halving %n.
std::string loop_kernel(int subgroup = 8) {
  return kernel("%out: ptr<i32>, %n: i32, %m: i32", R"(  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c2 = constant {value = 2} : i32
  %s = for %c0, %m, %c1, %c0 ({
  ^(%j: i32, %a: i32):
    %t = for %c0, %n, %c1, %a ({
    ^(%i: i32, %b: i32):
      %b1 = add %b, %c1 : i32
      yield %b1
    }) : i32
    yield %t
  }) : i32
  %h = while %n ({
  ^(%x: i32):
    %go = cmp_gt %x, %c0 : i1
    condition %go, %x
  }, {
  ^(%y: i32):
    %y2 = div %y, %c2 : i32
    yield %y2
  }) : i32
  %r = add %s, %h : i32
  %t1 = constant {value = 1} : i1
  global_store %out, %t1, %r {align = 4, width = 1})",
                "", 64, subgroup);
}

bool mentions(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("spirv: an assert fills the fault record through the channel on every Vulkan target") {
  for (const char* name : {"vulkan-lavapipe", "vulkan-nvidia"}) {
    CAPTURE(name);
    Target t = profile(name);
    Emitted e = emit_both(assert_kernel(t.subgroup_size), t);
    const Artifact& a = e.artifact;
    // The record's address (8-byte aligned) and the launch tag follow the grid words.
    CHECK(a.fault_offset >= a.grid_offset + 12);
    CHECK(a.fault_offset % 8 == 0);
    CHECK(a.param_bytes == a.fault_offset + 12);
    REQUIRE(a.faults.size() == 1);
    CHECK(a.faults[0] == "device assert failed in kernel k at test.tir:2: boom");
    CHECK(e.count("OpAtomicCompareExchange") == 1);  // the first failing invocation claims it
    CHECK(e.has("LocalInvocationIndex"));
  }
}

TEST_CASE("spirv: an assert's reported values are widened to 64 bits into the record") {
  for (const char* name : {"vulkan-lavapipe", "vulkan-nvidia"}) {
    CAPTURE(name);
    Target t = profile(name);
    Emitted e = emit_both(
        kernel("%c: i1, %i: i32, %a: u64",
               "  assert %i, %i, %a, %c {fault = \"out-of-bounds store\", message = \"{0} {1:x}\", "
               "rank = 1, values = 2}",
               "", 64, t.subgroup_size),
        t);
    REQUIRE(e.artifact.faults.size() == 1);
    CHECK(e.artifact.faults[0] == "out-of-bounds store in kernel k at test.tir:2: {0} {1:x}");
    CHECK(e.count("OpSConvert") >= 1);  // the i32 value, sign-extended
  }
}

TEST_CASE("spirv: without asserts and a loop limit a kernel has no fault channel") {
  Target nvidia = profile("vulkan-nvidia");
  Emitted e = emit_both(loop_kernel(nvidia.subgroup_size), nvidia);
  CHECK(e.artifact.fault_offset == -1);
  CHECK(e.artifact.faults.empty());
  CHECK_FALSE(e.has("loop_iterations"));
}

TEST_CASE("spirv: on a target with a loop limit every loop counts its passes") {
  Target lavapipe = profile("vulkan-lavapipe");
  REQUIRE(lavapipe.loop_limit == 65535);
  Emitted e = emit_both(loop_kernel(), lavapipe);
  const Artifact& a = e.artifact;
  CHECK(a.fault_offset >= 0);
  REQUIRE(a.faults.size() == 3);  // one code per loop, in the order their bodies end
  CHECK(mentions(a.faults[0], "kernel k: the loop at test.tir:7 reached the limit of 65535"));
  CHECK(mentions(a.faults[1], "the loop at test.tir:5"));
  CHECK(mentions(a.faults[2], "the loop at test.tir:14"));
  CHECK(e.has("%loop_iterations = OpVariable %_ptr_Private_uint Private"));
  // The outer loop compares with the limit less the margin of 16 passes, the inner one with one
  // more (the outer pass that lavapipe has not counted yet); the while loop is outermost again.
  CHECK(e.count("%uint_65519") >= 1);
  CHECK(e.has("%uint_65520"));
  // A loop that reached it is reported once, at the end.
  CHECK(e.count("OpAtomicCompareExchange") == 1);
  // A target without the limit emits the same kernel without any of it.
  Target nolimit = lavapipe;
  nolimit.loop_limit = 0;
  CHECK_FALSE(emit(loop_kernel(), nolimit).has("loop_iterations"));
}

TEST_CASE("spirv: the limit is part of the target's text") {
  Target t = profile("vulkan-lavapipe");
  CHECK(mentions(t.str(), ", loops=65535"));
  auto parsed = tessera::target::parse_target(t.str());
  REQUIRE(parsed);
  CHECK(parsed->loop_limit == 65535);
  CHECK_FALSE(mentions(profile("vulkan-nvidia").str(), "loops="));
}

}  // namespace
}  // namespace spirv_test
