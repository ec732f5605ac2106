// \file The layout algebra of core/lower/layout.h, continued (layout_algebra_test.cpp has blocked,
// permute and reshape): expand_dims, slice, broadcast, cat and the dot and tensor-core layouts,
// each checked slot by slot against the coordinate map it stands for.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/lower/layout.h"
#include "tests/core/lower/layout_helpers.h"

namespace lower = tessera::lower;
using lower::Layout;
using lower::MmaWarps;
using namespace layout_test;

TEST_CASE("layout: expand_dims inserts a 0 coordinate and slicing it gives the layout back") {
  for (const Layout& l : sample_layouts())
    for (int axis = 0; axis <= l.rank(); ++axis) {
      const Layout x = lower::expand_dims(l, axis);
      CAPTURE(l.str());
      CAPTURE(axis);
      Shape want_shape = l.shape;
      want_shape.insert(want_shape.begin() + axis, 1);
      CHECK(x.shape == want_shape);
      CHECK_NOTHROW(x.check());
      std::string e = coords_error(x, [&](int r, int64_t t) {
        Coords c = l.coords(r, t);
        c.insert(c.begin() + axis, 0);
        return c;
      });
      CHECK_MESSAGE(e.empty(), e);
      CHECK(lower::slice(x, axis) == l);
    }
}

TEST_CASE("layout: slice drops the axis' coordinate, its register bits and its thread bits") {
  for (const Layout& l : sample_layouts())
    for (int axis = 0; axis < l.rank(); ++axis) {
      const Layout s = lower::slice(l, axis);
      CAPTURE(l.str());
      CAPTURE(s.str());
      Shape want_shape = l.shape;
      want_shape.erase(want_shape.begin() + axis);
      CHECK(s.shape == want_shape);
      CHECK(s.num_threads() == l.num_threads());
      CHECK_NOTHROW(s.check());
      // The registers of l that survive, in order: register j of s is register kept[j] of l.
      std::vector<int> kept;
      for (size_t i = 0; i < l.regs.size(); ++i)
        if (l.regs[i].dim != axis) kept.push_back(static_cast<int>(i));
      REQUIRE(s.num_regs() == (1 << kept.size()));
      std::string e;
      for (int64_t t = 0; t < l.num_threads() && e.empty(); ++t)
        for (int r = 0; r < s.num_regs() && e.empty(); ++r) {
          int lr = 0;
          for (size_t j = 0; j < kept.size(); ++j)
            if ((r >> j) & 1) lr |= 1 << kept[j];
          Coords want = l.coords(lr, t);
          want.erase(want.begin() + axis);
          if (s.coords(r, t) != want)
            e = slot_str(r, t) + ": " + coords_str(s.coords(r, t)) + " != " + coords_str(want);
        }
      CHECK_MESSAGE(e.empty(), e);
      for (size_t i = 0; i < l.threads.size(); ++i)
        if (l.threads[i].dim == axis) CHECK(s.threads[i].none());
      // Threads that differed only along the axis now hold copies.
      e = coverage_error(s);
      CHECK_MESSAGE(e.empty(), e);
    }
}

namespace {

/// Layouts with size-1 dimensions to broadcast.
std::vector<Layout> broadcastable_layouts() {
  std::vector<Layout> out;
  for (const Layout& l : sample_layouts()) {
    bool has_one = false;
    for (int64_t d : l.shape) has_one |= d == 1;
    if (has_one) out.push_back(l);
    if (l.rank() < 3) out.push_back(lower::expand_dims(l, l.rank()));
  }
  return out;
}

/// Every way to give each size-1 dim of `s` one of the sizes 1, 4, 64 (at least one changes),
/// up to 16384 elements.
std::vector<Shape> broadcast_targets(const Shape& s) {
  std::vector<Shape> out = {s};
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] != 1) continue;
    std::vector<Shape> next;
    for (const Shape& x : out)
      for (int64_t size : {1, 4, 64}) {
        Shape y = x;
        y[d] = size;
        next.push_back(y);
      }
    out = next;
  }
  out.erase(out.begin());  // the unchanged shape
  std::erase_if(out, [](const Shape& x) { return numel(x) > 16384; });
  return out;
}

}  // namespace

