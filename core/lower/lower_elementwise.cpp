/// \file The elementwise family's lowering: the ops a home can rematerialize anywhere (constants,
/// arange, splat, broadcast, expand_dims, reshape, permute, hints and elementwise arithmetic),
/// elementwise ops given their own home, and inline assembly, `pack` registers per call.
#include "core/ir/ops.h"
#include "core/lower/lowerer.h"
#include "core/support/error.h"

namespace tessera::lower::detail {

using ir::OpKind;
using ir::Type;

namespace {

/// The register permutation inverse: the operand layout of a permute producing `l`.
std::vector<int64_t> inverse(const std::vector<int64_t>& order) {
  std::vector<int64_t> inv(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    inv[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return inv;
}

/// For each register of layout `l`, the first register of the same thread holding an equal value
/// by `info`'s constancy (itself where none is known): the register whose coordinates are its own
/// with the bits below each dimension's constancy cleared, which lies in the same aligned run. An
/// elementwise op is then emitted once per run, not once per element: a mask `cols < N` with N
/// divisible by 16 costs one compare per 8 registers (layer norm's `where(cols < N, ...)`: 32
/// compares and 28 index adds per thread and pass became 4 compares at BLOCK 8192, 8 warps).
std::vector<int> equal_registers(const Layout& l, const AxisInfo& info) {
  std::vector<int> same(static_cast<size_t>(l.num_regs()));
  for (int i = 0; i < l.num_regs(); ++i) same[static_cast<size_t>(i)] = i;
  if (l.mats || info.constancy.size() != static_cast<size_t>(l.rank())) return same;
  for (int i = 0; i < l.num_regs(); ++i) {
    std::vector<int64_t> c = l.reg_coords(i);
    for (size_t d = 0; d < c.size(); ++d) c[d] &= ~(info.constancy[d] - 1);
    const int j = l.reg_of(c);
    if (j >= 0 && j < i) same[static_cast<size_t>(i)] = same[static_cast<size_t>(j)];
  }
  return same;
}

}  // namespace

Regs Lowerer::lower_free(const ir::Op& op, const Layout& l, ValueSource& src) {
  const ir::Value* r = op.result();
  Type elem = r->type.element();
  switch (op.kind) {
    case OpKind::Constant: {
      ir::ConstantOp c(&op);
      ir::Value* v = c.is_float() ? const_float(elem.dtype, c.float_value())
                                  : const_int(elem.dtype, c.int_value());
      return Regs(static_cast<size_t>(l.num_regs()), v);
    }
    case OpKind::Arange: {
      ir::ArangeOp a(&op);
      ir::Value* base = add(thread_coord(l, 0), const_int(ir::DType::i32, a.start()));
      Regs out;
      for (int i = 0; i < l.num_regs(); ++i) {
        int64_t c = l.reg_coords(i)[0];
        out.push_back(c ? add(base, const_int(ir::DType::i32, c)) : base);
      }
      return out;
    }
    case OpKind::Splat:
      return Regs(static_cast<size_t>(l.num_regs()), src.scalar(op.operand(0)));
    case OpKind::Broadcast: {
      const ir::Value* x = op.operand(0);
      Layout lx = unbroadcast(l, x->type.shape);
      Regs rx = src.regs(x, lx);
      Regs out;
      for (int i = 0; i < l.num_regs(); ++i) {
        std::vector<int64_t> c = l.reg_coords(i);
        for (size_t d = 0; d < c.size(); ++d)
          if (x->type.shape[d] == 1) c[d] = 0;
        int j = lx.reg_of(c);
        TESSERA_CHECK(j >= 0, "broadcast register not found");
        out.push_back(rx[static_cast<size_t>(j)]);
      }
      return out;
    }
    case OpKind::ExpandDims:
      return src.regs(op.operand(0), slice(l, static_cast<int>(op.int_attr(attr::kAxis))));
    case OpKind::Reshape:
      return src.regs(op.operand(0), reshape(l, op.operand(0)->type.shape));
    case OpKind::Permute:
      return src.regs(op.operand(0), permute(l, inverse(op.ints_attr(attr::kOrder))));
    case OpKind::MultipleOf:
    case OpKind::MaxContiguous:
      return src.regs(op.operand(0), l);
    default:
      break;
  }
  TESSERA_CHECK(op.has(ir::kElementwise), "op '", op.name(), "' is not free");
  std::vector<Regs> operands;
  for (const ir::Value* v : op.operands) operands.push_back(src.regs(v, l));
  const std::vector<int> same = equal_registers(l, axis().get(r));
  Regs out;
  for (int i = 0; i < l.num_regs(); ++i) {
    if (same[static_cast<size_t>(i)] != i) {
      out.push_back(out[static_cast<size_t>(same[static_cast<size_t>(i)])]);
      continue;
    }
    std::vector<ir::Value*> ops;
    for (const Regs& o : operands) ops.push_back(o[static_cast<size_t>(i)]);
    out.push_back(emit(op.kind, ops, elem, op.attrs));
  }
  return out;
}

void Lowerer::lower_elementwise(const ir::Op& op) {
  const ir::Value* r = op.result();
  const Layout& l = homes().home(r);
  define_tile(r, l, lower_free(op, l));
}

void Lowerer::lower_inline_asm(const ir::Op& op) {
  // One SIMT op per `pack` registers of the home (consecutive elements of the last dimension):
  // operand by operand, then result by result, `pack` scalars each (core/ir/ops.h).
  const auto pack = static_cast<size_t>(op.int_attr_or(attr::kPack, 1));
  std::vector<Type> types;
  for (const ir::Value* r : op.results)
    for (size_t k = 0; k < pack; ++k) types.push_back(Type::scalar(r->type.dtype));
  if (!op.result()->type.is_tile()) {  // scalars (pack is 1)
    std::vector<ir::Value*> operands;
    for (const ir::Value* v : op.operands) operands.push_back(scalar(v));
    ir::Op* call = b_.create(op.kind, operands, types, op.attrs);
    for (size_t i = 0; i < op.results.size(); ++i) define_scalar(op.result(i), call->result(i));
    return;
  }
  const Layout& l = homes().home(op.result());
  const int last = l.rank() - 1;
  TESSERA_CHECK(
      pack == 1 || (!l.mats && reg_run(l, last) >= log2_exact(static_cast<int64_t>(pack))),
      "inline_asm: home ", l.str(), " lacks runs of ", pack, " registers");
  std::vector<Regs> ins;
  for (const ir::Value* v : op.operands) ins.push_back(regs(v, l));
  std::vector<Regs> outs(op.results.size());
  for (size_t i = 0; i < static_cast<size_t>(l.num_regs()); i += pack) {
    std::vector<ir::Value*> operands;
    for (const Regs& in : ins)
      for (size_t k = 0; k < pack; ++k) operands.push_back(in[i + k]);
    ir::Op* call = b_.create(op.kind, operands, types, op.attrs);
    for (size_t r = 0; r < outs.size(); ++r)
      for (size_t k = 0; k < pack; ++k) outs[r].push_back(call->result(r * pack + k));
  }
  for (size_t r = 0; r < outs.size(); ++r) define_tile(op.result(r), l, std::move(outs[r]));
}

}  // namespace tessera::lower::detail
