// \file Axis info of `%` and `/` (core/lower/axis_info.h): runs survive only where the left side
// is non-negative (provably, or by the `nonneg` fact); every claim is checked on the concrete
// values, including a negative left side, where C's truncating `%` breaks the runs.
#include <doctest/doctest.h>

#include "tests/core/lower/axis_info_helpers.h"

using namespace axis_test;
using tessera::lower::provably_nonneg;

namespace {

/// C's truncating remainder and quotient of the tile `(base + i) op n`, i in [0, 64).
Ints rem_tile(int64_t base, int64_t n) {
  return tile({64}, [&](int64_t i, int64_t) { return (base + i) % n; });
}
Ints div_tile(int64_t base, int64_t n) {
  return tile({64}, [&](int64_t i, int64_t) { return (base + i) / n; });
}

}  // namespace

TEST_CASE("axis info: rem of a non-negative run keeps runs as long as the divisor's divisibility") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}, %m: i32) {
  %pid = program_id {axis = 0} : i32
  %c64 = constant {value = 64} : i32
  %base = mul %pid, %c64 : i32
  %sb = splat %base : tile<64xi32>
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %off = add %sb, %r : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %sm = splat %m : tile<64xi32>
  %rn = rem %off, %sn : tile<64xi32>
  %rm = rem %off, %sm : tile<64xi32>
  %c8 = constant {value = 8} : tile<64xi32>
  %r8 = rem %off, %c8 : tile<64xi32>
  %qn = div %off, %sn : tile<64xi32>
})");
  CHECK(provably_nonneg(a.value("%off")));
  CHECK(a["%rn"] == info({16}, {16}, {1}));
  CHECK(a["%rm"] == info({1}, {1}, {1}));  // a divisor of unknown divisibility: single elements
  CHECK(a["%r8"] == info({8}, {8}, {1}));
  CHECK(a["%qn"] == info({1}, {1}, {16}));
  for (int64_t pid : {0, 1, 3, 100})
    for (int64_t n : {16, 48, 64, 1024, 4096}) {
      CAPTURE(pid);
      CAPTURE(n);
      CHECK(claims(a["%rn"], {64}, rem_tile(pid * 64, n)) == "");
      CHECK(claims(a["%qn"], {64}, div_tile(pid * 64, n)) == "");
      CHECK(claims(a["%r8"], {64}, rem_tile(pid * 64, 8)) == "");
    }
}

TEST_CASE("axis info: rem of a left side of unknown sign claims no runs without the fact") {
  // base = k * 64 with k a parameter: negative for k < 0, where (-64 + i) % 16 is 0, -15, ...
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}, %k: i32) {
  %c64 = constant {value = 64} : i32
  %base = mul %k, %c64 : i32
  %sb = splat %base : tile<64xi32>
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %off = add %sb, %r : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %rn = rem %off, %sn : tile<64xi32>
  %qn = div %off, %sn : tile<64xi32>
  %fast = rem %off, %sn {nonneg = 1} : tile<64xi32>
  %fastq = div %off, %sn {nonneg = 1} : tile<64xi32>
})");
  CHECK_FALSE(provably_nonneg(a.value("%off")));
  CHECK(a["%rn"] == info({1}, {1}, {1}));
  CHECK(a["%qn"] == info({1}, {1}, {1}));
  CHECK(a["%fast"] == info({16}, {16}, {1}));
  CHECK(a["%fastq"] == info({1}, {1}, {16}));
  for (int64_t k : {-3, -1, 0, 2})
    for (int64_t n : {16, 48, 64}) {
      CAPTURE(k);
      CAPTURE(n);
      CHECK(claims(a["%rn"], {64}, rem_tile(k * 64, n)) == "");
      CHECK(claims(a["%qn"], {64}, div_tile(k * 64, n)) == "");
      // The fact's claims hold where the fact does: a non-negative left side.
      if (k >= 0) CHECK(claims(a["%fast"], {64}, rem_tile(k * 64, n)) == "");
      if (k >= 0) CHECK(claims(a["%fastq"], {64}, div_tile(k * 64, n)) == "");
    }
  // What the fact's claim would break on a negative left side (why it needs the fact).
  CHECK(broken_claim(a["%fast"], {64}, rem_tile(-64, 16)) != "");
}

TEST_CASE("axis info: a run that does not start at a multiple of the divisor's block stays short") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}) {
  %r = arange {start = 4, end = 68} : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %rn = rem %r, %sn : tile<64xi32>
})");
  CHECK(a["%rn"] == info({4}, {4}, {1}));
  for (int64_t n : {16, 32, 48})
    CHECK(claims(a["%rn"], {64}, tile({64}, [&](int64_t i, int64_t) { return (4 + i) % n; })) ==
          "");
}

TEST_CASE("axis info: the sign analysis proves program ids, constants and their combinations") {
  Analysis a(R"(func @k(%n: i32, %p: ptr<f32>) {
  %pid = program_id {axis = 0} : i32
  %np = num_programs {axis = 0} : i32
  %c3 = constant {value = 3} : i32
  %cm = constant {value = -3} : i32
  %s = sub %np, %pid : i32
  %q = div %pid, %c3 : i32
  %mn = min %pid, %c3 : i32
  %mx = max %n, %c3 : i32
  %mnn = min %n, %c3 : i32
  %sum = add %pid, %cm : i32
  %rp = rem %pid, %n : i32
  %rn = rem %n, %c3 : i32
  %w = cast %pid : i64
  %ra = arange {start = 0, end = 8} : tile<8xi32>
})");
  CHECK(provably_nonneg(a.value("%pid")));
  CHECK(provably_nonneg(a.value("%np")));
  CHECK(provably_nonneg(a.value("%c3")));
  CHECK_FALSE(provably_nonneg(a.value("%cm")));
  CHECK_FALSE(provably_nonneg(a.value("%n")));  // parameters are of unknown sign
  CHECK_FALSE(provably_nonneg(a.value("%s")));  // a difference: not analysed
  CHECK(provably_nonneg(a.value("%q")));
  CHECK(provably_nonneg(a.value("%mn")));
  CHECK(provably_nonneg(a.value("%mx")));
  CHECK_FALSE(provably_nonneg(a.value("%mnn")));
  CHECK_FALSE(provably_nonneg(a.value("%sum")));
  CHECK(provably_nonneg(a.value("%rp")));  // the remainder has the left side's sign
  CHECK_FALSE(provably_nonneg(a.value("%rn")));
  CHECK(provably_nonneg(a.value("%w")));
  CHECK(provably_nonneg(a.value("%ra")));
}
