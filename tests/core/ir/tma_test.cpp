// \file TMA copies and mbarriers (core/ir/tma.h): a box copied with the zero fill outside the
// tensor and the 16-byte chunks swizzled, a store in whole 16-byte chunks, and the mbarrier's
// phases with their parity waits.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "core/ir/tma.h"

namespace ir = tessera::ir;

TEST_CASE("tma: the 128-byte swizzle XORs the 16-byte chunk with the row mod 8") {
  for (int64_t row = 0; row < 16; ++row)
    for (int64_t chunk = 0; chunk < 8; ++chunk)
      CHECK(ir::tma_swizzle(row * 128 + chunk * 16 + 5, 128) ==
            row * 128 + (chunk ^ (row % 8)) * 16 + 5);
  CHECK(ir::tma_swizzle(2 * 64 + 16, 64) == 2 * 64 + (1 ^ 1) * 16);  // rows 2, 3: phase 1
  CHECK(ir::tma_swizzle(4 * 32 + 16, 32) == 4 * 32);                 // rows 4..7: phase 1
  CHECK(ir::tma_swizzle(777, 0) == 777);
}

TEST_CASE("tma: a box across the tensor's edges reads zeros outside, swizzled in shared memory") {
  // A 5 x 20 u16 tensor with a row stride of 24 elements (48 bytes); value = 100 r + c + 1.
  const int64_t rows = 5, cols = 20, stride = 24;
  std::vector<uint16_t> g(static_cast<size_t>(rows * stride), 0xdead);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      g[static_cast<size_t>(r * stride + c)] = uint16_t(100 * r + c + 1);
  const uint64_t base = 0x10000;
  auto read = [&](uint64_t address, std::byte* out, size_t n) {
    REQUIRE(address >= base);
    REQUIRE(address + n <= base + g.size() * 2);
    std::memcpy(out, reinterpret_cast<const std::byte*>(g.data()) + (address - base), n);
  };
  for (int swizzle : {0, 32}) {
    ir::TmaCopy c{.base = base,
                  .dims = {rows, cols},
                  .strides = {stride * 2, 2},
                  .box = {8, 16},
                  .coords = {-2, 10},
                  .elem_bytes = 2,
                  .swizzle = swizzle};
    CHECK(c.bytes() == 8 * 16 * 2);
    std::vector<uint16_t> smem(8 * 16, 0xbeef);
    ir::tma_copy(c, read, reinterpret_cast<std::byte*>(smem.data()));
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 16; ++j) {
        const int64_t r = i - 2, col = j + 10;
        const uint16_t want = r >= 0 && r < rows && col < cols ? uint16_t(100 * r + col + 1) : 0;
        const int64_t at = ir::tma_swizzle((i * 16 + j) * 2, swizzle) / 2;
        CAPTURE(swizzle);
        CAPTURE(i);
        CAPTURE(j);
        CHECK(smem[static_cast<size_t>(at)] == want);
      }
  }
}

TEST_CASE("tma: a store writes whole 16-byte chunks, past an extent that ends inside one") {
  // A 3 x 45 u16 tensor with a row stride of 64 elements; the 2 x 32 box at (1, 32) holds
  // 1000 + its element index. Columns 45 to 47 share the chunk of column 44 and are written;
  // 48 and on, and row 0, are not (measured on the H200: docs/performance.md).
  const int64_t rows = 3, cols = 45, stride = 64;
  std::vector<uint16_t> g(static_cast<size_t>(rows * stride), 0xdead);
  std::vector<uint16_t> box(2 * 32);
  for (size_t i = 0; i < box.size(); ++i) box[i] = uint16_t(1000 + i);
  const uint64_t base = 0x10000;
  auto write = [&](uint64_t address, const std::byte* in, size_t n) {
    REQUIRE(address >= base);
    REQUIRE(address + n <= base + g.size() * 2);
    std::memcpy(reinterpret_cast<std::byte*>(g.data()) + (address - base), in, n);
  };
  ir::TmaCopy c{.base = base,
                .dims = {rows, cols},
                .strides = {stride * 2, 2},
                .box = {2, 32},
                .coords = {1, 32},
                .elem_bytes = 2,
                .swizzle = 0};
  ir::tma_store_copy(c, reinterpret_cast<const std::byte*>(box.data()), write);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < stride; ++col) {
      CAPTURE(r);
      CAPTURE(col);
      const bool written = r >= 1 && col >= 32 && col < 48;
      CHECK(g[size_t(r * stride + col)] ==
            (written ? uint16_t(1000 + (r - 1) * 32 + (col - 32)) : uint16_t(0xdead)));
    }
}

TEST_CASE("tma: an mbarrier phase completes on its arrivals and its bytes, waits by parity") {
  ir::MBarrier b;
  CHECK_FALSE(b.initialized());
  b.init(1);
  CHECK_FALSE(b.test_wait(0));  // phase 0 is running
  CHECK(b.test_wait(1));        // the phase before it (parity 1) counts as completed
  b.expect_tx(4096);
  CHECK(b.arrive());  // arrive.expect_tx: the bytes are still outstanding
  CHECK_FALSE(b.test_wait(0));
  CHECK(b.pending() == "0 arrivals and 4096 bytes outstanding in phase 0");
  b.complete_tx(4096);
  CHECK(b.test_wait(0));
  CHECK_FALSE(b.test_wait(1));  // phase 1 begins
  CHECK(b.phase() == 1);
  // A copy completing before its expect_tx (the count goes negative for a while).
  b.complete_tx(128);
  CHECK_FALSE(b.test_wait(1));
  b.expect_tx(128);
  CHECK(b.arrive());
  CHECK(b.test_wait(1));
  CHECK(b.phase() == 2);
}

TEST_CASE("tma: an mbarrier of two arrivals, and an arrival its phase does not expect") {
  ir::MBarrier b;
  b.init(2);
  CHECK(b.arrive());
  CHECK_FALSE(b.test_wait(0));
  CHECK(b.arrive());
  CHECK(b.test_wait(0));
  CHECK(b.pending() == "2 arrivals and 0 bytes outstanding in phase 1");
  ir::MBarrier c;
  c.init(1);
  c.expect_tx(16);
  CHECK(c.arrive());
  CHECK_FALSE(c.arrive());  // the phase waits only for its bytes now
}
