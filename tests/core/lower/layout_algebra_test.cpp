// \file The layout algebra of core/lower/layout.h tested by equivalence, CuTe style: blocked()
// against its definition, and permute / reshape against the coordinate maps they stand for, at
// every (register, thread) of a sweep of shapes, orders, vec widths and thread counts.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/lower/layout.h"
#include "core/support/error.h"
#include "tests/core/lower/layout_helpers.h"

namespace lower = tessera::lower;
using lower::DimBit;
using lower::Layout;
using namespace layout_test;

namespace {

struct BlockedCase {
  Shape shape;
  std::vector<int> order;
  int vec;
  int64_t threads;
  std::string str() const {
    std::string s = tessera::ir::shape_str(shape) + " order=(";
    for (size_t i = 0; i < order.size(); ++i) s += (i ? "," : "") + std::to_string(order[i]);
    return s + ") vec=" + std::to_string(vec) + " threads=" + std::to_string(threads);
  }
};

/// Every shape of the sweep in every order, with vec 1..16 and 32..256 threads.
std::vector<BlockedCase> blocked_cases() {
  std::vector<BlockedCase> out;
  for (const Shape& s : sweep_shapes())
    for (const auto& p : permutations(static_cast<int>(s.size())))
      for (int vec : {1, 2, 4, 8, 16})
        for (int64_t threads : sweep_threads())
          out.push_back({s, std::vector<int>(p.begin(), p.end()), vec, threads});
  return out;
}

/// blocked() by its definition: walk the tile along `order` (fastest first) as one index p whose
/// low bits are the vec registers, then the thread id, then the remaining registers; thread bits
/// past the tile name nothing.
Coords blocked_reference(const BlockedCase& bc, int r, int64_t t) {
  int total = 0;
  for (int64_t d : bc.shape) total += bits_of(d);
  const int vb = std::min(bits_of(bc.vec), total);
  const int tb = std::min(bits_of(bc.threads), total - vb);
  int64_t p = (r & ((1 << vb) - 1)) | ((t & ((int64_t{1} << tb) - 1)) << vb) |
              ((int64_t{r} >> vb) << (vb + tb));
  Coords c(bc.shape.size(), 0);
  for (int d : bc.order) {
    c[static_cast<size_t>(d)] = p % bc.shape[static_cast<size_t>(d)];
    p /= bc.shape[static_cast<size_t>(d)];
  }
  return c;
}

/// The number of registers blocked() must use: the elements a thread holds once the threads
/// (capped at the tile) have taken theirs.
int expected_regs(const BlockedCase& bc) {
  int total = 0;
  for (int64_t d : bc.shape) total += bits_of(d);
  const int vb = std::min(bits_of(bc.vec), total);
  return 1 << (total - std::min(bits_of(bc.threads), total - vb));
}

}  // namespace

TEST_CASE("layout: blocked() maps (reg, thread) to the element its definition names") {
  for (const BlockedCase& bc : blocked_cases()) {
    CAPTURE(bc.str());
    const Layout l = lower::blocked(bc.shape, bc.order, bc.vec, bc.threads);
    CHECK(l.shape == bc.shape);
    CHECK(l.num_threads() == bc.threads);
    CHECK(l.num_regs() == expected_regs(bc));
    CHECK_NOTHROW(l.check());
    std::string e = coords_error(l, [&](int r, int64_t t) { return blocked_reference(bc, r, t); });
    CHECK_MESSAGE(e.empty(), l.str() << ": " << e);
  }
}

TEST_CASE("layout: blocked() gives every element exactly one owner thread and covers the tile") {
  for (const BlockedCase& bc : blocked_cases()) {
    CAPTURE(bc.str());
    const Layout l = lower::blocked(bc.shape, bc.order, bc.vec, bc.threads);
    std::string e = coverage_error(l);
    CHECK_MESSAGE(e.empty(), l.str() << ": " << e);
    // Owners: as many as the tile has elements per register, capped by the thread count.
    int64_t owners = 0;
    for (int64_t t = 0; t < l.num_threads(); ++t) owners += l.is_owner(t);
    CHECK(owners == std::min(bc.threads, numel(bc.shape) / l.num_regs()));
  }
}

