// \file Misuse of tl::inline_asm_elementwise is a user error naming the caller's line: a
// constraint string with the wrong number of registers (counted as pack packs them), a
// malformed one, a bad pack, pack over scalars or too short a last dimension, pointer and i1
// operands, no arguments. Its code is checked in tests/targets/ptx/inline_asm_test.cpp.
#include <doctest/doctest.h>

#include <string>

#include "core/lang/tl.h"
#include "core/support/error.h"
#include "tests/support/trace_errors.h"

namespace tl = tessera::tl;

namespace {

int g_line = 0;  // set by each kernel on the line of its faulty call

std::string at(const std::string& rest) {
  return std::string(__FILE__) + ":" + std::to_string(g_line) +
         ": error: 'inline_asm_elementwise': " + rest;
}

using tessera::test::trace_error;

const char* const kAdd = "add.s32 $0, $1, $2;";

void too_few_inputs(tl::ptr<float>) {
  auto x = tl::arange(0, 64);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,r", {x, x}, tl::int32);
}
void packed_count(tl::ptr<float>) {
  auto h = tl::zeros({64}, tl::float16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,=r,r,r,r,r", {h, h}, tl::float16, true, 2);
}
void malformed(tl::ptr<float>) {
  auto x = tl::arange(0, 64);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,,r", {x}, tl::int32);
}
void bad_pack(tl::ptr<float>) {
  auto x = tl::arange(0, 64);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,r", {x}, tl::int32, true, 3);
}
void pack_scalar(tl::ptr<float>, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,r", {n}, tl::int32, true, 2);
}
void pack_short(tl::ptr<float>) {
  auto x = tl::zeros({8, 2}, tl::int8);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,r", {x}, tl::int8, true, 4);
}
void pointer_arg(tl::ptr<float> p) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,l", {p + tl::arange(0, 8)}, tl::int32);
}
void bool_result(tl::ptr<float>) {
  auto x = tl::arange(0, 8);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,r", {x}, tl::int1);
}
void no_args(tl::ptr<float>) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r", {}, tl::int32);
}
void shapes(tl::ptr<float>) {
  auto x = tl::arange(0, 8), y = tl::arange(0, 4);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::inline_asm_elementwise(kAdd, "=r,r,r", {x, y}, tl::int32);
}
void good(tl::ptr<float> p, tl::i32 n) {
  auto x = tl::load(p + tl::arange(0, 64));
  auto b = tl::zeros({4, 16}, tl::int8);
  (void)tl::inline_asm_elementwise(kAdd, "=f,f,r", {x, n}, tl::float32);  // n broadcast
  (void)tl::inline_asm_elementwise(kAdd, "=r,r", {b}, tl::int8, false, 4);
  (void)tl::inline_asm_elementwise(kAdd, "=r,=f,f,f,r", {x, 1.5f, 2}, {tl::int32, tl::float32},
                                   true, 1);
}

}  // namespace

#define CHECK_ERROR(fn, rest)           \
  do {                                  \
    std::string got = trace_error(fn);  \
    CHECK(got == at(std::string rest)); \
  } while (0)

TEST_CASE("lang errors: inline_asm_elementwise counts one constraint per register") {
  CHECK_ERROR(too_few_inputs,
              ("constraint string \"=r,r\" has 1 outputs and 1 inputs; results (i32) and "
               "arguments (i32, i32) at pack = 1 take 1 and 2 registers (a type below 32 bits "
               "packs 32 / bits elements per register)"));
  CHECK_ERROR(packed_count,
              ("constraint string \"=r,=r,r,r,r,r\" has 2 outputs and 4 inputs; results (f16) "
               "and arguments (f16, f16) at pack = 2 take 1 and 2 registers (a type below 32 "
               "bits packs 32 / bits elements per register)"));
  CHECK_ERROR(malformed, ("constraint string \"=r,,r\": entry 1 is empty"));
}

TEST_CASE("lang errors: inline_asm_elementwise's pack, operands and results") {
  CHECK_ERROR(bad_pack, ("pack must be a power of two from 1 to 16, got 3"));
  CHECK_ERROR(pack_scalar, ("pack = 2 takes 2 consecutive elements of the last dimension per "
                            "call; the arguments are i32"));
  CHECK_ERROR(pack_short, ("pack = 4 takes 4 consecutive elements of the last dimension per "
                           "call; the arguments are tile<8x2xi8>"));
  CHECK_ERROR(pointer_arg, ("argument 0 (tile<8xptr<f32>>) is a pointer, which inline asm does "
                            "not take"));
  CHECK_ERROR(bool_result,
              ("result dtype 0 is i1, which inline asm does not take (use an integer dtype)"));
  CHECK_ERROR(no_args, ("needs at least one argument (the result's shape)"));
  const std::string got = trace_error(shapes);
  CHECK(got.find(std::string(__FILE__) + ":" + std::to_string(g_line) +
                 ": error: 'inline_asm_elementwise': ") == 0);
}

TEST_CASE("lang: inline_asm_elementwise traces with scalars, literals, pack and two results") {
  CHECK(trace_error(good).empty());
}
