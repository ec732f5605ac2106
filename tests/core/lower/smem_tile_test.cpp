// \file The swizzled shared-memory tiles of dot operands (core/lower/mma_operand.h): every
// element has its own slot, the index is linear over GF(2) in (row, col) (the lowering XORs a
// thread part with constant parts), 16-byte chunks stay whole, and the fragment reads are free of
// bank conflicts: the 8 rows of an ldmatrix matrix at one chunk, and for scalar fragment reads 4
// consecutive rows x 2 adjacent chunks, each land in 8 distinct groups of 4 banks.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "core/lower/mma_operand.h"

using tessera::lower::detail::SmemTile;

namespace {

/// The group of 4 banks (one 16-byte slot of a 128-byte line) holding element `offset`.
int64_t bank_group(const SmemTile& t, int64_t offset) {
  return offset / t.vec % 8;
}

}  // namespace

TEST_CASE("smem tile: a permutation, linear over GF(2), whole 16-byte chunks") {
  for (int elem : {1, 2, 4})
    for (int64_t row_bytes : {16, 32, 64, 128, 256, 512})
      for (int64_t stride : {1, 2}) {
        const int64_t cols = row_bytes / elem, rows = 32;
        SmemTile t(0, 0, rows, cols, elem, stride);
        CAPTURE(elem);
        CAPTURE(row_bytes);
        CAPTURE(stride);
        std::set<int64_t> seen;
        int bad = 0;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            const int64_t o = t.offset(r, c);
            bad += o < 0 || o >= rows * cols || !seen.insert(o).second;
            // Within a chunk the elements stay in order.
            bad += c % t.vec && o != t.offset(r, c - 1) + 1;
          }
        CHECK(bad == 0);
        for (int64_t r1 = 0; r1 < rows; r1 += 3)
          for (int64_t r2 = 0; r2 < rows; r2 += 5)
            for (int64_t c1 = 0; c1 < cols; c1 += 7)
              for (int64_t c2 = 0; c2 < cols; c2 += 3)
                bad += t.offset(r1 ^ r2, c1 ^ c2) != (t.offset(r1, c1) ^ t.offset(r2, c2));
        CHECK(bad == 0);
      }
}

TEST_CASE("smem tile: ldmatrix rows and scalar fragment reads hit distinct banks") {
  for (int elem : {1, 2, 4})
    for (int64_t row_bytes : {16, 32, 64, 128, 256}) {
      const int64_t cols = row_bytes / elem, rows = 64;
      CAPTURE(elem);
      CAPTURE(row_bytes);
      // ldmatrix: 8 consecutive rows (from a multiple of 8) at one chunk.
      SmemTile ld(0, 0, rows, cols, elem, 1);
      for (int64_t r0 = 0; r0 < rows; r0 += 8)
        for (int64_t c = 0; c < cols; c += ld.vec) {
          std::set<int64_t> groups;
          for (int64_t r = r0; r < r0 + 8; ++r) groups.insert(bank_group(ld, ld.offset(r, c)));
          CHECK(groups.size() == 8);
        }
      // Scalar reads (k = t and t + 4 of a TF32 fragment, 8 consecutive outer elements): 4 rows
      // from a multiple of 4, at two adjacent chunks from an even one.
      if (row_bytes < 32) continue;
      SmemTile sc(0, 0, rows, cols, elem, 2);
      for (int64_t r0 = 0; r0 < rows; r0 += 4)
        for (int64_t c = 0; c < cols; c += 2 * sc.vec) {
          std::set<int64_t> groups;
          for (int64_t r = r0; r < r0 + 4; ++r)
            for (int64_t h = 0; h < 2; ++h) groups.insert(bank_group(sc, sc.offset(r, c + h * sc.vec)));
          CHECK(groups.size() == 8);
        }
    }
}

namespace {

/// Do the 32 lanes of warp 0 store register `reg` of `l` into `t` (rows along `row_dim`) without
/// a bank conflict: each bank that several lanes hit, hit at one 4-byte word?
bool conflict_free(const tessera::lower::Layout& l, const SmemTile& t, int row_dim, int elem, int reg) {
  std::map<int64_t, int64_t> word_of_bank;
  for (int64_t lane = 0; lane < 32; ++lane) {
    const std::vector<int64_t> c = l.coords(reg, lane);
    const int64_t word = t.offset(c[static_cast<size_t>(row_dim)], c[static_cast<size_t>(1 - row_dim)]) * elem / 4;
    auto [it, fresh] = word_of_bank.emplace(word % 32, word);
    if (!fresh && it->second != word) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("staging layout: loads as wide as asked, one-by-one stores into wgmma tiles conflict-free") {
  using tessera::lower::staging_layout;
  struct Case {
    int elem;
    int64_t k, n;       // a B operand [K, N], N contiguous at the source, K-major in the tile
    int64_t threads;
    int vec;            // elements per global load along N
  };
  for (const Case& c : {Case{4, 32, 64, 128, 4}, Case{4, 32, 128, 256, 4}, Case{4, 32, 256, 256, 4},
                        Case{4, 32, 64, 128, 1}, Case{1, 64, 128, 256, 16}, Case{1, 128, 128, 128, 16}}) {
    CAPTURE(c.elem);
    CAPTURE(c.n);
    CAPTURE(c.vec);
    // K-major: rows run along N (dim 1), K contiguous; swizzle as wide as K's bytes allow.
    const int64_t swizzle = std::min<int64_t>(128, c.k * c.elem);
    const SmemTile t = SmemTile::wgmma(0, 0, c.n, c.k, c.elem, swizzle);
    const tessera::lower::Layout l =
        staging_layout({c.k, c.n}, 1, c.vec, c.threads, 32, c.elem, [&](const std::vector<int64_t>& x) {
          return t.offset(x[1], x[0]) * c.elem;
        });
    l.check();
    for (int b = 0; b < tessera::lower::log2_exact(c.vec); ++b)
      CHECK(l.regs[static_cast<size_t>(b)] == tessera::lower::DimBit{1, b});
    int bad = 0;
    for (int r = 0; r < l.num_regs(); ++r) bad += !conflict_free(l, t, 1, c.elem, r);
    CHECK(bad == 0);
  }
}
