// \file The printer's text form, and print(parse(print(m))) == print(m) for built modules.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "tests/core/ir/ir_samples.h"

namespace tessera::ir {
namespace {

using samples::FunctionBuilder;
using samples::i32;

/// print(parse(print(m))) == print(m); returns print(m).
std::string check_round_trip(const Module& m) {
  std::string text = print(m);
  std::unique_ptr<Module> again = parse(text, "round_trip");
  CHECK(print(*again) == text);
  return text;
}

TEST_CASE("printer: a small kernel prints in the documented generic form") {
  FunctionBuilder fb({Type::pointer(DType::f32), i32()}, Location::make("/src/gelu.cpp", 3, 6));
  fb.fn->name = "gelu_kernel";
  fb.fn->params[0].name = "x";
  fb.fn->params[0].attrs = {{"divisibility", int64_t{16}}};
  fb.fn->params[1].name = "n";
  fb.b.set_loc(Location::make("/src/gelu.cpp", 4, 13));
  Value* pid = fb.b.create_value(OpKind::ProgramId, {}, i32(), {{"axis", int64_t{0}}});
  Value* sum = fb.b.create_value(OpKind::Add, {pid, fb.params[1]}, i32());
  fb.b.set_loc(Location{});
  Op* loop = fb.b.create(OpKind::For, {pid, sum, pid, sum}, {i32()});
  Region* body = fb.b.add_region(loop);
  fb.module->add_arg(body, i32());
  Value* acc = fb.module->add_arg(body, i32());
  Builder in(*fb.module, body);
  in.create(OpKind::Yield, {acc}, {});
  CHECK(
      print(*fb.module) ==
      "func @gelu_kernel(%x: ptr<f32> {divisibility = 16}, %n: i32) loc(\"/src/gelu.cpp\":3:6) {\n"
      "  %0 = program_id {axis = 0} : i32 loc(\"/src/gelu.cpp\":4:13)\n"
      "  %1 = add %0, %n : i32 loc(\"/src/gelu.cpp\":4:13)\n"
      "  %2 = for %0, %1, %0, %1 ({\n"
      "  ^(%3: i32, %4: i32):\n"
      "    yield %4 loc(unknown)\n"
      "  }) : i32 loc(unknown)\n"
      "}\n");
  check_round_trip(*fb.module);
}

TEST_CASE("printer: function attributes print after the parameters, sorted, before the location") {
  FunctionBuilder fb({Type::pointer(DType::f32), i32()}, Location::make("/src/s.cpp", 2, 1));
  fb.fn->name = "k";
  fb.fn->params[0].name = "x";
  fb.fn->params[0].attrs = {{"divisibility", int64_t{16}}};
  fb.fn->params[1].name = "n";
  // Out of order on purpose: the printer sorts, as it does for ops.
  fb.fn->attrs = {{"threads", int64_t{128}},
                  {"stage", std::string("simt")},
                  {"shared_0", Type::tile(DType::f32, {4})},
                  {"subgroup", int64_t{32}},
                  {"not an id", 0.5}};
  fb.b.create(OpKind::Barrier, {}, {});
  CHECK(print(*fb.module) ==
        "func @k(%x: ptr<f32> {divisibility = 16}, %n: i32) attributes {\"not an id\" = 0.5, "
        "shared_0 = tile<4xf32>, stage = \"simt\", subgroup = 32, threads = 128} "
        "loc(\"/src/s.cpp\":2:1) {\n"
        "  barrier loc(\"/src/s.cpp\":2:1)\n"
        "}\n");
  std::unique_ptr<Module> back = parse(print(*fb.module));
  CHECK(print(*back) == print(*fb.module));
  // The parser stores them sorted.
  CHECK(back->kernel().attrs.front().name == "not an id");
  CHECK(back->kernel().attrs.back().name == "threads");
  CHECK(back->kernel().attrs.size() == 5);
  fb.fn->attrs.clear();
  CHECK(print(*fb.module).starts_with("func @k(%x: ptr<f32> {divisibility = 16}, %n: i32) loc("));
}

TEST_CASE("printer: the SIMT function of the sample prints its attributes and SIMT ops") {
  std::unique_ptr<Module> m = samples::every_op_kind();
  // the tile kernel, the SIMT ops, the wgmma, coopmat and TMA families, inline asm
  REQUIRE(m->functions.size() == 6);
  CHECK(print(*m->functions[1]) ==
        "func @every_simt_op(%x: ptr<f32>, %n: i32) attributes {shared_0 = tile<4xf32>, "
        "shared_1 = tile<3xi32>, stage = \"simt\", subgroup = 32, target = \"cuda-sm_90\", "
        "threads = 128} loc(\"/src/every_op.cpp\":70:6) {\n"
        "  %0 = lane_id : i32 loc(\"/src/every_op.cpp\":71:3)\n"
        "  %1 = subgroup_id : i32 loc(\"/src/every_op.cpp\":71:3)\n"
        "  %2 = constant {value = 0} : i32 loc(\"/src/every_op.cpp\":71:3)\n"
        "  %3 = constant {value = 16} : i32 loc(\"/src/every_op.cpp\":71:3)\n"
        "  %4 = cmp_lt %0, %n : i1 loc(\"/src/every_op.cpp\":71:3)\n"
        "  %5 = ptr_add %x, %0 : ptr<f32> loc(\"/src/every_op.cpp\":71:3)\n"
        "  %6 = constant {value = 0.0} : f32 loc(\"/src/every_op.cpp\":71:3)\n"
        "  %7, %8 = global_load %5, %4, %6, %6 {align = 8, cache = \".ca\", width = 2} : f32, f32 "
        "loc(\"/src/every_op.cpp\":71:3)\n"
        "  %9 = shuffle %7, %3 {mode = \"xor\"} : f32 loc(\"/src/every_op.cpp\":71:3)\n"
        "  shared_store %1, %9 {buffer = 0, width = 1} loc(\"/src/every_op.cpp\":71:3)\n"
        "  barrier loc(\"/src/every_op.cpp\":71:3)\n"
        "  %10, %11, %12, %13 = shared_load %2 {buffer = 0, width = 4} : f32, f32, f32, f32 "
        "loc(\"/src/every_op.cpp\":71:3)\n"
        "  global_store %5, %4, %10, %11 {align = 8, width = 2} loc(\"/src/every_op.cpp\":71:3)\n"
        "  print %0, %12 {prefix = \"v \", rank = 1} loc(\"/src/every_op.cpp\":71:3)\n"
        "  assert %0, %2, %4 {message = \"in range\", rank = 2} loc(\"/src/every_op.cpp\":71:3)\n"
        "  cp_async %2, %x, %4 {buffer = 0} loc(\"/src/every_op.cpp\":71:3)\n"
        "  cp_async_commit loc(\"/src/every_op.cpp\":71:3)\n"
        "  cp_async_wait {pending = 0} loc(\"/src/every_op.cpp\":71:3)\n"
        "  %14 = ldmatrix %2 {buffer = 0, count = 1} : f32 loc(\"/src/every_op.cpp\":71:3)\n"
        "  %15, %16, %17, %18 = mma %14, %10, %11, %12, %13, %14, %6, %6, %6, %6 {a = \"tf32\", "
        "shape = \"m16n8k8\"} : f32, f32, f32, f32 loc(\"/src/every_op.cpp\":71:3)\n"
        "}\n");
}

TEST_CASE("printer: every op kind round trips, and the sample uses every op kind") {
  std::unique_ptr<Module> m = samples::every_op_kind();
  CHECK(verify_all(*m).empty());
  std::string text = check_round_trip(*m);
  std::set<OpKind> seen;
  for (const auto& fn : m->functions) walk(fn->body, [&](Op* op) { seen.insert(op->kind); });
  for (int k = 0; k < num_op_kinds(); ++k) {
    CAPTURE(op_name(static_cast<OpKind>(k)));
    CHECK(seen.count(static_cast<OpKind>(k)) == 1);
  }
  CHECK(print(*m->clone()) == text);
  CHECK(verify_all(*parse(text)).empty());
}

TEST_CASE("printer: regions print their arguments and close at their op's indentation") {
  std::string text = print(*samples::every_op_kind());
  CHECK(text.find("  %102 = while %0 ({\n  ^(%103: i32):\n    %104 = cmp_lt %103, %n : i1 loc(") !=
        std::string::npos);
  CHECK(text.find("    condition %104, %103 loc(") != std::string::npos);
  CHECK(text.find("  }, {\n  ^(%105: i32):\n") != std::string::npos);
  CHECK(text.find("  }) : i32 loc(\"/src/every_op.cpp\":60:3)\n}\n") != std::string::npos);
}

TEST_CASE("printer: attribute values of every kind, sorted by name") {
  std::string text = check_round_trip(*samples::every_attr_kind());
  CHECK(text ==
        "func @attrs() loc(\"/src/k.cpp\":1:1) {\n"
        "  print {big = 1e+300, empty = \"\", float = 0.1, inf = inf, int = -3, "
        "int_min = -9223372036854775808, list = [1, -2, 3], nan = nan, neg = -2.5, "
        "neg_zero = -0.0, ninf = -inf, none = [], \"not an identifier\" = 1, ptr = ptr<u8>, "
        "scalar = bf16, str = \"a \\\"q\\\" \\\\ b\\n\\t\\01\\7f\xc3\xa9\", "
        "tile = tile<2x4xptr<f16>>, tiny = 5e-324, whole = 3.0} loc(\"/src/k.cpp\":1:1)\n"
        "}\n");
}

TEST_CASE("printer: floats read back bit for bit and never look like integers") {
  const double values[] = {0.0,
                           -0.0,
                           1.0,
                           -3.0,
                           0.1,
                           1.0 / 3.0,
                           1e20,
                           1e-300,
                           123456789.0,
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           0.044715f,
                           0.79788456f};
  for (double d : values) {
    std::string text = print_attr_value(d);
    CAPTURE(text);
    CHECK(text.find_first_of(".ein") != std::string::npos);
    FunctionBuilder fb({});
    fb.b.create(OpKind::Print, {}, {}, {{"v", d}});
    std::unique_ptr<Module> back = parse(print(*fb.module));
    double got = back->kernel().body->ops[0]->float_attr("v");
    CHECK(std::memcmp(&got, &d, sizeof d) == 0);
  }
  CHECK(print_attr_value(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(print_attr_value(-std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(print_attr_value(2.0) == "2.0");
  CHECK(print_attr_value(int64_t{2}) == "2");
}

TEST_CASE("printer: strings with every byte value read back unchanged") {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  FunctionBuilder fb({});
  fb.b.create(OpKind::Assert, {}, {}, {{"message", all}});
  std::string text = check_round_trip(*fb.module);
  CHECK(text.find("\\00\\01\\02") != std::string::npos);
  CHECK(text.find("\\1f !\\\"#") != std::string::npos);
  CHECK(parse(text)->kernel().body->ops[0]->str_attr("message") == all);
}

TEST_CASE("printer: parameters print by name only when the name is a unique identifier") {
  FunctionBuilder fb({i32(), i32(), i32(), i32(), i32(), i32(), i32()});
  const char* names[] = {"x", "", "dup", "dup", "arg0", "9lives", "_ok9"};
  for (size_t i = 0; i < 7; ++i) fb.fn->params[i].name = names[i];
  fb.fn->name = "two words";
  std::string text = check_round_trip(*fb.module);
  CHECK(
      text.starts_with("func @\"two words\"(%x: i32, %arg1: i32, %arg2: i32, %arg3: i32, "
                       "%arg4: i32, %arg5: i32, %_ok9: i32) loc("));
}

TEST_CASE("printer: a module prints its functions separated by a blank line") {
  Module m;
  m.add_function("a");
  Function* b = m.add_function("b", Location::make("x.cpp", 2, 0));
  Builder(m, b->body).create(OpKind::Print, {}, {});
  CHECK(check_round_trip(m) ==
        "func @a() loc(unknown) {\n}\n\nfunc @b() loc(\"x.cpp\":2:0) {\n  print loc(unknown)\n}\n");
  std::ostringstream os;
  print(os, m);
  CHECK(os.str() == print(m));
  CHECK(print(Module{}).empty());
}

TEST_CASE("printer: print_op numbers values as print(Function) does") {
  std::unique_ptr<Module> m = samples::every_op_kind();
  const Region* body = m->kernel().body;
  const Op* loop = nullptr;
  for (const Op* op : body->ops)
    if (op->kind == OpKind::For) loop = op;
  REQUIRE(loop);
  std::string text = print_op(*loop);
  CHECK(text.starts_with("%96 = for %3, %arg2, %2, %37 ({\n^(%97: i32, %98: tile<16xf32>):\n"));
  CHECK(print(m->kernel()).find("  %96 = for %3, %n, %2, %37 ({\n") != std::string::npos);
  CHECK(print_op(*loop->region(0)->ops[0]) ==
        "%99 = add %98, %98 : tile<16xf32> loc(\"/src/every_op.cpp\":61:5)\n");
}

TEST_CASE("printer: an op outside any region and a value from elsewhere still print") {
  Module m;
  Value* stray = m.new_value(i32());
  Op* op = m.new_op(OpKind::Neg, {stray}, {i32()}, {}, Location{});
  CHECK(print_op(*op) == "%0 = neg %<undef> : i32 loc(unknown)\n");
  CHECK(print_location(Location::make("a\"b.cpp", 7, 2)) == "loc(\"a\\\"b.cpp\":7:2)");
}

}  // namespace
}  // namespace tessera::ir
