/// \file Dot operands in shared memory for the tensor-core lowering: the swizzled tile, vector
/// stores from registers, and the fragment reads (ldmatrix, ldmatrix.trans, scalar loads).
#include "core/lower/mma_operand.h"

#include <algorithm>

#include "core/ir/ops.h"

namespace tessera::lower::detail {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

ir::Value* xor_(Lowerer& lw, ir::Value* a, int64_t c) {
  return c ? lw.emit(OpKind::Xor, {a, lw.const_int(DType::i32, c)}, a->type) : a;
}

/// The thread bits of the ldmatrix addresses. Matrix q = lane / 8 of an A fragment is (rows + 8
/// * (q & 1), k chunk q >> 1); of B, (k chunk q & 1, the warp's next N tile when q >> 1). Row r =
/// lane % 8 of a matrix is an M or N row, or with .trans a k row.
Layout address_layout(const Operand& o, const ir::Shape& shape, const DotPlan& plan,
                      int64_t threads) {
  const bool trans = o.mode == ReadMode::LdmatrixTrans;
  const int lkc = log2_exact(o.tile.vec);  // the k bit of the second chunk
  const int lwm = log2_exact(plan.warps.m), lwn = log2_exact(plan.warps.n);
  Layout l;
  l.shape = shape;
  for (int b = 0; b < 3; ++b) l.threads.push_back({trans ? o.k_dim : o.outer_dim, b});
  if (o.is_a) {
    l.threads.push_back({o.outer_dim, 3});
    l.threads.push_back({o.k_dim, lkc});
  } else {
    l.threads.push_back({o.k_dim, lkc});
    l.threads.push_back(o.count == 4 ? DimBit{o.outer_dim, 3 + lwn} : DimBit{});
  }
  for (int b = 0; b < lwm; ++b) l.threads.push_back(o.is_a ? DimBit{o.outer_dim, 4 + b} : DimBit{});
  for (int b = 0; b < lwn; ++b) l.threads.push_back(o.is_a ? DimBit{} : DimBit{o.outer_dim, 3 + b});
  TESSERA_CHECK(static_cast<int64_t>(l.threads.size()) == log2_exact(threads),
                "ldmatrix addressing for ", threads, " threads");
  return l;
}

/// The tile offset of operand coordinates `c` (a constant part of an index).
int64_t tile_offset(const Operand& o, const std::vector<int64_t>& c) {
  return o.tile.offset(c[static_cast<size_t>(o.row_dim)], c[static_cast<size_t>(1 - o.row_dim)]);
}

/// One ldmatrix whose matrices start at operand coordinates `c`; its values in fragment order.
Regs ldmatrix(Lowerer& lw, const Operand& o, const std::vector<int64_t>& c) {
  const int per = 4 / ir::dtype_bytes(o.dtype);
  std::vector<ir::Attribute> attrs = {{attr::kBuffer, int64_t{o.tile.buffer}},
                                      {attr::kCount, int64_t{o.count}}};
  if (o.mode == ReadMode::LdmatrixTrans) attrs.push_back({attr::kTrans, int64_t{1}});
  ir::Op* ld = lw.b().create(
      OpKind::LdMatrix, {xor_(lw, o.read_base, tile_offset(o, c))},
      std::vector<Type>(static_cast<size_t>(o.count * per), Type::scalar(o.dtype)), attrs);
  return Regs(ld->results.begin(), ld->results.end());
}

}  // namespace

SmemTile::SmemTile(int buf, int64_t b, int64_t r, int64_t c, int elem_bytes, int64_t xor_stride)
    : buffer(buf), base(b), rows(r), cols(c), vec(16 / elem_bytes), stride(xor_stride), block(c) {
  const int64_t chunks = std::max<int64_t>(1, cols / vec);
  per_phase = std::max<int64_t>(1, 128 / (cols * elem_bytes));
  max_phase = std::max<int64_t>(1, std::min<int64_t>(8, chunks) / stride);
}

SmemTile SmemTile::wgmma(int buf, int64_t b, int64_t r, int64_t c, int elem_bytes,
                         int64_t swizzle) {
  SmemTile t;
  t.buffer = buf;
  t.base = b;
  t.rows = r;
  t.cols = c;
  t.vec = 16 / elem_bytes;
  t.block = std::min<int64_t>(c, swizzle / elem_bytes);
  t.per_phase = 128 / swizzle;
  t.max_phase = swizzle / 16;
  return t;
}

