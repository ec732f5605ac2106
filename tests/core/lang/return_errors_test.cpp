// \file tl::return_if and tl::range's options. An early return inside a loop or branch body is a
// user error naming the caller's line; at the top level the rest of the body goes into the else
// branch of an `if` (values checked by the conformance case control/early_return on every device).
#include <doctest/doctest.h>

#include <string>

#include "core/ir/printer.h"
#include "core/lang/tl.h"
#include "core/lang/trace.h"
#include "tests/support/trace_errors.h"

namespace tl = tessera::tl;

namespace {

int g_line = 0;  // set by each kernel on the line of its faulty call

std::string at(const std::string& rest) {
  return std::string(__FILE__) + ":" + std::to_string(g_line) + ": error: " + rest;
}

using tessera::test::trace_error;

const std::string kInBody =
    "'return_if': an early return inside a tl::range, tl::if_ or tl::while_ body (or a combine "
    "function) is not supported: call it at the top level of the kernel body, or wrap the rest "
    "of that body in tl::if_";

void return_in_loop(tl::ptr<float> p, tl::i32 n) {
  for (auto i : tl::range(0, n)) {
    g_line = __LINE__ + 1;  // the next line
    tl::return_if(i == 3);
    tl::store(p + i, 1.0f);
  }
}
void return_in_if(tl::ptr<float> p, tl::i32 n) {
  tl::if_(n > 2, [&] {
    g_line = __LINE__ + 1;  // the next line
    tl::return_if(n > 4);
    tl::store(p, 1.0f);
  });
}
void return_tile(tl::ptr<float> p, tl::i32) {
  g_line = __LINE__ + 1;  // the next line
  tl::return_if(tl::arange(0, 4) < 2);
  tl::store(p, 1.0f);
}
void return_twice(tl::ptr<float> p, tl::i32 n) {
  tl::return_if(n > 4);
  auto acc = tl::load(p);
  for (auto i : tl::range(0, n)) acc += i.to(tl::float32);
  tl::return_if(acc > 1.0f);
  tl::if_(n > 2, [&] { tl::store(p, acc); });
}

}  // namespace

TEST_CASE("lang errors: return_if only at the top level of the kernel body, on a scalar") {
  g_line = 0;
  std::string got = trace_error(return_in_loop);
  CHECK(got == at(kInBody));
  got = trace_error(return_in_if);
  CHECK(got == at(kInBody));
  got = trace_error(return_tile);
  CHECK(got.find(std::to_string(g_line) + ": error: 'return_if'") != std::string::npos);
}

TEST_CASE("lang: return_if puts the rest of the body in the else branch, nesting") {
  CHECK(trace_error(return_twice).empty());
  std::vector<tl::ArgSpec> specs(2);
  specs[0].dtype = tessera::ir::DType::f32;
  specs[1].dtype = tessera::ir::DType::i32;
  auto m = tl::trace(return_twice, "k", {"p", "n"}, specs);
  const std::string ir = tessera::ir::print(*m);
  INFO(ir);
  // Two ifs, the second inside the first's else region, and the loop inside the first else region.
  const size_t first = ir.find("if "), loop = ir.find("for "), second = ir.find("if ", first + 1);
  CHECK(first != std::string::npos);
  CHECK(loop > first);
  CHECK(second > loop);
  CHECK(ir.find("}, {", first) < loop);  // the else region opens before the loop
}

namespace {

void range_options(tl::ptr<float> p, tl::i32 n) {
  auto acc = tl::load(p);
  for (auto i : tl::range(
           0, n, 1,
           {.num_stages = 3, .loop_unroll_factor = 4, .flatten = true, .warp_specialize = true}))
    acc += i.to(tl::float32);
  for (auto i : tl::range(0, n)) acc += i.to(tl::float32);
  tl::store(p, acc);
}
void range_bad_stages(tl::ptr<float>, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  for (auto i : tl::range(0, n, 1, {.num_stages = 0})) (void)i;
}
void range_bad_unroll(tl::ptr<float>, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  for (auto i : tl::range(0, n, 1, {.loop_unroll_factor = -2})) (void)i;
}

}  // namespace

TEST_CASE("lang: tl::range's options are attributes of its for op, checked") {
  std::vector<tl::ArgSpec> specs(2);
  specs[0].dtype = tessera::ir::DType::f32;
  specs[1].dtype = tessera::ir::DType::i32;
  auto m = tl::trace(range_options, "k", {"p", "n"}, specs);
  const std::string ir = tessera::ir::print(*m);
  INFO(ir);
  CHECK(ir.find("flatten = 1, loop_unroll_factor = 4, num_stages = 3, warp_specialize = 1") !=
        std::string::npos);
  // The loop without options has no attributes.
  CHECK(ir.find("num_stages") == ir.rfind("num_stages"));
  std::string got = trace_error(range_bad_stages);  // sets g_line before at() reads it
  CHECK(got == at("'for': num_stages must be at least 1, got 0"));
  got = trace_error(range_bad_unroll);
  CHECK(got == at("'for': loop_unroll_factor must be at least 1, got -2"));
}
