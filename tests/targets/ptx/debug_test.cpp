/// \file Device print (vprintf with the CUDA argument-buffer ABI) and device assert (the fault
/// record, then trap), assume and the value hints.
#include "helpers.h"

namespace ptx_test {
namespace {

TEST_CASE("ptx: print calls vprintf with a format per dtype and the element index") {
  std::string body = R"(  %pid = program_id {axis = 0} : i32
  %lane = lane_id : i32
  %f = constant {value = 1.5} : f32
  print %lane, %f {prefix = "x = ", rank = 1}
  %d = constant {value = 2.5} : f64
  print %d {prefix = "100% d "}
  %h = constant {value = 3} : i16
  print %h {hex = 1}
  print %p {prefix = "p "}
  %u = constant {value = 7} : u64
  print %lane, %pid, %u {rank = 2})";
  Emitted e = emit_both(kernel("%p: ptr<f32>", body));
  CHECK(e.has("call.uni (retval0),"));
  CHECK(e.count("vprintf,") == 5);
  CHECK(e.has(".extern .func  (.param .b32 func_retval0) vprintf"));
  // the format strings, as bytes in global memory: "pid (%u, %u, %u) idx [%d] x = %.9g\n" ...
  CHECK(e.has(".global .align 1 .b8 tessera_fmt"));
}

TEST_CASE("ptx: assert records the failure in the fault record and traps") {
  std::string body = R"(  %lane = lane_id : i32
  %c8 = constant {value = 8} : i32
  %ok = cmp_lt %lane, %c8 : i1
  assert %lane, %ok {message = "lane < 8", rank = 1})";
  Emitted e = emit_both(kernel("", body));
  CHECK(e.has(".visible .global .align 8 .u64 __tessera_fault_record;"));
  CHECK(e.has("trap;"));
  CHECK(e.has("atom.global.cas.b32"));  // the first failing thread claims the record
  CHECK(e.has("membar.sys;"));          // ... and makes it visible to the host before trapping
}

TEST_CASE("ptx: an assert's reported values and heading go into the fault record") {
  std::string body = R"(  %lane = lane_id : i32
  %c8 = constant {value = 8} : i32
  %ok = cmp_lt %lane, %c8 : i1
  %a = bitcast %p : u64
  assert %lane, %a, %lane, %ok {fault = "out-of-bounds load", message = "at {0:x}, lane {1}", rank = 1, values = 2})";
  Emitted e = emit_both(kernel("%p: ptr<f32>", body));
  // The count (2 at offset 40), then each value widened to 64 bits at offsets 48 and 56.
  CHECK(e.has("st.volatile.global.u32 \t[%rd1+40]"));
  CHECK(e.count("st.volatile.global.u64") == 2);
  auto m = parse(kernel("%p: ptr<f32>", body));
  std::string ir = tessera::ptx::emit_llvm_ir(m->kernel(), profile());
  CHECK(ir.find("out-of-bounds load in kernel k at test.tir:6: at {0:x}, lane {1}") !=
        std::string::npos);
}

TEST_CASE("ptx: the assert message names the kernel's source location") {
  std::string text =
      "func @k() attributes {stage = \"simt\", threads = 32, subgroup = 32} {\n"
      "  %f = constant {value = 0} : i1\n"
      "  assert %f {message = \"never\"} loc(\"/src/kern.cpp\":42:7)\n"
      "}\n";
  auto m = parse(text);
  std::string ir = tessera::ptx::emit_llvm_ir(m->kernel(), profile());
  CHECK(ir.find("/src/kern.cpp:42: never") != std::string::npos);
}

TEST_CASE("ptx: assume and the value hints leave no instructions behind") {
  std::string body = R"(  %c0 = constant {value = 0} : i32
  %pos = cmp_ge %n, %c0 : i1
  assume %pos
  %m = multiple_of %n {values = [16]} : i32
  %c = max_contiguous %m {values = [4]} : i32
  %q = multiple_of %p {values = [16]} : ptr<i32>
  %tr = constant {value = 1} : i1
  global_store %q, %tr, %c {align = 4, width = 1})";
  Emitted e = emit_both(kernel("%p: ptr<i32>, %n: i32", body));
  CHECK(e.has("st.global.u32"));
}

}  // namespace
}  // namespace ptx_test
