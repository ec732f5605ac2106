/// \file Device print (vprintf, the CUDA device printf ABI: a format string and a buffer of the
/// arguments, each aligned to its size, integers below 32 bits widened and floats as doubles),
/// device assert (the fault record of ptx.h, then `trap`), assume and the value hints.
#include <cstddef>
#include <iterator>
#include <span>

#include "core/ir/ops.h"
#include "core/ir/simt.h"
#include "core/support/error.h"
#include "targets/ptx/emitter.h"
#include "targets/ptx/ptx.h"

namespace tessera::ptx {
namespace {

using ir::DType;

std::string escape_percent(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

/// The printf conversion and the (widened) value printed for one element; floats print with
/// enough digits to read back exactly (the interpreter prints the shortest such text).
std::pair<std::string, llvm::Value*> format(Emitter& e, llvm::Value* v, const ir::Type& t,
                                            bool hex) {
  auto& b = e.b;
  if (t.is_ptr) return {"0x%016llx", b.CreatePtrToInt(v, b.getInt64Ty())};
  int bits = ir::dtype_bits(t.dtype);
  if (hex) {
    llvm::Value* raw = t.dtype == DType::i1 ? b.CreateZExt(v, b.getInt8Ty())
                                            : b.CreateBitCast(v, b.getIntNTy(bits));
    if (bits == 64) return {"0x%016llx", raw};
    int digits = std::max(bits, 8) / 4;
    return {"0x%0" + std::to_string(digits) + "x", b.CreateZExt(raw, b.getInt32Ty())};
  }
  switch (t.dtype) {
    case DType::f16:
      return {"%.5g", b.CreateFPExt(v, b.getDoubleTy())};
    case DType::bf16:
      return {"%.4g", b.CreateFPExt(v, b.getDoubleTy())};
    case DType::f32:
      return {"%.9g", b.CreateFPExt(v, b.getDoubleTy())};
    case DType::f64:
      return {"%.17g", v};
    case DType::i64:
      return {"%lld", v};
    case DType::u64:
      return {"%llu", v};
    default:
      break;
  }
  if (ir::is_signed_int(t.dtype)) return {"%d", b.CreateSExt(v, b.getInt32Ty())};
  return {"%u", b.CreateZExt(v, b.getInt32Ty())};
}

llvm::FunctionCallee vprintf(Emitter& e) {
  auto* fty = llvm::FunctionType::get(e.b.getInt32Ty(), {e.b.getPtrTy(), e.b.getPtrTy()}, false);
  return e.module.getOrInsertFunction("vprintf", fty);
}

/// `pid (x, y, z) idx (i, j) <prefix><value>`, as the tile interpreter prints it.
void print(Emitter& e, const ir::Op& op) {
  ir::SimtDebugOp d(&op);
  auto& b = e.b;
  std::string fmt = "pid (%u, %u, %u) ";
  std::vector<llvm::Value*> args;
  for (auto id :
       {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
        llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z})
    args.push_back(e.intrinsic(id, {}, {}));
  if (d.rank() > 0) {
    fmt += "idx (";
    for (int i = 0; i < d.rank(); ++i) {
      fmt += i ? ", %d" : "%d";
      args.push_back(e.get(d.indices()[i]));
    }
    fmt += ") ";
  }
  fmt += escape_percent(op.str_attr_or(attr::kPrefix, ""));
  auto [conv, value] =
      format(e, e.get(d.value()), d.value()->type, op.int_attr_or(attr::kHex, 0) != 0);
  fmt += conv + "\n";
  args.push_back(value);
  std::vector<llvm::Type*> fields;
  for (llvm::Value* a : args) fields.push_back(a->getType());
  auto* st =
      llvm::StructType::get(e.ctx, fields);  // natural alignment: each field aligned to its size
  llvm::IRBuilder<> entry(&e.kernel->getEntryBlock(), e.kernel->getEntryBlock().begin());
  llvm::Value* buffer = entry.CreateAlloca(st);
  for (size_t i = 0; i < args.size(); ++i)
    b.CreateStore(args[i], b.CreateStructGEP(st, buffer, static_cast<unsigned>(i)));
  b.CreateCall(vprintf(e), {e.string_constant(fmt, "tessera_fmt"), buffer});
}

/// The module's pointer to the fault record (set by the runtime after loading the module).
llvm::GlobalVariable* fault_record(Emitter& e) {
  if (auto* gv = e.module.getGlobalVariable(kFaultRecordSymbol)) return gv;
  auto* gv = new llvm::GlobalVariable(
      e.module, e.b.getInt64Ty(), false, llvm::GlobalValue::ExternalLinkage, e.b.getInt64(0),
      kFaultRecordSymbol, nullptr, llvm::GlobalValue::NotThreadLocal, kGlobal);
  gv->setAlignment(llvm::Align(8));
  return gv;
}

/// if (!cond) { claim the record; fill it; make it visible to the host; trap }
void device_assert(Emitter& e, const ir::Op& op) {
  ir::SimtDebugOp d(&op);
  auto& b = e.b;
  llvm::BasicBlock* fail_bb = e.block("assert.fail");
  llvm::BasicBlock* ok_bb = e.block("assert.ok");
  b.CreateCondBr(e.get(d.value()), ok_bb, fail_bb,
                 llvm::MDBuilder(e.ctx).createBranchWeights(1 << 20, 1));
  b.SetInsertPoint(fail_bb);
  llvm::Type* ptr_t = b.getPtrTy(kGlobal);
  llvm::Value* record =
      b.CreateIntToPtr(b.CreateLoad(b.getInt64Ty(), fault_record(e), true), ptr_t);
  llvm::BasicBlock* write_bb = e.block("assert.record");
  llvm::BasicBlock* trap_bb = e.block("assert.trap");
  llvm::Value* have = b.CreateICmpNE(b.CreatePtrToInt(record, b.getInt64Ty()), b.getInt64(0));
  llvm::Value* claimed =
      b.CreateAtomicCmpXchg(record, b.getInt32(0), b.getInt32(1), llvm::MaybeAlign(4),
                            llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  llvm::Value* first =
      b.CreateAnd(have, b.CreateICmpEQ(b.CreateExtractValue(claimed, 0), b.getInt32(0)));
  b.CreateCondBr(first, write_bb, trap_bb);

  b.SetInsertPoint(write_bb);
  auto field = [&](size_t offset) {
    return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), record, offset);
  };
  auto store = [&](llvm::Value* v, size_t offset) { b.CreateStore(v, field(offset), true); };
  llvm::Intrinsic::ID ctaid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                 llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  for (size_t i = 0; i < 3; ++i)
    store(e.intrinsic(ctaid[i], {}, {}), offsetof(FaultRecord, program) + 4 * i);
  store(e.intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}),
        offsetof(FaultRecord, thread));
  int rank = std::min(d.rank(), 4);
  store(b.getInt32(static_cast<uint32_t>(rank)), offsetof(FaultRecord, rank));
  for (int i = 0; i < rank; ++i)
    store(e.get(d.indices()[i]), offsetof(FaultRecord, index) + 4 * static_cast<size_t>(i));
  std::span<ir::Value* const> values = d.values();
  store(b.getInt32(static_cast<uint32_t>(values.size())), offsetof(FaultRecord, num_values));
  for (size_t i = 0; i < values.size() && i < std::size(FaultRecord{}.values); ++i) {
    llvm::Value* v = e.get(values[i]);
    v = ir::is_signed_int(values[i]->type.dtype) ? b.CreateSExtOrTrunc(v, b.getInt64Ty())
                                                 : b.CreateZExtOrTrunc(v, b.getInt64Ty());
    store(v, offsetof(FaultRecord, values) + 8 * i);
  }
  std::string text = ir::assert_heading(op) + " in kernel " + e.fn.name + " at " + op.loc.str() +
                     ": " + op.str_attr_or(attr::kMessage, "");
  text = text.substr(0, sizeof(FaultRecord::message) - 1);
  llvm::Value* message = e.string_constant(text, "tessera_assert");
  b.CreateMemCpy(field(offsetof(FaultRecord, message)), llvm::Align(1), message, llvm::Align(1),
                 text.size() + 1,
                 /*isVolatile=*/true);
  e.intrinsic(llvm::Intrinsic::nvvm_membar_sys, {}, {});
  b.CreateBr(trap_bb);

  b.SetInsertPoint(trap_bb);
  e.intrinsic(llvm::Intrinsic::trap, {}, {});
  b.CreateUnreachable();
  b.SetInsertPoint(ok_bb);
}

}  // namespace

void emit_debug(Emitter& e, const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::Print:
      return print(e, op);
    case ir::OpKind::Assert:
      return device_assert(e, op);
    case ir::OpKind::Assume:
      e.intrinsic(llvm::Intrinsic::assume, {}, {e.get(op.operand(0))});
      return;
    case ir::OpKind::MultipleOf:
    case ir::OpKind::MaxContiguous:
      return e.set(op.result(), e.get(op.operand(0)));
    default:
      TESSERA_CHECK(false, "not a debug op: ", op.name());
  }
}

}  // namespace tessera::ptx