TEST_CASE("layout: blocked() runs vec registers, then consecutive threads, along order[0]") {
  for (const BlockedCase& bc : blocked_cases()) {
    const size_t fast = static_cast<size_t>(bc.order[0]);
    if (bc.vec > bc.shape[fast]) continue;  // the vec then spills into order[1]
    CAPTURE(bc.str());
    const Layout l = lower::blocked(bc.shape, bc.order, bc.vec, bc.threads);
    const Coords origin(bc.shape.size(), 0);
    std::string e;
    for (int r = 0; r < bc.vec && e.empty(); ++r) {
      Coords want = origin;
      want[fast] = r;
      if (l.coords(r, 0) != want)
        e = "register " + std::to_string(r) + " of thread 0 is " + coords_str(l.coords(r, 0));
    }
    const int64_t along = std::min(bc.threads, bc.shape[fast] / bc.vec);
    for (int64_t t = 0; t < along && e.empty(); ++t) {
      Coords want = origin;
      want[fast] = t * bc.vec;
      if (l.coords(0, t) != want)
        e = "thread " + std::to_string(t) + " starts at " + coords_str(l.coords(0, t));
    }
    CHECK_MESSAGE(e.empty(), l.str() << ": " << e);
  }
}

TEST_CASE("layout: coords are the bitwise-disjoint sum of reg_coords and thread_coords") {
  for (const BlockedCase& bc : blocked_cases()) {
    CAPTURE(bc.str());
    const Layout l = lower::blocked(bc.shape, bc.order, bc.vec, bc.threads);
    std::string e = decomposition_error(l);
    CHECK_MESSAGE(e.empty(), l.str() << ": " << e);
  }
  for (const Layout& l : sample_layouts()) {
    std::string e = decomposition_error(l);
    CHECK_MESSAGE(e.empty(), l.str() << ": " << e);
  }
}

TEST_CASE("layout: reg_of inverts reg_coords and refuses coordinates held by thread bits") {
  const Layout l = lower::blocked({16, 64}, {1, 0}, 4, 128);  // regs (1.0,1.1,0.3) threads 1.2..0.2
  for (int r = 0; r < l.num_regs(); ++r) {
    Coords c = {(r >> 2) * 8, r & 3};  // register bit 2 is row bit 3
    CHECK(l.reg_of(c) == r);
  }
  CHECK(l.reg_of({0, 4}) == -1);  // column bit 2 belongs to thread bit 0
  CHECK(l.reg_of({1, 0}) == -1);  // row bit 0 belongs to a thread
  CHECK(l.reg_of({8, 5}) == -1);
}

TEST_CASE("layout: default_layout is blocked in row-major order with vec 1, a scalar one slot") {
  for (const Shape& s : sweep_shapes())
    for (int64_t threads : sweep_threads()) {
      std::vector<int> row_major_order;
      for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) row_major_order.push_back(d);
      BlockedCase bc{s, row_major_order, 1, threads};
      CAPTURE(bc.str());
      const Layout l = lower::default_layout(s, threads);
      std::string e =
          coords_error(l, [&](int r, int64_t t) { return blocked_reference(bc, r, t); });
      CHECK_MESSAGE(e.empty(), l.str() << ": " << e);
    }
  const Layout scalar = lower::default_layout({}, 64);
  CHECK_NOTHROW(scalar.check());
  CHECK(scalar.num_regs() == 1);
  CHECK(scalar.num_threads() == 64);
  CHECK(scalar.coords(0, 17).empty());
  CHECK(scalar.is_owner(0));
  CHECK_FALSE(scalar.is_owner(1));
  CHECK_FALSE(scalar.is_owner(63));
}

TEST_CASE(
    "layout: check() rejects a bit named twice, a bit never named, a register naming nothing") {
  Layout ok;
  ok.shape = {4, 2};
  ok.regs = {{1, 0}};
  ok.threads = {{0, 0}, {0, 1}, {}};
  CHECK_NOTHROW(ok.check());
  Layout twice = ok;
  twice.threads[2] = {0, 1};
  CHECK_THROWS_AS(twice.check(), tessera::Error);
  Layout missing = ok;
  missing.threads[1] = {};
  CHECK_THROWS_AS(missing.check(), tessera::Error);
  Layout empty_reg = ok;
  empty_reg.regs.push_back({});
  CHECK_THROWS_AS(empty_reg.check(), tessera::Error);
  Layout outside = ok;
  outside.threads[2] = {1, 1};  // dim 1 has one bit
  CHECK_THROWS_AS(outside.check(), tessera::Error);
}

