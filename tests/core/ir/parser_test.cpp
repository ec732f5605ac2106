// \file The parser: the structure it rebuilds, its conveniences, and its exact error messages.
#include <doctest/doctest.h>

#include <string>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/support/error.h"

namespace tessera::ir {
namespace {

/// The message of the parse error `text` raises (and that it is a user error).
std::string parse_error(const std::string& text) {
  try {
    parse(text, "t.tir");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kLoop =
    "// a comment line\n"
    "func @k(%p: ptr<f32>, %n: i32 {divisibility = 16}) loc(\"/src/k.cpp\":3:1) {\n"
    "  %0 = constant {value = 0} : i32 loc(\"/src/k.cpp\":4:7)\n"
    "  %1 = constant {value = 0.0} : f32 loc(unknown)   // trailing comment\n"
    "  %2 = for %0, %n, %n, %1 ({\n"
    "  ^(%3: i32, %4: f32):\n"
    "    %5 = add %4, %4 : f32 loc(\"/src/k.cpp\":6:9)\n"
    "    yield %5 loc(\"/src/k.cpp\":6:9)\n"
    "  }) : f32 loc(\"/src/k.cpp\":5:3)\n"
    "  store %p, %2 loc(\"/src/k.cpp\":8:3)\n"
    "}\n";

TEST_CASE("parser: rebuilds ops, regions, parents, parameters and locations") {
  std::unique_ptr<Module> m = parse(kLoop);
  REQUIRE(m->functions.size() == 1);
  const Function& fn = m->kernel();
  CHECK(fn.name == "k");
  REQUIRE(fn.params.size() == 2);
  CHECK(fn.params[1].name == "n");
  CHECK(fn.params[1].attrs == std::vector<Attribute>{{"divisibility", int64_t{16}}});
  CHECK(fn.params[0].value == fn.body->args[0]);
  CHECK(fn.params[0].value->owner == fn.body);
  CHECK(fn.body->parent == nullptr);
  CHECK(fn.loc == Location::make("/src/k.cpp", 3, 1));
  REQUIRE(fn.body->ops.size() == 4);
  const Op* loop = fn.body->ops[2];
  CHECK(loop->kind == OpKind::For);
  CHECK(loop->parent == fn.body);
  CHECK(loop->operands[1] == fn.params[1].value);
  CHECK(loop->operands[3] == fn.body->ops[1]->result(0));
  REQUIRE(loop->regions.size() == 1);
  const Region* body = loop->region(0);
  CHECK(body->parent == loop);
  REQUIRE(body->args.size() == 2);
  CHECK(body->args[1]->owner == body);
  CHECK(body->args[1]->index == 1);
  CHECK(body->ops[0]->parent == body);
  CHECK(body->ops[0]->operands[0] == body->args[1]);
  CHECK(body->terminator() == body->ops[1]);
  CHECK(loop->result(0)->def == loop);
  CHECK(loop->loc.file == Location::make("/src/k.cpp", 0).file);  // interned
  CHECK(fn.body->ops[1]->loc == Location{});
  CHECK(verify_all(*m).empty());
  std::string printed = print(*m);
  CHECK(print(*parse(printed)) == printed);
}

TEST_CASE("parser: accepts free whitespace, comments and any value names") {
  std::unique_ptr<Module> m = parse(
      "func   @f ( %a : i32 ,%b:i32 )\n"
      "loc(unknown){ // header done\n"
      "%sum=add %a,%b:i32 loc(unknown) %twice = add %sum , %sum\n"
      "  : i32   loc(unknown)\n"
      "}\n");
  CHECK(print(*m) ==
        "func @f(%a: i32, %b: i32) loc(unknown) {\n"
        "  %0 = add %a, %b : i32 loc(unknown)\n"
        "  %1 = add %0, %0 : i32 loc(unknown)\n"
        "}\n");
}

TEST_CASE("parser: an op without loc(...) is located at its own text") {
  std::unique_ptr<Module> m =
      parse("func @f() {\n  print\n  %0 = program_id {axis = 0} : i32\n}\n", "case.tir");
  const Region* body = m->kernel().body;
  CHECK(m->kernel().loc == Location::make("case.tir", 1, 1));
  // `print` has no operands, so the next op's `%0 =` is not taken for them.
  REQUIRE(body->ops.size() == 2);
  CHECK(body->ops[0]->operands.empty());
  CHECK(body->ops[0]->loc == Location::make("case.tir", 2, 3));
  CHECK(body->ops[1]->loc == Location::make("case.tir", 3, 3));
}

TEST_CASE("parser: a region may leave out an empty argument list") {
  std::unique_ptr<Module> m =
      parse("func @f(%c: i1) {\n  if %c ({\n    yield\n  }, {\n  ^():\n    yield\n  })\n}\n");
  const Op* branch = m->kernel().body->ops[0];
  REQUIRE(branch->regions.size() == 2);
  CHECK(branch->region(0)->ops.size() == 1);
  CHECK(verify_all(*m).empty());
}

TEST_CASE("parser: uses before definitions resolve, and the verifier reports them") {
  std::unique_ptr<Module> m = parse(
      "func @f(%a: i32) {\n"
      "  %x = add %y, %a : i32 loc(\"u.cpp\":2:3)\n"
      "  %y = add %a, %a : i32\n"
      "}\n");
  const Region* body = m->kernel().body;
  CHECK(body->ops[0]->operands[0] == body->ops[1]->result(0));
  CHECK(verify_all(*m) == std::vector<std::string>{
                              "u.cpp:2: error: 'add' op operand #0 is used before its definition"});
}

TEST_CASE("parser: function attributes, in any order, before the location") {
  std::unique_ptr<Module> m = parse(
      "func @k(%n: i32 {divisibility = 16}) attributes {threads = 64, stage = \"simt\", "
      "shared_0 = tile<3xf16>, subgroup = 8, \"a b\" = [1]} loc(\"k.cpp\":4:2) {\n"
      "  barrier\n"
      "}\n"
      "func @plain() attributes {} {\n"
      "}\n"
      "func @no_loc() attributes {target = \"vulkan-lavapipe\"} {\n"
      "}\n",
      "a.tir");
  REQUIRE(m->functions.size() == 3);
  const Function& k = m->kernel();
  CHECK(k.attrs == std::vector<Attribute>{{"a b", std::vector<int64_t>{1}},
                                          {"shared_0", Type::tile(DType::f16, {3})},
                                          {"stage", std::string("simt")},
                                          {"subgroup", int64_t{8}},
                                          {"threads", int64_t{64}}});
  CHECK(k.loc == Location::make("k.cpp", 4, 2));
  CHECK(k.params[0].attrs == std::vector<Attribute>{{"divisibility", int64_t{16}}});
  CHECK(m->functions[1]->attrs.empty());
  CHECK(m->functions[2]->attrs ==
        std::vector<Attribute>{{"target", std::string("vulkan-lavapipe")}});
  CHECK(m->functions[2]->loc == Location::make("a.tir", 6, 1));
  CHECK(verify_all(*m).empty());
  CHECK(m->clone()->kernel().attrs == k.attrs);
  std::string printed = print(*m);
  CHECK(printed.find("func @plain() loc(") != std::string::npos);
  CHECK(print(*parse(printed)) == printed);
}

TEST_CASE("parser: several functions, each with its own value names") {
  std::unique_ptr<Module> m = parse(
      "func @a(%x: i32) {\n  %0 = neg %x : i32\n}\nfunc @b(%x: f32) {\n  %0 = neg %x : f32\n}\n");
  REQUIRE(m->functions.size() == 2);
  CHECK(m->functions[1]->body->ops[0]->operands[0] == m->functions[1]->params[0].value);
  CHECK(parse("").get()->functions.empty());
  CHECK(parse("  // only a comment\n")->functions.empty());
}

TEST_CASE("parser: errors name the line, the column and what was expected") {
  const std::pair<const char*, const char*> cases[] = {
      {"func @f() {\n  %0 = addd %a : i32\n}\n", "t.tir:2:8: error: unknown op 'addd'"},
      {"func @f(%a: i32) {\n  %0 = neg %zz : i32\n}\n",
       "t.tir:2:12: error: use of undefined value '%zz'"},
      {"func @f(%a: i32) {\n  %0 = neg %a : tile<3xq32> loc(unknown)\n}\n",
       "t.tir:2:17: error: invalid type 'tile<3xq32>'"},
      {"func @f(%a: tile<4xf32) {\n}\n", "t.tir:1:13: error: invalid type 'tile<4xf32'"},
      {"func @f(%a: i32) {\n  %0, %1 = add %a, %a : i32 loc(unknown)\n}\n",
       "t.tir:2:23: error: expected 2 result types, got 1"},
      {"func @f(%a: i32) {\n  store %a, %a : i32\n}\n",
       "t.tir:2:16: error: expected 0 result types, got 1"},
      {"func @f(%a: i32) {\n  %0 = add %a, %a loc(unknown)\n}\n",
       "t.tir:2:19: error: expected ':' and 1 result type, got 'loc'"},
      {"func @f(%a: i32) {\n  %a = neg %a : i32\n}\n",
       "t.tir:2:3: error: redefinition of value '%a'"},
      {"func @f(%a: i32) {\n  %0 = neg %a : \n}\n", "t.tir:3:1: error: expected a type, got '}'"},
      {"func @f() {\n  print {s = \"abc}\n}\n", "t.tir:2:14: error: unterminated string"},
      {"func @f() {\n  print {s = \"a\\qb\"}\n}\n",
       "t.tir:2:16: error: invalid escape sequence in string"},
      {"func @f() {\n  print {a = 1, a = 2}\n}\n", "t.tir:2:17: error: duplicate attribute 'a'"},
      {"func @f() {\n  print {a = 99999999999999999999}\n}\n",
       "t.tir:2:14: error: integer literal out of range"},
      {"func @f() {\n  print {a = [1, 2.5]}\n}\n", "t.tir:2:18: error: expected an integer"},
      {"func @f() {\n  print {a = }\n}\n",
       "t.tir:2:14: error: expected an attribute value, got '}'"},
      {"func @f() {\n  print {a = 1 b = 2}\n}\n",
       "t.tir:2:16: error: expected '}' to end the attributes, got 'b'"},
      {"func @f() {\n  print\n",
       "t.tir:3:1: error: expected '}' to end the function body, got end of input"},
      {"funk @f() {\n}\n", "t.tir:1:1: error: expected 'func', got 'funk'"},
      {"func @f(%a i32) {\n}\n",
       "t.tir:1:12: error: expected ':' after the parameter name, got 'i32'"},
      {"func @f() {\n  %0 = constant : i32 loc(\"x.cpp\":1)\n}\n",
       "t.tir:2:36: error: expected ':' after the line number, got ')'"},
      {"func @f() {\n  print loc(nowhere)\n}\n",
       "t.tir:2:13: error: expected 'unknown' or a quoted file name, got 'nowhere'"},
      {"func @f(%c: i1) {\n  if %c ({\n  ^(%x i32):\n  })\n}\n",
       "t.tir:3:8: error: expected ':' after the argument name, got 'i32'"},
      {"func @f(%c: i1) {\n  if %c ({\n    yield\n  }\n}\n",
       "t.tir:5:1: error: expected ')' to end the regions, got '}'"},
      {"func @f() {\n  % = neg\n}\n", "t.tir:2:5: error: expected a value name after '%', got '='"},
      {"func @f() attributes (threads = 1) {\n}\n",
       "t.tir:1:22: error: expected '{' to begin the function attributes, got '('"},
      {"func @f() attributes {threads = 1, threads = 1} {\n}\n",
       "t.tir:1:36: error: duplicate attribute 'threads'"},
      {"func @f() attributes {threads = 1 {\n}\n",
       "t.tir:1:35: error: expected '}' to end the attributes, got '{'"},
      {"func @f() loc(unknown) attributes {} {\n}\n",
       "t.tir:1:24: error: expected '{' to begin the function body, got 'attributes'"},
  };
  for (const auto& [text, message] : cases) {
    CAPTURE(text);
    CHECK(parse_error(text) == message);
  }
}

TEST_CASE("parser: the default source name is <input>") {
  try {
    parse("bad");
    FAIL("parse accepted bad input");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "<input>:1:1: error: expected 'func', got 'bad'");
  }
}

/// A function of `depth` ifs inside one another, each on its own line.
std::string nested_ifs(int depth) {
  std::string text = "func @f(%c: i1) {\n";
  for (int i = 0; i < depth; ++i) text += "if %c ({\n";
  for (int i = 0; i < depth; ++i) text += "yield\n}, {\nyield\n})\n";
  return text + "}\n";
}

TEST_CASE("parser: regions nest 256 deep at most, a tile has 2^20 elements at most") {
  std::unique_ptr<Module> m = parse(nested_ifs(256));
  std::vector<std::string> problems = verify_all(*m);
  CHECK(problems.size() == 0);
  for (const std::string& p : problems) MESSAGE(p);
  // The 257th region opens on line 258 (the function is line 1), at its '{'.
  CHECK(parse_error(nested_ifs(257)) ==
        "t.tir:258:8: error: regions nested 257 deep, over the limit of 256");
  CHECK(parse_error(nested_ifs(20000)) ==
        "t.tir:258:8: error: regions nested 257 deep, over the limit of 256");
  CHECK(parse_error("func @f(%a: tile<2048x1024xf32>) {\n}\n") ==
        "t.tir:1:13: error: type 'tile<2048x1024xf32>' is over the limit of 1048576 (2^20) "
        "elements per tile");
  CHECK(parse_error(
            "func @f() {\n  %0 = arange {start = 0, end = 16777216} : tile<16777216xi32>\n}\n") ==
        "t.tir:2:45: error: type 'tile<16777216xi32>' is over the limit of 1048576 (2^20) elements "
        "per tile");
  CHECK(parse_error("func @f(%a: tile<1048576x1048576x1048576x1048576xf32>) {\n}\n")
            .find("is over the limit") != std::string::npos);
  CHECK(parse("func @f(%a: tile<1024x1024xf32>) {\n  yield\n}\n")->functions.size() == 1);
}

}  // namespace
}  // namespace tessera::ir
