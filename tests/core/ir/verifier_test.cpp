// \file The verifier's exact diagnostics for a sample of ops, structural corruption that only the
// Builder can produce, and verify()/verify_all() behaviour. tests/golden/ir/verify_*.tir cover
// every op kind.
#include <doctest/doctest.h>

#include "core/ir/parser.h"
#include "core/ir/verifier.h"
#include "core/support/error.h"
#include "tests/core/ir/ir_samples.h"

namespace tessera::ir {
namespace {

using samples::FunctionBuilder;
using samples::i32;
using Diags = std::vector<std::string>;

/// The diagnostics of the module `body` (ops of one function with parameters `params`).
Diags diags_of(const std::string& params, const std::string& body) {
  return verify_all(*parse("func @f(" + params + ") loc(\"/src/k.cpp\":1:1) {\n" + body + "}\n"));
}

/// One diagnostic per line, so that doctest shows them on a mismatch.
std::string joined(const Diags& d) {
  std::string out;
  for (const std::string& s : d) out += s + "\n";
  return out;
}

std::string loc(int line) {
  return " loc(\"/src/k.cpp\":" + std::to_string(line) + ":3)\n";
}

TEST_CASE("verifier: the sample module that uses every op kind is valid") {
  CHECK(joined(verify_all(*samples::every_op_kind())) == joined(Diags{}));
  CHECK_NOTHROW(verify(*samples::every_op_kind()));
}

TEST_CASE("verifier: dot reports the shape it expected, with K and N named") {
  Diags d = diags_of("%a: i32", "  %0 = constant {value = 0.0} : tile<64x32xf16>" + loc(5) +
                                    "  %1 = constant {value = 0.0} : tile<16x64xf16>" + loc(6) +
                                    "  %2 = constant {value = 0.0} : tile<64x64xf32>" + loc(6) +
                                    "  %3 = dot %0, %1, %2 : tile<64x64xf32>" + loc(7));
  CHECK(joined(d) ==
        joined(Diags{"/src/k.cpp:7: error: 'dot' op expects operand #1 of shape [K, N] = [32, 64], "
                     "got [16, 64]"}));
  d = diags_of("%a: tile<16x16xf16>, %c: tile<16x16xf16>",
               "  %0 = dot %a, %a, %c {precision = \"fast\"} : tile<16x16xf16>" + loc(3));
  CHECK(joined(d) ==
        joined(Diags{"/src/k.cpp:1: error: function 'f' parameter #0 ('a') has type "
                     "tile<16x16xf16>; kernel parameters are scalars or pointers",
                     "/src/k.cpp:1: error: function 'f' parameter #1 ('c') has type "
                     "tile<16x16xf16>; kernel parameters are scalars or pointers",
                     "/src/k.cpp:3: error: 'dot' op expects attribute 'precision' to be one of "
                     "ieee, tf32; got \"fast\""}));
}

TEST_CASE("verifier: diagnostics of a sample of ops, word for word") {
  const std::pair<std::string, std::string> cases[] = {
      {"  %0 = add %n : i32" + loc(2), "/src/k.cpp:2: error: 'add' op expects 2 operands, got 1"},
      {"  %0 = load %n : i32" + loc(2),
       "/src/k.cpp:2: error: 'load' op expects operand #0 to be a pointer or a tile of pointers, "
       "got i32"},
      {"  %0 = splat %p : tile<8xptr<f32>>" + loc(2) +
           "  %1 = arange {end = 4, start = 0} : tile<4xi32>" + loc(3) +
           "  %2 = cmp_lt %1, %1 : tile<4xi1>" + loc(4) + "  %3 = load %0, %2 : tile<8xf32>" +
           loc(5),
       "/src/k.cpp:5: error: 'load' op expects operand #1 (the mask) of type tile<8xi1>, got "
       "tile<4xi1>"},
      {"  %0 = arange {end = 12, start = 0} : tile<12xi32>" + loc(2),
       "/src/k.cpp:2: error: 'arange' op result #0 has type tile<12xi32>; tile dimensions must be "
       "powers of two"},
      {"  %0 = arange {end = -2147483641, start = -2147483649} : tile<8xi32>" + loc(2),
       "/src/k.cpp:2: error: 'arange' op expects start and end - 1 in the range of i32, got "
       "-2147483649 and -2147483641"},
      {"  %0 = constant {value = 300} : u8" + loc(2),
       "/src/k.cpp:2: error: 'constant' op expects 'value' in the range of u8 [0, 255], got 300"},
      {"  %0 = program_id {axis = 3} : i32" + loc(2),
       "/src/k.cpp:2: error: 'program_id' op expects attribute 'axis' in 0..2, got 3"},
      {"  %0 = splat %n : tile<4xi32>" + loc(2) +
           "  %1 = reduce %0 {axis = 1, kind = \"sum\"} : i32" + loc(3),
       "/src/k.cpp:3: error: 'reduce' op expects attribute 'axis' in 0..0, got 1"},
      {"  %0 = exp %n : i32" + loc(2),
       "/src/k.cpp:2: error: 'exp' op expects a float operand, got i32"},
      {"  %0 = cmp_lt %n, %n : i32" + loc(2),
       "/src/k.cpp:2: error: 'cmp_lt' op expects result of type i1, got i32"},
      {"  %0 = for %n, %n, %n, %n ({\n  ^(%1: i32, %2: i32):\n    yield %2" + loc(3) +
           "  }) : f32" + loc(2),
       "/src/k.cpp:2: error: 'for' op expects result types to match the initial values (i32), got "
       "(f32)\n/src/k.cpp:3: error: 'yield' op expects operand types matching the results of the "
       "enclosing 'for' (f32), got (i32)\n"},
      {"  for %n, %n, %n ({\n  ^(%1: i32):\n    %2 = neg %1 : i32" + loc(3) + "    yield" + loc(3) +
           "  })" + loc(2) + "  %3 = neg %2 : i32" + loc(5),
       "/src/k.cpp:5: error: 'neg' op operand #0 is defined in a region that does not enclose this "
       "use"},
      {"  %0 = if %n ({\n    yield %n" + loc(3) + "  }, {\n    yield %n" + loc(4) + "  }) : i32" +
           loc(2),
       "/src/k.cpp:2: error: 'if' op expects operand #0 (the condition) of type i1, got i32"},
      {"  %0 = while %n ({\n  ^(%1: i32):\n    condition %1, %1" + loc(3) +
           "  }, {\n  ^(%2: i32):\n    yield %2" + loc(4) + "  }) : i32" + loc(2),
       "/src/k.cpp:3: error: 'condition' op expects operand #0 (the condition) of type i1, got "
       "i32"},
      {"  for %n, %n, %n ({\n  ^(%1: i32):\n    print" + loc(3) + "  })" + loc(2),
       "/src/k.cpp:2: error: 'for' op expects region #0 to end in 'yield', got 'print'\n"},
      {"  for %n, %n, %n ({\n  ^(%1: i32):\n    yield" + loc(3) + "    print" + loc(4) + "  })" +
           loc(2),
       "/src/k.cpp:2: error: 'for' op expects region #0 to end in 'yield', got 'print'\n"
       "/src/k.cpp:3: error: 'yield' op must be the last op of its region\n"},
  };
  for (const auto& [body, message] : cases) {
    CAPTURE(body);
    std::string want = message.ends_with("\n") ? message : message + "\n";
    CHECK(joined(diags_of("%p: ptr<f32>, %n: i32", body)) == want);
  }
}

TEST_CASE("verifier: SIMT functions, word for word") {
  auto simt = [](const std::string& attrs, const std::string& body) {
    return joined(verify_all(*parse("func @f(%p: ptr<f32>, %n: i32) attributes {" + attrs +
                                    "} loc(\"/src/k.cpp\":1:1) {\n" + body + "}\n")));
  };
  const std::string ok = "stage = \"simt\", subgroup = 32, threads = 64";
  CHECK(simt(ok, "  %0 = arange {end = 12, start = 0} : tile<12xi32>" + loc(2)) ==
        "/src/k.cpp:2: error: 'arange' op is a tile-IR op and cannot appear in a SIMT function\n");
  CHECK(simt(ok, "  %0 = shared_load %n {buffer = 0, width = 1} : f32" + loc(2)) ==
        "/src/k.cpp:2: error: 'shared_load' op expects attribute 'buffer' to name a shared buffer "
        "of the function, got 0 (no attribute 'shared_0')\n");
  CHECK(
      simt(ok, "  %0 = cmp_lt %n, %n : i1" + loc(2) + "  assert %n, %n, %0 {rank = 1}" + loc(3)) ==
      "/src/k.cpp:3: error: 'assert' op expects rank + values + 1 = 2 operands (1 i32 indices, 0 "
      "values, then the condition), got 3\n");
  CHECK(simt(ok, "  %0 = cmp_lt %n, %n : i1" + loc(2) +
                     "  assert %n, %n, %0 {rank = 1, values = 1, message = \"{0}\"}" + loc(3)) ==
        "");
  CHECK(simt(ok, "  %0 = cmp_lt %n, %n : i1" + loc(2) +
                     "  assert %n, %0, %0 {rank = 1, values = 1}" + loc(3)) ==
        "/src/k.cpp:3: error: 'assert' op expects operand #1 (a reported value) to be an integer "
        "scalar, got i1\n");
  CHECK(simt(ok, "  %0 = add %p, %p : ptr<f32>" + loc(2)) ==
        "/src/k.cpp:2: error: 'add' op expects integer or float operands, got ptr<f32>\n");
  CHECK(simt("shared_1 = tile<2xf32>, " + ok, "") ==
        "/src/k.cpp:1: error: function 'f' (SIMT) expects shared buffers numbered densely from 0, "
        "but 'shared_0' is missing\n");
  // The same ops in a tile function.
  CHECK(joined(diags_of("%n: i32", "  %0 = lane_id : i32" + loc(2) + "  assert %n, %n" + loc(3))) ==
        "/src/k.cpp:2: error: 'lane_id' op is a SIMT-IR op and cannot appear in a tile function "
        "(one without stage = \"simt\")\n"
        "/src/k.cpp:3: error: 'assert' op expects 1 operand, got 2\n");
}

TEST_CASE("verifier: function attributes out of order (only the Builder can make them)") {
  FunctionBuilder fb({i32()});
  fb.fn->attrs = {{"threads", int64_t{64}},
                  {"stage", std::string("simt")},
                  {"subgroup", int64_t{32}},
                  {"subgroup", int64_t{32}}};
  fb.b.create(OpKind::Barrier, {}, {});
  CHECK(joined(verify_all(*fb.module)) ==
        joined(Diags{"/src/k.cpp:1: error: function 'f' has attributes out of order or repeated "
                     "('threads', 'stage')",
                     "/src/k.cpp:1: error: function 'f' has attributes out of order or repeated "
                     "('subgroup', 'subgroup')"}));
}

TEST_CASE("verifier: an op with an unknown location is reported at <unknown>") {
  CHECK(joined(diags_of("", "  yield loc(unknown)\n")) ==
        joined(Diags{"<unknown>: error: 'yield' op is not allowed at function top level"}));
}

TEST_CASE(
    "verifier: verify throws the first diagnostic as a user error and verify_all returns all") {
  std::unique_ptr<Module> m = parse(
      "func @f(%n: i32) {\n  %0 = exp %n : i32 loc(\"a.cpp\":2:1)\n"
      "  %1 = neg %n : f32 loc(\"a.cpp\":3:1)\n}\nfunc @f() loc(\"a.cpp\":5:1) {\n}\n");
  CHECK(joined(verify_all(*m)) ==
        joined(Diags{"a.cpp:2: error: 'exp' op expects a float operand, got i32",
                     "a.cpp:3: error: 'neg' op expects result of type i32 (the "
                     "operands'), got f32",
                     "a.cpp:5: error: function 'f' is defined twice"}));
  try {
    verify(*m);
    FAIL("verify accepted an invalid module");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()) == "a.cpp:2: error: 'exp' op expects a float operand, got i32");
  }
  CHECK_THROWS_AS(verify(m->kernel()), Error);
  CHECK_NOTHROW(verify(*m->functions[1]));
}

