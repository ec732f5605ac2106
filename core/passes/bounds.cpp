/// \file Debug mode's bounds checks (bounds.h).
#include "core/passes/bounds.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/ir/builder.h"
#include "core/ir/ops.h"
#include "core/support/error.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

/// The function attribute that marks a kernel whose accesses are checked.
constexpr const char* kCheckedAttr = "bounds_checked";

/// The parameters (indices into fn.params) a pointer value can come from; `unknown` when some
/// path leaves the parameters (an integer made into a pointer, a pointer loaded from memory).
class Provenance {
 public:
  std::set<size_t> roots(const Value* v, bool* unknown) {
    seen_.clear();
    out_.clear();
    unknown_ = false;
    visit(v);
    *unknown = unknown_;
    return out_;
  }

 private:
  void visit(const Value* v) {
    if (!seen_.insert(v).second) return;
    if (v->is_arg()) return visit_arg(v);
    const Op* op = v->def;
    switch (op->kind) {
      case OpKind::PtrAdd:
      case OpKind::Splat:
      case OpKind::Broadcast:
      case OpKind::ExpandDims:
      case OpKind::Reshape:
      case OpKind::Permute:
      case OpKind::MultipleOf:
      case OpKind::MaxContiguous:
        return visit(op->operand(0));
      case OpKind::Cat:
        visit(op->operand(0));
        return visit(op->operand(1));
      case OpKind::Where:
        visit(op->operand(1));
        return visit(op->operand(2));
      case OpKind::Bitcast:
        if (op->operand(0)->type.is_ptr) return visit(op->operand(0));
        break;
      case OpKind::For:  // the init and what the body yields
        visit(op->operand(3 + v->index));
        return visit(yielded(op->region(0), v->index));
      case OpKind::If:
        visit(yielded(op->region(0), v->index));
        return visit(yielded(op->region(1), v->index));
      case OpKind::While:  // what the before-region's condition passes on
        return visit(op->region(0)->terminator()->operand(1 + v->index));
      default:
        break;
    }
    unknown_ = true;
  }

  void visit_arg(const Value* v) {
    const ir::Region* r = v->owner;
    const Op* parent = r ? r->parent : nullptr;
    if (!parent) {  // a kernel parameter
      out_.insert(v->index);
      return;
    }
    if (parent->kind == OpKind::For && r == parent->region(0) && v->index > 0) {
      visit(parent->operand(3 + v->index - 1));
      return visit(yielded(r, v->index - 1));
    }
    if (parent->kind == OpKind::While && r == parent->region(0)) {
      visit(parent->operand(v->index));
      return visit(yielded(parent->region(1), v->index));
    }
    if (parent->kind == OpKind::While && r == parent->region(1))
      return visit(parent->region(0)->terminator()->operand(1 + v->index));
    unknown_ = true;
  }

  static const Value* yielded(const ir::Region* r, size_t i) {
    const Op* t = r->terminator();
    TESSERA_CHECK(t && i < t->operands.size(), "bounds: a region without its yield");
    return t->operand(i);
  }

  std::unordered_set<const Value*> seen_;
  std::set<size_t> out_;
  bool unknown_ = false;
};

/// A pointer parameter's hidden pair.
struct Extent {
  Value* base = nullptr;
  Value* bytes = nullptr;
};

class Checker {
 public:
  Checker(ir::Module& m, ir::Function& fn) : m_(m), fn_(fn), b_(m) {
    const size_t n = fn.params.size();
    extents_.resize(n);
    for (size_t i = 0; i < n; ++i)
      if (fn.params[i].value->type.is_ptr) pointers_.push_back(i);
    for (size_t i : pointers_) {
      const std::string name = fn.params[i].name;  // a copy: add_param grows fn.params
      extents_[i].base = add_param(bounds_base_name(name));
      extents_[i].bytes = add_param(bounds_bytes_name(name));
    }
  }

