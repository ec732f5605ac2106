// \file Axis info (core/lower/axis_info.h) on tile-IR functions parsed from text: the values each
// seed and op gives, and, independently of the rules, that every claim holds on the concrete
// values the IR computes for a few parameter values (contiguity, divisibility and constancy as
// the header defines them).
#include <doctest/doctest.h>

#include <bit>

#include "tests/core/lower/axis_info_helpers.h"

using namespace axis_test;

TEST_CASE("axis info: pow2_divisor is the largest power of two dividing v") {
  CHECK(pow2_divisor(1) == 1);
  CHECK(pow2_divisor(48) == 16);
  CHECK(pow2_divisor(96) == 32);
  CHECK(pow2_divisor(-8) == 8);
  CHECK(pow2_divisor(1024) == 1024);
  CHECK(pow2_divisor(0) >= (int64_t{1} << 20));  // "a large power of two"
  CHECK(std::has_single_bit(static_cast<uint64_t>(pow2_divisor(0))));
}

TEST_CASE("axis info: arange is one contiguous run, divisible as its start") {
  Analysis a(R"(func @k() {
  %r0 = arange {start = 0, end = 64} : tile<64xi32>
  %r4 = arange {start = 4, end = 20} : tile<16xi32>
  %r48 = arange {start = 48, end = 176} : tile<128xi32>
})");
  CHECK(a["%r0"] == info({64}, {pow2_divisor(0)}, {1}));
  CHECK(a["%r4"] == info({16}, {4}, {1}));
  CHECK(a["%r48"] == info({128}, {16}, {1}));
  CHECK(claims(a["%r0"], {64}, tile({64}, [](int64_t i, int64_t) { return i; })) == "");
  CHECK(claims(a["%r4"], {16}, tile({16}, [](int64_t i, int64_t) { return 4 + i; })) == "");
  CHECK(claims(a["%r48"], {128}, tile({128}, [](int64_t i, int64_t) { return 48 + i; })) == "");
}

TEST_CASE("axis info: splats and constants are constant, divisible as their scalar") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}, %m: i32) {
  %sn = splat %n : tile<64xi32>
  %sm = splat %m : tile<64xi32>
  %c = constant {value = 24} : i32
  %sc = splat %c : tile<32xi32>
  %t = constant {value = 48} : tile<4x8xi32>
  %z = constant {value = 0} : tile<8xi32>
})");
  CHECK(a["%n"] == info({1}, {16}, {1}));
  CHECK(a["%m"] == AxisInfo::unknown(0));
  CHECK(a["%sn"] == info({1}, {16}, {64}));
  CHECK(a["%sm"] == info({1}, {1}, {64}));
  CHECK(a["%c"] == info({1}, {8}, {1}));
  CHECK(a["%sc"] == info({1}, {8}, {32}));
  CHECK(a["%t"] == info({1, 1}, {16, 16}, {4, 8}));
  CHECK(a["%z"] == info({1}, {pow2_divisor(0)}, {8}));
  for (int64_t n : {0, 16, 48, -32}) CHECK(claims(a["%sn"], {64}, Ints(64, n)) == "");
  CHECK(claims(a["%t"], {4, 8}, Ints(32, 48)) == "");
}

