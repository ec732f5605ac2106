// \file Misuse of the functions composed of other ops (tl::umulhi, the random numbers, join, split,
// interleave, flip) and of Triton's keyword arguments (sum's dtype, dot's out_dtype) is a user
// error naming the caller's line, the function and the offending type; their values are checked by
// the conformance catalogue (tests/conformance/random.cpp and join.cpp) on every device.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/lang/tl.h"
#include "core/lang/trace.h"
#include "core/support/error.h"
#include "tests/support/trace_errors.h"

namespace tl = tessera::tl;
using tessera::ErrorKind;

namespace {

int g_line = 0;  // set by each kernel on the line of its faulty call

std::string at(const std::string& rest) {
  return std::string(__FILE__) + ":" + std::to_string(g_line) + ": error: " + rest;
}

using tessera::test::trace_error;

void umulhi_float(tl::ptr<float> x) {
  auto v = tl::load(x + tl::arange(0, 16));
  g_line = __LINE__ + 1;  // the next line
  (void)tl::umulhi(v, v);
}
void umulhi_i16(tl::ptr<float>) {
  auto v = tl::arange(0, 16).to(tl::int16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::umulhi(v, v);
}
void umulhi_pointer(tl::ptr<float> x) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::umulhi(x + tl::arange(0, 16), 3);
}
void rand_float_offset(tl::ptr<float> x) {
  auto v = tl::load(x + tl::arange(0, 16));
  g_line = __LINE__ + 1;  // the next line
  (void)tl::rand(7, v);
}
void randn_float_seed(tl::ptr<float>) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::randn(0.5f, tl::arange(0, 16));
}
void randint_tile_seed(tl::ptr<float>) {
  auto offs = tl::arange(0, 16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::randint(offs, offs);
}
void randint_rounds(tl::ptr<float>) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::randint(1, tl::arange(0, 16), 0);
}
void philox_widths(tl::ptr<float>) {
  auto offs = tl::arange(0, 16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::philox(1, offs, offs.to(tl::int64), 0, 0);
}
void good_random(tl::ptr<float> x, tl::i32 seed) {
  auto offs = tl::arange(0, 16);
  auto [a, b, c, d] = tl::randint4x(seed, offs.to(tl::int64));
  tl::store(x + offs, tl::rand(seed, offs) + tl::randn(3, offs) + a.to(tl::float32) +
                          tl::umulhi(b, c).to(tl::float32) + d.to(tl::float32));
}

void join_dtypes(tl::ptr<float>) {
  auto offs = tl::arange(0, 16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::join(offs, offs.to(tl::float32));
}
void join_shapes(tl::ptr<float>) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::join(tl::arange(0, 16), tl::arange(0, 8));
}
void split_last(tl::ptr<float>) {
  auto x = tl::zeros({2, 4}, tl::float16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::split(x);
}
void split_pointers(tl::ptr<float> x) {
  auto p = tl::join(x + tl::arange(0, 4), x + tl::arange(0, 4));
  g_line = __LINE__ + 1;  // the next line
  (void)tl::split(p);
}
void flip_axis(tl::ptr<float>) {
  auto x = tl::zeros({2, 4}, tl::float16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::flip(x, 2);
}
void flip_scalar(tl::ptr<float>, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::flip(n);
}

void sum_bool(tl::ptr<float>) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::sum(tl::arange(0, 16), 0, false, tl::int1);
}
void dot_bf16(tl::ptr<float>) {
  auto a = tl::zeros({16, 16}, tl::float16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::dot(a, a, {.out_dtype = tl::bfloat16});
}
void dot_acc_mismatch(tl::ptr<float>) {
  auto a = tl::zeros({16, 16}, tl::float16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::dot(a, a, tl::zeros<float>({16, 16}), {.out_dtype = tl::float16});
}

}  // namespace

#define CHECK_ERROR(fn, rest)           \
  do {                                  \
    std::string got = trace_error(fn);  \
    CHECK(got == at(std::string rest)); \
  } while (0)

TEST_CASE("lang errors: umulhi takes 32- or 64-bit integers") {
  const std::string want = "'umulhi': the operands' dtype must be a 32- or 64-bit integer, got ";
  CHECK_ERROR(umulhi_float, (want + "f32"));
  CHECK_ERROR(umulhi_i16, (want + "i16"));
  CHECK_ERROR(umulhi_pointer, ("'umulhi': operands must be integers, got a pointer"));
}

TEST_CASE("lang errors: random numbers need integer offsets and an integer scalar seed") {
  CHECK_ERROR(rand_float_offset, ("'rand': the offset must be an integer, got tile<16xf32>"));
  CHECK_ERROR(randn_float_seed, ("'randn': the seed must be an integer"));
  CHECK_ERROR(randint_tile_seed, ("'randint': the seed must be a scalar, got tile<16xi32>"));
  CHECK_ERROR(randint_rounds, ("'randint': n_rounds must be in [1, 64], got 0"));
  CHECK_ERROR(philox_widths,
              ("'philox': the counters must have one bit width, got i32 and tile<16xi64>"));
}

TEST_CASE("lang: the random functions and umulhi trace with scalar, literal and i64 operands") {
  CHECK(trace_error(good_random).empty());
}

TEST_CASE("lang errors: join needs one dtype and broadcastable shapes") {
  CHECK_ERROR(join_dtypes, ("'join': element types differ: tile<16xi32> and tile<16xf32>"));
  CHECK_ERROR(join_shapes, ("'join': shapes [16] and [8] are not broadcastable"));
}

TEST_CASE("lang errors: split needs a last dimension of 2, flip an axis of a tile") {
  CHECK_ERROR(split_last, ("'split': the last dimension must be 2, got tile<2x4xf16>"));
  CHECK_ERROR(split_pointers,
              ("'split': a tile of pointers is not supported (tile<4x2xptr<f32>>)"));
  CHECK_ERROR(flip_axis, ("'flip': axis 2 is out of range for a rank-2 tile"));
  CHECK_ERROR(flip_scalar, ("'flip': operand is a scalar (i32)"));
}

TEST_CASE("lang errors: sum's dtype and dot's out_dtype") {
  CHECK_ERROR(sum_bool, ("'sum': dtype must be a number, got i1"));
  CHECK_ERROR(dot_bf16,
              ("'dot': out_dtype bf16 is not supported (as in Triton): use f32 and convert"));
  CHECK_ERROR(dot_acc_mismatch, ("'dot': out_dtype f16 differs from the accumulator's dtype f32"));
}

namespace {
void static_false(tl::ptr<float>) {
  constexpr int kBlock = 48;
  g_line = __LINE__ + 1;  // the next line
  tl::static_assert_((kBlock & (kBlock - 1)) == 0, "BLOCK must be a power of 2");
}
void static_print_kernel(tl::ptr<float> x, tl::i32 n) {
  auto offs = tl::arange(0, 16);
  tl::static_assert_(offs.shape()[0] == 16);
  tl::static_print("shapes:", {x + offs, n, 16, 2.5, true});
}
}  // namespace

TEST_CASE("lang: static_assert_ stops the trace at its line, static_print prints types once") {
  CHECK_ERROR(static_false, ("'static_assert': BLOCK must be a power of 2"));
  std::string out;
  {
    // stdout to a temporary file while tracing
    std::fflush(stdout);
    std::FILE* tmp = std::tmpfile();
    REQUIRE(tmp);
    const int saved = dup(1);
    dup2(fileno(tmp), 1);
    std::string err = trace_error(static_print_kernel);
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved);
    CHECK(err.empty());
    std::rewind(tmp);
    char buf[256] = {};
    out = std::fgets(buf, sizeof buf, tmp) ? buf : "";
    std::fclose(tmp);
  }
  CHECK(out == "shapes: tile<16xptr<f32>> i32 16 2.5 true\n");
}

namespace {
void bad_load_cache(tl::ptr<float> x) {
  auto offs = tl::arange(0, 16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::load(x + offs, offs < 8, 0.0f, {.cache = "wb"});
}
void bad_store_eviction(tl::ptr<float> x) {
  auto offs = tl::arange(0, 16);
  g_line = __LINE__ + 1;  // the next line
  tl::store(x + offs, 1.0f, offs < 8, {.eviction = "evict_all"});
}
}  // namespace

TEST_CASE("lang errors: cache modifiers and eviction policies are checked by name") {
  CHECK_ERROR(bad_load_cache, ("'load': unknown cache modifier \"wb\" (one of ca, cg, cs, cv)"));
  CHECK_ERROR(bad_store_eviction, ("'store': unknown eviction policy \"evict_all\" (one of "
                                   "evict_normal, evict_first, evict_last)"));
}
