/// \file Atomics as inline PTX `atom.<sem>.<scope>.global.<op>.<type>`: LLVM 19's NVPTX backend
/// drops the ordering and scope of atomicrmw/cmpxchg (it always emits a relaxed gpu-scope atom),
/// so the instruction is written out. Ops PTX lacks (float min/max, 8- and 16-bit integer ops,
/// bf16 add before sm_90) run as a compare-and-swap loop with the same semantics and scope; 8-bit
/// elements swap their aligned 32-bit word. A masked-off lane touches no memory and yields 0.
#include "core/ir/ops.h"
#include "core/support/error.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {
namespace {

using ir::AtomicOp;
using ir::DType;

/// The PTX type of a native `atom.<op>` on `t`, or "" when it needs a CAS loop.
std::string native_type(AtomicOp op, DType t, int sm) {
  int bits = ir::dtype_bits(t);
  bool flt = ir::is_float(t), sgn = ir::is_signed_int(t);
  switch (op) {
    case AtomicOp::Add:
      if (t == DType::f16) return "noftz.f16";
      if (t == DType::bf16) return sm >= 90 ? "noftz.bf16" : "";
      if (flt) return bits == 32 ? "f32" : "f64";
      return bits == 32 ? "u32" : bits == 64 ? "u64" : "";
    case AtomicOp::Max:
    case AtomicOp::Min:
      if (flt || bits < 32) return "";
      return std::string(sgn ? "s" : "u") + std::to_string(bits);
    case AtomicOp::And:
    case AtomicOp::Or:
    case AtomicOp::Xor:
    case AtomicOp::Xchg:
      return bits == 32 ? "b32" : bits == 64 ? "b64" : "";
  }
  return "";
}

const char* constraint(unsigned bits) {
  return bits == 16 ? "h" : bits == 32 ? "r" : "l";
}

std::string qualifiers(ir::MemSem sem, ir::MemScope scope) {
  return "." + std::string(ir::to_string(sem)) + "." + std::string(ir::to_string(scope));
}

class AtomicEmitter {
 public:
  AtomicEmitter(Emitter& e, DType t, ir::MemSem sem, ir::MemScope scope)
      : e_(e), b_(e.b), t_(t), q_(qualifiers(sem, scope)) {
    bits_ = static_cast<unsigned>(ir::dtype_bits(t) == 1 ? 8 : ir::dtype_bits(t));
    ity_ = b_.getIntNTy(bits_);
  }

  /// `atom<q>.global.<name>.<type> d, [p], args...` on integer bits.
  llvm::Value* atom(const std::string& name, unsigned bits, llvm::Value* p,
                    std::vector<llvm::Value*> args) {
    std::string text = "atom" + q_ + ".global." + name + " $0, [$1]";
    std::string cons = std::string("=") + constraint(bits) + ",l";
    std::vector<llvm::Type*> types{p->getType()};
    for (size_t i = 0; i < args.size(); ++i) {
      text += ", $" + std::to_string(i + 2);
      cons += std::string(",") + constraint(bits);
      types.push_back(args[i]->getType());
    }
    cons += ",~{memory}";
    auto* fty = llvm::FunctionType::get(b_.getIntNTy(bits), types, false);
    args.insert(args.begin(), p);
    return b_.CreateCall(llvm::InlineAsm::get(fty, text + ";", cons, true), args);
  }

  llvm::Value* to_bits(llvm::Value* v) {
    if (t_ == DType::i1) return b_.CreateZExt(v, ity_);
    return b_.CreateBitCast(v, ity_);
  }
  llvm::Value* from_bits(llvm::Value* v) {
    if (t_ == DType::i1) return b_.CreateTrunc(v, b_.getInt1Ty());
    return b_.CreateBitCast(v, e_.scalar_type(t_));
  }

  /// old = *p; *p = combine(old) atomically, by compare-and-swap; returns old (register type).
  template <class Combine>
  llvm::Value* cas_loop(llvm::Value* p, Combine combine) {
    if (bits_ == 8) return word_cas_loop(p, combine);
    llvm::Value* first = b_.CreateLoad(ity_, p, /*isVolatile=*/true);
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* loop = e_.block("atomic.retry");
    llvm::BasicBlock* done = e_.block("atomic.done");
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* old = b_.CreatePHI(ity_, 2);
    old->addIncoming(first, pre);
    llvm::Value* next = to_bits(combine(from_bits(old)));
    llvm::Value* seen = atom("cas.b" + std::to_string(bits_), bits_, p, {old, next});
    old->addIncoming(seen, loop);
    b_.CreateCondBr(b_.CreateICmpEQ(seen, old), done, loop);
    b_.SetInsertPoint(done);
    return from_bits(old);
  }

  /// The 8-bit case: swap the aligned 32-bit word that holds the byte.
  template <class Combine>
  llvm::Value* word_cas_loop(llvm::Value* p, Combine combine) {
    llvm::Value* addr = b_.CreatePtrToInt(p, b_.getInt64Ty());
    llvm::Value* word_ptr =
        b_.CreateIntToPtr(b_.CreateAnd(addr, b_.getInt64(~uint64_t{3})), p->getType());
    llvm::Value* shift =
        b_.CreateTrunc(b_.CreateShl(b_.CreateAnd(addr, b_.getInt64(3)), 3), b_.getInt32Ty());
    llvm::Value* mask = b_.CreateShl(b_.getInt32(0xff), shift);
    llvm::Value* first = b_.CreateLoad(b_.getInt32Ty(), word_ptr, /*isVolatile=*/true);
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* loop = e_.block("atomic.retry");
    llvm::BasicBlock* done = e_.block("atomic.done");
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* old = b_.CreatePHI(b_.getInt32Ty(), 2);
    old->addIncoming(first, pre);
    llvm::Value* elem = b_.CreateTrunc(b_.CreateLShr(old, shift), ity_);
    llvm::Value* next_elem = b_.CreateZExt(to_bits(combine(from_bits(elem))), b_.getInt32Ty());
    llvm::Value* next =
        b_.CreateOr(b_.CreateAnd(old, b_.CreateNot(mask)), b_.CreateShl(next_elem, shift));
    llvm::Value* seen = atom("cas.b32", 32, word_ptr, {old, next});
    old->addIncoming(seen, loop);
    b_.CreateCondBr(b_.CreateICmpEQ(seen, old), done, loop);
    b_.SetInsertPoint(done);
    return from_bits(elem);
  }

