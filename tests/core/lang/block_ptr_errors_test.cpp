// \file Misuse of block pointers (tl::make_block_ptr, tl::advance, tl::load and tl::store of a
// block pointer) is a user error naming the caller's line and the cause; their values are
// checked by the conformance catalogue (tests/conformance/block_ptr.cpp) on every device.
#include <doctest/doctest.h>

#include <string>

#include "core/lang/tl.h"
#include "core/support/error.h"
#include "tests/support/trace_errors.h"

namespace tl = tessera::tl;

namespace {

int g_line = 0;  // set by each kernel on the line of its faulty call

std::string at(const std::string& rest) {
  return std::string(__FILE__) + ":" + std::to_string(g_line) + ": error: " + rest;
}

using tessera::test::trace_error;

void bp_tile_base(tl::ptr<float> p, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::make_block_ptr(p + tl::arange(0, 4), {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
}
void bp_ranks(tl::ptr<float> p, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::make_block_ptr(p, {n, n}, {n}, {0, 0}, {16, 16}, {1, 0});
}
void bp_order(tl::ptr<float> p, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::make_block_ptr(p, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 1});
}
void bp_float_stride(tl::ptr<float> p, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::make_block_ptr(p, {n, n}, {n, 1.5f}, {0, 0}, {16, 16}, {1, 0});
}
void bp_block_shape(tl::ptr<float> p, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::make_block_ptr(p, {n, n}, {n, 1}, {0, 0}, {16, 12}, {1, 0});
}
void bp_advance(tl::ptr<float> p, tl::i32 n) {
  auto b = tl::make_block_ptr(p, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
  g_line = __LINE__ + 1;  // the next line
  (void)tl::advance(b, {16});
}
void bp_advance_i64(tl::ptr<float> p, tl::i32 n) {
  auto b = tl::make_block_ptr(p, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
  g_line = __LINE__ + 1;  // the next line
  (void)tl::advance(b, {n.to(tl::int64), 0});
}
void bp_check_dim(tl::ptr<float> p, tl::i32 n) {
  auto b = tl::make_block_ptr(p, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
  g_line = __LINE__ + 1;  // the next line
  (void)tl::load(b, {0, 2});
}
void bp_nan_int(tl::ptr<int32_t> p, tl::i32 n) {
  auto b = tl::make_block_ptr(p, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
  g_line = __LINE__ + 1;  // the next line
  (void)tl::load(b, {0, 1}, tl::PaddingOption::Nan);
}
void bp_store_shape(tl::ptr<float> p, tl::i32 n) {
  auto b = tl::make_block_ptr(p, {n, n}, {n, 1}, {0, 0}, {16, 16}, {1, 0});
  g_line = __LINE__ + 1;  // the next line
  tl::store(b, tl::zeros({8, 16}, tl::float32), {0, 1});
}
void bp_good(tl::ptr<float> p, tl::i32 n, tl::i64 big) {
  auto b = tl::make_block_ptr(p, {big, n}, {n, 1}, {0, 0}, {16, 16}, {0, 1});
  b = tl::advance(b, {n.to(tl::int64), 16});
  tl::store(b, tl::load(b, {0, 1}, tl::PaddingOption::Nan) + 1.0f);
}

}  // namespace

#define CHECK_ERROR(fn, rest)           \
  do {                                  \
    std::string got = trace_error(fn);  \
    CHECK(got == at(std::string rest)); \
  } while (0)

TEST_CASE("lang errors: make_block_ptr checks its base, lists, order and block shape") {
  CHECK_ERROR(bp_tile_base, ("'make_block_ptr': the base has type tile<4xptr<f32>>, expected one "
                             "pointer"));
  CHECK_ERROR(bp_ranks,
              ("'make_block_ptr': strides has 1 entries; the block pointer has 2 dimensions"));
  CHECK_ERROR(bp_order,
              ("'make_block_ptr': order [1, 1] is not a permutation of the 2 dimensions"));
  CHECK_ERROR(bp_float_stride,
              ("'make_block_ptr': strides[1] has type f32, expected an integer scalar"));
  CHECK(trace_error(bp_block_shape).find("'make_block_ptr'") != std::string::npos);
}

TEST_CASE("lang errors: advance, load and store of a block pointer") {
  CHECK_ERROR(bp_advance, ("'advance': offsets has 1 entries; the block pointer has 2 dimensions"));
  CHECK_ERROR(bp_advance_i64,
              ("'advance': offsets[0] has type i64 but the block pointer computes in i32: give "
               "make_block_ptr a 64-bit shape, stride or offset"));
  CHECK_ERROR(bp_check_dim, ("'load': boundary_check names dimension 2 of a block pointer with 2 "
                             "dimensions"));
  CHECK_ERROR(bp_nan_int, ("'load': padding_option nan needs a floating-point pointee, the block "
                           "pointer's is i32"));
  CHECK(trace_error(bp_store_shape).find("'store'") != std::string::npos);
}

TEST_CASE("lang: block pointers trace with i64 shapes, advance and NaN padding") {
  CHECK(trace_error(bp_good).empty());
}
