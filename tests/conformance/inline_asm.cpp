/// \file tl::inline_asm_elementwise (PTX only: every other device SKIPs, needing inline PTX):
/// `add.s32` with a tile and with a broadcast scalar, a funnel-shift rotate (`shf`), f16 pairs
/// summed by `add.f16x2` in 32-bit registers (pack = 2), bytes reversed in each register by
/// `prmt` (pack = 4: shows which elements share a register and in which order), and two results
/// from one impure asm (min and max). n is never a multiple of the tile; masked-off lanes load 0.
#include <algorithm>
#include <cstdint>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

enum Asm { AddTile, AddScalar, Rotate, F16x2, Bytes, MinMax };

/// out (and out2 for MinMax) from a and b (BLOCK elements per program, the tail past n reads 0).
void asm_kernel(tl::pointer a, tl::pointer b, tl::pointer out, tl::pointer out2, tl::i32 n, int OP,
                int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto x = tl::load(a + offs, m, 0);
  auto y = tl::load(b + offs, m, 0);
  switch (OP) {
    case AddTile:
      tl::store(out + offs,
                tl::inline_asm_elementwise("add.s32 $0, $1, $2;", "=r,r,r", {x, y}, tl::int32), m);
      break;
    case AddScalar:  // b[0] broadcast against the tile
      tl::store(
          out + offs,
          tl::inline_asm_elementwise("add.s32 $0, $1, $2;", "=r,r,r", {x, tl::load(b)}, tl::int32),
          m);
      break;
    case Rotate:  // x rotated left by y & 31
      tl::store(out + offs,
                tl::inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $1, $2;", "=r,r,r", {x, y},
                                           tl::uint32),
                m);
      break;
    case F16x2:
      tl::store(out + offs,
                tl::inline_asm_elementwise("add.f16x2 $0, $1, $2;", "=r,r,r", {x, y}, tl::float16,
                                           true, 2),
                m);
      break;
    case Bytes:  // each register's four bytes in reverse order
      tl::store(out + offs,
                tl::inline_asm_elementwise("prmt.b32 $0, $1, $1, 0x0123;", "=r,r", {x}, tl::int8,
                                           true, 4),
                m);
      break;
    case MinMax: {
      auto r = tl::inline_asm_elementwise("min.s32 $0, $2, $3;\n\tmax.s32 $1, $2, $3;", "=r,=r,r,r",
                                          {x, y}, {tl::int32, tl::int32}, false);
      tl::store(out + offs, r[0], m);
      tl::store(out2 + offs, r[1], m);
      break;
    }
  }
}

DType dtype_of(Asm op) {
  switch (op) {
    case Rotate:
      return DType::u32;
    case F16x2:
      return DType::f16;
    case Bytes:
      return DType::i8;
    default:
      return DType::i32;
  }
}

void asm_case(Context& ctx, Asm op) {
  auto k = TESSERA_KERNEL(asm_kernel, a, b, out, out2, n, OP, BLOCK);
  const DType t = dtype_of(op);
  const int block = 256, n = 1001;  // four programs, the last one partly masked
  const size_t total = 4 * block;
  HostArray a = ctx.random_full(t, n, 6), b = ctx.random_full(t, n, 6);
  if (op == F16x2) {  // sums that stay finite
    a = ctx.random(t, n, -100, 100);
    b = ctx.random(t, n, -100, 100);
  }
  DevArray da = ctx.upload(a), db = ctx.upload(b);
  DevArray o = ctx.poisoned(t, total), o2 = ctx.poisoned(t, total);
  k[{4}](da.buf, db.buf, o.buf, o2.buf, n, static_cast<int>(op), block);
  HostArray got = ctx.download(o);
  const std::string what = "out[" + dname(t) + "]";
  switch (op) {
    case AddTile:
    case AddScalar: {
      std::vector<int64_t> want(n);
      for (int i = 0; i < n; ++i)
        want[i] = static_cast<int32_t>(static_cast<uint32_t>(a.i(i)) +
                                       static_cast<uint32_t>(b.i(op == AddScalar ? 0 : i)));
      HostArray head(t, n);
      for (int i = 0; i < n; ++i) head.set_bits(i, got.bits(i));
      ctx.check_ints(what, head, want);
      break;
    }
    case Rotate: {
      HostArray want(t, n), head(t, n);
      for (int i = 0; i < n; ++i) {
        const auto x = static_cast<uint32_t>(a.u(i));
        const auto s = static_cast<uint32_t>(b.u(i)) & 31;
        want.set_bits(i, s ? (x << s) | (x >> (32 - s)) : x);
        head.set_bits(i, got.bits(i));
      }
      ctx.check_exact(what, head, want);
      break;
    }
    case F16x2: {
      HostArray want(t, n), head(t, n);
      for (int i = 0; i < n; ++i) {
        want.set_f(i, a.f(i) + b.f(i));  // exact in double, rounded once to f16 as add.f16x2
        head.set_bits(i, got.bits(i));
      }
      ctx.check_exact(what, head, want);
      break;
    }
    case Bytes: {
      HostArray want(t, n), head(t, n);
      for (int i = 0; i < n; ++i) {
        const int j = i / 4 * 4 + 3 - i % 4;  // the mirror element of its register
        want.set_bits(i, j < n ? a.bits(j) : 0);
        head.set_bits(i, got.bits(i));
      }
      ctx.check_exact(what, head, want);
      break;
    }
    case MinMax: {
      HostArray got2 = ctx.download(o2);
      HostArray lo(t, n), hi(t, n);
      std::vector<int64_t> want_lo(n), want_hi(n);
      for (int i = 0; i < n; ++i) {
        want_lo[i] = std::min(a.i(i), b.i(i));
        want_hi[i] = std::max(a.i(i), b.i(i));
        lo.set_bits(i, got.bits(i));
        hi.set_bits(i, got2.bits(i));
      }
      ctx.check_ints("min " + what, lo, want_lo);
      ctx.check_ints("max " + what, hi, want_hi);
      break;
    }
  }
  ctx.check_untouched(what, got, n, total);  // masked-off lanes stored nothing
}

}  // namespace

void register_inline_asm(std::vector<Case>& out) {
  const std::pair<Asm, const char*> cases[] = {{AddTile, "add_s32"},     {AddScalar, "add_scalar"},
                                               {Rotate, "shf_rotate"},   {F16x2, "f16x2_pack2"},
                                               {Bytes, "prmt_i8_pack4"}, {MinMax, "two_results"}};
  for (const auto& [op, name] : cases) {
    std::vector<Need> needs = needs_of({dtype_of(op)});
    needs.push_back(Need::Ptx);
    out.push_back(
        {std::string("inline_asm/") + name, needs, "", [op](Context& ctx) { asm_case(ctx, op); }});
  }
}

}  // namespace tessera::conformance
