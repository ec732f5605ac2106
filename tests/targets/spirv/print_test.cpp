/// \file Device print in SPIR-V kernels (target::Artifact::print_offset, PrintRecord): each print
/// appends a record to the buffer whose address the launch passes. What runs on lavapipe is in
/// tests/runtime/vulkan/print_test.cpp.
#include "kernels.h"

namespace spirv_test {
namespace {

/// Two elements of a tile per thread (two sites of one statement, as the lowering emits them: one
/// location), a scalar in a loop, a hex f64, a pointer, a bf16 and an i1.
std::string print_kernel(int subgroup = 8) {
  return kernel("%x: ptr<f32>, %n: i32, %d: f64, %b: bf16, %h: i1", R"(  %i = lane_id : i32
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %j = add %i, %c1 : i32
  %v = cast %i : f32
  print %i, %v {prefix = "v = ", rank = 1} loc("k.cpp":3:1)
  print %j, %v {prefix = "v = ", rank = 1} loc("k.cpp":3:1)
  %s = for %c0, %n, %c1, %c0 ({
  ^(%k: i32, %a: i32):
    print %k {prefix = "k = "}
    yield %a
  }) : i32
  print %d {prefix = "d = ", hex = 1}
  print %x {prefix = "x = "}
  print %b
  print %h)",
                "", 64, subgroup);
}

TEST_CASE("spirv: a print appends a record to the buffer the launch passes") {
  for (const char* name : {"vulkan-lavapipe", "vulkan-nvidia"}) {
    CAPTURE(name);
    Target t = profile(name);
    Emitted e = emit_both(print_kernel(t.subgroup_size), t);
    const Artifact& a = e.artifact;
    // The buffer's address (8-byte aligned), its capacity and the launch tag come last.
    CHECK(a.print_offset > a.grid_offset);
    CHECK(a.print_offset % 8 == 0);
    CHECK(a.param_bytes == a.print_offset + 16);
    if (a.fault_offset >= 0) CHECK(a.print_offset >= a.fault_offset + 12);
    REQUIRE(a.prints.size() == 7);
    CHECK(a.prints[0].prefix == "v = ");
    CHECK(a.prints[0].dtype == DType::f32);
    CHECK(a.prints[0].rank == 1);
    // The two sites of one tile print share a statement; each other print has its own.
    CHECK(a.prints[0].statement == a.prints[1].statement);
    CHECK(a.prints[2].statement == a.prints[1].statement + 1);
    CHECK(a.prints[2].rank == 0);
    CHECK(a.prints[3].hex);
    CHECK(a.prints[3].dtype == DType::f64);
    CHECK(a.prints[4].is_ptr);
    CHECK(a.prints[5].dtype == DType::bf16);
    CHECK(a.prints[6].dtype == DType::i1);
    CHECK(a.prints[6].statement == 5);
    // One reservation per print, one dropped count per print; the loop counts its passes.
    CHECK(e.count("OpAtomicIAdd") == 14);
    CHECK(e.has("%print_passes = OpVariable %_ptr_Private_uint Private"));
    CHECK(e.has("LocalInvocationIndex"));
  }
}

TEST_CASE("spirv: a kernel without a print has no print channel") {
  Emitted e = emit_both(kernel("%n: i32", "  %c1 = constant {value = 1} : i32", "", 64, 32),
                        profile("vulkan-nvidia"));
  CHECK(e.artifact.print_offset == -1);
  CHECK(e.artifact.prints.empty());
  CHECK(e.artifact.param_bytes == e.artifact.grid_offset + 12);
  CHECK_FALSE(e.has("print_passes"));
}

TEST_CASE("spirv: a print of a tile of rank 5 is refused") {
  std::string text = kernel("%i: i32", "  print %i, %i, %i, %i, %i, %i {rank = 5}");
  CHECK(emit_error(text, profile(), ErrorKind::Unsupported).find("rank 5 (at most 4)") !=
        std::string::npos);
}

}  // namespace
}  // namespace spirv_test