TEST_CASE("axis info: add and sub keep runs against a constant, divisibility is the gcd") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}, %m: i32) {
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %sm = splat %m : tile<64xi32>
  %c8 = constant {value = 8} : tile<64xi32>
  %a = add %sn, %r : tile<64xi32>
  %b = add %r, %sn : tile<64xi32>
  %u = add %r, %sm : tile<64xi32>
  %e = add %r, %c8 : tile<64xi32>
  %d = sub %r, %sn : tile<64xi32>
  %rev = sub %sn, %r : tile<64xi32>
  %ss = add %sn, %sm : tile<64xi32>
  %wide = cast %a : tile<64xi64>
  %narrow = cast %a : tile<64xi16>
})");
  CHECK(a["%a"] == info({64}, {16}, {1}));
  CHECK(a["%b"] == info({64}, {16}, {1}));
  CHECK(a["%u"] == info({64}, {1}, {1}));
  CHECK(a["%e"] == info({64}, {8}, {1}));
  CHECK(a["%d"] == info({64}, {16}, {1}));
  CHECK(a["%ss"] == info({1}, {1}, {64}));
  CHECK(a["%wide"] == a["%a"]);  // widening keeps the integers
  CHECK(a["%narrow"] == info({1}, {1}, {1}));
  // n - arange decreases: no contiguity. (Its divisibility is not asserted: see the report on
  // divisibility kept after contiguity is lost.)
  CHECK(a["%rev"].contiguity == Ints{1});
  CHECK(a["%rev"].constancy == Ints{1});
  for (int64_t n : {0, 16, 80})
    for (int64_t m : {0, 3, 17}) {
      CAPTURE(n);
      CAPTURE(m);
      CHECK(claims(a["%a"], {64}, tile({64}, [&](int64_t i, int64_t) { return n + i; })) == "");
      CHECK(claims(a["%u"], {64}, tile({64}, [&](int64_t i, int64_t) { return i + m; })) == "");
      CHECK(claims(a["%e"], {64}, tile({64}, [&](int64_t i, int64_t) { return i + 8; })) == "");
      CHECK(claims(a["%d"], {64}, tile({64}, [&](int64_t i, int64_t) { return i - n; })) == "");
      CHECK(claims(a["%ss"], {64}, Ints(64, n + m)) == "");
    }
}

TEST_CASE("axis info: mul multiplies divisibility, and only a multiply by 1 keeps runs") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}, %m: i32) {
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %one = constant {value = 1} : i32
  %s1 = splat %one : tile<64xi32>
  %four = constant {value = 4} : tile<64xi32>
  %r1 = mul %r, %s1 : tile<64xi32>
  %l1 = mul %s1, %r : tile<64xi32>
  %r4 = mul %r, %four : tile<64xi32>
  %n4 = mul %sn, %four : tile<64xi32>
  %nm = mul %n, %m : i32
})");
  CHECK(a["%r1"] == a["%r"]);
  CHECK(a["%l1"] == a["%r"]);
  CHECK(a["%n4"] == info({1}, {64}, {64}));
  CHECK(a["%nm"] == info({1}, {16}, {1}));
  CHECK(a["%r4"].contiguity == Ints{1});
  CHECK(a["%r4"].constancy == Ints{1});
  // Every element of 4 * arange starts a run: 4 divides them all, nothing more.
  CHECK(a["%r4"].divisibility == Ints{4});
  CHECK(claims(a["%r4"], {64}, tile({64}, [](int64_t i, int64_t) { return 4 * i; })) == "");
  for (int64_t n : {0, 16, 48}) {
    CHECK(claims(a["%n4"], {64}, Ints(64, 4 * n)) == "");
  }
}

TEST_CASE("axis info: expand_dims and broadcast make the new dims constant") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}) {
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %col = expand_dims %r {axis = 1} : tile<64x1xi32>
  %row = expand_dims %r {axis = 0} : tile<1x64xi32>
  %cb = broadcast %col : tile<64x32xi32>
  %rb = broadcast %row : tile<16x64xi32>
  %pt = permute %cb {order = [1, 0]} : tile<32x64xi32>
  %sn = splat %n : tile<64xi32>
  %se = expand_dims %sn {axis = 0} : tile<1x64xi32>
  %sb = broadcast %se : tile<8x64xi32>
})");
  const int64_t big = pow2_divisor(0);
  CHECK(a["%col"].contiguity == Ints{64, 1});
  CHECK(a["%col"].constancy == Ints{1, 1});
  CHECK(a["%col"].divisibility[0] == big);
  CHECK(a["%row"].contiguity == Ints{1, 64});
  CHECK(a["%row"].constancy == Ints{1, 1});
  CHECK(a["%row"].divisibility[1] == big);
  CHECK(a["%cb"].contiguity == Ints{64, 1});
  CHECK(a["%cb"].constancy == Ints{1, 32});
  CHECK(a["%cb"].divisibility[0] == big);
  CHECK(a["%rb"].contiguity == Ints{1, 64});
  CHECK(a["%rb"].constancy == Ints{16, 1});
  CHECK(a["%pt"].contiguity == Ints{1, 64});
  CHECK(a["%pt"].constancy == Ints{32, 1});
  CHECK(a["%pt"].divisibility[1] == big);
  // Along a new dim every element starts a run: arange's elements share only 1; a constant's
  // divisor divides them all.
  CHECK(a["%col"].divisibility[1] == 1);
  CHECK(a["%row"].divisibility[0] == 1);
  CHECK(a["%cb"].divisibility[1] == 1);
  CHECK(claims(a["%cb"], {64, 32}, tile({64, 32}, [](int64_t i, int64_t) { return i; })) == "");
  CHECK(claims(a["%rb"], {16, 64}, tile({16, 64}, [](int64_t, int64_t j) { return j; })) == "");
  CHECK(a["%se"] == info({1, 1}, {16, 16}, {1, 64}));
  CHECK(a["%sb"] == info({1, 1}, {16, 16}, {8, 64}));
  for (int64_t n : {0, 32, -16}) CHECK(claims(a["%sb"], {8, 64}, Ints(8 * 64, n)) == "");
}

