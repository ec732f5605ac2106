/// \file The values of a pipelined loop's body at another iteration (Shifted) and the copies a
/// ring issues with them (ring_copies.h).
#include "core/lower/ring_copies.h"

#include "core/ir/ops.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

namespace {

bool is_body_value(const ir::Region& body, const ir::Value* v) {
  if (v->is_arg()) return v->owner == &body;
  return v->def->parent == &body;
}

/// The pointers of `p`'s load at iteration `j` (an integer scalar; `at` evaluates the body there).
Regs pointers(Lowerer& lw, const RingLoad& p, Shifted& at, ir::Value* j) {
  ir::LoadOp ld(p.load);
  if (p.iter_arg < 0) return at.regs(ld.ptr(), p.layout);
  Regs ptrs = lw.regs(p.init, p.layout), inc = at.regs(p.inc, p.layout);
  for (size_t i = 0; i < ptrs.size(); ++i) {
    ir::Value* n = j->type == inc[i]->type ? j : lw.emit(OpKind::Cast, {j}, inc[i]->type);
    ptrs[i] = lw.emit(OpKind::PtrAdd, {ptrs[i], lw.mul(inc[i], n)}, ptrs[i]->type);
  }
  return ptrs;
}

}  // namespace

bool Shifted::varies(const ir::Value* v) {
  if (v->is_arg()) return v->owner == &body_;
  auto it = varies_.find(v);
  if (it != varies_.end()) return it->second;
  bool out = false;
  for (const ir::Value* x : v->def->operands) out = out || varies(x);
  return varies_[v] = out;
}

void Shifted::hoist(const ir::Value* v) {
  if (!varies(v)) {
    scalar(v);
    return;
  }
  if (v->def)
    for (const ir::Value* x : v->def->operands) hoist(x);
}

ir::Value* Shifted::scalar(const ir::Value* v) {
  if (!is_body_value(body_, v) && !(outside_ && v->def)) return lw_.scalar(v);
  if (v == body_.args[0]) return iv_;
  auto it = scalars_.find(v);
  if (it != scalars_.end()) return it->second;
  const ir::Op& op = *v->def;
  ir::Value* out = nullptr;
  if (op.kind == OpKind::ProgramId && program_x_ && ir::ProgramIdOp(&op).axis() == 0) {
    out = program_x_;
  } else if (op.kind == OpKind::Constant) {
    ir::ConstantOp c(&op);
    out = c.is_float() ? lw_.const_float(v->type.dtype, c.float_value())
                       : lw_.const_int(v->type.dtype, c.int_value());
  } else {
    std::vector<ir::Value*> operands;
    for (const ir::Value* x : op.operands) operands.push_back(scalar(x));
    out = lw_.emit(op.kind, operands, v->type, op.attrs);
  }
  return scalars_[v] = out;
}

Regs Shifted::regs(const ir::Value* v, const Layout& l) {
  if (!v->type.is_tile()) return Regs(static_cast<size_t>(l.num_regs()), scalar(v));
  if (!is_body_value(body_, v)) return lw_.regs(v, l);
  const std::string key = std::to_string(reinterpret_cast<uintptr_t>(v)) + "|" + l.str();
  auto it = tiles_.find(key);
  if (it != tiles_.end()) return it->second;
  return tiles_[key] = lw_.lower_free(*v->def, l, *this);
}

ir::Value* in_range(Lowerer& lw, ir::Value* it, ir::Value* ub, ir::Value* step) {
  const Type i1 = Type::scalar(DType::i1);
  ir::Value* up = lw.emit(OpKind::CmpGt, {step, lw.const_int(step->type.dtype, 0)}, i1);
  ir::Value* below = lw.emit(OpKind::CmpLt, {it, ub}, i1);
  ir::Value* above = lw.emit(OpKind::CmpGt, {it, ub}, i1);
  return lw.emit(OpKind::Where, {up, below, above}, i1);
}

void issue(Lowerer& lw, const RingLoad& p, const Operand& o, Shifted& at, ir::Value* j,
           ir::Value* stage, int64_t stage_align, ir::Value* valid) {
  ir::LoadOp ld(p.load);
  Regs ptrs = pointers(lw, p, at, j);
  Regs masks = ld.mask() ? at.regs(ld.mask(), p.layout) : Regs{};
  const Layout lo = p.operand_layout();
  ir::Value* base =
      lw.at_entry("cp:" + o.tile.key() + "|" + std::to_string(o.row_dim) + "|" + lo.str(), [&] {
        return o.tile.index(lw, lw.thread_coord(lo, o.row_dim), lw.thread_coord(lo, 1 - o.row_dim));
      });
  ir::Value* dst = lw.add(base, stage);
  lw.guarded(lw.owner(lo), [&] {
    for (int i = 0; i < lo.num_regs(); i += static_cast<int>(p.width)) {
      std::vector<int64_t> c = lo.reg_coords(i);
      const int64_t off =
          o.tile.offset(c[static_cast<size_t>(o.row_dim)], c[static_cast<size_t>(1 - o.row_dim)]);
      // (base + stage) ^ off = (base ^ off) + stage when the stage offset (a multiple of
      // stage_align) leaves the bits off flips alone: the xor is then loop-invariant.
      ir::Value* idx =
          !off ? dst
          : off < stage_align
              ? lw.add(lw.emit(OpKind::Xor, {base, lw.const_int(DType::i32, off)}, base->type),
                       stage)
              : lw.emit(OpKind::Xor, {dst, lw.const_int(DType::i32, off)}, dst->type);
      ir::Value* pred = masks.empty() ? valid : lw.and_(masks[static_cast<size_t>(i)], valid);
      lw.b().create(OpKind::CpAsync, {idx, ptrs[static_cast<size_t>(i)], pred}, {},
                    {{attr::kBuffer, int64_t{o.tile.buffer}}});
    }
  });
}

Regs load_ahead(Lowerer& lw, const RingLoad& p, Shifted& at, ir::Value* j, ir::Value* valid) {
  ir::LoadOp ld(p.load);
  Regs ptrs = pointers(lw, p, at, j);
  Regs masks = ld.mask() ? at.regs(ld.mask(), p.layout) : Regs(ptrs.size(), valid);
  if (ld.mask())
    for (ir::Value*& m : masks) m = lw.and_(m, valid);
  return lw.global_loads(p.layout, p.load->result()->type.element(), ptrs, masks, {}, p.width);
}

std::vector<ir::Value*> tma_coords(Lowerer& lw, const RingLoad& p, Shifted& at) {
  const ir::DescOperands d = ir::DescLoadOp(p.load).desc();
  std::vector<ir::Value*> coords;
  for (int i = 0; i < d.rank; ++i) {
    ir::Value* c = at.scalar(d.offset(i));
    coords.push_back(
        c->type.dtype == DType::i32 ? c : lw.emit(OpKind::Cast, {c}, Type::scalar(DType::i32)));
  }
  return coords;
}

}  // namespace tessera::lower::detail
