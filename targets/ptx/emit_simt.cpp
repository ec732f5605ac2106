/// \file Thread identity, subgroup shuffles and barriers: PTX special registers, shfl.sync with a
/// full mask, bar.sync. The subgroup is the 32-lane warp (emit() refuses any other size).
#include "core/ir/simt.h"
#include "core/support/error.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {
namespace {

namespace I = llvm::Intrinsic;
constexpr I::ID kCtaid[] = {I::nvvm_read_ptx_sreg_ctaid_x, I::nvvm_read_ptx_sreg_ctaid_y,
                            I::nvvm_read_ptx_sreg_ctaid_z};
constexpr I::ID kNctaid[] = {I::nvvm_read_ptx_sreg_nctaid_x, I::nvvm_read_ptx_sreg_nctaid_y,
                             I::nvvm_read_ptx_sreg_nctaid_z};

/// Shuffle mode -> shfl.sync variant and its `c` operand (clamp 31 for bfly/idx/down, 0 for up:
/// a source lane past either end of the warp reads the caller's own value).
struct ShuffleRow {
  ir::ShuffleMode mode;
  I::ID intrinsic;
  int c;
};
constexpr ShuffleRow kShuffle[] = {
    {ir::ShuffleMode::Xor, I::nvvm_shfl_sync_bfly_i32, 0x1f},
    {ir::ShuffleMode::Idx, I::nvvm_shfl_sync_idx_i32, 0x1f},
    {ir::ShuffleMode::Up, I::nvvm_shfl_sync_up_i32, 0},
    {ir::ShuffleMode::Down, I::nvvm_shfl_sync_down_i32, 0x1f},
};

llvm::Value* thread_x(Emitter& e) {
  return e.intrinsic(I::nvvm_read_ptx_sreg_tid_x, {}, {});
}

int axis_of(const ir::Op& op) {
  return static_cast<int>(op.int_attr(attr::kAxis));
}

/// One 32-bit shfl.sync.
llvm::Value* shuffle32(Emitter& e, const ShuffleRow& row, llvm::Value* v, llvm::Value* n) {
  return e.intrinsic(row.intrinsic, {}, {e.b.getInt32(0xffffffffu), v, n, e.b.getInt32(row.c)});
}

void shuffle(Emitter& e, const ir::Op& op) {
  ir::ShuffleOp sh(&op);
  const ShuffleRow* row = nullptr;
  for (const ShuffleRow& r : kShuffle)
    if (r.mode == sh.mode()) row = &r;
  TESSERA_CHECK(row, "bad shuffle mode");
  auto& b = e.b;
  llvm::Value* v = e.get(sh.value());
  llvm::Value* n = e.get(sh.lane());
  llvm::Type* t = v->getType();
  // As integer bits: pointers and 64-bit values in two halves, narrow ones widened.
  llvm::Value* bits = t->isPointerTy()
                          ? b.CreatePtrToInt(v, b.getInt64Ty())
                          : b.CreateBitCast(v, b.getIntNTy(t->getPrimitiveSizeInBits()));
  unsigned width = bits->getType()->getIntegerBitWidth();
  llvm::Value* out = nullptr;
  if (width == 64) {
    llvm::Value* lo = shuffle32(e, *row, b.CreateTrunc(bits, b.getInt32Ty()), n);
    llvm::Value* hi = shuffle32(e, *row, b.CreateTrunc(b.CreateLShr(bits, 32), b.getInt32Ty()), n);
    out = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()),
                     b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
  } else {
    out = b.CreateTrunc(shuffle32(e, *row, b.CreateZExt(bits, b.getInt32Ty()), n), bits->getType());
  }
  e.set(op.result(), t->isPointerTy() ? b.CreateIntToPtr(out, t) : b.CreateBitCast(out, t));
}

}  // namespace

void emit_simt(Emitter& e, const ir::Op& op) {
  auto& b = e.b;
  switch (op.kind) {
    case ir::OpKind::ProgramId:
      return e.set(op.result(), e.intrinsic(kCtaid[axis_of(op)], {}, {}));
    case ir::OpKind::NumPrograms:
      return e.set(op.result(), e.intrinsic(kNctaid[axis_of(op)], {}, {}));
    case ir::OpKind::LaneId:
      return e.set(op.result(), b.CreateAnd(thread_x(e), b.getInt32(31)));
    case ir::OpKind::SubgroupId:
      return e.set(op.result(), b.CreateLShr(thread_x(e), b.getInt32(5)));
    case ir::OpKind::Shuffle:
      return shuffle(e, op);
    case ir::OpKind::Barrier:  // bar.sync orders global memory too, so `global` needs no more
      if (op.has_attr(attr::kThreadCount)) {  // a named barrier: barrier.sync id, threads
        e.intrinsic(I::nvvm_barrier_sync_cnt, {},
                    {b.getInt32(static_cast<uint32_t>(op.int_attr(attr::kBarrierId))),
                     b.getInt32(static_cast<uint32_t>(op.int_attr(attr::kThreadCount)))});
        return;
      }
      e.intrinsic(I::nvvm_barrier0, {}, {});
      return;
    default:
      TESSERA_CHECK(false, "not a SIMT op: ", op.name());
  }
}

}  // namespace tessera::ptx
