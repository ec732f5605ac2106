/// \file tl::join, tl::split, tl::interleave and tl::flip on every dtype: elements move bit for
/// bit, with masked loads of n elements that are not a multiple of the tile (the tail reads 0),
/// joins of a tile with a scalar (broadcast), splits back to the halves, and flips along the last
/// and the first axis of 1-D, 2-D and 3-D tiles.
#include <array>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

enum class Move { Join, JoinScalar, Interleave, Split, Flip };
const char* move_name(Move m) {
  constexpr const char* kNames[] = {"join", "join_scalar", "interleave", "split", "flip"};
  return kNames[static_cast<int>(m)];
}

/// One input tile of BLOCK elements (the tail past n reads 0); the result of OP goes to `out`.
void move_kernel(tl::pointer a, tl::pointer b, tl::pointer out, tl::i32 n, Move OP, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto m = offs < n;
  auto x = tl::load(a + offs, m, 0);
  auto y = tl::load(b + offs, m, 0);
  auto two = tl::arange(0, 2);
  switch (OP) {
    case Move::Join: {
      auto j = tl::join(x, y);  // [BLOCK, 2]
      tl::store(out + offs[{tl::_, tl::None}] * 2 + two[{tl::None, tl::_}], j);
      break;
    }
    case Move::JoinScalar: {
      auto j = tl::join(x, tl::load(b));  // b[0] broadcast
      tl::store(out + offs[{tl::_, tl::None}] * 2 + two[{tl::None, tl::_}], j);
      break;
    }
    case Move::Interleave:
      tl::store(out + tl::arange(0, 2 * BLOCK), tl::interleave(x, y));
      break;
    case Move::Split: {
      // a holds BLOCK pairs: split them into out[0, BLOCK) and out[BLOCK, 2 BLOCK).
      auto pairs = offs[{tl::_, tl::None}] * 2 + two[{tl::None, tl::_}];
      auto [lo, hi] = tl::split(tl::load(a + pairs, pairs < n, 0));
      tl::store(out + offs, lo);
      tl::store(out + BLOCK + offs, hi);
      break;
    }
    case Move::Flip:
      tl::store(out + offs, tl::flip(x));
      break;
  }
}

/// A [D0, D1, D2] tile (row-major, the tail past n reads 0) flipped along AXIS.
void flip3_kernel(tl::pointer a, tl::pointer out, tl::i32 n, int D0, int D1, int D2, int AXIS) {
  auto i0 = tl::arange(0, D0)[{tl::_, tl::None, tl::None}];
  auto i1 = tl::arange(0, D1)[{tl::None, tl::_, tl::None}];
  auto i2 = tl::arange(0, D2)[{tl::None, tl::None, tl::_}];
  auto offs = (i0 * D1 + i1) * D2 + i2;
  tl::store(out + offs, tl::flip(tl::load(a + offs, offs < n, 0), AXIS));
}

void move_case(Context& ctx, DType t, Move op) {
  auto k = TESSERA_KERNEL(move_kernel, a, b, out, n, OP, BLOCK);
  const int block = 64, n = op == Move::Split ? 101 : 45;  // not multiples of the tile
  HostArray a = ctx.random_full(t, 2 * block), b = ctx.random_full(t, block);
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(t, 2 * block);
  k[{1}](da.buf, db.buf, o.buf, n, op, block);
  auto at = [&](const HostArray& h, int i) { return i < n ? h.bits(i) : 0; };
  const int outs = op == Move::Flip ? block : 2 * block;
  HostArray want(t, outs);
  for (int i = 0; i < outs; ++i) {
    uint64_t w = 0;
    switch (op) {
      case Move::Join:
      case Move::Interleave:
        w = i % 2 == 0 ? at(a, i / 2) : at(b, i / 2);
        break;
      case Move::JoinScalar:
        w = i % 2 == 0 ? at(a, i / 2) : b.bits(0);
        break;
      case Move::Split:
        w = i < block ? at(a, 2 * i) : at(a, 2 * (i - block) + 1);
        break;
      case Move::Flip:
        w = at(a, block - 1 - i);
        break;
    }
    want.set_bits(i, w);
  }
  HostArray got = ctx.download(o);
  if (op == Move::Flip) {  // only the first `block` elements were written
    HostArray head(t, block);
    for (int i = 0; i < block; ++i) head.set_bits(i, got.bits(i));
    got = head;
  }
  ctx.check_exact(std::string(move_name(op)) + " " + dname(t), got, want);
}

void flip3_case(Context& ctx, DType t) {
  auto k = TESSERA_KERNEL(flip3_kernel, a, out, n, D0, D1, D2, AXIS);
  const std::array<int, 3> d = {4, 8, 16};
  const int total = d[0] * d[1] * d[2], n = 300;
  HostArray a = ctx.random_full(t, total);
  DevArray da = ctx.upload(a);
  for (int axis : {0, 1, 2, -1}) {
    DevArray o = ctx.poisoned(t, total);
    k[{1}](da.buf, o.buf, n, d[0], d[1], d[2], axis);
    const int ax = axis < 0 ? axis + 3 : axis;
    HostArray want(t, total);
    for (int i = 0; i < total; ++i) {
      std::array<int, 3> c = {i / (d[1] * d[2]), i / d[2] % d[1], i % d[2]};
      c[ax] = d[ax] - 1 - c[ax];
      const int src = (c[0] * d[1] + c[1]) * d[2] + c[2];
      want.set_bits(i, src < n ? a.bits(src) : 0);
    }
    ctx.check_exact("flip axis " + std::to_string(axis) + " of [4, 8, 16] " + dname(t),
                    ctx.download(o), want);
  }
}

}  // namespace

void register_join(std::vector<Case>& out) {
  for (Move op : {Move::Join, Move::JoinScalar, Move::Interleave, Move::Split, Move::Flip}) {
    for (DType t : kAllDTypes) {
      out.push_back({std::string("join/") + move_name(op) + "/" + dname(t), needs_of({t}), "",
                     [t, op](Context& ctx) { move_case(ctx, t, op); }});
    }
  }
  for (DType t : {DType::i1, DType::i8, DType::f16, DType::f32, DType::u64}) {
    out.push_back(
        {"join/flip3d/" + dname(t), needs_of({t}), "", [t](Context& ctx) { flip3_case(ctx, t); }});
  }
}

}  // namespace tessera::conformance
