/// \file TMA copies and mbarriers (tma.h).
#include "core/ir/tma.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/support/error.h"

namespace tessera::ir {

int64_t tma_swizzle(int64_t offset, int swizzle) {
  if (swizzle == 0) return offset;
  TESSERA_CHECK(swizzle == 32 || swizzle == 64 || swizzle == 128, "swizzle of ", swizzle, " bytes");
  const int bits = std::countr_zero(static_cast<unsigned>(swizzle / 16));  // 1, 2 or 3
  const int64_t mask = ((int64_t{1} << bits) - 1) << 4;
  return offset ^ ((offset >> 3) & mask);
}

int64_t TmaCopy::bytes() const {
  int64_t n = elem_bytes;
  for (int64_t b : box) n *= b;
  return n;
}

namespace {

/// Calls visit(r, address, lo, hi) for each innermost row r of `c`'s box: its elements lo .. hi
/// - 1 lie inside the tensor, the first of them at global `address` (lo == hi: none).
template <class Visit>
void for_each_row(const TmaCopy& c, Visit&& visit) {
  const size_t rank = c.box.size();
  TESSERA_CHECK(
      rank >= 1 && c.dims.size() == rank && c.strides.size() == rank && c.coords.size() == rank,
      "a TMA copy needs one dim, stride, box and coordinate per dimension");
  const int64_t row = c.box.back();  // elements per innermost row of the box
  const int64_t rows = c.bytes() / (row * c.elem_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    // The outer coordinates of row r (the box's outer dimensions, row-major).
    bool inside = true;
    uint64_t address = c.base;
    for (int64_t d = static_cast<int64_t>(rank) - 2, rest = r; d >= 0; --d) {
      const int64_t i = c.coords[static_cast<size_t>(d)] + rest % c.box[static_cast<size_t>(d)];
      rest /= c.box[static_cast<size_t>(d)];
      inside = inside && i >= 0 && i < c.dims[static_cast<size_t>(d)];
      address += static_cast<uint64_t>(i * c.strides[static_cast<size_t>(d)]);
    }
    const int64_t c0 = c.coords.back();
    const int64_t lo = std::clamp<int64_t>(-c0, 0, row);
    const int64_t hi = inside ? std::clamp<int64_t>(c.dims.back() - c0, 0, row) : lo;
    visit(r, address + static_cast<uint64_t>((c0 + lo) * c.elem_bytes), lo, std::max(lo, hi));
  }
}

}  // namespace

void tma_copy(const TmaCopy& c, const ReadGlobal& read, std::byte* smem) {
  const int64_t line_bytes = c.box.back() * c.elem_bytes;
  std::vector<std::byte> line(static_cast<size_t>(line_bytes));
  for_each_row(c, [&](int64_t r, uint64_t address, int64_t lo, int64_t hi) {
    std::fill(line.begin(), line.end(), std::byte{0});
    if (lo < hi)
      read(address, line.data() + lo * c.elem_bytes, static_cast<size_t>((hi - lo) * c.elem_bytes));
    // 16-byte chunks keep their bytes together: swizzle each chunk's offset.
    for (int64_t b = 0; b < line_bytes; b += 16) {
      const int64_t n = std::min<int64_t>(16, line_bytes - b);
      std::memcpy(smem + tma_swizzle(r * line_bytes + b, c.swizzle), line.data() + b,
                  static_cast<size_t>(n));
    }
  });
}

void tma_store_copy(const TmaCopy& c, const std::byte* smem, const WriteGlobal& write) {
  const int64_t line_bytes = c.box.back() * c.elem_bytes;
  std::vector<std::byte> line(static_cast<size_t>(line_bytes));
  // The hardware writes whole 16-byte chunks: the innermost extent as far as the chunk it ends
  // in (the tensor's base is 16-byte aligned).
  TmaCopy chunks = c;
  chunks.dims.back() = (c.dims.back() * c.elem_bytes + 15) / 16 * 16 / c.elem_bytes;
  for_each_row(chunks, [&](int64_t r, uint64_t address, int64_t lo, int64_t hi) {
    if (lo >= hi) return;
    for (int64_t b = 0; b < line_bytes; b += 16) {
      const int64_t n = std::min<int64_t>(16, line_bytes - b);
      std::memcpy(line.data() + b, smem + tma_swizzle(r * line_bytes + b, c.swizzle),
                  static_cast<size_t>(n));
    }
    write(address, line.data() + lo * c.elem_bytes, static_cast<size_t>((hi - lo) * c.elem_bytes));
  });
}

void MBarrier::init(int64_t arrivals) {
  TESSERA_CHECK(arrivals >= 1, "an mbarrier needs at least one arrival per phase");
  expected_ = arrivals_ = arrivals;
  tx_ = 0;
  phase_ = 0;
}

void MBarrier::expect_tx(int64_t bytes) {
  tx_ += bytes;
}

void MBarrier::complete_tx(int64_t bytes) {
  tx_ -= bytes;
  maybe_complete();
}

bool MBarrier::arrive() {
  if (arrivals_ == 0) return false;
  --arrivals_;
  maybe_complete();
  return true;
}

void MBarrier::maybe_complete() {
  if (arrivals_ != 0 || tx_ != 0) return;
  ++phase_;
  arrivals_ = expected_;
}

std::string MBarrier::pending() const {
  return std::to_string(arrivals_) + " arrivals and " + std::to_string(tx_) +
         " bytes outstanding in phase " + std::to_string(phase_);
}

}  // namespace tessera::ir
