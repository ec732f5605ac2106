/// \file PTX of the SIMT IR's TMA family (core/ir/simt.h): mbarriers in shared memory and
/// cp.async.bulk.tensor copies (loads into shared memory, stores from it in bulk groups) through
/// the kernel's tensor-map parameters, and the cluster ops (the rank, the cluster barrier, an
/// arrival on another program's mbarrier, multicast copies), in the instruction forms
/// that tests/targets/ptx/tma_box_ptx.h checks by hand (sm_90a).
#include <span>
#include <string>
#include <vector>

#include "core/ir/simt.h"
#include "targets/ptx/emitter.h"
#include "targets/ptx/ptx.h"

namespace tessera::ptx {
namespace {

/// An inline-asm statement with side effects (it reads or writes memory the compiler cannot see).
llvm::CallInst* statement(Emitter& e, llvm::Type* ret, const std::string& text,
                          const std::string& constraints, llvm::ArrayRef<llvm::Value*> args,
                          bool pure = false) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* v : args) types.push_back(v->getType());
  auto* fty = llvm::FunctionType::get(ret, types, false);
  llvm::CallInst* call = e.b.CreateCall(llvm::InlineAsm::get(fty, text, constraints, !pure), args);
  call->addFnAttr(llvm::Attribute::NoUnwind);
  if (pure) call->setDoesNotAccessMemory();
  return call;
}

/// The 32-bit shared-window address of element `index` of shared buffer `buffer`.
llvm::Value* shared_address(Emitter& e, int64_t buffer, const ir::Value* index) {
  return e.b.CreatePtrToInt(e.shared_element(buffer, e.get(index)), e.b.getInt32Ty());
}

void mbarrier(Emitter& e, const ir::Op& op) {
  const ir::MbarrierOp m(&op);
  llvm::Value* bar = shared_address(e, m.buffer(), m.index());
  if (op.kind == ir::OpKind::MbarrierInval) {
    statement(e, e.b.getVoidTy(), "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}", {bar});
    return;
  }
  llvm::Value* v = e.get(m.value());
  switch (op.kind) {
    case ir::OpKind::MbarrierInit:
      statement(e, e.b.getVoidTy(), "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}",
                {bar, v});
      return;
    case ir::OpKind::MbarrierArriveTx:
      if (m.rank()) {
        // The mbarrier at the same place in the cluster's program of that rank, with a release
        // at CTA scope (the default), as CUTLASS's consumer release: the arrival says that this
        // program's reads of a stage, retired by wgmma_wait, are over.
        statement(e, e.b.getVoidTy(),
                  "{\n\t.reg .b32 %tessera_remote;\n\t"
                  "mapa.shared::cluster.u32 %tessera_remote, $0, $2;\n\t"
                  "mbarrier.arrive.expect_tx.shared::cluster.b64 _, [%tessera_remote], $1;\n}",
                  "r,r,r,~{memory}", {bar, v, e.get(m.rank())});
        return;
      }
      statement(e, e.b.getVoidTy(), "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
                "r,r,~{memory}", {bar, v});
      return;
    default:
      // The loop's label is local to the braces' block, so copies of the statement never clash.
      statement(e, e.b.getVoidTy(),
                "{\n\t.reg .pred %tessera_done;\n"
                "tessera_wait:\n\t"
                "mbarrier.try_wait.parity.shared::cta.b64 %tessera_done, [$0], $1;\n\t"
                "@!%tessera_done bra tessera_wait;\n}",
                "r,r,~{memory}", {bar, v});
      return;
  }
}

/// The generic address of tensor map `index`: its kernel parameter (after the user's, map i at
/// params + i), through the param window.
llvm::Value* map_address(Emitter& e, int64_t index) {
  const std::string param = kernel_symbol(e.fn.name) + "_param_" +
                            std::to_string(e.fn.params.size() + static_cast<size_t>(index));
  return statement(e, e.b.getInt64Ty(), "mov.u64 $0, " + param + ";\n\tcvta.param.u64 $0, $0;",
                   "=l", {}, /*pure=*/true);
}

