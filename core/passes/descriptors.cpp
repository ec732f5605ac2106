/// \file Tensor descriptors as masked pointer accesses (descriptors.h).
#include "core/passes/descriptors.h"

#include <vector>

#include "core/ir/builder.h"
#include "core/ir/ops.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

/// Builds the pointer tile and the mask of one descriptor access, before the access.
class Expander {
 public:
  Expander(ir::Module& m, Op* access, const ir::DescOperands& desc, const ir::Shape& block)
      : b_(m), desc_(desc), block_(block), index_(desc.dim(0)->type.dtype) {
    b_.set_insertion_before(access);
    b_.set_loc(access->loc);
  }

  /// The pointers of the block's elements and the mask of those inside the tensor.
  std::pair<Value*, Value*> pointers_and_mask() {
    Value* offset = nullptr;
    Value* mask = nullptr;
    for (int d = 0; d < desc_.rank; ++d) {
      const Type line = Type::tile(index_, {block_[d]});
      Value* idx = binary(OpKind::Add, splat(desc_.offset(d), line), arange(d), line);
      Value* in = binary(
          OpKind::And, binary(OpKind::CmpGe, idx, splat(zero(), line), line.with_dtype(DType::i1)),
          binary(OpKind::CmpLt, idx, splat(desc_.dim(d), line), line.with_dtype(DType::i1)),
          line.with_dtype(DType::i1));
      Value* part = spread(binary(OpKind::Mul, idx, splat(desc_.stride(d), line), line), d);
      Value* inside = spread(in, d);
      offset = offset ? binary(OpKind::Add, offset, part, part->type) : part;
      mask = mask ? binary(OpKind::And, mask, inside, inside->type) : inside;
    }
    Value* base = desc_.base();
    Value* ptrs = b_.create_value(OpKind::Splat, {base}, base->type.with_shape(block_));
    return {b_.create_value(OpKind::PtrAdd, {ptrs, offset}, ptrs->type), mask};
  }

  ir::Builder& builder() { return b_; }

 private:
  Value* zero() { return b_.constant_int(Type::scalar(index_), 0); }
  Value* splat(Value* scalar, const Type& tile) {
    return b_.create_value(OpKind::Splat, {scalar}, tile);
  }
  Value* binary(OpKind k, Value* a, Value* c, const Type& result) {
    return b_.create_value(k, {a, c}, result);
  }
  /// arange(0, B_d) in the index dtype.
  Value* arange(int d) {
    Value* r = b_.create_value(OpKind::Arange, {}, Type::tile(DType::i32, {block_[d]}),
                               {{attr::kEnd, block_[d]}, {attr::kStart, int64_t{0}}});
    if (index_ == DType::i32) return r;
    return b_.create_value(OpKind::Cast, {r}, r->type.with_dtype(index_));
  }
  /// A [B_d] tile placed along dimension d of the block and broadcast to it.
  Value* spread(Value* line, int d) {
    const int rank = static_cast<int>(block_.size());
    Value* v = line;
    for (int axis = 0; axis < rank; ++axis) {
      if (axis == d) continue;
      ir::Shape s = v->type.shape;
      s.insert(s.begin() + axis, 1);
      v = b_.create_value(OpKind::ExpandDims, {v}, v->type.with_shape(s),
                          {{attr::kAxis, int64_t{axis}}});
    }
    if (v->type.shape == block_) return v;
    return b_.create_value(OpKind::Broadcast, {v}, v->type.with_shape(block_));
  }

  ir::Builder b_;
  ir::DescOperands desc_;
  ir::Shape block_;
  DType index_;
};

void erase(Op* op) {
  std::vector<Op*>& ops = op->parent->ops;
  std::erase(ops, op);
}

}  // namespace

bool expand_descriptors(ir::Module& m) {
  return expand_descriptors(m, [](const Op&) { return false; });
}

bool expand_descriptors(ir::Module& m, const std::function<bool(const ir::Op&)>& keep) {
  std::vector<Op*> accesses;
  for (auto& fn : m.functions)
    ir::walk(fn->body, [&](Op* op) {
      if ((op->kind == OpKind::DescStore || op->kind == OpKind::DescLoad) && !keep(*op))
        accesses.push_back(op);
    });
  for (Op* op : accesses) {
    if (op->kind == OpKind::DescLoad) {
      ir::DescLoadOp l(op);
      const Type block = l.result()->type;
      Expander e(m, op, l.desc(), block.shape);
      auto [ptrs, mask] = e.pointers_and_mask();
      Value* zero = e.builder().constant(block, 0.0);
      Value* v = e.builder().create_value(OpKind::Load, {ptrs, mask, zero}, block);
      ir::replace_all_uses(op->parent, l.result(), v);  // uses are in its region or nested
    } else {
      ir::DescStoreOp s(op);
      Expander e(m, op, s.desc(), s.value()->type.shape);
      auto [ptrs, mask] = e.pointers_and_mask();
      e.builder().create(OpKind::Store, {ptrs, s.value(), mask}, {});
    }
    erase(op);
  }
  return !accesses.empty();
}

}  // namespace tessera::passes