TEST_CASE("axis info: pointers plus arange offsets are contiguous, aligned in bytes") {
  Analysis a(R"(func @k(%x: ptr<f32> {divisibility = 16}, %y: ptr<f16>,
    %h: ptr<f16> {divisibility = 16}, %n: i32 {divisibility = 16}) {
  %pid = program_id {axis = 0} : i32
  %c128 = constant {value = 128} : i32
  %base = mul %pid, %c128 : i32
  %bs = splat %base : tile<128xi32>
  %r = arange {start = 0, end = 128} : tile<128xi32>
  %offs = add %bs, %r : tile<128xi32>
  %xs = splat %x : tile<128xptr<f32>>
  %px = ptr_add %xs, %offs : tile<128xptr<f32>>
  %r2 = arange {start = 2, end = 130} : tile<128xi32>
  %px2 = ptr_add %xs, %r2 : tile<128xptr<f32>>
  %ys = splat %y : tile<128xptr<f16>>
  %py = ptr_add %ys, %r : tile<128xptr<f16>>
  %hs = splat %h : tile<128xptr<f16>>
  %r4 = arange {start = 4, end = 132} : tile<128xi32>
  %ph = ptr_add %hs, %r4 : tile<128xptr<f16>>
  %q = ptr_add %x, %n : ptr<f32>
})");
  CHECK(a["%x"] == info({1}, {16}, {1}));
  CHECK(a["%base"] == info({1}, {128}, {1}));
  CHECK(a["%offs"] == info({128}, {128}, {1}));
  CHECK(a["%xs"] == info({1}, {16}, {128}));
  CHECK(a["%px"] == info({128}, {16}, {1}));
  CHECK(a["%px2"] == info({128}, {8}, {1}));  // x + 8 bytes
  CHECK(a["%py"] == info({128}, {1}, {1}));
  CHECK(a["%ph"] == info({128}, {8}, {1}));  // h + 8 bytes
  CHECK(a["%q"] == info({1}, {16}, {1}));
  for (int64_t x : {4096, 4096 + 48})
    for (int64_t pid : {0, 1, 5}) {
      CAPTURE(x);
      CAPTURE(pid);
      auto f32_at = [&](int64_t first) {
        return tile({128}, [&](int64_t i, int64_t) { return x + 4 * (first + i); });
      };
      CHECK(claims(a["%px"], {128}, f32_at(128 * pid), 4) == "");
      CHECK(claims(a["%px2"], {128}, f32_at(2), 4) == "");
      CHECK(claims(a["%ph"], {128},
                   tile({128}, [&](int64_t i, int64_t) { return x + 2 * (4 + i); }), 2) == "");
      CHECK(claims(a["%py"], {128}, tile({128}, [&](int64_t i, int64_t) { return x + 2 + 2 * i; }),
                   2) == "");
      CHECK(claims(a["%q"], {}, {x + 4 * 16 * pid}) == "");
    }
}

