/// \file Loads, stores, atomics, print and assert: per-register accesses, vectorized where axis
/// info proves contiguity, alignment and a constant mask across the vector.
#include <algorithm>

#include "core/ir/ops.h"
#include "core/lower/lowerer.h"

namespace tessera::lower {

int64_t access_width(const AxisInfoMap& axis, const Layout& l, const ir::Value* ptr,
                     const ir::Value* mask, const ir::Value* other) {
  if (l.regs.empty()) return 1;
  int dim = l.regs[0].dim;
  int run = reg_run(l, dim);
  int64_t elem = ir::dtype_bytes(ptr->type.dtype);
  const AxisInfo& p = axis.get(ptr);
  size_t d = static_cast<size_t>(dim);
  int64_t w = int64_t{1} << run;
  w = std::min(w, p.contiguity[d]);
  w = std::min(w, std::max<int64_t>(1, p.divisibility[d] / elem));
  w = std::min(w, std::max<int64_t>(1, 16 / elem));
  if (mask) w = std::min(w, axis.get(mask).constancy[d]);
  if (other) w = std::min(w, axis.get(other).constancy[d]);
  int64_t p2 = 1;
  while (p2 * 2 <= w) p2 *= 2;
  return p2;
}

}  // namespace tessera::lower

namespace tessera::lower::detail {

using ir::OpKind;
using ir::Type;

void Lowerer::lower_load(const ir::Op& op) {
  ir::LoadOp ld(&op);
  const ir::Value* r = op.result();
  Type elem = r->type.element();
  if (!r->type.is_tile()) {
    ir::Value* pred = ld.mask() ? scalar(ld.mask()) : const_bool(true);
    ir::Value* other = ld.other() ? scalar(ld.other()) : b().constant(elem, 0);
    int64_t align = ir::dtype_bytes(elem.dtype);
    define_scalar(r, b().create(OpKind::GlobalLoad, {scalar(ld.ptr()), pred, other}, {elem},
                                {{attr::kAlign, align}, {attr::kWidth, int64_t{1}}})
                         ->result());
    return;
  }
  const Layout& l = homes().home(r);
  Regs ptrs = regs(ld.ptr(), l);
  Regs masks = ld.mask() ? regs(ld.mask(), l) : Regs{};
  Regs others = ld.other() ? regs(ld.other(), l) : Regs{};
  int64_t w = access_width(axis(), l, ld.ptr(), ld.mask(), ld.other());
  std::vector<ir::Attribute> attrs;
  for (std::string_view hint :
       {attr::kCache, attr::kEviction, attr::kVolatile})  // carried for the targets
    if (const ir::AttrValue* c = op.find_attr(hint)) attrs.push_back({hint, *c});
  Regs out = global_loads(l, elem, ptrs, masks, others, w, attrs);
  define_tile(r, l, out);
}

Regs Lowerer::global_loads(const Layout& l, Type elem, const Regs& ptrs, const Regs& masks,
                           const Regs& others, int64_t w, std::vector<ir::Attribute> attrs) {
  ir::Value* zero = others.empty() ? b().constant(elem, 0) : nullptr;
  ir::Value* always = const_bool(true);
  attrs.insert(attrs.begin(), {{attr::kAlign, w * ir::dtype_bytes(elem.dtype)}, {attr::kWidth, w}});
  Regs out(static_cast<size_t>(l.num_regs()));
  for (int i = 0; i < l.num_regs(); i += static_cast<int>(w)) {
    std::vector<ir::Value*> operands = {ptrs[static_cast<size_t>(i)],
                                        masks.empty() ? always : masks[static_cast<size_t>(i)]};
    for (int j = 0; j < w; ++j)
      operands.push_back(others.empty() ? zero : others[static_cast<size_t>(i + j)]);
    ir::Op* g = b().create(OpKind::GlobalLoad, operands,
                           std::vector<Type>(static_cast<size_t>(w), elem), attrs);
    for (int j = 0; j < w; ++j) out[static_cast<size_t>(i + j)] = g->result(static_cast<size_t>(j));
  }
  return out;
}

void Lowerer::lower_store(const ir::Op& op) {
  ir::StoreOp st(&op);
  const ir::Value* ptr = st.ptr();
  int64_t elem_bytes = ir::dtype_bytes(ptr->type.dtype);
  if (!ptr->type.is_tile()) {
    // A scalar store happens once, from thread 0.
    ir::Value* first =
        emit(OpKind::CmpEq, {tid(), const_int(ir::DType::i32, 0)}, Type::scalar(ir::DType::i1));
    ir::Value* pred = st.mask() ? and_(scalar(st.mask()), first) : first;
    b().create(OpKind::GlobalStore, {scalar(ptr), pred, scalar(st.value())}, {},
               {{attr::kAlign, elem_bytes}, {attr::kWidth, int64_t{1}}});
    return;
  }
  Layout l = homes().coalesced(ptr);
  // A value whose conversion to the coalesced layout would not fit in shared memory beside the
  // kernel's buffers is stored from its own layout (narrower stores, no shared memory).
  const ir::Value* v = st.value();
  if (v->type.is_tile() && !v->type.is_ptr && !homes().is_free(v)) {
    const Layout h = homes().layout_for(v);
    const ir::DType dt = v->type.dtype == ir::DType::i1 ? ir::DType::u8 : v->type.dtype;
    if (h.threads != l.threads &&
        !scratch_fits(dt, staging_elements(v->type.shape, ir::dtype_bytes(dt))))
      l = h;
  }
  Regs ptrs = regs(ptr, l);
  Regs vals = regs(st.value(), l);
  Regs masks = st.mask() ? regs(st.mask(), l) : Regs{};
  ir::Value* own = owner(l);
  bool guarded = !(own->def && own->def->kind == OpKind::Constant);
  int64_t w = access_width(axis(), l, ptr, st.mask(), nullptr);
  std::vector<ir::Attribute> attrs = {{attr::kAlign, w * elem_bytes}, {attr::kWidth, w}};
  for (std::string_view hint : {attr::kCache, attr::kEviction})  // carried for the targets
    if (const ir::AttrValue* c = op.find_attr(hint)) attrs.push_back({hint, *c});
  for (int i = 0; i < l.num_regs(); i += static_cast<int>(w)) {
    ir::Value* pred = masks.empty() ? own
                                    : (guarded ? and_(masks[static_cast<size_t>(i)], own)
                                               : masks[static_cast<size_t>(i)]);
    std::vector<ir::Value*> operands = {ptrs[static_cast<size_t>(i)], pred};
    for (int j = 0; j < w; ++j) operands.push_back(vals[static_cast<size_t>(i + j)]);
    b().create(OpKind::GlobalStore, operands, {}, attrs);
  }
}

void Lowerer::lower_atomic(const ir::Op& op) {
  const ir::Value* ptr = op.operand(0);
  const ir::Value* r = op.result();
  Type elem = r->type.element();
  bool cas = op.kind == OpKind::AtomicCas;
  const ir::Value* mask = !cas && op.operands.size() > 2 ? op.operand(2) : nullptr;
  if (!r->type.is_tile()) {
    // One atomic, from thread 0; its result reaches every thread through shared memory.
    ir::Value* first =
        emit(OpKind::CmpEq, {tid(), const_int(ir::DType::i32, 0)}, Type::scalar(ir::DType::i1));
    ir::Value* old;
    if (cas) {
      // atomic_cas has no mask: guard it with a branch.
      ir::Op* guard = b().create(OpKind::If, {first}, {elem});
      ir::Region* then_r = b().add_region(guard);
      ir::Region* else_r = b().add_region(guard);
      b().set_insertion_end(then_r);
      ir::Value* v =
          b().create(OpKind::AtomicCas, {scalar(ptr), scalar(op.operand(1)), scalar(op.operand(2))},
                     {elem}, op.attrs)
              ->result();
      b().create(OpKind::Yield, {v}, {});
      b().set_insertion_end(else_r);
      b().create(OpKind::Yield, {b().constant(elem, 0)}, {});
      b().set_insertion_after(guard);
      old = guard->result();
    } else {
      ir::Value* pred = mask ? and_(scalar(mask), first) : first;
      old = b().create(OpKind::AtomicRmw, {scalar(ptr), scalar(op.operand(1)), pred}, {elem},
                       op.attrs)
                ->result();
    }
    Layout one;  // a scalar layout: every thread bit is a copy
    one.threads.assign(static_cast<size_t>(log2_exact(threads())), DimBit{});
    define_scalar(r, convert_through_shared(Regs{old}, elem, one)[0]);
    return;
  }
  const Layout& l = homes().home(r);
  Regs ptrs = regs(ptr, l);
  Regs vals = regs(op.operand(1), l);
  Regs cmps = cas ? regs(op.operand(1), l) : Regs{};
  if (cas) vals = regs(op.operand(2), l);
  Regs masks = mask ? regs(mask, l) : Regs{};
  ir::Value* own = owner(l);
  Regs out;
  for (int i = 0; i < l.num_regs(); ++i) {
    size_t k = static_cast<size_t>(i);
    ir::Value* pred = masks.empty() ? own : and_(masks[k], own);
    if (cas) {
      ir::Op* guard = b().create(OpKind::If, {pred}, {elem});
      ir::Region* then_r = b().add_region(guard);
      ir::Region* else_r = b().add_region(guard);
      b().set_insertion_end(then_r);
      ir::Value* v =
          b().create(OpKind::AtomicCas, {ptrs[k], cmps[k], vals[k]}, {elem}, op.attrs)->result();
      b().create(OpKind::Yield, {v}, {});
      b().set_insertion_end(else_r);
      b().create(OpKind::Yield, {b().constant(elem, 0)}, {});
      b().set_insertion_after(guard);
      out.push_back(guard->result());
    } else {
      out.push_back(
          b().create(OpKind::AtomicRmw, {ptrs[k], vals[k], pred}, {elem}, op.attrs)->result());
    }
  }
  // Broadcast copies did not execute the atomic: they take the owner's result.
  if (!(own->def && own->def->kind == OpKind::Constant)) out = convert_through_shared(out, elem, l);
  define_tile(r, l, out);
}

void Lowerer::lower_print(const ir::Op& op) {
  ir::PrintOp p(&op);
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const ir::Value* v = op.operand(k);
    std::string prefix = p.prefix();
    if (op.operands.size() > 1) prefix += "(operand " + std::to_string(k) + ") ";
    std::vector<ir::Attribute> attrs = {{attr::kPrefix, prefix},
                                        {attr::kRank, int64_t{v->type.rank()}}};
    if (p.hex()) attrs.push_back({attr::kHex, int64_t{1}});
    if (!v->type.is_tile()) {
      ir::Value* first =
          emit(OpKind::CmpEq, {tid(), const_int(ir::DType::i32, 0)}, Type::scalar(ir::DType::i1));
      guarded(first, [&] { b().create(OpKind::Print, {scalar(v)}, {}, attrs); });
      continue;
    }
    Layout l = homes().layout_for(v);
    Regs r = regs(v, l);
    guarded(owner(l), [&] {
      for (int i = 0; i < l.num_regs(); ++i) {
        std::vector<ir::Value*> operands = element_index(l, i);
        operands.push_back(r[static_cast<size_t>(i)]);
        b().create(OpKind::Print, operands, {}, attrs);
      }
    });
  }
}

