/// \file Tensor-core ops as inline PTX: `mma` -> mma.sync.aligned.<shape>.row.col (A and B values
/// packed into the b32 registers PTX's fragments name, f32 inputs converted with
/// cvt.rna.tf32.f32 first), `ldmatrix` -> ldmatrix.sync.aligned.m8n8.x<count>[.trans].shared.b16,
/// and cp_async -> cp.async.cg.shared.global with a zero-filling ignore-src predicate, commit_group
/// and wait_group; `wgmma` -> wgmma.mma_async with 64-bit shared-memory matrix descriptors built
/// from the operand layouts, its fence, commit_group and wait_group (the accumulators tied through
/// the wait so that their readers follow it), and fence.proxy.async.shared::cta. mma is marked as
/// touching no memory (so LLVM may CSE or schedule it), the others as side effects on memory;
/// the warp- and warpgroup-collective ones are convergent.
#include <string>

#include "core/ir/simt.h"
#include "core/ir/wgmma.h"
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
llvm::Value* call_asm(Emitter& e, llvm::Type* ret, const Asm& a,
                      llvm::ArrayRef<llvm::Value*> args) {
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
    for (int j = 0; j < per; ++j)
      x = e.b.CreateInsertElement(x, v[i + static_cast<size_t>(j)], uint64_t(j));
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
  ir::MmaOp m(&op);
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
  const std::string types =
      is_int ? "s32.s8.s8.s32" : "f32." + std::string(s.a) + "." + std::string(s.a) + ".f32";
  const int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
  Asm x;
  x.text = "mma.sync.aligned." + std::string(s.shape) + ".row.col." + types + " " + reg_list(0, 4) +
           ", " + reg_list(4, na) + ", " + reg_list(4 + na, nb) + ", " + reg_list(4 + na + nb, 4) +
           ";";
  const char* cc = is_int ? "r" : "f";
  x.constraints =
      repeat(is_int ? "=r" : "=f", 4) + "," + repeat("r", na + nb) + "," + repeat(cc, 4);
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

/// The 32-bit shared-window address of element `index` of shared buffer `buffer`.
llvm::Value* shared_address(Emitter& e, int64_t buffer, llvm::Value* index) {
  return e.b.CreatePtrToInt(e.shared_element(buffer, index), e.b.getInt32Ty());
}

void ldmatrix(Emitter& e, const ir::Op& op) {
  ir::LdMatrixOp ld(&op);
  const int count = ld.count();
  Asm a;
  a.text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) + (ld.trans() ? ".trans" : "") +
           ".shared.b16 " + reg_list(0, count) + ", [$" + std::to_string(count) + "];";
  a.constraints = repeat("=r", count) + ",r,~{memory}";
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
    llvm::Value* v =
        e.b.CreateBitCast(reg, llvm::FixedVectorType::get(elem, static_cast<unsigned>(per)));
    for (int j = 0; j < per; ++j) out.push_back(e.b.CreateExtractElement(v, uint64_t(j)));
  }
  e.set_results(op, out);
}

void cp_async(Emitter& e, const ir::Op& op) {
  ir::CpAsyncOp cp(&op);
  // A false predicate sets ignore-src: the 16 destination bytes are zero-filled. (Passed as a
  // predicate, the masks stay predicate logic; a source size would go through select chains.)
  Asm a{"cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,b,~{memory}", true};
  llvm::Value* dst = shared_address(e, cp.buffer(), e.get(cp.index()));
  llvm::Value* src = e.b.CreatePtrToInt(e.get(cp.ptr()), e.b.getInt64Ty());
  call_asm(e, e.b.getVoidTy(), a, {dst, src, e.b.CreateNot(e.get(cp.pred()))});
}

// --- wgmma -------------------------------------------------------------------------------------