TEST_CASE("axis info: a matmul's 2-D offsets keep the row runs and their alignment") {
  Analysis a(R"(func @k(%x: ptr<f32> {divisibility = 16}, %s16: i32 {divisibility = 16}, %s: i32) {
  %rm = arange {start = 0, end = 64} : tile<64xi32>
  %rk = arange {start = 0, end = 32} : tile<32xi32>
  %col = expand_dims %rm {axis = 1} : tile<64x1xi32>
  %rows = broadcast %col : tile<64x32xi32>
  %row = expand_dims %rk {axis = 0} : tile<1x32xi32>
  %cols = broadcast %row : tile<64x32xi32>
  %xs = splat %x : tile<64x32xptr<f32>>
  %st16 = splat %s16 : tile<64x32xi32>
  %off16 = mul %rows, %st16 : tile<64x32xi32>
  %o16 = add %off16, %cols : tile<64x32xi32>
  %p16 = ptr_add %xs, %o16 : tile<64x32xptr<f32>>
  %st = splat %s : tile<64x32xi32>
  %off = mul %rows, %st : tile<64x32xi32>
  %o = add %off, %cols : tile<64x32xi32>
  %p = ptr_add %xs, %o : tile<64x32xptr<f32>>
})");
  // Rows of 32 consecutive elements; with a stride divisible by 16 each row starts 16-byte
  // aligned (x is), so 128-bit accesses are safe.
  CHECK(a["%p16"].contiguity == Ints{1, 32});
  CHECK(a["%p16"].constancy == Ints{1, 1});
  CHECK(a["%p16"].divisibility[1] == 16);
  CHECK(a["%p"].contiguity == Ints{1, 32});
  CHECK(a["%p"].constancy == Ints{1, 1});
  // With an unknown stride row i starts at x + 4 * i * s: only 4-byte aligned, so no 128-bit
  // access (it came out as 16 before, and a stride of 1001 would have faulted).
  CHECK(a["%p"].divisibility[1] == 4);
  for (int64_t s : {1001, 1002, 1024}) {
    CAPTURE(s);
    auto addr = [&](int64_t i, int64_t j) { return 4096 + 4 * (i * s + j); };
    CHECK(claims(a["%p"], {64, 32}, tile({64, 32}, addr), 4) == "");
  }
}

TEST_CASE("axis info: multiple_of and max_contiguous raise what is known, never lower it") {
  Analysis a(R"(func @k(%x: ptr<f32>, %q: ptr<i32>, %m: i32, %n: i32) {
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %sm = splat %m : tile<64xi32>
  %o = add %sm, %r : tile<64xi32>
  %o16 = multiple_of %o {values = [16]} : tile<64xi32>
  %o48 = multiple_of %o {values = [48]} : tile<64xi32>
  %keep = multiple_of %r {values = [4]} : tile<64xi32>
  %qs = splat %q : tile<64xptr<i32>>
  %pq = ptr_add %qs, %r : tile<64xptr<i32>>
  %w = load %pq : tile<64xi32>
  %wc = max_contiguous %w {values = [16]} : tile<64xi32>
  %wcm = multiple_of %wc {values = [16]} : tile<64xi32>
  %rc = max_contiguous %r {values = [8]} : tile<64xi32>
  %xs = splat %x : tile<64xptr<f32>>
  %pp = ptr_add %xs, %o : tile<64xptr<f32>>
  %pm = multiple_of %pp {values = [16]} : tile<64xptr<f32>>
  %nm = multiple_of %n {values = [32]} : i32
})");
  CHECK(a["%o"] == info({64}, {1}, {1}));
  CHECK(a["%o16"] == info({64}, {16}, {1}));
  CHECK(a["%o48"] == info({64}, {16}, {1}));  // the power-of-two part of 48
  CHECK(a["%keep"] == a["%r"]);
  CHECK(a["%w"] == AxisInfo::unknown(1));
  CHECK(a["%wc"] == info({16}, {1}, {1}));
  CHECK(a["%wcm"] == info({16}, {16}, {1}));
  CHECK(a["%rc"] == a["%r"]);
  CHECK(a["%pp"] == info({64}, {1}, {1}));
  CHECK(a["%pm"] == info({64}, {16}, {1}));  // bytes, as for the pointer's own divisibility
  CHECK(a["%nm"] == info({1}, {32}, {1}));
}

