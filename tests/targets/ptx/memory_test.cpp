/// \file Instruction selection for memory: aligned contiguous accesses become ld/st.global.v4 (and
/// .v2), unaligned ones stay scalar, predicated loads yield `other`, shared memory uses the
/// arena with vector accesses, and i1 elements move as bytes.
#include "helpers.h"

namespace ptx_test {
namespace {

std::string load_store(std::string_view dtype, int width, int align, std::string_view other) {
  std::string names, others, types;
  for (int i = 0; i < width; ++i) {
    names += (i ? ", %v" : "%v") + std::to_string(i);
    others += std::string(", %o");
    types += std::string(i ? ", " : "") + std::string(dtype);
  }
  std::string body =
      "  %o = constant {value = " + std::string(other) + "} : " + std::string(dtype) + "\n" +
      "  %pid = program_id {axis = 0} : i32\n"
      "  %m = cmp_lt %pid, %n : i1\n"
      "  " +
      names + " = global_load %src, %m" + others + " {align = " + std::to_string(align) +
      ", width = " + std::to_string(width) + "} : " + types + "\n" + "  global_store %dst, %m, " +
      names + " {align = " + std::to_string(align) + ", width = " + std::to_string(width) + "}";
  std::string params =
      "%src: ptr<" + std::string(dtype) + ">, %dst: ptr<" + std::string(dtype) + ">, %n: i32";
  return kernel(params, body);
}

TEST_CASE("ptx: aligned width-4 f32 accesses are ld.global.v4 / st.global.v4") {
  Emitted e = emit_both(load_store("f32", 4, 16, "0.0"));
  CHECK(e.count("ld.global.v4.f32") == 1);
  CHECK(e.count("st.global.v4.f32") == 1);
  CHECK(!e.has("ld.global.f32"));
}

TEST_CASE("ptx: other widths and dtypes vectorize by bytes") {
  CHECK(emit_both(load_store("f32", 2, 8, "0.0")).has("ld.global.v2.f32"));
  CHECK(emit_both(load_store("f16", 8, 16, "0.0")).has("ld.global.v4.b32"));
  CHECK(emit_both(load_store("i8", 16, 16, "0")).has("ld.global.v4"));
  CHECK(emit_both(load_store("f64", 2, 16, "0.0")).has("ld.global.v2.f64"));
  Emitted wide = emit_both(load_store("f32", 8, 16, "0.0"));  // two 128-bit accesses
  CHECK(wide.count("ld.global.v4.f32") == 2);
  CHECK(wide.count("st.global.v4.f32") == 2);
}

TEST_CASE("ptx: an access aligned only to its element stays scalar") {
  Emitted e = emit_both(load_store("f32", 4, 4, "0.0"));
  CHECK(!e.has("ld.global.v4"));
  CHECK(e.count("ld.global.f32") == 4);
}

TEST_CASE("ptx: a masked-off load yields its other values and touches no memory") {
  Emitted e = emit_both(load_store("f32", 4, 16, "2.5"));
  CHECK(e.has("0f40200000"));  // 2.5, the value of masked-off lanes
  CHECK(e.has("bra"));         // the access is branched around
}

TEST_CASE("ptx: i1 elements are bytes in memory") {
  Emitted e = emit_both(load_store("i1", 1, 1, "0"));
  CHECK(e.has("ld.global.u8"));
  CHECK(e.has("st.global.u8"));
}

TEST_CASE("ptx: shared loads and stores use the arena with vector accesses") {
  std::string body = R"(  %lane = lane_id : i32
  %c4 = constant {value = 4} : i32
  %i = mul %lane, %c4 : i32
  %one = constant {value = 1.0} : f32
  shared_store %i, %one, %one, %one, %one {buffer = 1, width = 4}
  barrier
  %a, %b, %c, %d = shared_load %i {buffer = 1, width = 4} : f32, f32, f32, f32
  %s0 = add %a, %b : f32
  %s1 = add %s0, %c : f32
  %s = add %s1, %d : f32
  %t = constant {value = 1} : i1
  global_store %p, %t, %s {align = 4, width = 1}
  %f = cmp_lt %lane, %c4 : i1
  shared_store %lane, %f {buffer = 0, width = 1}
  barrier
  %g = shared_load %lane {buffer = 0, width = 1} : i1
  %q = ptr_add %flags, %lane : ptr<i1>
  global_store %q, %t, %g {align = 1, width = 1})";
  Emitted e = emit_both(kernel("%p: ptr<f32>, %flags: ptr<i1>", body,
                               "shared_0 = tile<32xi1>, shared_1 = tile<128xf32>"));
  CHECK(e.has("st.shared.v4.f32"));
  CHECK(e.has("ld.shared.v4.f32"));
  CHECK(e.has("st.shared.u8"));
  CHECK(e.has("ld.shared.u8"));
  CHECK(e.has("bar.sync \t0;"));
  CHECK(e.artifact.shared_bytes == 32 + 512);
}

TEST_CASE("ptx: volatile loads stay loads") {
  std::string body = R"(  %t = constant {value = 1} : i1
  %z = constant {value = 0} : i32
  %v = global_load %p, %t, %z {align = 4, width = 1, volatile = 1} : i32
  %w = global_load %p, %t, %z {align = 4, width = 1, volatile = 1} : i32
  %s = add %v, %w : i32
  global_store %p, %t, %s {align = 4, width = 1})";
  Emitted e = emit_both(kernel("%p: ptr<i32>", body));
  CHECK(e.count("ld.volatile.global.u32") == 2);
}

}  // namespace
}  // namespace ptx_test