int64_t SmemTile::offset(int64_t row, int64_t col) const {
  const int64_t swizzled = (col % block) ^ ((row / per_phase) % max_phase * stride * vec);
  return (col / block) * rows * block + row * block + swizzled;
}

ir::Value* SmemTile::index(Lowerer& lw, ir::Value* row, ir::Value* col) const {
  auto c = [&](int64_t v) { return lw.const_int(DType::i32, v); };
  const Type t = row->type;
  // row * block + the column within its block (and the block's place when there are several:
  // the parts occupy disjoint bits, so they combine by XOR).
  ir::Value* within = block == cols ? col : lw.and_(col, c(block - 1));
  ir::Value* off =
      lw.emit(OpKind::Xor, {lw.emit(OpKind::Shl, {row, c(log2_exact(block))}, t), within}, t);
  if (block != cols) {
    ir::Value* blk = lw.emit(OpKind::Shr, {col, c(log2_exact(block))}, t);
    off =
        lw.emit(OpKind::Xor, {off, lw.emit(OpKind::Shl, {blk, c(log2_exact(rows * block))}, t)}, t);
  }
  if (max_phase > 1) {
    ir::Value* phase =
        lw.and_(lw.emit(OpKind::Shr, {row, c(log2_exact(per_phase))}, t), c(max_phase - 1));
    off = lw.emit(OpKind::Xor, {off, lw.emit(OpKind::Shl, {phase, c(log2_exact(stride * vec))}, t)},
                  t);
  }
  return xor_(lw, off, base);
}

std::string SmemTile::key() const {
  return std::to_string(buffer) + ":" + std::to_string(base) + ":" + std::to_string(rows) + "x" +
         std::to_string(cols) + "/" + std::to_string(vec) + "/" + std::to_string(stride) +
         (block != cols ? "/b" + std::to_string(block) + "p" + std::to_string(per_phase) : "");
}

Operand make_operand(bool is_a, DType dtype, const ir::Shape& shape, int fast, const DotPlan& plan,
                     int buffer, int64_t base, int64_t threads) {
  Operand o;
  o.is_a = is_a;
  o.dtype = dtype;
  o.k_dim = is_a ? 1 : 0;
  o.outer_dim = 1 - o.k_dim;
  const int elem = ir::dtype_bytes(dtype);
  const bool along_outer = fast == o.outer_dim;
  o.mode = !along_outer ? ReadMode::Ldmatrix
           : elem == 2  ? ReadMode::LdmatrixTrans
                        : ReadMode::Scalar;
  o.row_dim = along_outer ? o.k_dim : o.outer_dim;
  o.tile =
      SmemTile(buffer, base, shape[static_cast<size_t>(o.row_dim)],
               shape[static_cast<size_t>(1 - o.row_dim)], elem, o.mode == ReadMode::Scalar ? 2 : 1);
  o.frag = is_a ? plan.a : plan.b;
  o.kinst = plan.shape->k;
  o.values = is_a ? plan.shape->a_count() : plan.shape->b_count();
  o.reps = shape[static_cast<size_t>(o.outer_dim)] / (is_a ? 16 * plan.warps.m : 8 * plan.warps.n);
  o.count = is_a || o.reps > 1 ? 4 : 2;
  if (o.mode != ReadMode::Scalar) o.addr = address_layout(o, shape, plan, threads);
  return o;
}

void store_operand(Lowerer& lw, const Operand& o, const Regs& r, const Layout& l) {
  store_tile(lw, o.tile, o.row_dim, r, l);
}