TEST_CASE("layout: str() prints each register and thread bit as dim.bit, '-' for none") {
  CHECK(lower::blocked({32, 32}, {1, 0}, 4, 128).str() ==
        "[32x32] regs=(1.0,1.1,0.4) threads=(1.2,1.3,1.4,0.0,0.1,0.2,0.3)");
  CHECK(lower::blocked({8}, {0}, 2, 8).str() == "[8] regs=(0.0) threads=(0.1,0.2,-)");
}

TEST_CASE("layout: linear_index is the row-major index") {
  for (const Shape& s : sweep_shapes()) {
    const Layout l = lower::default_layout(s, 32);
    for (int64_t t = 0; t < l.num_threads(); ++t)
      for (int r = 0; r < l.num_regs(); ++r) {
        Coords c = l.coords(r, t);
        REQUIRE(lower::linear_index(s, c) == row_major(s, c));
      }
  }
  CHECK(lower::linear_index({4, 16, 32}, {3, 2, 5}) == 3 * 512 + 2 * 32 + 5);
}

TEST_CASE("layout: permute relabels coordinates, result[i] = c[order[i]]") {
  for (const Layout& l : sample_layouts())
    for (const auto& order : permutations(l.rank())) {
      const Layout p = lower::permute(l, order);
      CAPTURE(l.str());
      CAPTURE(p.str());
      for (size_t i = 0; i < order.size(); ++i)
        CHECK(p.shape[i] == l.shape[static_cast<size_t>(order[i])]);
      CHECK(p.num_regs() == l.num_regs());
      CHECK_NOTHROW(p.check());
      std::string e = coords_error(p, [&](int r, int64_t t) {
        Coords c = l.coords(r, t), want(c.size());
        for (size_t i = 0; i < order.size(); ++i) want[i] = c[static_cast<size_t>(order[i])];
        return want;
      });
      CHECK_MESSAGE(e.empty(), e);
    }
}

TEST_CASE("layout: permute then inverse permute is the identity") {
  for (const Layout& l : sample_layouts())
    for (const auto& order : permutations(l.rank())) {
      std::vector<int64_t> inverse(order.size());
      for (size_t i = 0; i < order.size(); ++i)
        inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
      CAPTURE(l.str());
      CHECK(lower::permute(lower::permute(l, order), inverse) == l);
    }
}

namespace {

/// Shapes with `n` elements: 1-D, every 2-D split and some 3-D ones (size-1 dims included).
std::vector<Shape> reshape_targets(int64_t n) {
  const int b = bits_of(n);
  std::vector<Shape> out = {{n}, {1, n, 1}};
  for (int a = 0; a <= b; ++a) out.push_back({int64_t{1} << a, n >> a});
  for (int a = 0; a <= b; a += 2)
    for (int c = 0; a + c <= b; c += 3)
      out.push_back({int64_t{1} << a, n >> (a + c), int64_t{1} << c});
  return out;
}

}  // namespace

TEST_CASE("layout: reshape keeps every slot's row-major linear index") {
  for (const Layout& l : sample_layouts())
    for (const Shape& to : reshape_targets(numel(l.shape))) {
      const Layout q = lower::reshape(l, to);
      CAPTURE(l.str());
      CAPTURE(q.str());
      CHECK(q.shape == to);
      CHECK(q.num_regs() == l.num_regs());
      CHECK_NOTHROW(q.check());
      std::string e;
      for (int64_t t = 0; t < l.num_threads() && e.empty(); ++t)
        for (int r = 0; r < l.num_regs() && e.empty(); ++r)
          if (row_major(to, q.coords(r, t)) != row_major(l.shape, l.coords(r, t)))
            e = slot_str(r, t) + ": " + coords_str(q.coords(r, t)) + " is not the reshape of " +
                coords_str(l.coords(r, t));
      CHECK_MESSAGE(e.empty(), e);
    }
}

TEST_CASE("layout: reshape there and back is the identity") {
  for (const Layout& l : sample_layouts())
    for (const Shape& to : reshape_targets(numel(l.shape))) {
      CAPTURE(l.str());
      CAPTURE(tessera::ir::shape_str(to));
      CHECK(lower::reshape(lower::reshape(l, to), l.shape) == l);
    }
}