TEST_CASE("layout: broadcast keeps the original coordinates and unbroadcast undoes it") {
  for (const Layout& l : broadcastable_layouts())
    for (const Shape& to : broadcast_targets(l.shape)) {
      const Layout b = lower::broadcast(l, to);
      CAPTURE(l.str());
      CAPTURE(b.str());
      CHECK(b.shape == to);
      CHECK(b.num_threads() == l.num_threads());
      CHECK_NOTHROW(b.check());
      // New bits fill l's free thread slots first, registers after.
      int free_slots = 0, new_bits = 0;
      for (const auto& bit : l.threads) free_slots += bit.none();
      for (size_t d = 0; d < to.size(); ++d) new_bits += bits_of(to[d]) - bits_of(l.shape[d]);
      CHECK(b.regs.size() ==
            l.regs.size() + static_cast<size_t>(std::max(0, new_bits - free_slots)));
      // On the dims l already had, slot (r, t) of b holds what l's register r % l.num_regs()
      // holds: the new registers are the most significant.
      std::string e;
      for (int64_t t = 0; t < b.num_threads() && e.empty(); ++t)
        for (int r = 0; r < b.num_regs() && e.empty(); ++r) {
          Coords got = b.coords(r, t), want = l.coords(r % l.num_regs(), t);
          for (size_t d = 0; d < to.size(); ++d)
            if (l.shape[d] == to[d] && got[d] != want[d])
              e = slot_str(r, t) + ": " + coords_str(got) + " vs " + coords_str(want);
        }
      CHECK_MESSAGE(e.empty(), e);
      e = coverage_error(b);
      CHECK_MESSAGE(e.empty(), e);
      CHECK(lower::unbroadcast(b, l.shape) == l);
    }
}

TEST_CASE("layout: unbroadcast of any layout leaves a valid layout of the operand's shape") {
  for (const Layout& l : sample_layouts())
    for (int d = 0; d < l.rank(); ++d) {
      if (l.shape[static_cast<size_t>(d)] == 1) continue;
      Shape from = l.shape;
      from[static_cast<size_t>(d)] = 1;
      const Layout u = lower::unbroadcast(l, from);
      CAPTURE(l.str());
      CAPTURE(u.str());
      CHECK(u.shape == from);
      CHECK_NOTHROW(u.check());
      std::string e = coverage_error(u);
      CHECK_MESSAGE(e.empty(), e);
    }
}

TEST_CASE("layout: cat adds the axis' new top bit as the most significant register") {
  for (const Layout& l : sample_layouts())
    for (int axis = 0; axis < l.rank(); ++axis) {
      const Layout c = lower::cat(l, axis);
      CAPTURE(l.str());
      CAPTURE(axis);
      const int64_t half = l.shape[static_cast<size_t>(axis)];
      CHECK(c.shape[static_cast<size_t>(axis)] == 2 * half);
      CHECK(c.num_regs() == 2 * l.num_regs());
      CHECK_NOTHROW(c.check());
      std::string e = coords_error(c, [&](int r, int64_t t) {
        Coords want = l.coords(r % l.num_regs(), t);
        if (r >= l.num_regs()) want[static_cast<size_t>(axis)] += half;
        return want;
      });
      CHECK_MESSAGE(e.empty(), e);
    }
}

