// \file The tensor-core layouts (core/lower/layout.h), element by element: one warp's 16x8 (C),
// 16xk (A) and kx8 (B) tiles against PTX's fragment tables (written here from the PTX ISA, not
// from core/ir/simt.cpp), and whole tiles against the warp tiling: warp w takes instruction tile
// (w % warps.m, w / warps.m) of each block, the registers repeat the fragment over the blocks,
// and the warps along the other dimension hold copies of A or B. Also the warps' split.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "core/lower/layout.h"

namespace lower = tessera::lower;
using lower::Layout;
using lower::MmaWarps;

namespace {

struct Coord {
  int64_t row, col;
};

/// PTX ISA, "Matrix Fragments for mma.m16n8k16 (f16/bf16), mma.m16n8k8 (tf32), mma.m16n8k32
/// (s8)": value i of `lane` in a layout with `per` elements per 32-bit register.
Coord ptx_a(int per, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  if (per == 1) return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};
  if (per == 4)
    return {(i < 4 || (i >= 8 && i < 12)) ? g : g + 8, 4 * t + (i & 3) + (i >= 8 ? 16 : 0)};
  return {(i < 2 || (i >= 4 && i < 6)) ? g : g + 8, 2 * t + (i & 1) + (i >= 4 ? 8 : 0)};
}
Coord ptx_b(int per, int lane, int i) {
  const int g = lane >> 2, t = lane & 3;
  if (per == 1) return {i == 0 ? t : t + 4, g};
  if (per == 4) return {4 * t + (i & 3) + (i >= 4 ? 16 : 0), g};
  return {2 * t + (i & 1) + (i >= 2 ? 8 : 0), g};
}
Coord ptx_c(int lane, int i) {
  return {(lane >> 2) + (i >= 2 ? 8 : 0), 2 * (lane & 3) + (i & 1)};
}

void check_at(const Layout& l, int reg, int64_t thread, Coord want) {
  std::vector<int64_t> c = l.coords(reg, thread);
  CAPTURE(l.str());
  CAPTURE(reg);
  CAPTURE(thread);
  CHECK(c[0] == want.row);
  CHECK(c[1] == want.col);
}

}  // namespace

TEST_CASE("layout mma: one warp's tiles are PTX's fragments") {
  const Layout c = lower::mma_acc_layout(16, 8, {1, 1}, 32);
  CHECK(c.num_regs() == 4);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) check_at(c, i, lane, ptx_c(lane, i));
  for (int per : {1, 2, 4}) {
    const int k = 8 * per;
    const Layout a = lower::mma_a_layout(16, k, per, {1, 1}, 32);
    const Layout b = lower::mma_b_layout(k, 8, per, {1, 1}, 32);
    CHECK(a.num_regs() == 4 * per);
    CHECK(b.num_regs() == 2 * per);
    for (int lane = 0; lane < 32; ++lane) {
      for (int i = 0; i < a.num_regs(); ++i) check_at(a, i, lane, ptx_a(per, lane, i));
      for (int i = 0; i < b.num_regs(); ++i) check_at(b, i, lane, ptx_b(per, lane, i));
    }
  }
}

TEST_CASE("layout mma: whole tiles, warps tiling M then N, registers repeating the fragment") {
  struct Case {
    int64_t m, n, k;
    int per;
    MmaWarps w;
  };
  const Case cases[] = {{16, 8, 16, 2, {1, 1}},    {64, 32, 32, 2, {2, 2}},
                        {128, 64, 16, 1, {4, 2}},  {32, 128, 64, 4, {1, 4}},
                        {128, 128, 64, 2, {2, 4}}, {32, 16, 8, 1, {2, 1}}};
  for (const Case& cs : cases) {
    const int warps = cs.w.m * cs.w.n;
    const int64_t threads = 32 * warps;
    const int64_t reps_m = cs.m / 16 / cs.w.m, reps_n = cs.n / 8 / cs.w.n;
    const int64_t kinst = 8 * cs.per, steps = cs.k / kinst;
    const Layout c = lower::mma_acc_layout(cs.m, cs.n, cs.w, threads);
    const Layout a = lower::mma_a_layout(cs.m, cs.k, cs.per, cs.w, threads);
    const Layout b = lower::mma_b_layout(cs.k, cs.n, cs.per, cs.w, threads);
    CHECK(c.num_regs() == 4 * reps_m * reps_n);
    CHECK(a.num_regs() == 4 * cs.per * reps_m * steps);
    CHECK(b.num_regs() == 2 * cs.per * reps_n * steps);
    for (int64_t t = 0; t < threads; ++t) {
      const int lane = static_cast<int>(t % 32);
      const int64_t wm = (t / 32) % cs.w.m, wn = (t / 32) / cs.w.m;
      // C: value i, then the repetitions along N, then along M.
      for (int r = 0; r < c.num_regs(); ++r) {
        const int64_t rn = (r / 4) % reps_n, rm = (r / 4) / reps_n;
        Coord f = ptx_c(lane, r % 4);
        check_at(c, r, t, {16 * (wm + cs.w.m * rm) + f.row, 8 * (wn + cs.w.n * rn) + f.col});
      }
      // A: value i, then the repetitions along M, then the k steps; warps along N are copies.
      const int na = 4 * cs.per, nb = 2 * cs.per;
      for (int r = 0; r < a.num_regs(); ++r) {
        const int64_t rm = (r / na) % reps_m, s = (r / na) / reps_m;
        Coord f = ptx_a(cs.per, lane, r % na);
        check_at(a, r, t, {16 * (wm + cs.w.m * rm) + f.row, kinst * s + f.col});
      }
      CHECK(a.is_owner(t) == (wn == 0));
      for (int r = 0; r < b.num_regs(); ++r) {
        const int64_t rn = (r / nb) % reps_n, s = (r / nb) / reps_n;
        Coord f = ptx_b(cs.per, lane, r % nb);
        check_at(b, r, t, {kinst * s + f.row, 8 * (wn + cs.w.n * rn) + f.col});
      }
      CHECK(b.is_owner(t) == (wm == 0));
    }
    // Every element once among the owners (Layout::check) and in no other register.
    for (const Layout* l : {&c, &a, &b}) {
      std::set<std::pair<int64_t, int64_t>> seen;
      for (int64_t t = 0; t < threads; ++t)
        if (l->is_owner(t))
          for (int r = 0; r < l->num_regs(); ++r) {
            std::vector<int64_t> x = l->coords(r, t);
            CHECK(seen.insert({x[0], x[1]}).second);
          }
      CHECK(static_cast<int64_t>(seen.size()) == l->shape[0] * l->shape[1]);
    }
  }
}

TEST_CASE("layout mma: warps split M first, like Triton's warpsPerTileV2") {
  auto w = [](int64_t m, int64_t n, int warps) {
    MmaWarps x = lower::mma_warps(m, n, warps);
    return std::to_string(x.m) + "x" + std::to_string(x.n);
  };
  CHECK(w(128, 128, 4) == "2x2");
  CHECK(w(64, 64, 4) == "2x2");
  CHECK(w(128, 32, 4) == "4x1");
  CHECK(w(16, 128, 4) == "1x4");
  CHECK(w(32, 32, 8) == "2x4");
  CHECK(w(128, 128, 8) == "4x2");
  CHECK(w(16, 16, 1) == "1x1");
  CHECK(w(256, 16, 8) == "8x1");
  // Too little work: the split runs past the tiles (the lowering then uses FMAs).
  CHECK(w(16, 16, 4) == "1x4");
}
