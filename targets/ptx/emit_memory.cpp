/// \file Global and shared memory: `width` consecutive elements move as one LLVM vector access
/// with the op's alignment, which NVPTX selects as ld/st.global.v2/v4 (128-bit when aligned);
/// a predicated access branches around the load or store (ptxas predicates short branches), and
/// a masked-off load yields its `other` values. i1 elements occupy a byte in memory. Triton's
/// hints become PTX qualifiers (hinted_access): a `cache` operator (loads ca, cg, cs, cv; stores
/// wb, cg, cs, wt) and an `eviction` priority (evict_first, evict_last as L1::evict_*, sm_70;
/// with a cache operator as an L2 cache policy from createpolicy, sm_80; evict_normal is the
/// default and adds nothing). `volatile` loads stay LLVM volatile loads (ld.volatile), which take
/// no other qualifier: their hints are dropped.
#include <optional>
#include <string>

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

/// The PTX qualifiers of an access's `cache` and `eviction` hints, and the createpolicy
/// instruction they need (empty when none); nothing when the op has no hint.
struct Hints {
  std::string qualifiers, policy;
};
std::optional<Hints> access_hints(const Emitter& e, const ir::Op& op) {
  std::string cache = ir::cache_modifier(op), eviction = op.str_attr_or(attr::kEviction, "");
  if (eviction == "evict_normal") eviction.clear();
  if (cache.empty() && eviction.empty()) return std::nullopt;
  if (eviction.empty()) return Hints{"." + cache, ""};
  // ld/st take either a cache operator or an L1 eviction priority; with both, the priority
  // goes to L2 through a cache policy (sm_80). Before sm_80 the priority is dropped.
  if (cache.empty() && e.target.sm >= 70) return Hints{".L1::" + eviction, ""};
  if (e.target.sm < 80) return cache.empty() ? std::nullopt : std::optional(Hints{"." + cache, ""});
  return Hints{"." + cache + ".L2::cache_hint",
               "createpolicy.fractional.L2::" + eviction + ".b64 %policy, 1.0;"};
}

/// A load or store of `bytes` bytes (1, 2, 4, 8 or 16, aligned to that) as inline PTX with the
/// hints' qualifiers, in 32-bit words (16-bit or 8-bit ones below 4 bytes): the LLVM value of type
/// `type` is the words' bits. Loads return the value; stores write `value`.
llvm::Value* hinted_access(Emitter& e, const Hints& h, llvm::Type* type, llvm::Value* ptr,
                           llvm::Value* value, uint64_t bytes) {
  const bool load = value == nullptr;
  const uint64_t word = std::min<uint64_t>(bytes, 4), n = bytes / word;
  llvm::Type* wt = e.b.getIntNTy(static_cast<unsigned>(word == 1 ? 16 : word * 8));
  const std::string suffix = (n > 1 ? ".v" + std::to_string(n) : "") + (word == 1   ? ".b8"
                                                                        : word == 2 ? ".b16"
                                                                                    : ".b32");
  const char* reg = word == 4 ? "r" : "h";
  std::string regs, cons;
  for (uint64_t i = 0; i < n; ++i) {
    regs += (i ? ", $" : "$") + std::to_string(load ? i : i + 1);
    cons += (i ? "," : "") + std::string(load ? "=" : "") + reg;
  }
  if (n > 1) regs = "{" + regs + "}";
  const std::string addr = "[$" + std::to_string(load ? n : 0) + "]";
  std::string text = (load ? "ld.global" : "st.global") + h.qualifiers + suffix + " " +
                     (load ? regs + ", " + addr : addr + ", " + regs);
  if (!h.policy.empty())
    text = "{\n.reg .b64 %policy;\n" + h.policy + "\n" + text + ", %policy;\n}";
  else
    text += ";";
  cons = load ? cons + ",l" : "l," + cons;
  if (!load) {
    llvm::Value* bits = e.b.CreateBitCast(
        value, n > 1 ? llvm::FixedVectorType::get(e.b.getIntNTy(static_cast<unsigned>(word * 8)),
                                                  static_cast<unsigned>(n))
                     : static_cast<llvm::Type*>(e.b.getIntNTy(static_cast<unsigned>(word * 8))));
    std::vector<llvm::Value*> args = {ptr};
    std::vector<llvm::Type*> types = {ptr->getType()};
    for (uint64_t i = 0; i < n; ++i) {
      llvm::Value* w = n > 1 ? e.b.CreateExtractElement(bits, i) : bits;
      if (word == 1) w = e.b.CreateZExt(w, wt);
      args.push_back(w);
      types.push_back(wt);
    }
    auto* fty = llvm::FunctionType::get(e.b.getVoidTy(), types, false);
    e.b.CreateCall(llvm::InlineAsm::get(fty, text, cons + ",~{memory}", true), args);
    return nullptr;
  }
  std::vector<llvm::Type*> outs(n, wt);
  llvm::Type* rt = n > 1 ? static_cast<llvm::Type*>(llvm::StructType::get(e.ctx, outs)) : wt;
  auto* fty = llvm::FunctionType::get(rt, {ptr->getType()}, false);
  llvm::Value* r =
      e.b.CreateCall(llvm::InlineAsm::get(fty, text, cons + ",~{memory}", true), {ptr});
  llvm::Type* narrow = e.b.getIntNTy(static_cast<unsigned>(word * 8));
  llvm::Value* words = llvm::PoisonValue::get(
      n > 1 ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(narrow, static_cast<unsigned>(n)))
            : narrow);
  for (uint64_t i = 0; i < n; ++i) {
    llvm::Value* w = n > 1 ? e.b.CreateExtractValue(r, static_cast<unsigned>(i)) : r;
    if (word == 1) w = e.b.CreateTrunc(w, narrow);
    words = n > 1 ? e.b.CreateInsertElement(words, w, i) : w;
  }
  return e.b.CreateBitCast(words, type);
}