TEST_CASE(
    "layout: dot_layout gives each owner vectors of up to 4 x 4 elements repeated at strides, threads along n first") {
  for (int64_t m : {1, 8, 16, 64, 128})
    for (int64_t n : {1, 8, 32, 128})
      for (int64_t threads : sweep_threads()) {
        const Layout l = lower::dot_layout(m, n, threads);
        CAPTURE(l.str());
        REQUIRE(l.shape == Shape{m, n});
        CHECK(l.num_threads() == threads);
        CHECK_NOTHROW(l.check());
        std::string e = coverage_error(l);
        CHECK_MESSAGE(e.empty(), e);
        const int64_t per = std::max<int64_t>(1, m * n / threads);
        REQUIRE(l.num_regs() == per);
        // Thread 0's block gives rm x rn; every owner's block is the same grid, shifted.
        std::set<int64_t> rows, cols;
        for (int r = 0; r < l.num_regs(); ++r) {
          rows.insert(l.coords(r, 0)[0]);
          cols.insert(l.coords(r, 0)[1]);
        }
        const int64_t rm = static_cast<int64_t>(rows.size()),
                      rn = static_cast<int64_t>(cols.size());
        CHECK(rm * rn == per);
        // As square as the tile allows, the extra factor of two on m.
        const int dm = bits_of(rm), dn = bits_of(rn);
        if (rm < m && rn < n) CHECK((dm == dn || dm == dn + 1));
        // Vectors of vm x vn consecutive elements, repeated at the tile's strides.
        const int64_t vn = std::min<int64_t>(4, rn), vm = std::min<int64_t>(4, rm);
        const int64_t cn = n / rn * vn;  // columns the threads along n cover, in vectors
        for (int64_t t = 0; t < threads && e.empty(); ++t) {
          if (!l.is_owner(t)) continue;
          const int64_t tn = cn / vn;  // threads along n
          const int64_t row0 = t / tn * vm, col0 = t % tn * vn;
          for (int r = 0; r < l.num_regs() && e.empty(); ++r) {
            const int64_t j0 = r % vn, i0 = r / vn % vm, rest = r / (vn * vm);
            const int64_t jt = rest % (rn / vn), it = rest / (rn / vn);
            Coords want = {row0 + i0 + it * (m / (rm / vm)), col0 + j0 + jt * (n / (rn / vn))};
            if (l.coords(r, t) != want)
              e = slot_str(r, t) + ": " + coords_str(l.coords(r, t)) + " != " + coords_str(want);
          }
        }
        CHECK_MESSAGE(e.empty(), e);
      }
}

namespace {

struct MmaLayouts {
  Layout acc, a, b;
};

/// The tensor-core layouts of every [m, n] accumulator, k and element width the lowering may
/// ask for, with Triton's warp split, where the tiles suffice for the warps.
std::vector<MmaLayouts> mma_sweep() {
  std::vector<MmaLayouts> out;
  for (int64_t m : {16, 32, 128})
    for (int64_t n : {8, 32, 128})
      for (int warps : {1, 2, 4, 8})
        for (int per : {1, 2, 4})
          for (int64_t ksteps : {1, 2}) {
            const MmaWarps w = lower::mma_warps(m, n, warps);
            if (m / 16 < w.m || n / 8 < w.n) continue;
            const int64_t k = 8 * per * ksteps, threads = 32 * warps;
            out.push_back({lower::mma_acc_layout(m, n, w, threads),
                           lower::mma_a_layout(m, k, per, w, threads),
                           lower::mma_b_layout(k, n, per, w, threads)});
          }
  return out;
}

}  // namespace

TEST_CASE("layout mma: accumulator and operand layouts hold each element once per owner group") {
  const std::vector<MmaLayouts> sweep = mma_sweep();
  CHECK(sweep.size() > 40);
  for (const MmaLayouts& x : sweep)
    for (const Layout* l : {&x.acc, &x.a, &x.b}) {
      CAPTURE(l->str());
      CHECK_NOTHROW(l->check());
      std::string e = coverage_error(*l);
      CHECK_MESSAGE(e.empty(), e);
      e = decomposition_error(*l);
      CHECK_MESSAGE(e.empty(), e);
    }
}

TEST_CASE("layout mma: transposing and flattening tensor-core layouts round-trips") {
  for (const MmaLayouts& x : mma_sweep())
    for (const Layout* l : {&x.acc, &x.a, &x.b}) {
      CAPTURE(l->str());
      const Layout t = lower::permute(*l, {1, 0});
      std::string e = coords_error(t, [&](int r, int64_t th) {
        Coords c = l->coords(r, th);
        return Coords{c[1], c[0]};
      });
      CHECK_MESSAGE(e.empty(), e);
      CHECK(lower::permute(t, {1, 0}) == *l);
      const Shape flat = {numel(l->shape)};
      const Layout f = lower::reshape(*l, flat);
      e = coords_error(
          f, [&](int r, int64_t th) { return Coords{row_major(l->shape, l->coords(r, th))}; });
      CHECK_MESSAGE(e.empty(), e);
      CHECK(lower::reshape(f, l->shape) == *l);
    }
}