  /// The value `op` stores given the old one (register types).
  llvm::Value* combine(AtomicOp op, llvm::Value* old, llvm::Value* val) {
    bool flt = ir::is_float(t_), sgn = ir::is_signed_int(t_);
    switch (op) {
      case AtomicOp::Add:
        return flt ? b_.CreateFAdd(old, val) : b_.CreateAdd(old, val);
      case AtomicOp::And:
        return b_.CreateAnd(old, val);
      case AtomicOp::Or:
        return b_.CreateOr(old, val);
      case AtomicOp::Xor:
        return b_.CreateXor(old, val);
      case AtomicOp::Xchg:
        return val;
      case AtomicOp::Max:
      case AtomicOp::Min: {
        bool max = op == AtomicOp::Max;
        if (!flt) {
          auto id = max ? (sgn ? llvm::Intrinsic::smax : llvm::Intrinsic::umax)
                        : (sgn ? llvm::Intrinsic::smin : llvm::Intrinsic::umin);
          return e_.intrinsic(id, {old->getType()}, {old, val});
        }
        // NaN loses (maxnum); equal values -> max takes the bits' AND (+0 over -0), min the OR.
        llvm::Value* m = e_.intrinsic(max ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum,
                                      {old->getType()}, {old, val});
        llvm::Value* ob = b_.CreateBitCast(old, ity_);
        llvm::Value* vb = b_.CreateBitCast(val, ity_);
        llvm::Value* z =
            b_.CreateBitCast(max ? b_.CreateAnd(ob, vb) : b_.CreateOr(ob, vb), old->getType());
        return b_.CreateSelect(b_.CreateFCmpOEQ(old, val), z, m);
      }
    }
    TESSERA_CHECK(false, "bad atomic op");
  }

  llvm::Value* rmw(AtomicOp op, llvm::Value* p, llvm::Value* val) {
    std::string type = native_type(op, t_, e_.target.sm);
    if (type.empty()) return cas_loop(p, [&](llvm::Value* old) { return combine(op, old, val); });
    std::string name = std::string(op == AtomicOp::Xchg ? "exch" : ir::to_string(op)) + "." + type;
    return from_bits(atom(name, bits_, p, {to_bits(val)}));
  }

  llvm::Value* cas(llvm::Value* p, llvm::Value* cmp, llvm::Value* val) {
    if (bits_ == 8) {  // compare the byte; rewrite its word
      llvm::Value* cb = to_bits(cmp);
      return word_cas_loop(p, [&](llvm::Value* old) {
        return b_.CreateSelect(b_.CreateICmpEQ(to_bits(old), cb), val, old);
      });
    }
    return from_bits(atom("cas.b" + std::to_string(bits_), bits_, p, {to_bits(cmp), to_bits(val)}));
  }

 private:
  Emitter& e_;
  llvm::IRBuilder<>& b_;
  DType t_;
  std::string q_;
  unsigned bits_;
  llvm::Type* ity_;
};

/// Runs `body` only where `mask` holds (no mask: always); masked-off lanes yield 0.
template <class Body>
llvm::Value* masked(Emitter& e, llvm::Value* mask, llvm::Type* t, Body body) {
  if (!mask) return body();
  llvm::BasicBlock* from = e.b.GetInsertBlock();
  llvm::BasicBlock* on = e.block("atomic");
  llvm::BasicBlock* merge = e.block("atomic.end");
  e.b.CreateCondBr(mask, on, merge);
  e.b.SetInsertPoint(on);
  llvm::Value* v = body();
  llvm::BasicBlock* on_end = e.b.GetInsertBlock();
  e.b.CreateBr(merge);
  e.b.SetInsertPoint(merge);
  llvm::PHINode* phi = e.b.CreatePHI(t, 2);
  phi->addIncoming(v, on_end);
  phi->addIncoming(llvm::Constant::getNullValue(t), from);
  return phi;
}

}  // namespace

void emit_atomic(Emitter& e, const ir::Op& op) {
  DType t = op.operand(0)->type.dtype;
  llvm::Type* rt = e.scalar_type(t);
  llvm::Value* p = e.get(op.operand(0));
  if (op.kind == ir::OpKind::AtomicRmw) {
    ir::AtomicRmwOp a(&op);
    AtomicEmitter ae(e, t, a.sem(), a.scope());
    llvm::Value* val = e.get(a.val());
    llvm::Value* mask = a.mask() ? e.get(a.mask()) : nullptr;
    return e.set(op.result(), masked(e, mask, rt, [&] { return ae.rmw(a.atomic_op(), p, val); }));
  }
  ir::AtomicCasOp a(&op);
  AtomicEmitter ae(e, t, a.sem(), a.scope());
  e.set(op.result(), ae.cas(p, e.get(a.cmp()), e.get(a.val())));
}

}  // namespace tessera::ptx
