/// \file inline_asm and inline_asm_impure (tl::inline_asm_elementwise): one LLVM inline-asm call
/// per SIMT op, as Triton emits it. Elements below 32 bits are packed min(32 / bits, pack) to a
/// register (a vector bitcast to an integer of its width, the first element in the low bits);
/// wider ones take a register each. The asm text and the constraints reach LLVM unchanged.
#include <llvm/Support/Error.h>

#include "core/ir/ops.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {

namespace {

/// The register type of `per` elements of `t`: the element itself, or an integer of their width.
llvm::Type* register_type(Emitter& e, ir::DType t, int per) {
  if (per == 1) return e.scalar_type(t);
  return e.b.getIntNTy(static_cast<unsigned>(ir::dtype_bits(t) * per));
}

}  // namespace

void emit_inline_asm(Emitter& e, const ir::Op& op) {
  auto& b = e.b;
  const ir::InlineAsmOp view(&op);
  const auto pack = static_cast<size_t>(view.pack());
  // Input registers: operand by operand, `pack` scalars each.
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> arg_types;
  for (size_t first = 0; first < op.operands.size(); first += pack) {
    const ir::DType t = op.operand(first)->type.dtype;
    const auto per = static_cast<size_t>(ir::inline_asm_elems_per_reg(t, view.pack()));
    for (size_t j = 0; j < pack; j += per) {
      llvm::Value* reg = e.get(op.operand(first + j));
      if (per > 1) {
        llvm::Value* vec = llvm::PoisonValue::get(
            llvm::FixedVectorType::get(e.scalar_type(t), static_cast<unsigned>(per)));
        for (size_t k = 0; k < per; ++k)
          vec = b.CreateInsertElement(vec, e.get(op.operand(first + j + k)), b.getInt32(k));
        reg = b.CreateBitCast(vec, register_type(e, t, static_cast<int>(per)));
      }
      args.push_back(reg);
      arg_types.push_back(reg->getType());
    }
  }
  // Output registers: result by result.
  struct Out {
    size_t first;  ///< the first SIMT result it holds
    size_t per;    ///< how many
    ir::DType t;
  };
  std::vector<Out> outs;
  std::vector<llvm::Type*> out_types;
  for (size_t first = 0; first < op.results.size(); first += pack) {
    const ir::DType t = op.result(first)->type.dtype;
    const auto per = static_cast<size_t>(ir::inline_asm_elems_per_reg(t, view.pack()));
    for (size_t j = 0; j < pack; j += per) {
      outs.push_back({first + j, per, t});
      out_types.push_back(register_type(e, t, static_cast<int>(per)));
    }
  }
  llvm::Type* ret = out_types.size() == 1 ? out_types[0] : llvm::StructType::get(e.ctx, out_types);
  auto* fty = llvm::FunctionType::get(ret, arg_types, false);
  if (llvm::Error err = llvm::InlineAsm::verify(fty, view.constraints())) {
    const std::string why = llvm::toString(std::move(err));
    e.unsupported(op, "the constraint string \"" + view.constraints() + "\" (" + why + ")");
  }
  llvm::Value* call = b.CreateCall(
      llvm::InlineAsm::get(fty, view.asm_text(), view.constraints(), !view.pure()), args);
  std::vector<llvm::Value*> results(op.results.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    llvm::Value* reg =
        out_types.size() == 1 ? call : b.CreateExtractValue(call, {static_cast<unsigned>(i)});
    const Out& o = outs[i];
    if (o.per == 1) {
      results[o.first] = reg;
      continue;
    }
    llvm::Value* vec = b.CreateBitCast(
        reg, llvm::FixedVectorType::get(e.scalar_type(o.t), static_cast<unsigned>(o.per)));
    for (size_t k = 0; k < o.per; ++k)
      results[o.first + k] = b.CreateExtractElement(vec, b.getInt32(k));
  }
  e.set_results(op, results);
}

}  // namespace tessera::ptx