uint64_t element_bytes(Emitter& e, ir::DType t) {
  return e.memory_type(t)->getPrimitiveSizeInBits() / 8;
}

/// Whether an access of `bytes` bytes can take inline PTX hints (a power of two up to 16).
bool hintable(uint64_t bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
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
  const bool is_volatile = op.int_attr_or(attr::kVolatile, 0) != 0;
  const std::optional<Hints> hints = is_volatile ? std::nullopt : access_hints(e, op);
  const uint64_t bytes = static_cast<uint64_t>(width) * element_bytes(e, t);
  llvm::Type* at = access_type(e, t, width);
  auto read = [&]() -> llvm::Value* {
    if (hints && hintable(bytes)) return hinted_access(e, *hints, at, ptr, nullptr, bytes);
    llvm::LoadInst* v =
        e.b.CreateAlignedLoad(at, ptr, llvm::Align(static_cast<uint64_t>(load.align())));
    v->setVolatile(is_volatile);
    return v;
  };
  if (always(pred)) return e.set_results(op, unpack(e, read(), t, width));
  // The branch merges the loaded vector with the `other` values packed alike, so the elements
  // are unpacked (and converted, f16 -> f32...) once, after it: merging element by element lets
  // LLVM move each conversion into the branch, which keeps every widened element live at once.
  std::vector<llvm::Value*> others;
  for (const ir::Value* v : load.others()) others.push_back(e.get(v));
  llvm::Value* fallback = pack(e, others, t);
  llvm::BasicBlock* from = e.b.GetInsertBlock();
  llvm::BasicBlock* on = e.block("load");
  llvm::BasicBlock* merge = e.block("loaded");
  e.b.CreateCondBr(pred, on, merge);
  e.b.SetInsertPoint(on);
  llvm::Value* got = read();
  llvm::BasicBlock* on_end = e.b.GetInsertBlock();
  e.b.CreateBr(merge);
  e.b.SetInsertPoint(merge);
  llvm::PHINode* phi = e.b.CreatePHI(at, 2);
  phi->addIncoming(got, on_end);
  phi->addIncoming(fallback, from);
  e.set_results(op, unpack(e, phi, t, width));
}

void global_store(Emitter& e, const ir::Op& op) {
  ir::GlobalStoreOp store(&op);
  ir::DType t = store.ptr()->type.dtype;
  std::vector<llvm::Value*> values;
  for (const ir::Value* v : store.values()) values.push_back(e.get(v));
  llvm::Value* ptr = e.get(store.ptr());
  llvm::Value* pred = e.get(store.pred());
  const std::optional<Hints> hints = access_hints(e, op);
  const uint64_t bytes = values.size() * element_bytes(e, t);
  auto write = [&] {
    if (hints && hintable(bytes)) {
      hinted_access(e, *hints, nullptr, ptr, pack(e, values, t), bytes);
      return;
    }
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
