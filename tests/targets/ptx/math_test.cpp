/// \file The PTX target's math library (math.cpp over targets/math/algorithms.h): every math op
/// on every float dtype assembled. Its accuracy is measured in tests/targets/math.
#include <string>
#include <vector>

#include "core/ir/op_table.h"
#include "helpers.h"

namespace ptx_test {
namespace {

TEST_CASE("ptx: every math op assembles for f16, bf16, f32 and f64") {
  for (const char* t : {"f16", "bf16", "f32", "f64"}) {
    CAPTURE(t);
    std::string s(t);
    std::string body = "  %tr = constant {value = 1} : i1\n  %z = constant {value = 0.0} : " + s +
                       "\n"
                       "  %a = global_load %p, %tr, %z {align = 8, width = 1} : " +
                       s + "\n";
    std::string prev = "%a";
    int i = 0;
    // every math row of ops.def (op_table.h's traits), and abs
    std::vector<std::string> unary = {"abs"};
    for (tessera::ir::OpKind k : tessera::ir::kinds_where(tessera::ir::is_unary_math))
      unary.emplace_back(tessera::ir::op_name(k));
    for (const std::string& op : unary) {
      std::string r = "%m" + std::to_string(i++);
      body += "  " + r + " = " + op + " " + prev + " : " + s + "\n";
      prev = r;
    }
    for (tessera::ir::OpKind k : tessera::ir::kinds_where(tessera::ir::is_binary_math)) {
      std::string r = "%m" + std::to_string(i++);
      body += "  " + r + " = " + std::string(tessera::ir::op_name(k)) + " " + prev + ", %a : " + s +
              "\n";
      prev = r;
    }
    body += "  %rem = rem " + prev + ", %a : " + s + "\n";
    body += "  global_store %p, %tr, %rem {align = 8, width = 1}";
    Emitted e = emit_both(kernel("%p: ptr<" + s + ">", body));
    CHECK(e.has(s == "f64" ? "sqrt.rn.f64" : "sqrt.rn.f32"));   // f16/bf16 through f32
    CHECK(e.has("cvt.rmi."));                                   // floor
    CHECK(e.has(".const .align 4 .b8 __tessera_two_over_pi"));  // sin/cos reduction table
  }
}

/// exp2 at f32 (and f16/bf16 through it) is ex2.approx.ftz: results below 2^-126 flush to +0, as
/// Triton's tl.exp2 does; exp keeps the plain ex2.approx, whose subnormal results it needs down to
/// e^-104.
TEST_CASE("ptx: f32 exp2 is ex2.approx.ftz, exp the plain ex2.approx") {
  for (const char* op : {"exp2", "exp"}) {
    CAPTURE(op);
    Emitted e = emit_both(kernel("%p: ptr<f32>",
                                 "  %tr = constant {value = 1} : i1\n"
                                 "  %z = constant {value = 0.0} : f32\n"
                                 "  %a = global_load %p, %tr, %z {align = 4, width = 1} : f32\n"
                                 "  %r = " +
                                     std::string(op) +
                                     " %a : f32\n"
                                     "  global_store %p, %tr, %r {align = 4, width = 1}"));
    const bool two = std::string(op) == "exp2";
    CHECK(e.count("ex2.approx.ftz.f32") == (two ? 1 : 0));
    CHECK(e.count("ex2.approx.f32") == (two ? 0 : 1));
  }
}

}  // namespace
}  // namespace ptx_test