/// The matrix descriptor of an operand starting at element `index` of its buffer: the start
/// address (shared window, 16-byte units), the leading and stride byte offsets, the swizzle mode.
/// An index `x + c` (c constant) gives x's descriptor plus c's 16-byte units: the k steps of one
/// tile share one computed descriptor (the start field cannot carry out, as the shared window is
/// below 2^18 bytes).
llvm::Value* descriptor(Emitter& e, const ir::WgmmaSmem& s, const ir::Value* index) {
  const int64_t elem = ir::dtype_bytes(e.shared_dtype(s.buffer));
  const ir::Op* def = index->def;
  if (def && def->kind == ir::OpKind::Add && def->operand(1)->def &&
      def->operand(1)->def->kind == ir::OpKind::Constant) {
    const int64_t bytes = ir::ConstantOp(def->operand(1)->def).int_value() * elem;
    if (bytes >= 0 && bytes % 16 == 0)
      return e.b.CreateAdd(descriptor(e, s, def->operand(0)),
                           e.b.getInt64(static_cast<uint64_t>(bytes / 16)));
  }
  llvm::Value* addr = shared_address(e, s.buffer, e.get(index));
  const uint64_t mode = s.swizzle == 128 ? 1 : s.swizzle == 64 ? 2 : 3;
  const uint64_t fixed = (uint64_t(s.lbo >> 4) << 16) | (uint64_t(s.sbo >> 4) << 32) | (mode << 62);
  // The start address in 32-bit arithmetic (the high word is all constant).
  llvm::Value* start = e.b.CreateAnd(e.b.CreateLShr(addr, e.b.getInt32(4)), e.b.getInt32(0x3FFF));
  return e.b.CreateOr(e.b.CreateZExt(start, e.b.getInt64Ty()), e.b.getInt64(fixed));
}

void wgmma(Emitter& e, const ir::Op& op) {
  ir::WgmmaOp w(&op);
  const ir::WgmmaShape s = w.shape();
  const ir::WgmmaSmem sb = w.b_smem();
  const bool a_regs = w.a_in_registers();
  const int n = s.acc_count();
  const bool is_int = s.acc == ir::DType::i32;
  // Operands: the n accumulators (tied in and out), A's descriptor or its four registers (4 /
  // E values of E bytes packed in each .b32, the first in the low bits; tf32 values as their
  // f32 bits, which wgmma reads as tf32), B's descriptor, scale-d (1: D += A x B).
  const int per_word = 4 / ir::dtype_bytes(s.in);
  const int a_words = a_regs ? static_cast<int>(w.a_count()) / per_word : 1;
  std::string types, tail;
  if (is_int) {
    types = ".s32.s8.s8";
  } else {
    const std::string a(s.a);
    types = ".f32." + a + "." + a;
    tail = ", 1, 1";  // imm-scale-a, imm-scale-b
    // imm-trans-a (only with A in shared memory), imm-trans-b.
    if (s.allows_trans())
      tail +=
          (a_regs ? "" : ", " + std::to_string(w.a_smem().trans)) + ", " + std::to_string(sb.trans);
  }
  const int b_arg = n + a_words;
  Asm x;
  x.text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(b_arg + 1) + ", 0;\n" +
           "wgmma.mma_async.sync.aligned." + s.shape() + types + " " + reg_list(0, n) + ", " +
           (a_regs ? reg_list(n, a_words) : "$" + std::to_string(n)) + ", $" +
           std::to_string(b_arg) + ", p" + tail + ";\n}";
  std::string tied;
  for (int i = 0; i < n; ++i) tied += "," + std::to_string(i);
  x.constraints = repeat(is_int ? "=r" : "=f", n) + "," + (a_regs ? repeat("r", a_words) : "l") +
                  ",l,r" + tied + ",~{memory}";
  x.side_effects = true;
  x.convergent = true;
  std::vector<llvm::Value*> args;
  if (a_regs) {
    std::vector<llvm::Value*> values;
    for (const ir::Value* v : w.a_regs()) values.push_back(e.get(v));
    args = pack_b32(e, values, per_word);
  } else {
    args.push_back(descriptor(e, w.a_smem(), w.a_index()));
  }
  args.push_back(descriptor(e, sb, w.b_index()));
  args.push_back(e.b.getInt32(1));
  for (const ir::Value* c : w.c()) args.push_back(e.get(c));
  llvm::Type* elem = is_int ? e.b.getInt32Ty() : e.b.getFloatTy();
  llvm::Type* ret =
      llvm::StructType::get(e.ctx, std::vector<llvm::Type*>(static_cast<size_t>(n), elem));
  llvm::Value* d = call_asm(e, ret, x, args);
  std::vector<llvm::Value*> out;
  for (unsigned i = 0; i < static_cast<unsigned>(n); ++i)
    out.push_back(e.b.CreateExtractValue(d, i));
  e.set_results(op, out);
}

