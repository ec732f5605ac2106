// \file Misuse of tl::sort, tl::histogram and tl::gather is a user error naming the caller's
// line, the function and the offending type or shape; their values are checked by the
// conformance catalogue (tests/conformance/sort.cpp) on every device.
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

void sort_scalar(tl::ptr<float>, tl::i32 n) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::sort(n);
}
void sort_axis(tl::ptr<float>) {
  auto x = tl::zeros({4, 8}, tl::float32);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::sort(x, 2);
}
void sort_pointers(tl::ptr<float> p) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::sort(p + tl::arange(0, 8));
}
void histogram_float(tl::ptr<float> p) {
  auto x = tl::load(p + tl::arange(0, 16));
  g_line = __LINE__ + 1;  // the next line
  (void)tl::histogram(x, 8);
}
void histogram_2d(tl::ptr<float>) {
  auto x = tl::zeros({4, 4}, tl::int32);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::histogram(x, 8);
}
void histogram_bins(tl::ptr<float>) {
  g_line = __LINE__ + 1;  // the next line
  (void)tl::histogram(tl::arange(0, 16), 12);
}
void histogram_mask(tl::ptr<float>) {
  auto x = tl::arange(0, 16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::histogram(x, 8, tl::arange(0, 8) < 3);
}
void gather_float_index(tl::ptr<float> p) {
  auto x = tl::load(p + tl::arange(0, 16));
  g_line = __LINE__ + 1;  // the next line
  (void)tl::gather(x, x, 0);
}
void gather_shapes(tl::ptr<float>) {
  auto src = tl::zeros({4, 8}, tl::float16);
  auto idx = tl::zeros({2, 4}, tl::int32);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::gather(src, idx, 0);
}
void gather_rank(tl::ptr<float>) {
  auto src = tl::zeros({4, 8}, tl::float16);
  g_line = __LINE__ + 1;  // the next line
  (void)tl::gather(src, tl::arange(0, 4), 1);
}
void good_sort(tl::ptr<float> p) {
  auto x = tl::load(p + tl::arange(0, 32));
  (void)tl::sort(x, 0, true);
  (void)tl::sort(tl::zeros({4, 8}, tl::int1), 0);
  (void)tl::histogram(x.to(tl::uint8), 16, x > 0.0f);
  (void)tl::gather(x, tl::arange(0, 64).to(tl::int64) % 32, -1);
}

}  // namespace

#define CHECK_ERROR(fn, rest)           \
  do {                                  \
    std::string got = trace_error(fn);  \
    CHECK(got == at(std::string rest)); \
  } while (0)

TEST_CASE("lang errors: sort needs a tile of values and an axis of it") {
  CHECK_ERROR(sort_scalar, ("'sort': operand is a scalar (i32)"));
  CHECK_ERROR(sort_axis, ("'sort': axis 2 is out of range for a rank-2 tile"));
  CHECK_ERROR(sort_pointers, ("'sort': a tile of pointers is not supported (tile<8xptr<f32>>)"));
}

TEST_CASE("lang errors: histogram needs a 1-D integer tile, a power-of-two bin count, a mask") {
  CHECK_ERROR(histogram_float, ("'histogram': needs a 1-D tile of integers, got tile<16xf32>"));
  CHECK_ERROR(histogram_2d, ("'histogram': needs a 1-D tile of integers, got tile<4x4xi32>"));
  CHECK_ERROR(histogram_bins,
              ("'histogram': num_bins must be a power of two (a tile size), got 12"));
  CHECK_ERROR(histogram_mask, ("'histogram': the mask must be an i1 scalar or a tile of the "
                               "input's shape [16], got tile<8xi1>"));
}

TEST_CASE("lang errors: gather needs an integer index of src's rank and shape off the axis") {
  CHECK_ERROR(gather_float_index, ("'gather': index must be a tile of integers, got tile<16xf32>"));
  CHECK_ERROR(gather_shapes, ("'gather': index [2, 4] and src [4, 8] differ outside axis 0"));
  CHECK_ERROR(gather_rank,
              ("'gather': index tile<4xi32> and src tile<4x8xf16> must have the same rank"));
}

TEST_CASE("lang: sort, histogram and gather trace on any axis, i1, u8 with a mask, i64 index") {
  CHECK(trace_error(good_sort).empty());
}
