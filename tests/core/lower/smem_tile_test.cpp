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
            for (int64_t h = 0; h < 2; ++h)
              groups.insert(bank_group(sc, sc.offset(r, c + h * sc.vec)));
          CHECK(groups.size() == 8);
        }
    }
}

namespace {

/// Do the 32 lanes of warp 0 store the vector of `l` at register `reg` (`width` registers whose
/// bits are `vector_bits`, along the tile's columns) into `t` (rows along `row_dim`) without a
/// bank conflict? A warp's accesses of `unit` = max(4, width x elem) bytes go in phases of
/// 128 / unit lanes; within a phase, each bank may be hit at one 4-byte word only.
bool conflict_free(const tessera::lower::Layout& l, const SmemTile& t, int row_dim, int elem,
                   int reg, int width) {
  const int64_t unit = std::max(4, width * elem), per_phase = 128 / unit;
  for (int64_t first = 0; first < 32; first += per_phase) {
    std::map<int64_t, int64_t> word_of_bank;
    for (int64_t lane = first; lane < first + per_phase; ++lane) {
      const std::vector<int64_t> c = l.coords(reg, lane);
      const int64_t byte =
          t.offset(c[static_cast<size_t>(row_dim)], c[static_cast<size_t>(1 - row_dim)]) * elem;
      for (int64_t w = byte / 4; w < (byte + width * elem + 3) / 4; ++w) {
        auto [it, fresh] = word_of_bank.emplace(w % 32, w);
        if (!fresh && it->second != w) return false;
      }
    }
  }
  return true;
}

}  // namespace

TEST_CASE(
    "staging layout: loads as wide as asked, stores into wgmma tiles vectorized and conflict-free") {
  using tessera::lower::DimBit;
  using tessera::lower::staging_layout;
  struct Case {
    int elem;
    int64_t k, n;  // a B operand [K, N], N contiguous at the source, K-major in the tile
    int64_t threads;
    int vec;        // elements per global load along N
    int store_vec;  // elements per shared store along K asked for
    int stored;     // ... and expected (the elements per thread allow)
  };
  for (const Case& c : {Case{4, 32, 64, 128, 4, 4, 4}, Case{4, 32, 128, 256, 4, 4, 4},
                        Case{4, 32, 256, 256, 4, 4, 4}, Case{4, 32, 64, 128, 1, 4, 4},
                        Case{4, 32, 64, 128, 4, 1, 1}, Case{4, 32, 64, 256, 4, 4, 2},
                        Case{1, 64, 128, 256, 16, 16, 2}, Case{1, 128, 128, 128, 16, 16, 8}}) {
    CAPTURE(c.elem);
    CAPTURE(c.n);
    CAPTURE(c.vec);
    CAPTURE(c.store_vec);
    // K-major: rows run along N (dim 1), K contiguous; swizzle as wide as K's bytes allow.
    const int64_t swizzle = std::min<int64_t>(128, c.k * c.elem);
    const SmemTile t = SmemTile::wgmma(0, 0, c.n, c.k, c.elem, swizzle);
    const tessera::lower::Layout l = staging_layout(
        {c.k, c.n}, 1, c.vec, 0, c.store_vec, c.elem, c.threads, 32,
        [&](const std::vector<int64_t>& x) { return t.offset(x[1], x[0]) * c.elem; });
    l.check();
    const int vec_bits = tessera::lower::log2_exact(c.vec),
              store_bits = tessera::lower::log2_exact(c.stored);
    REQUIRE(static_cast<int>(l.regs.size()) >= vec_bits + store_bits);
    for (int b = 0; b < vec_bits; ++b) CHECK(l.regs[static_cast<size_t>(b)] == DimBit{1, b});
    for (int b = 0; b < store_bits; ++b)
      CHECK(l.regs[static_cast<size_t>(vec_bits + b)] == DimBit{0, b});
    // One store per vector: registers whose store bits are 0.
    const int width = std::min(c.stored, 16 / c.elem);
    const int mask = (c.stored - 1) << vec_bits;
    int bad = 0;
    for (int r = 0; r < l.num_regs(); ++r)
      if (!(r & mask)) bad += !conflict_free(l, t, 1, c.elem, r, width);
    CHECK(bad == 0);
  }
}
