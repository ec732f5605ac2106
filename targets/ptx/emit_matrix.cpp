/// \file Tensor-core ops as inline PTX: `mma` -> mma.sync.aligned.<shape>.row.col (A and B values
/// packed into the b32 registers PTX's fragments name, f32 inputs converted with
/// cvt.rna.tf32.f32 first), `ldmatrix` -> ldmatrix.sync.aligned.m8n8.x<count>[.trans].shared.b16,
/// and cp_async -> cp.async.cg.shared.global with a zero-filling source size, commit_group and
/// wait_group. mma is marked as touching no memory (so LLVM may CSE or schedule it), ldmatrix and
/// the cp.async family as side effects on memory; the warp-collective ones are convergent.
#include <string>

#include "core/ir/simt.h"
#include "core/support/error.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {
namespace {

struct Asm {
  std::string text;
  std::string constraints;
  bool side_effects = false;
  bool convergent = false;
  bool reads_nothing = false;  ///< no memory access at all
};

/// Emits `a` with `args`, returning its result (a struct for several outputs, or void).
llvm::Value* call_asm(Emitter& e, llvm::Type* ret, const Asm& a, llvm::ArrayRef<llvm::Value*> args) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* v : args) types.push_back(v->getType());
  auto* fty = llvm::FunctionType::get(ret, types, false);
  llvm::CallInst* call =
      e.b.CreateCall(llvm::InlineAsm::get(fty, a.text, a.constraints, a.side_effects), args);
  call->addFnAttr(llvm::Attribute::NoUnwind);
  if (a.convergent) call->addFnAttr(llvm::Attribute::Convergent);
  if (a.reads_nothing) call->setDoesNotAccessMemory();
  return call;
}

/// "{$first, ..., $first+n-1}".
std::string reg_list(int first, int n) {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}

std::string repeat(const char* c, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += std::string(i ? "," : "") + c;
  return s;
}

/// The values' bits in b32 registers: `per` consecutive values per register, the first lowest.
std::vector<llvm::Value*> pack_b32(Emitter& e, const std::vector<llvm::Value*>& v, int per) {
  std::vector<llvm::Value*> out;
  for (size_t i = 0; i < v.size(); i += static_cast<size_t>(per)) {
    if (per == 1) {
      out.push_back(e.b.CreateBitCast(v[i], e.b.getInt32Ty()));
      continue;
    }
    llvm::Type* vt = llvm::FixedVectorType::get(v[i]->getType(), static_cast<unsigned>(per));
    llvm::Value* x = llvm::PoisonValue::get(vt);
    for (int j = 0; j < per; ++j) x = e.b.CreateInsertElement(x, v[i + static_cast<size_t>(j)], uint64_t(j));
    out.push_back(e.b.CreateBitCast(x, e.b.getInt32Ty()));
  }
  return out;
}

/// cvt.rna.tf32.f32: the TF32 value's bits in a b32 register.
llvm::Value* to_tf32(Emitter& e, llvm::Value* f) {
  Asm a{"cvt.rna.tf32.f32 $0, $1;", "=r,f"};
  a.reads_nothing = true;
  return call_asm(e, e.b.getInt32Ty(), a, {f});
}

void mma(Emitter& e, const ir::Op& op) {
  ir::MmaOp m(const_cast<ir::Op*>(&op));
  const ir::MmaShape& s = m.shape();
  std::vector<llvm::Value*> a, b, c;
  for (const ir::Value* v : m.a()) a.push_back(e.get(v));
  for (const ir::Value* v : m.b()) b.push_back(e.get(v));
  for (const ir::Value* v : m.c()) c.push_back(e.get(v));
  if (s.a == "tf32") {
    for (llvm::Value*& x : a) x = to_tf32(e, x);
    for (llvm::Value*& x : b) x = to_tf32(e, x);
  } else {
    a = pack_b32(e, a, s.per_reg());
    b = pack_b32(e, b, s.per_reg());
  }
  const bool is_int = s.acc == ir::DType::i32;
  const std::string types = is_int ? "s32.s8.s8.s32" : "f32." + std::string(s.a) + "." +
                                                          std::string(s.a) + ".f32";
  const int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
  Asm x;
  x.text = "mma.sync.aligned." + std::string(s.shape) + ".row.col." + types + " " + reg_list(0, 4) +
           ", " + reg_list(4, na) + ", " + reg_list(4 + na, nb) + ", " + reg_list(4 + na + nb, 4) +
           ";";
  const char* cc = is_int ? "r" : "f";
  x.constraints = repeat(is_int ? "=r" : "=f", 4) + "," + repeat("r", na + nb) + "," + repeat(cc, 4);
  x.convergent = true;
  x.reads_nothing = true;
  llvm::Type* elem = is_int ? e.b.getInt32Ty() : e.b.getFloatTy();
  llvm::Type* ret = llvm::StructType::get(e.ctx, {elem, elem, elem, elem});
  std::vector<llvm::Value*> args = a;
  args.insert(args.end(), b.begin(), b.end());
  args.insert(args.end(), c.begin(), c.end());
  llvm::Value* d = call_asm(e, ret, x, args);
  std::vector<llvm::Value*> out;
  for (unsigned i = 0; i < 4; ++i) out.push_back(e.b.CreateExtractValue(d, i));
  e.set_results(op, out);
}

