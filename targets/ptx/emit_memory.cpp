/// \file Global and shared memory: `width` consecutive elements move as one LLVM vector access
/// with the op's alignment, which NVPTX selects as ld/st.global.v2/v4 (128-bit when aligned);
/// a predicated access branches around the load or store (ptxas predicates short branches), and
/// a masked-off load yields its `other` values. i1 elements occupy a byte in memory. The optional
/// `cache` hint is accepted and not used yet (plain ld.global lets the hardware cache as it likes);
/// `volatile` loads stay volatile.
#include "core/ir/simt.h"
#include "core/support/error.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {
namespace {

llvm::Type* access_type(Emitter& e, ir::DType t, int width) {
  llvm::Type* mt = e.memory_type(t);
  return width == 1 ? mt : llvm::FixedVectorType::get(mt, static_cast<unsigned>(width));
}

/// The `width` register values of a loaded vector (or scalar).
std::vector<llvm::Value*> unpack(Emitter& e, llvm::Value* v, ir::DType t, int width) {
  std::vector<llvm::Value*> out;
  for (int i = 0; i < width; ++i) {
    llvm::Value* x = width == 1 ? v : e.b.CreateExtractElement(v, static_cast<uint64_t>(i));
    out.push_back(e.from_memory(x, t));
  }
  return out;
}

llvm::Value* pack(Emitter& e, const std::vector<llvm::Value*>& values, ir::DType t) {
  llvm::Type* vt = access_type(e, t, static_cast<int>(values.size()));
  if (values.size() == 1) return e.to_memory(values[0], t);
  llvm::Value* v = llvm::PoisonValue::get(vt);
  for (size_t i = 0; i < values.size(); ++i)
    v = e.b.CreateInsertElement(v, e.to_memory(values[i], t), static_cast<uint64_t>(i));
  return v;
}

bool always(llvm::Value* pred) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(pred);
  return c && c->isOne();
}

void global_load(Emitter& e, const ir::Op& op) {
  ir::GlobalLoadOp load(&op);
  ir::DType t = load.ptr()->type.dtype;
  int width = load.width();
  llvm::Value* ptr = e.get(load.ptr());
  llvm::Value* pred = e.get(load.pred());
  auto read = [&] {
    llvm::LoadInst* v = e.b.CreateAlignedLoad(access_type(e, t, width), ptr,
                                              llvm::Align(static_cast<uint64_t>(load.align())));
    v->setVolatile(op.int_attr_or("volatile", 0) != 0);
    return unpack(e, v, t, width);
  };
  if (always(pred)) return e.set_results(op, read());
  llvm::BasicBlock* from = e.b.GetInsertBlock();
  llvm::BasicBlock* on = e.block("load");
  llvm::BasicBlock* merge = e.block("loaded");
  e.b.CreateCondBr(pred, on, merge);
  e.b.SetInsertPoint(on);
  std::vector<llvm::Value*> got = read();
  llvm::BasicBlock* on_end = e.b.GetInsertBlock();
  e.b.CreateBr(merge);
  e.b.SetInsertPoint(merge);
  std::vector<llvm::Value*> out;
  for (int i = 0; i < width; ++i) {
    llvm::PHINode* phi = e.b.CreatePHI(got[i]->getType(), 2);
    phi->addIncoming(got[i], on_end);
    phi->addIncoming(e.get(load.others()[i]), from);
    out.push_back(phi);
  }
  e.set_results(op, out);
}

void global_store(Emitter& e, const ir::Op& op) {
  ir::GlobalStoreOp store(&op);
  ir::DType t = store.ptr()->type.dtype;
  std::vector<llvm::Value*> values;
  for (const ir::Value* v : store.values()) values.push_back(e.get(v));
  llvm::Value* ptr = e.get(store.ptr());
  llvm::Value* pred = e.get(store.pred());
  auto write = [&] {
    e.b.CreateAlignedStore(pack(e, values, t), ptr,
                           llvm::Align(static_cast<uint64_t>(store.align())));
  };
  if (always(pred)) return write();
  llvm::BasicBlock* on = e.block("store");
  llvm::BasicBlock* merge = e.block("stored");
  e.b.CreateCondBr(pred, on, merge);
  e.b.SetInsertPoint(on);
  write();
  e.b.CreateBr(merge);
  e.b.SetInsertPoint(merge);
}

/// Element `index` of shared buffer `buffer`, and the alignment of a `width`-element access there
/// (index is a multiple of width; buffers start 16-byte aligned).
std::pair<llvm::Value*, llvm::Align> shared_address(Emitter& e, int64_t buffer, llvm::Value* index,
                                                    int width) {
  ir::DType t = e.shared_dtype(buffer);
  llvm::Value* p = e.shared_element(buffer, index);
  uint64_t bytes = static_cast<uint64_t>(width) * static_cast<uint64_t>(ir::dtype_bytes(t));
  return {p, llvm::Align(std::min<uint64_t>(16, bytes))};
}

void shared_load(Emitter& e, const ir::Op& op) {
  ir::SharedLoadOp load(&op);
  ir::DType t = e.shared_dtype(load.buffer());
  auto [p, align] = shared_address(e, load.buffer(), e.get(load.index()), load.width());
  llvm::Value* v = e.b.CreateAlignedLoad(access_type(e, t, load.width()), p, align);
  e.set_results(op, unpack(e, v, t, load.width()));
}

void shared_store(Emitter& e, const ir::Op& op) {
  ir::SharedStoreOp store(&op);
  ir::DType t = e.shared_dtype(store.buffer());
  std::vector<llvm::Value*> values;
  for (const ir::Value* v : store.values()) values.push_back(e.get(v));
  auto [p, align] = shared_address(e, store.buffer(), e.get(store.index()), store.width());
  e.b.CreateAlignedStore(pack(e, values, t), p, align);
}

}  // namespace

void emit_memory(Emitter& e, const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::GlobalLoad:
      return global_load(e, op);
    case ir::OpKind::GlobalStore:
      return global_store(e, op);
    case ir::OpKind::SharedLoad:
      return shared_load(e, op);
    case ir::OpKind::SharedStore:
      return shared_store(e, op);
    default:
      TESSERA_CHECK(false, "not a memory op: ", op.name());
  }
}

}  // namespace tessera::ptx