/// wgmma.wait_group with the accumulators passed through (tied), so that LLVM keeps their
/// readers after it.
void wgmma_wait(Emitter& e, const ir::Op& op) {
  const int n = static_cast<int>(op.operands.size());
  std::vector<llvm::Type*> types;
  std::vector<llvm::Value*> args;
  std::string constraints, tied;
  for (int i = 0; i < n; ++i) {
    llvm::Value* v = e.get(op.operand(static_cast<size_t>(i)));
    args.push_back(v);
    types.push_back(v->getType());
    constraints += std::string(i ? "," : "") + (v->getType()->isFloatTy() ? "=f" : "=r");
    tied += "," + std::to_string(i);
  }
  Asm x{"wgmma.wait_group.sync.aligned " + std::to_string(op.int_attr(attr::kPending)) + ";",
        constraints + tied + ",~{memory}", true, true};
  llvm::Type* ret = n == 1 ? types[0] : llvm::StructType::get(e.ctx, types);
  llvm::Value* r = call_asm(e, ret, x, args);
  std::vector<llvm::Value*> out;
  for (int i = 0; i < n; ++i)
    out.push_back(n == 1 ? r : e.b.CreateExtractValue(r, static_cast<unsigned>(i)));
  e.set_results(op, out);
}

void collective(Emitter& e, const std::string& text) {
  Asm x{text, "~{memory}", true, true};
  call_asm(e, e.b.getVoidTy(), x, {});
}

}  // namespace

void emit_matrix(Emitter& e, const ir::Op& op) {
  const bool warpgroup = op.kind == ir::OpKind::Wgmma || op.kind == ir::OpKind::WgmmaFence ||
                         op.kind == ir::OpKind::WgmmaCommit || op.kind == ir::OpKind::WgmmaWait ||
                         op.kind == ir::OpKind::SetMaxNReg;
  if (warpgroup && !e.target.has(target::Cap::Wgmma))
    fail(ErrorKind::Unsupported, "kernel '", e.fn.name, "': '", op.name(), "' at ", op.loc.str(),
         " needs the 'wgmma' capability (sm_90a), which target '", e.target.name, "' lacks");
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
               {"cp.async.wait_group " + std::to_string(op.int_attr(attr::kPending)) + ";",
                "~{memory}", true},
               {});
      return;
    case ir::OpKind::Wgmma:
      return wgmma(e, op);
    case ir::OpKind::WgmmaWait:
      return wgmma_wait(e, op);
    case ir::OpKind::WgmmaFence:
      return collective(e, "wgmma.fence.sync.aligned;");
    case ir::OpKind::WgmmaCommit:
      return collective(e, "wgmma.commit_group.sync.aligned;");
    case ir::OpKind::FenceAsyncShared:
      call_asm(e, e.b.getVoidTy(), {"fence.proxy.async.shared::cta;", "~{memory}", true}, {});
      return;
    case ir::OpKind::SetMaxNReg:
      return collective(
          e, std::string("setmaxnreg.") + (op.int_attr(attr::kIncrease) ? "inc" : "dec") +
                 ".sync.aligned.u32 " + std::to_string(op.int_attr(attr::kRegisters)) + ";");
    default:
      TESSERA_CHECK(false, "not a matrix op: ", op.name());
  }
}

}  // namespace tessera::ptx