TEST_CASE("axis info: a mask against a bound divisible by 16 is constant over runs of 16") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}, %m: i32) {
  %pid = program_id {axis = 0} : i32
  %c64 = constant {value = 64} : i32
  %base = mul %pid, %c64 : i32
  %bs = splat %base : tile<64xi32>
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %offs = add %bs, %r : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %sm = splat %m : tile<64xi32>
  %lt = cmp_lt %offs, %sn : tile<64xi1>
  %gt = cmp_gt %sn, %offs : tile<64xi1>
  %lm = cmp_lt %offs, %sm : tile<64xi1>
  %eq = cmp_eq %sn, %sm : tile<64xi1>
  %both = and %lt, %lm : tile<64xi1>
  %r8 = arange {start = 8, end = 72} : tile<64xi32>
  %l8 = cmp_lt %r8, %sn : tile<64xi1>
  %sel = where %lt, %sn, %sm : tile<64xi32>
  %col = expand_dims %offs {axis = 1} : tile<64x1xi32>
  %rows = broadcast %col : tile<64x32xi32>
  %sn2 = splat %n : tile<64x32xi32>
  %m2 = cmp_lt %rows, %sn2 : tile<64x32xi1>
})");
  CHECK(a["%offs"] == info({64}, {64}, {1}));
  CHECK(a["%lt"] == info({1}, {1}, {16}));
  CHECK(a["%gt"] == info({1}, {1}, {16}));
  CHECK(a["%lm"] == info({1}, {1}, {1}));
  CHECK(a["%eq"] == info({1}, {1}, {64}));
  CHECK(a["%both"] == info({1}, {1}, {1}));
  CHECK(a["%l8"] == info({1}, {1}, {8}));  // runs start at 8 + 8k: a multiple of 16 lands on one
  CHECK(a["%sel"].constancy == Ints{16});
  CHECK(a["%m2"] == info({1, 1}, {1, 1}, {16, 32}));
  for (int64_t pid : {0, 1, 3})
    for (int64_t n : {0, 16, 48, 64, 80, 112, 240})
      for (int64_t m : {5, 17, 64}) {
        CAPTURE(pid);
        CAPTURE(n);
        CAPTURE(m);
        auto offs = [&](int64_t i, int64_t) { return 64 * pid + i; };
        CHECK(claims(a["%lt"], {64}, tile({64}, [&](int64_t i, int64_t j) {
                       return int64_t{offs(i, j) < n};
                     })) == "");
        CHECK(claims(a["%gt"], {64}, tile({64}, [&](int64_t i, int64_t j) {
                       return int64_t{n > offs(i, j)};
                     })) == "");
        CHECK(claims(a["%l8"], {64},
                     tile({64}, [&](int64_t i, int64_t) { return int64_t{8 + i < n}; })) == "");
        CHECK(claims(a["%sel"], {64}, tile({64}, [&](int64_t i, int64_t j) {
                       return offs(i, j) < n ? n : m;
                     })) == "");
        CHECK(claims(a["%m2"], {64, 32}, tile({64, 32}, [&](int64_t i, int64_t j) {
                       return int64_t{offs(i, j) < n};
                     })) == "");
      }
}

TEST_CASE("axis info: loop-carried values reach the fixed point of their updates") {
  Analysis a(R"(func @k(%x: ptr<f32> {divisibility = 16}, %n: i32) {
  %zero = constant {value = 0} : i32
  %step = constant {value = 64} : i32
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %xs = splat %x : tile<64xptr<f32>>
  %p0 = ptr_add %xs, %r : tile<64xptr<f32>>
  %inc = constant {value = 64} : tile<64xi32>
  %pend, %oend, %dend = for %zero, %n, %step, %p0, %r, %r ({
  ^(%i: i32, %p: tile<64xptr<f32>>, %o: tile<64xi32>, %d: tile<64xi32>):
    %pn = ptr_add %p, %inc : tile<64xptr<f32>>
    %on = add %o, %inc : tile<64xi32>
    %dn = max %d, %inc : tile<64xi32>
    %si = splat %i : tile<64xi32>
    %idx = add %si, %r : tile<64xi32>
    yield %pn, %on, %dn
  }) : tile<64xptr<f32>>, tile<64xi32>, tile<64xi32>
})");
  CHECK(a["%pend"] == info({64}, {16}, {1}));  // x + 4 * (64k + i)
  CHECK(a["%oend"] == info({64}, {64}, {1}));  // 64k + i: the gcd of arange's and the step's
  CHECK(a["%on"] == info({64}, {64}, {1}));
  CHECK(a["%dend"] == AxisInfo::unknown(1));  // max(d, 64) is not contiguous
  CHECK(a["%si"] == info({1}, {64}, {64}));   // the induction variable: 0 + 64k
  CHECK(a["%idx"] == info({64}, {64}, {1}));
  for (int64_t k : {0, 1, 7}) {
    CAPTURE(k);
    CHECK(claims(a["%oend"], {64}, tile({64}, [&](int64_t i, int64_t) { return 64 * k + i; })) ==
          "");
    CHECK(claims(a["%pend"], {64},
                 tile({64}, [&](int64_t i, int64_t) { return 4096 + 4 * (64 * k + i); }), 4) == "");
  }
}