void Lowerer::lower_assert(const ir::Op& op) {
  ir::AssertOp a(&op);
  const ir::Value* c = a.cond();
  std::vector<ir::Attribute> attrs = {{attr::kMessage, a.message()},
                                      {attr::kRank, int64_t{c->type.rank()}}};
  if (a.num_values() > 0) attrs.push_back({attr::kValues, int64_t{a.num_values()}});
  if (op.has_attr(attr::kFault)) attrs.push_back({attr::kFault, ir::assert_heading(op)});
  if (!c->type.is_tile()) {
    std::vector<ir::Value*> operands;
    for (const ir::Value* v : a.values()) operands.push_back(scalar(v));
    operands.push_back(scalar(c));
    b().create(OpKind::Assert, operands, {}, attrs);
    return;
  }
  Layout l = homes().layout_for(c);
  Regs r = regs(c, l);
  std::vector<Regs> values;  // each reported value in the condition's layout
  for (const ir::Value* v : a.values()) values.push_back(regs(v, l));
  guarded(owner(l), [&] {
    for (int i = 0; i < l.num_regs(); ++i) {
      std::vector<ir::Value*> operands = element_index(l, i);
      for (const Regs& v : values) operands.push_back(v[static_cast<size_t>(i)]);
      operands.push_back(r[static_cast<size_t>(i)]);
      b().create(OpKind::Assert, operands, {}, attrs);
    }
  });
}

