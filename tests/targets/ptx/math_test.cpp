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

}  // namespace
}  // namespace ptx_test
