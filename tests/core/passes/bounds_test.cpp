/// \file The bounds pass (core/passes/bounds.h): hidden parameters, which buffers each access is
/// checked against, and the masks it narrows; run through the host interpreter for the values.
#include "core/passes/bounds.h"

#include <doctest/doctest.h>

#include <string>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"

namespace tessera::test {
namespace {

std::string checked(const char* text) {
  auto m = ir::parse(text);
  CHECK(passes::add_bounds_checks(*m));
  ir::verify(*m);
  CHECK_FALSE(passes::add_bounds_checks(*m));  // once
  return ir::print(*m, {.locations = false});
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("bounds: each pointer parameter gets its buffer's address and size, after the user's") {
  std::string text = checked(R"(
func @k(%x: ptr<f32>, %n: i32, %y: ptr<f16>) {
  %v = load %x : f32
  %h = cast %v : f16
  store %y, %h
}
)");
  CHECK(text.find("func @k(%x: ptr<f32>, %n: i32, %y: ptr<f16>, %__base_x: u64, %__bytes_x: u64, "
                  "%__base_y: u64, %__bytes_y: u64)") != std::string::npos);
  CHECK(count(text, "assert ") == 2);
  CHECK(text.find("fault = \"out-of-bounds load\"") != std::string::npos);
  CHECK(text.find("fault = \"out-of-bounds store\"") != std::string::npos);
  CHECK(text.find("the pointer from `y` is at byte {1} of its buffer of {2} bytes") !=
        std::string::npos);
  // An f16 store needs 2 bytes of room, an f32 load 4.
  CHECK(text.find("constant {value = 2} : u64") != std::string::npos);
  CHECK(text.find("constant {value = 4} : u64") != std::string::npos);
}

TEST_CASE("bounds: loop-carried and selected pointers are traced to their parameters") {
  std::string text = checked(R"(
func @k(%a: ptr<f32>, %b: ptr<f32>, %c: ptr<f32>, %n: i32) {
  %z = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %r = for %z, %n, %one, %a ({
  ^(%i: i32, %p: ptr<f32>):
    %v = load %p : f32
    %q = ptr_add %p, %one : ptr<f32>
    yield %q
  }) : ptr<f32>
  %lt = cmp_lt %n, %one : i1
  %s = where %lt, %r, %b : ptr<f32>
  %f = constant {value = 1.0} : f32
  store %s, %f
}
)");
  // The load through the loop's pointer: `a` only. The store through the select: `a` or `b`,
  // never `c`.
  CHECK(text.find("the pointer from `a` is at byte {1}") != std::string::npos);
  CHECK(text.find("the pointer (from `a` or `b`) is outside all of their buffers") !=
        std::string::npos);
  CHECK(text.find("`c`") == std::string::npos);
}

TEST_CASE("bounds: a pointer made from an integer is checked against every buffer") {
  std::string text = checked(R"(
func @k(%a: ptr<f32>, %b: ptr<i32>, %addr: u64) {
  %p = bitcast %addr : ptr<f32>
  %v = load %p : f32
  store %a, %v
}
)");
  CHECK(text.find("the pointer (from `a` or `b`) is outside all of their buffers") !=
        std::string::npos);
}

TEST_CASE("bounds: masked accesses keep their mask and skip the failing lanes") {
  std::string text = checked(R"(
func @k(%x: ptr<f32>, %n: i32) {
  %r = arange {end = 8, start = 0} : tile<8xi32>
  %nn = splat %n : tile<8xi32>
  %m = cmp_lt %r, %nn : tile<8xi1>
  %xs = splat %x : tile<8xptr<f32>>
  %p = ptr_add %xs, %r : tile<8xptr<f32>>
  %v = load %p, %m : tile<8xf32>
  store %p, %v
}
)");
  // The load's mask becomes mask & inside, the store (no mask) takes inside as its mask; the
  // asserts pass masked-off lanes (inside | !mask).
  CHECK(count(text, "= load %") == 1);
  CHECK_MESSAGE(count(text, " = not ") == 1, text);
  CHECK(count(text, "assert ") == 2);
}

}  // namespace
}  // namespace tessera::test
