/// \file The emitter's frame: the kernel's signature and annotations, the shared-memory arena,
/// region walking, and the table that routes each op kind to its family.
#include "targets/ptx/emitter.h"

#include <algorithm>

#include "core/ir/abi.h"
#include "core/ir/op_table.h"
#include "core/ir/simt.h"
#include "core/support/error.h"
#include "targets/ptx/ptx.h"

namespace tessera::ptx {
namespace {

using ir::OpKind;
using Handler = void (*)(Emitter&, const ir::Op&);

/// Cooperative matrices are SPIR-V's.
[[noreturn]] void emit_coopmat_unsupported(Emitter& e, const ir::Op& op) {
  e.unsupported(op,
                "cooperative matrices are SPIR-V's (SPV_KHR_cooperative_matrix); CUDA "
                "targets plan mma.sync or wgmma");
}

/// Tile-IR ops are lowered to SIMT IR before emission (the verifier rejects them in SIMT IR).
[[noreturn]] void emit_tile_unsupported(Emitter& e, const ir::Op& op) {
  e.unsupported(op, "a tile-IR op in a SIMT function (lower it first)");
}

/// Which family emits each op kind: the one place that decides what PTX supports. Traits pick
/// whole families (every `kMath` row, unary or binary, is emit_math's), the lists name the rest,
/// and the static_assert fails the build while a kind of ops.def has no entry.
constexpr ir::OpTable<Handler> kHandlers = [] {
  using K = OpKind;
  ir::OpTable<Handler> t;
  t.add_trait(emit_math, ir::kMath);
  // clang-format off
  t.add(emit_constant, {K::Constant});
  t.add(emit_arith, {K::Add, K::Sub, K::Mul, K::Div, K::Rem, K::Min, K::Max, K::And, K::Or, K::Xor,
                     K::Shl, K::Shr, K::Neg, K::Not, K::Abs, K::Fma, K::Where});
  t.add(emit_compare, {K::CmpEq, K::CmpNe, K::CmpLt, K::CmpLe, K::CmpGt, K::CmpGe});
  t.add(emit_cast, {K::Cast, K::Bitcast, K::PtrAdd});
  t.add(emit_memory, {K::GlobalLoad, K::GlobalStore, K::SharedLoad, K::SharedStore});
  t.add(emit_atomic, {K::AtomicRmw, K::AtomicCas});
  t.add(emit_simt, {K::ProgramId, K::NumPrograms, K::LaneId, K::SubgroupId, K::Shuffle,
                    K::Barrier});
  t.add(emit_control, {K::For, K::If, K::While, K::WarpSpecialize});
  t.add(emit_matrix, {K::Mma, K::LdMatrix, K::CpAsync, K::CpAsyncCommit, K::CpAsyncWait, K::Wgmma,
                      K::WgmmaFence, K::WgmmaCommit, K::WgmmaWait, K::FenceAsyncShared,
                      K::SetMaxNReg});
  t.add(emit_tma, {K::MbarrierInit, K::MbarrierArriveTx, K::MbarrierWait, K::MbarrierInval,
                  K::TmaLoad, K::TmaStore, K::TmaStoreCommit, K::TmaStoreWait,
                  K::ClusterRank, K::ClusterBarrier});
  t.add(emit_debug, {K::Print, K::Assert, K::Assume, K::MultipleOf, K::MaxContiguous});
  t.add(emit_inline_asm, {K::InlineAsm, K::InlineAsmImpure});
  t.add(emit_coopmat_unsupported, {K::CoopMatFill, K::CoopMatLoad, K::CoopMatStore,
                                   K::CoopMatMulAdd, K::CoopMatLoadTensor});
  t.add(emit_tile_unsupported, {K::Arange, K::Splat, K::Broadcast, K::ExpandDims, K::Reshape,
                                K::Permute, K::Cat, K::Load, K::Store, K::DescLoad, K::DescStore,
                                K::Reduce, K::ReduceGeneric, K::Scan, K::ScanGeneric, K::Dot,
                                K::DebugBarrier, K::Yield, K::Condition});
  // clang-format on
  return t;
}();
static_assert(ir::complete(kHandlers), "an op kind of ops.def has no PTX entry");

}  // namespace

Emitter::Emitter(llvm::Module& m, const ir::Function& f, const target::Target& t)
    : ctx(m.getContext()), module(m), b(m.getContext()), fn(f), target(t) {}

llvm::Type* Emitter::scalar_type(ir::DType t) {
  switch (t) {
    case ir::DType::i1:
      return b.getInt1Ty();
    case ir::DType::i8:
    case ir::DType::u8:
      return b.getInt8Ty();
    case ir::DType::i16:
    case ir::DType::u16:
      return b.getInt16Ty();
    case ir::DType::i32:
    case ir::DType::u32:
      return b.getInt32Ty();
    case ir::DType::i64:
    case ir::DType::u64:
      return b.getInt64Ty();
    case ir::DType::f16:
      return b.getHalfTy();
    case ir::DType::bf16:
      return b.getBFloatTy();
    case ir::DType::f32:
      return b.getFloatTy();
    case ir::DType::f64:
      return b.getDoubleTy();
    case ir::DType::f8e4m3:  // LLVM has no fp8 type: the byte, converted by inline PTX
    case ir::DType::f8e5m2:
      return b.getInt8Ty();
  }
  TESSERA_CHECK(false, "bad dtype");
}

llvm::Type* Emitter::type(const ir::Type& t) {
  TESSERA_CHECK(!t.is_tile(), "SIMT value of tile type ", t.str(), " in kernel '", fn.name, "'");
  if (t.is_ptr) return b.getPtrTy(kGlobal);
  return scalar_type(t.dtype);
}

llvm::Type* Emitter::memory_type(ir::DType t) {
  return t == ir::DType::i1 ? b.getInt8Ty() : scalar_type(t);
}

llvm::Value* Emitter::to_memory(llvm::Value* v, ir::DType t) {
  return t == ir::DType::i1 ? b.CreateZExt(v, b.getInt8Ty()) : v;
}

llvm::Value* Emitter::from_memory(llvm::Value* v, ir::DType t) {
  return t == ir::DType::i1 ? b.CreateICmpNE(v, b.getInt8(0)) : v;
}

llvm::Value* Emitter::get(const ir::Value* v) const {
  auto it = values_.find(v);
  TESSERA_CHECK(it != values_.end(), "kernel '", fn.name, "': value used before its definition");
  return it->second;
}

void Emitter::set(const ir::Value* v, llvm::Value* x) {
  values_[v] = x;
}

void Emitter::set_results(const ir::Op& op, const std::vector<llvm::Value*>& values) {
  TESSERA_CHECK(values.size() == op.results.size(), "'", op.name(), "' yields ", values.size(),
                " values for ", op.results.size(), " results");
  for (size_t i = 0; i < values.size(); ++i) set(op.results[i], values[i]);
}

llvm::BasicBlock* Emitter::block(const char* name) {
  return llvm::BasicBlock::Create(ctx, name, kernel);
}

llvm::Value* Emitter::intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> types,
                                llvm::ArrayRef<llvm::Value*> args) {
  return b.CreateIntrinsic(id, types, args);
}