void store_tile(Lowerer& lw, const SmemTile& tile, int row_dim, const Regs& r, const Layout& l,
                ir::Value* stage) {
  const int col_dim = 1 - row_dim;
  // The register bits holding the low column bits (anywhere in the register index: a thread may
  // hold a block loaded along the rows and store it along the columns).
  std::vector<int> col_bits;
  for (;;) {
    auto it =
        std::find(l.regs.begin(), l.regs.end(), DimBit{col_dim, static_cast<int>(col_bits.size())});
    if (it == l.regs.end()) break;
    col_bits.push_back(static_cast<int>(it - l.regs.begin()));
  }
  // Vectors stay within a 16-byte chunk (and so within a block).
  const int64_t width = std::min<int64_t>({int64_t{1} << col_bits.size(), tile.vec, 8});
  col_bits.resize(static_cast<size_t>(log2_exact(width)));
  int vector_mask = 0;
  for (int b : col_bits) vector_mask |= 1 << b;
  ir::Value* base = lw.at_entry(
      "smem:" + tile.key() + "|" + std::to_string(row_dim) + "|" + l.str(),
      [&] { return tile.index(lw, lw.thread_coord(l, row_dim), lw.thread_coord(l, col_dim)); });
  lw.guarded(lw.owner(l), [&] {
    for (int i = 0; i < l.num_regs(); ++i) {
      if (i & vector_mask) continue;
      const std::vector<int64_t> c = l.reg_coords(i);
      const int64_t off =
          tile.offset(c[static_cast<size_t>(row_dim)], c[static_cast<size_t>(col_dim)]);
      ir::Value* idx = xor_(lw, base, off);
      std::vector<ir::Value*> operands = {stage ? lw.add(idx, stage) : idx};
      for (int j = 0; j < width; ++j) {
        int reg = i;  // register i with the vector's bits set to j's
        for (size_t k = 0; k < col_bits.size(); ++k)
          if (j >> k & 1) reg |= 1 << col_bits[k];
        operands.push_back(r[static_cast<size_t>(reg)]);
      }
      lw.b().create(OpKind::SharedStore, operands, {},
                    {{attr::kBuffer, int64_t{tile.buffer}}, {attr::kWidth, width}});
    }
  });
}

void prepare_reads(Lowerer& lw, Operand& o, ir::Value* stage_offset) {
  const Layout& l = o.mode == ReadMode::Scalar ? o.frag : o.addr;
  const std::string key = "read:" + o.tile.key() + "|" + std::to_string(o.row_dim) + "|" + l.str();
  ir::Value* base = lw.at_entry(key, [&] {
    return o.tile.index(lw, lw.thread_coord(l, o.row_dim), lw.thread_coord(l, 1 - o.row_dim));
  });
  o.read_base = stage_offset ? lw.add(base, stage_offset) : base;
}

std::vector<Regs> fragments(Lowerer& lw, const Operand& o, const DotPlan& plan, int64_t k0) {
  TESSERA_CHECK(o.read_base, "fragments() before prepare_reads()");
  std::vector<Regs> out;
  if (o.mode == ReadMode::Scalar) {
    // The fragment layout's registers run: values, instruction tiles, k steps.
    const int64_t step = k0 / o.kinst;
    for (int64_t t = 0; t < o.reps; ++t) {
      Regs f;
      for (int64_t v = 0; v < o.values; ++v) {
        const int reg = static_cast<int>(v + o.values * (t + o.reps * step));
        ir::Value* idx = xor_(lw, o.read_base, tile_offset(o, o.frag.reg_coords(reg)));
        f.push_back(
            lw.b()
                .create(OpKind::SharedLoad, {idx}, {Type::scalar(o.dtype)},
                        {{attr::kBuffer, int64_t{o.tile.buffer}}, {attr::kWidth, int64_t{1}}})
                ->result());
      }
      out.push_back(f);
    }
    return out;
  }
  if (o.is_a) {
    for (int64_t t = 0; t < o.reps; ++t)
      out.push_back(ldmatrix(lw, o, {16 * plan.warps.m * t, k0}));
    return out;
  }
  // B: one ldmatrix .x4 covers two instruction tiles (matrices 2 and 3 the second one's).
  const int64_t tiles = o.count / 2, per_tile = o.values;
  for (int64_t t = 0; t < o.reps; t += tiles) {
    Regs f = ldmatrix(lw, o, {k0, 8 * plan.warps.n * t});
    for (int64_t j = 0; j < tiles; ++j)
      out.emplace_back(f.begin() + j * per_tile, f.begin() + (j + 1) * per_tile);
  }
  return out;
}

}  // namespace tessera::lower::detail