/// The 64-bit shared-window address of element `index` of shared buffer `buffer`.
llvm::Value* shared_address(Emitter& e, int64_t buffer, llvm::Value* index) {
  llvm::Value* p = e.b.CreateInBoundsGEP(e.memory_type(e.shared_dtype(buffer)),
                                         e.shared_buffer(buffer),
                                         e.b.CreateSExt(index, e.b.getInt64Ty()));
  return e.b.CreatePtrToInt(p, e.b.getInt64Ty());
}

void ldmatrix(Emitter& e, const ir::Op& op) {
  ir::LdMatrixOp ld(const_cast<ir::Op*>(&op));
  const int count = ld.count();
  Asm a;
  a.text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (ld.trans() ? ".trans" : "") +
           ".shared.b16 " + reg_list(0, count) + ", [$" + std::to_string(count) + "];";
  a.constraints = repeat("=r", count) + ",l,~{memory}";
  a.side_effects = true;
  a.convergent = true;
  std::vector<llvm::Type*> regs(static_cast<size_t>(count), e.b.getInt32Ty());
  llvm::Type* ret = count == 1 ? regs[0] : llvm::StructType::get(e.ctx, regs);
  llvm::Value* r = call_asm(e, ret, a, {shared_address(e, ld.buffer(), e.get(ld.index()))});
  // Each b32 register holds 4 / E consecutive values of the buffer's dtype, the first lowest.
  ir::DType t = e.shared_dtype(ld.buffer());
  const int per = 4 / ir::dtype_bytes(t);
  llvm::Type* elem = e.memory_type(t);
  std::vector<llvm::Value*> out;
  for (int q = 0; q < count; ++q) {
    llvm::Value* reg = count == 1 ? r : e.b.CreateExtractValue(r, static_cast<unsigned>(q));
    if (per == 1) {
      out.push_back(e.b.CreateBitCast(reg, elem));
      continue;
    }
    llvm::Value* v = e.b.CreateBitCast(reg, llvm::FixedVectorType::get(elem, static_cast<unsigned>(per)));
    for (int j = 0; j < per; ++j) out.push_back(e.b.CreateExtractElement(v, uint64_t(j)));
  }
  e.set_results(op, out);
}

void cp_async(Emitter& e, const ir::Op& op) {
  ir::CpAsyncOp cp(const_cast<ir::Op*>(&op));
  Asm a{"cp.async.cg.shared.global [$0], [$1], 16, $2;", "l,l,r,~{memory}", true};
  llvm::Value* dst = shared_address(e, cp.buffer(), e.get(cp.index()));
  llvm::Value* src = e.b.CreatePtrToInt(e.get(cp.ptr()), e.b.getInt64Ty());
  // A false predicate copies 0 source bytes: the 16 destination bytes are zero-filled.
  llvm::Value* size = e.b.CreateSelect(e.get(cp.pred()), e.b.getInt32(16), e.b.getInt32(0));
  call_asm(e, e.b.getVoidTy(), a, {dst, src, size});
}

}  // namespace

void emit_matrix(Emitter& e, const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::Mma:
      return mma(e, op);
    case ir::OpKind::LdMatrix:
      return ldmatrix(e, op);
    case ir::OpKind::CpAsync:
      return cp_async(e, op);
    case ir::OpKind::CpAsyncCommit:
      call_asm(e, e.b.getVoidTy(), {"cp.async.commit_group;", "~{memory}", true}, {});
      return;
    case ir::OpKind::CpAsyncWait:
      call_asm(e, e.b.getVoidTy(),
               {"cp.async.wait_group " + std::to_string(op.int_attr("pending")) + ";",
                "~{memory}", true},
               {});
      return;
    default:
      TESSERA_CHECK(false, "not a matrix op: ", op.name());
  }
}

}  // namespace tessera::ptx