llvm::Value* Emitter::shared_buffer(int64_t index) {
  TESSERA_CHECK(index >= 0 && index < static_cast<int64_t>(shared_offsets_.size()), "kernel '",
                fn.name, "' has no shared buffer ", index);
  return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), shared_arena_,
                                      static_cast<uint64_t>(shared_offsets_[index]));
}

llvm::Value* Emitter::shared_element(int64_t buffer, llvm::Value* index) {
  return b.CreateInBoundsGEP(memory_type(shared_dtype(buffer)), shared_buffer(buffer), index);
}

ir::DType Emitter::shared_dtype(int64_t index) const {
  TESSERA_CHECK(index >= 0 && index < static_cast<int64_t>(shared_.size()), "kernel '", fn.name,
                "' has no shared buffer ", index);
  return shared_[static_cast<size_t>(index)].dtype;
}

llvm::Value* Emitter::string_constant(const std::string& text, const char* name) {
  llvm::Constant* data = llvm::ConstantDataArray::getString(ctx, text, /*AddNull=*/true);
  auto* gv = new llvm::GlobalVariable(module, data->getType(), /*isConstant=*/true,
                                      llvm::GlobalValue::PrivateLinkage, data, name, nullptr,
                                      llvm::GlobalValue::NotThreadLocal, kGlobal);
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return b.CreateAddrSpaceCast(gv, b.getPtrTy(kGeneric));
}