TEST_CASE("verifier: structural corruption the parser cannot express") {
  FunctionBuilder fb({i32()});
  Value* n = fb.params[0];
  Op* neg = fb.b.create(OpKind::Neg, {n}, {i32()});
  Op* null_operand = fb.b.create(OpKind::Neg, {nullptr}, {i32()});
  Op* loop = fb.b.create(OpKind::For, {n, n, n}, {});
  Region* body = fb.b.add_region(loop);
  fb.module->add_arg(body, i32());
  Builder(*fb.module, body).create(OpKind::Yield, {}, {});
  neg->parent = body;  // lies about its region
  body->parent = neg;  // and the loop's region about its op
  Module other;
  Value* stranger = other.new_value(i32());
  fb.b.create(OpKind::Neg, {stranger}, {i32()});
  null_operand->results[0]->index = 3;
  CHECK(joined(verify_all(*fb.module)) ==
        joined(Diags{
            "/src/k.cpp:1: error: 'neg' op is in a region that is not its parent (Op::parent)",
            "/src/k.cpp:1: error: 'neg' op result #0 does not point back to its op "
            "(Value::def, Value::index)",
            "/src/k.cpp:1: error: 'neg' op operand #0 is null",
            "/src/k.cpp:1: error: 'for' op region #0 does not point back to its op "
            "(Region::parent)",
            "/src/k.cpp:1: error: 'neg' op operand #0 is not defined in this function"}));
}

TEST_CASE("verifier: parameters must be the body's arguments") {
  FunctionBuilder fb({i32(), i32()});
  std::swap(fb.fn->params[0], fb.fn->params[1]);
  fb.fn->body->args.pop_back();
  CHECK(
      joined(verify_all(*fb.module)) ==
      joined(Diags{
          "/src/k.cpp:1: error: function 'f' has 2 parameters but its body has 1 arguments",
          "/src/k.cpp:1: error: function 'f' parameter #0 ('p1') is not argument #0 of its body",
          "/src/k.cpp:1: error: function 'f' parameter #1 ('p0') is not argument #1 of its body"}));
}

}  // namespace
}  // namespace tessera::ir