/// Appends `coords` (outermost first) to `args` innermost first, as PTX lists them, and returns
/// their operand list "{$first, ...}".
std::string coordinate_list(Emitter& e, std::span<ir::Value* const> coords, int first,
                            std::vector<llvm::Value*>& args, std::string& constraints) {
  std::string list;
  const int rank = static_cast<int>(coords.size());
  for (int i = 0; i < rank; ++i) list += (i ? ", $" : "{$") + std::to_string(first + i);
  for (int i = rank - 1; i >= 0; --i) {
    args.push_back(e.get(coords[static_cast<size_t>(i)]));
    constraints += ",r";
  }
  return list + "}";
}

void tma_load(Emitter& e, const ir::Op& op) {
  const ir::TmaLoadOp t(&op);
  std::string constraints = "r,l,r";
  std::vector<llvm::Value*> args = {shared_address(e, t.buffer(), t.index()),
                                    map_address(e, t.map()),
                                    shared_address(e, t.barrier(), t.barrier_index())};
  const std::string list = coordinate_list(e, t.coords(), 3, args, constraints);
  std::string multicast;  // to the cluster's programs whose bits the 16-bit mask sets
  if (t.multicast()) {
    multicast = ".multicast::cluster";
    args.push_back(e.b.CreateTrunc(e.get(t.mask()), e.b.getInt16Ty()));
    constraints += ",h";
  }
  statement(e, e.b.getVoidTy(),
            "cp.async.bulk.tensor." + std::to_string(t.coords().size()) +
                "d.shared::cluster.global.mbarrier::complete_tx::bytes" + multicast +
                " [$0], [$1, " + list + "], [$2]" +
                (t.multicast() ? ", $" + std::to_string(args.size() - 1) : std::string()) + ";",
            constraints + ",~{memory}", args);
}

void tma_store(Emitter& e, const ir::Op& op) {
  const ir::TmaStoreOp t(&op);
  std::string constraints = "l,r";
  std::vector<llvm::Value*> args = {map_address(e, t.map()),
                                    shared_address(e, t.buffer(), t.index())};
  const std::string list = coordinate_list(e, t.coords(), 2, args, constraints);
  statement(e, e.b.getVoidTy(),
            "cp.async.bulk.tensor." + std::to_string(t.coords().size()) +
                "d.global.shared::cta.bulk_group [$0, " + list + "], [$1];",
            constraints + ",~{memory}", args);
}

}  // namespace

void emit_tma(Emitter& e, const ir::Op& op) {
  if (!e.target.has(target::Cap::Tma))
    e.unsupported(op, "TMA copies and mbarriers need sm_90 or newer (capability 'tma')");
  switch (op.kind) {
    case ir::OpKind::TmaLoad:
      return tma_load(e, op);
    case ir::OpKind::TmaStore:
      return tma_store(e, op);
    case ir::OpKind::TmaStoreCommit:
      statement(e, e.b.getVoidTy(), "cp.async.bulk.commit_group;", "~{memory}", {});
      return;
    case ir::OpKind::ClusterRank:
      e.set(op.results[0], statement(e, e.b.getInt32Ty(), "mov.u32 $0, %cluster_ctarank;", "=r", {},
                                     /*pure=*/true));
      return;
    case ir::OpKind::ClusterBarrier:
      // (The fence makes this workgroup's mbarrier initializations visible to the cluster's
      // arrivals and copies, as the barrier does its other writes.)
      // Convergent: every thread reaches the one barrier (.aligned); LLVM may not copy it into
      // the arms of a branch before it.
      statement(e, e.b.getVoidTy(),
                "fence.mbarrier_init.release.cluster;\n\t"
                "barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;",
                "~{memory}", {})
          ->addFnAttr(llvm::Attribute::Convergent);
      return;
    case ir::OpKind::TmaStoreWait:
      statement(
          e, e.b.getVoidTy(),
          "cp.async.bulk.wait_group.read " + std::to_string(op.int_attr(attr::kPending)) + ";",
          "~{memory}", {});
      return;
    default:
      return mbarrier(e, op);
  }
}

}  // namespace tessera::ptx
