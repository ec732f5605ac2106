// \file The wgmma layouts of a swapped dot (core/lower/layout.h), element by element: wgmma's A in
// registers against the fragment table (per warp, mma.sync's A fragment with p = 4 / E values per
// 32-bit register, written here from the PTX ISA) and against core/ir/wgmma.h's wgmma_a_coord; the
// transposed accumulator against the wgmma accumulator with its coordinates exchanged.
#include <doctest/doctest.h>

#include "core/ir/wgmma.h"
#include "core/lower/layout.h"

using tessera::lower::Layout;
using tessera::lower::WgmmaTiling;

TEST_CASE("layout wgmma: A in registers is mma.sync's A fragment per warp, for 1, 2, 4 bytes") {
  for (int elem : {1, 2, 4}) {
    CAPTURE(elem);
    const int p = 4 / elem, k = 8 * p;  // one instruction's k
    const Layout l = tessera::lower::wgmma_a_regs_layout(64, k, WgmmaTiling{}, elem, 128);
    REQUIRE(l.num_regs() == k / 2);
    for (int t = 0; t < 128; ++t)
      for (int j = 0; j < k / 2; ++j) {
        const int w = t / 32, g = t % 32 / 4, tid = t % 4;
        const std::vector<int64_t> c = l.coords(j, t);
        CHECK(c[0] == 16 * w + g + 8 * (j / p % 2));
        CHECK(c[1] == p * tid + j % p + 4 * p * (j / (2 * p)));
        const tessera::ir::WgmmaCoord ir = tessera::ir::wgmma_a_coord(t, j, elem);
        CHECK(c[0] == ir.row);
        CHECK(c[1] == ir.col);
      }
  }
}

TEST_CASE("layout wgmma: A in registers repeats over M, then k steps, warpgroups along N copy") {
  // 2 x 2 warpgroups, two instructions along M each, four k steps of tf32 (k = 8).
  const WgmmaTiling t{2, 2, 64, 2, 1};
  const Layout l = tessera::lower::wgmma_a_regs_layout(256, 32, t, 4, 512);
  REQUIRE(l.num_regs() == 4 * 2 * 4);
  for (int64_t th = 0; th < 512; ++th)
    for (int r = 0; r < l.num_regs(); ++r) {
      const int j = r % 4, rm = r / 4 % 2, step = r / 8;
      const std::vector<int64_t> base = l.coords(j, th % 128);
      const std::vector<int64_t> c = l.coords(r, th);
      CHECK(c[0] == base[0] + 64 * (th / 128 % 2) + 128 * rm);
      CHECK(c[1] == base[1] + 8 * step);
    }
}

TEST_CASE("layout wgmma: the swapped accumulator is C^T's wgmma accumulator, transposed") {
  const WgmmaTiling t{2, 1, 128, 2, 1};  // C^T [256, 128]: C [128, 256]
  const Layout acc = tessera::lower::wgmma_acc_layout(256, 128, t, 256);
  const Layout swapped = tessera::lower::wgmma_acc_t_layout(128, 256, t, 256);
  CHECK(swapped.shape == tessera::ir::Shape{128, 256});
  for (int64_t th = 0; th < 256; ++th)
    for (int r = 0; r < acc.num_regs(); ++r) {
      const std::vector<int64_t> c = acc.coords(r, th), s = swapped.coords(r, th);
      CHECK(s[0] == c[1]);
      CHECK(s[1] == c[0]);
    }
}