  /// Checks `op`'s access through `ptr` under `mask` (null: every lane); `mask_at` is the
  /// operand index the op's mask has or would take (-1: the op takes none).
  void check(Op* op, Value* ptr, Value* mask, int mask_at, std::string_view access) {
    bool unknown = false;
    std::set<size_t> roots = provenance_.roots(ptr, &unknown);
    if (unknown) roots.insert(pointers_.begin(), pointers_.end());
    if (roots.empty()) return;  // no buffers at all: nothing this kernel can be checked against
    b_.set_insertion_before(op);
    b_.set_loc(op->loc);
    shape_ = ptr->type.shape;
    Value* address = b_.create_value(OpKind::Bitcast, {ptr}, like(DType::u64));
    const int64_t elem = std::max(ir::dtype_bits(ptr->type.dtype) / 8, 1);
    Value* ok = nullptr;
    Value* offset = nullptr;
    Value* bytes = nullptr;
    for (size_t r : roots) {
      bytes = spread(extents_[r].bytes);
      offset = binary(OpKind::Sub, address, spread(extents_[r].base), DType::u64);
      Value* inside = binary(OpKind::CmpLt, offset, bytes, DType::i1);
      Value* room = binary(OpKind::Sub, bytes, offset, DType::u64);
      Value* fits = binary(OpKind::CmpGe, room, b_.constant_int(like(DType::u64), elem), DType::i1);
      Value* in = binary(OpKind::And, inside, fits, DType::i1);
      ok = ok ? binary(OpKind::Or, ok, in, DType::i1) : in;
    }
    Value* checked = mask ? binary(OpKind::Or, ok,
                                   b_.create_value(OpKind::Not, {mask}, like(DType::i1)), DType::i1)
                          : ok;
    // The access itself skips the lanes that fail (where a target's assert does not stop the
    // kernel, as on Vulkan, nothing is touched outside the buffers).
    if (mask_at >= 0) {
      Value* narrowed = mask ? binary(OpKind::And, mask, ok, DType::i1) : ok;
      if (static_cast<size_t>(mask_at) < op->operands.size())
        op->operands[static_cast<size_t>(mask_at)] = narrowed;
      else
        op->operands.push_back(narrowed);
    }
    std::vector<Value*> operands = {address};
    std::string message;
    if (roots.size() == 1) {
      operands.push_back(b_.create_value(OpKind::Bitcast, {offset}, like(DType::i64)));
      operands.push_back(bytes);
      message = "the pointer from `" + fn_.params[*roots.begin()].name +
                "` is at byte {1} of its buffer of {2} bytes (address {0:x})";
    } else {
      std::string names;
      size_t k = 0;
      for (size_t r : roots)
        names += (k++ ? (k == roots.size() ? " or `" : ", `") : "`") + fn_.params[r].name + "`";
      message = "the pointer (from " + names + ") is outside all of their buffers (address {0:x})";
    }
    operands.push_back(checked);
    b_.create(OpKind::Assert, operands, {},
              {{attr::kFault, "out-of-bounds " + std::string(access)},
               {attr::kMessage, message},
               {attr::kValues, static_cast<int64_t>(operands.size() - 1)}});
  }

 private:
  Value* add_param(std::string name) {
    Value* v = m_.add_arg(fn_.body, Type::scalar(DType::u64));
    fn_.params.push_back(ir::Param{std::move(name), v, {}});
    return v;
  }
  Type like(DType d) const { return shape_.empty() ? Type::scalar(d) : Type::tile(d, shape_); }
  Value* spread(Value* scalar) {
    return shape_.empty() ? scalar : b_.create_value(OpKind::Splat, {scalar}, like(DType::u64));
  }
  Value* binary(OpKind k, Value* a, Value* b, DType result) {
    return b_.create_value(k, {a, b}, like(result));
  }

  ir::Module& m_;
  ir::Function& fn_;
  ir::Builder b_;
  Provenance provenance_;
  std::vector<Extent> extents_;
  std::vector<size_t> pointers_;
  ir::Shape shape_;
};

}  // namespace

std::string bounds_base_name(std::string_view name) {
  return "__base_" + std::string(name);
}
std::string bounds_bytes_name(std::string_view name) {
  return "__bytes_" + std::string(name);
}

bool add_bounds_checks(ir::Module& m) {
  ir::Function& fn = m.kernel();
  if (fn.int_attr_or(kCheckedAttr, 0) != 0) return false;
  fn.set_attr(kCheckedAttr, int64_t{1});
  std::vector<Op*> accesses;
  ir::walk(fn.body, [&](Op* op) {
    if (op->kind == OpKind::Load || op->kind == OpKind::Store || op->kind == OpKind::AtomicRmw ||
        op->kind == OpKind::AtomicCas)
      accesses.push_back(op);
  });
  Checker checker(m, fn);
  for (Op* op : accesses) {
    switch (op->kind) {
      case OpKind::Load: {
        ir::LoadOp l(op);
        checker.check(op, l.ptr(), l.mask(), 1, "load");
        break;
      }
      case OpKind::Store: {
        ir::StoreOp s(op);
        checker.check(op, s.ptr(), s.mask(), 2, "store");
        break;
      }
      case OpKind::AtomicRmw: {
        ir::AtomicRmwOp a(op);
        checker.check(op, a.ptr(), a.mask(), 2, "atomic");
        break;
      }
      default:  // atomic_cas takes no mask: where the assert does not stop it, it still runs
        checker.check(op, op->operand(0), nullptr, -1, "atomic");
        break;
    }
  }
  return true;
}

}  // namespace tessera::passes