void Emitter::unsupported(const ir::Op& op, const std::string& what) const {
  fail(ErrorKind::Unsupported, op.loc.str(), ": kernel '", fn.name, "': '", op.name(),
       "' is not supported on ", target.name, ": ", what);
}

void Emitter::emit_signature() {
  std::vector<llvm::Type*> params;
  for (const ir::Param& p : fn.params) {
    const ir::Type& t = p.value->type;
    params.push_back(t.is_ptr ? type(t) : memory_type(t.dtype));  // i1 travels as a byte
  }
  // Each TMA tensor map: a 128-byte, 64-aligned parameter after the user's, which the copies
  // read through the param window (emit_tma.cpp); LLVM declares it `.param .align 64 .b8 [128]`.
  const size_t maps = ir::tensor_maps(fn).size();
  auto* map_type = llvm::ArrayType::get(b.getInt8Ty(), ir::kTensorMapBytes);
  for (size_t i = 0; i < maps; ++i) params.push_back(b.getPtrTy());
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  kernel = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, kernel_symbol(fn.name),
                                  module);
  for (size_t i = 0; i < maps; ++i) {
    const unsigned arg = static_cast<unsigned>(fn.params.size() + i);
    kernel->addParamAttr(arg, llvm::Attribute::getWithByValType(ctx, map_type));
    kernel->addParamAttr(arg,
                         llvm::Attribute::getWithAlignment(ctx, llvm::Align(ir::kTensorMapAlign)));
    kernel->getArg(arg)->setName("tensor_map_" + std::to_string(i));
  }
  kernel->setCallingConv(llvm::CallingConv::PTX_Kernel);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  // Kernel marker and the block size: ptxas may assume at most `threads` threads.
  llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char* key, int value) {
    llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(kernel), llvm::MDString::get(ctx, key),
                             llvm::ConstantAsMetadata::get(b.getInt32(value))};
    annotations->addOperand(llvm::MDNode::get(ctx, ops));
  };
  annotate("kernel", 1);
  annotate("maxntidx", ir::simt_threads(fn));
  annotate("maxntidy", 1);
  annotate("maxntidz", 1);
  if (const int maxnreg = ir::simt_maxnreg(fn)) annotate("maxnreg", maxnreg);
}

void Emitter::emit_kernel() {
  emit_signature();
  // One dynamic shared arena, laid out as ir::shared_offsets says.
  shared_ = ir::shared_buffers(fn);
  shared_offsets_ = ir::shared_offsets(fn);
  if (!shared_.empty()) {
    shared_arena_ = new llvm::GlobalVariable(
        module, llvm::ArrayType::get(b.getInt8Ty(), 0), false, llvm::GlobalValue::ExternalLinkage,
        nullptr, "tessera_shared", nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
    const bool wide = std::any_of(shared_.begin(), shared_.end(),
                                  [](const ir::SharedBuffer& s) { return s.bytes() % 1024 == 0; });
    shared_arena_->setAlignment(llvm::Align(wide ? 1024 : 16));
  }

  b.SetInsertPoint(block("entry"));
  for (size_t i = 0; i < fn.params.size(); ++i) {
    llvm::Argument* arg = kernel->getArg(static_cast<unsigned>(i));
    arg->setName(fn.params[i].name);
    const ir::Type& t = fn.params[i].value->type;
    set(fn.params[i].value, t.is_ptr ? arg : from_memory(arg, t.dtype));
  }
  if (target.has(target::Cap::DependentLaunch)) {
    // Before anything else: wait until the grid before this one in the stream has finished and
    // its writes are visible (a no-op unless launched with programmatic stream serialization),
    // then let the grid after this one be scheduled; it waits here in turn.
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), false);
    b.CreateCall(llvm::InlineAsm::get(fty,
                                      "griddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;",
                                      "~{memory}", /*hasSideEffects=*/true))
        ->addFnAttr(llvm::Attribute::NoUnwind);
  }
  emit_region(fn.body);
  b.CreateRetVoid();
}

std::vector<llvm::Value*> Emitter::emit_region(const ir::Region* region) {
  for (const ir::Op* op : region->ops) {
    if (op->has(ir::kTerminator)) {
      std::vector<llvm::Value*> out;
      for (const ir::Value* v : op->operands) out.push_back(get(v));
      return out;
    }
    emit_op(*op);
  }
  return {};
}

void Emitter::emit_op(const ir::Op& op) {
  kHandlers[op.kind](*this, op);
}

}  // namespace tessera::ptx