namespace {

/// A loop whose carried values shift by one each iteration: c0 <- c1 <- ... <- c{depth-1} <- a
/// non-contiguous value, all starting as arange. c0 becomes non-contiguous after `depth` trips.
std::string shift_chain(int depth) {
  std::string types, inits, args, yields, results;
  for (int i = 0; i < depth; ++i) {
    const std::string sep = i ? ", " : "";
    types += sep + "tile<64xi32>";
    inits += ", %r";
    args += ", %c" + std::to_string(i) + ": tile<64xi32>";
    results += sep + "%out" + std::to_string(i);
    yields += (i ? ", %c" + std::to_string(i) : std::string());
  }
  return "func @k(%n: i32) {\n"
         "  %zero = constant {value = 0} : i32\n"
         "  %one = constant {value = 1} : i32\n"
         "  %r = arange {start = 0, end = 64} : tile<64xi32>\n"
         "  %big = constant {value = 64} : tile<64xi32>\n"
         "  " +
         results + " = for %zero, %n, %one" + inits +
         " ({\n"
         "  ^(%i: i32" +
         args +
         "):\n"
         "    %u = max %c" +
         std::to_string(depth - 1) +
         ", %big : tile<64xi32>\n"
         "    yield " +
         yields.substr(yields.empty() ? 0 : 2) + (depth > 1 ? ", " : "") +
         "%u\n"
         "  }) : " +
         types + "\n}\n";
}

}  // namespace

TEST_CASE("axis info: a value carried through a chain of loop arguments reaches the fixed point") {
  for (int depth : {1, 2, 4, 8}) {
    CAPTURE(depth);
    Analysis a(shift_chain(depth));
    for (int i = 0; i < depth; ++i) CHECK(a["%out" + std::to_string(i)] == AxisInfo::unknown(1));
  }
  // Deeper chains too: the analysis settles, or gives up to unknown, never stops half-way.
  for (int depth : {9, 16, 70}) {
    CAPTURE(depth);
    Analysis a(shift_chain(depth));
    for (int i = 0; i < depth; ++i) CHECK(a["%out" + std::to_string(i)] == AxisInfo::unknown(1));
  }
}

TEST_CASE("axis info: an if joins its branches") {
  Analysis a(R"(func @k(%n: i32 {divisibility = 16}, %c: i1) {
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %o = add %sn, %r : tile<64xi32>
  %same = if %c ({
    yield %r
  }, {
    yield %o
  }) : tile<64xi32>
  %mixed = if %c ({
    yield %r
  }, {
    yield %sn
  }) : tile<64xi32>
})");
  CHECK(a["%same"] == info({64}, {16}, {1}));
  for (int64_t n : {0, 32, 48}) {
    CHECK(claims(a["%same"], {64}, tile({64}, [](int64_t i, int64_t) { return i; })) == "");
    CHECK(claims(a["%same"], {64}, tile({64}, [&](int64_t i, int64_t) { return n + i; })) == "");
  }
  CHECK(a["%mixed"].contiguity == Ints{1});
  CHECK(a["%mixed"].constancy == Ints{1});
  // Every element starts a run and arange's elements are consecutive: only 1 divides them all.
  CHECK(a["%mixed"].divisibility == Ints{1});
  CHECK(claims(a["%mixed"], {64}, tile({64}, [](int64_t i, int64_t) { return i; })) == "");
}