std::vector<ir::Value*> Lowerer::element_index(const Layout& l, int reg) {
  std::vector<int64_t> rc = l.reg_coords(reg);
  std::vector<ir::Value*> idx;
  for (int d = 0; d < l.rank(); ++d) {
    ir::Value* t = thread_coord(l, d);
    int64_t c = rc[static_cast<size_t>(d)];
    idx.push_back(c ? add(t, const_int(ir::DType::i32, c)) : t);
  }
  return idx;
}

void Lowerer::guarded(ir::Value* pred, const std::function<void()>& body) {
  if (pred->def && pred->def->kind == OpKind::Constant &&
      ir::ConstantOp(pred->def).int_value() == 1) {
    body();
    return;
  }
  ir::Op* guard = b().create(OpKind::If, {pred}, {});
  ir::Region* then_r = b().add_region(guard);
  ir::Region* else_r = b().add_region(guard);
  b().set_insertion_end(else_r);
  b().create(OpKind::Yield, {}, {});
  b().set_insertion_end(then_r);
  body();
  b().create(OpKind::Yield, {}, {});
  b().set_insertion_after(guard);
}

Regs Lowerer::convert_through_shared(const Regs& r, const ir::Type& elem, const Layout& l) {
  return convert(r, elem, l, l, /*through_shared=*/true);
}

void Lowerer::store_padded(const Regs& r, const Layout& l, int buf, ir::Value* base,
                           const PaddedTile& t) {
  const ir::DType dt = r.front()->type.dtype;
  const int fast = t.fast;
  const int64_t w = vector_width(l, fast, ir::dtype_bytes(dt));
  ir::Value* t_base = add(mul(thread_coord(l, 1 - fast), const_int(ir::DType::i32, t.stride)),
                          thread_coord(l, fast));
  if (base) t_base = add(t_base, base);
  guarded(owner(l), [&] {
    for (int i = 0; i < l.num_regs(); i += static_cast<int>(w)) {
      std::vector<int64_t> c = l.reg_coords(i);
      const int64_t off =
          c[static_cast<size_t>(1 - fast)] * t.stride + c[static_cast<size_t>(fast)];
      std::vector<ir::Value*> operands = {off ? add(t_base, const_int(ir::DType::i32, off))
                                              : t_base};
      operands.insert(operands.end(), r.begin() + i, r.begin() + i + w);
      b().create(OpKind::SharedStore, operands, {},
                 {{attr::kBuffer, int64_t{buf}}, {attr::kWidth, w}});
    }
  });
}

}  // namespace tessera::lower::detail
