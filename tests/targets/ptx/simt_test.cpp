/// \file Thread identity, shuffles and barriers: special registers, shfl.sync with the full mask
/// and the right clamp per mode, 64-bit values in two halves, bar.sync.
#include "helpers.h"

namespace ptx_test {
namespace {

std::string shuffle_kernel(std::string_view mode, std::string_view dtype) {
  std::string body =
      "  %lane = lane_id : i32\n"
      "  %t = constant {value = 1} : i1\n"
      "  %z = constant {value = 0} : " +
      std::string(dtype) +
      "\n"
      "  %v = global_load %p, %t, %z {align = 8, width = 1} : " +
      std::string(dtype) +
      "\n"
      "  %n = constant {value = 1} : i32\n"
      "  %s = shuffle %v, %n {mode = \"" +
      std::string(mode) + "\"} : " + std::string(dtype) +
      "\n"
      "  global_store %p, %t, %s {align = 8, width = 1}";
  return kernel("%p: ptr<" + std::string(dtype) + ">", body);
}

TEST_CASE("ptx: shuffle modes become shfl.sync variants with the full mask and their clamp") {
  CHECK(emit_both(shuffle_kernel("xor", "f32")).has("shfl.sync.bfly.b32"));
  CHECK(emit_both(shuffle_kernel("xor", "f32")).has(", 1, 31, -1;"));
  CHECK(emit_both(shuffle_kernel("idx", "i32")).has("shfl.sync.idx.b32"));
  CHECK(emit_both(shuffle_kernel("down", "i32")).has("shfl.sync.down.b32"));
  CHECK(emit_both(shuffle_kernel("down", "i32")).has(", 1, 31, -1;"));
  Emitted up = emit_both(shuffle_kernel("up", "i32"));
  CHECK(up.has("shfl.sync.up.b32"));
  CHECK(up.has(", 1, 0, -1;"));  // c = 0: lanes below n keep their own value
}

TEST_CASE("ptx: 64-bit values and pointers shuffle in two halves, narrow ones widened") {
  CHECK(emit_both(shuffle_kernel("xor", "f64")).count("shfl.sync.bfly.b32") == 2);
  CHECK(emit_both(shuffle_kernel("xor", "i64")).count("shfl.sync.bfly.b32") == 2);
  CHECK(emit_both(shuffle_kernel("idx", "f16")).count("shfl.sync.idx.b32") == 1);
  CHECK(emit_both(shuffle_kernel("idx", "i8")).count("shfl.sync.idx.b32") == 1);
  CHECK(emit_both(shuffle_kernel("idx", "i1")).count("shfl.sync.idx.b32") == 1);
  std::string body = R"(  %z = constant {value = 0} : i32
  %q = shuffle %p, %z {mode = "idx"} : ptr<f32>
  %t = constant {value = 1} : i1
  %one = constant {value = 1.0} : f32
  global_store %q, %t, %one {align = 4, width = 1})";
  CHECK(emit_both(kernel("%p: ptr<f32>", body)).count("shfl.sync.idx.b32") == 2);
}

TEST_CASE("ptx: ids come from special registers") {
  std::string body = R"(  %x = program_id {axis = 0} : i32
  %y = program_id {axis = 1} : i32
  %z = program_id {axis = 2} : i32
  %nx = num_programs {axis = 0} : i32
  %ny = num_programs {axis = 1} : i32
  %nz = num_programs {axis = 2} : i32
  %l = lane_id : i32
  %s = subgroup_id : i32
  %a = add %x, %y : i32
  %b = add %a, %z : i32
  %c = add %b, %nx : i32
  %d = add %c, %ny : i32
  %e = add %d, %nz : i32
  %f = add %e, %l : i32
  %g = mul %f, %s : i32
  %t = constant {value = 1} : i1
  global_store %p, %t, %g {align = 4, width = 1})";
  Emitted e = emit_both(kernel("%p: ptr<i32>", body));
  for (const char* r :
       {"%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z", "%tid.x"})
    CHECK(e.has(r));
  CHECK(e.has("and.b32"));  // lane = tid.x & 31
  CHECK(e.has("shr.u32"));  // subgroup = tid.x >> 5
}

TEST_CASE("ptx: a barrier is bar.sync 0") {
  Emitted e = emit_both(kernel("", "  barrier\n  barrier"));
  CHECK(e.count("bar.sync \t0;") == 2);
}

}  // namespace
}  // namespace ptx_test
