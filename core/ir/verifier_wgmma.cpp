/// \file The verifier's rules for the wgmma family (core/ir/wgmma.h): shapes, operand layouts,
/// accumulator counts and types, warpgroup-sized workgroups, and the direct uses of a wgmma's
/// still unsettled results.
#include "core/ir/verifier_checks.h"
#include "core/ir/wgmma.h"

namespace tessera::ir::verifier_detail {
namespace {

const Type kI32 = Type::scalar(DType::i32);

/// Warpgroup ops: 32-lane subgroups in a workgroup of whole warpgroups.
void check_warpgroup(OpChecker& c) {
  if (c.simt->subgroup && *c.simt->subgroup != 32)
    c.fail("needs subgroups of 32 lanes, but the function has subgroup = ", *c.simt->subgroup);
  if (c.simt->threads && *c.simt->threads % 128 != 0)
    c.fail("needs whole warpgroups (threads a multiple of 128), but the function has threads = ",
           *c.simt->threads);
}

/// a_smem or b_smem: [buffer, swizzle, lbo, sbo, trans] naming a buffer of `in` elements.
void check_smem(OpChecker& c, std::string_view name, const WgmmaShape& s) {
  const std::vector<int64_t>* l = c.ints_attr(name);
  if (!l) return;
  if (l->size() != 5) {
    c.fail("expects attribute '", name, "' to be [buffer, swizzle, lbo, sbo, trans], got ",
           l->size(), " integers");
    return;
  }
  const int64_t swizzle = (*l)[1], lbo = (*l)[2], sbo = (*l)[3], trans = (*l)[4];
  if (swizzle != 32 && swizzle != 64 && swizzle != 128)
    c.fail("expects the swizzle of '", name, "' to be 32, 64 or 128 bytes, got ", swizzle);
  for (int64_t off : {lbo, sbo})
    if (off < 0 || off % 16 || off >= (int64_t{1} << 18))
      c.fail("expects the byte offsets of '", name, "' to be multiples of 16 below 2^18, got ",
             off);
  if (trans != 0 && trans != 1)
    c.fail("expects the trans of '", name, "' to be 0 or 1, got ", trans);
  if (trans == 1 && !s.allows_trans())
    c.fail("'", name, "' is MN-major (trans = 1), which wgmma allows only for f16 and bf16, not ",
           s.a);
  auto it = c.simt->buffers.find((*l)[0]);
  if (it == c.simt->buffers.end()) {
    c.fail("expects '", name, "' to name a shared buffer of the function, got ", (*l)[0]);
    return;
  }
  if (!it->second) return;
  const SharedBuffer& b = *it->second;
  if (b.dtype != s.in)
    c.fail("expects '", name, "' to name a buffer of ", dtype_name(s.in), ", got ",
           dtype_name(b.dtype));
  if (b.bytes() % 1024)
    c.fail("expects '", name,
           "' to name a buffer whose size is a multiple of 1024 bytes (so it "
           "starts 1024-byte aligned), got ",
           b.bytes(), " bytes");
}

void check_wgmma(OpChecker& c) {
  check_warpgroup(c);
  const std::string* shape = c.str_attr(attr::kShape, true);
  const std::string* a = c.str_attr(attr::kA, true);
  if (!shape || !a) return;
  std::optional<WgmmaShape> s = find_wgmma_shape(*shape, *a);
  if (!s) {
    c.fail(
        "expects (shape, a) to be (\"m64n<N>k16\", \"f16\" or \"bf16\"), (\"m64n<N>k8\", "
        "\"tf32\") or (\"m64n<N>k32\", \"i8\", \"e4m3\" or \"e5m2\") with N in 8..256 a "
        "multiple of 8 (i8: of 16 above 32); got (\"",
        *shape, "\", \"", *a, "\")");
    return;
  }
  const bool a_regs = !c.op.has_attr(attr::kASmem);
  if (!a_regs) check_smem(c, attr::kASmem, *s);
  check_smem(c, attr::kBSmem, *s);
  // A's start index, or its k / 2 values per thread; then B's start index.
  const size_t b_slot = a_regs ? static_cast<size_t>(s->k / 2) : 1;
  const size_t n = static_cast<size_t>(s->acc_count());
  if (c.num_in() != b_slot + 1 + n) {
    c.fail("expects ", b_slot + 1, " + ", n, " operands for ", *shape, " (",
           a_regs ? "A's values and B's start index" : "the two start indices",
           ", then the C "
           "values), got ",
           c.num_in());
    return;
  }
  if (a_regs) {
    std::vector<Type> as = types_of(c.op.operands);
    as.resize(b_slot);
    c.expect_types("A's values", as, std::vector<Type>(b_slot, Type::scalar(s->in)));
  } else
    c.expect_type("operand #0 (A's start index)", c.in(0), kI32);
  c.expect_type("operand #" + std::to_string(b_slot) + " (B's start index)", c.in(b_slot), kI32);
  const Type acc = Type::scalar(s->acc);
  std::vector<Type> cs = types_of(c.op.operands);
  cs.erase(cs.begin(), cs.begin() + static_cast<long>(b_slot) + 1);
  c.expect_types("C values", cs, std::vector<Type>(n, acc));
  if (c.expect_num_results(n, "the accumulators (N / 2)"))
    c.expect_types("results", types_of(c.op.results), std::vector<Type>(n, acc));
}

void check_wgmma_wait(OpChecker& c) {
  check_warpgroup(c);
  c.int_attr_in(attr::kPending, 0, 16);
  if (c.expect_num_results(c.num_in(), "one per operand"))
    c.expect_types("results (the operands' types)", types_of(c.op.results),
                   types_of(c.op.operands));
}

/// setmaxnreg {registers, inc}: whole warpgroups, 24 to 256 registers in steps of 8, in a
/// function whose `maxnreg` fixes the registers each thread holds at launch (the pool's start).
void check_setmaxnreg(OpChecker& c) {
  check_warpgroup(c);
  if (c.simt->maxnreg == 0)
    c.fail(
        "needs the function's 'maxnreg' attribute (the registers per thread at launch, which "
        "setmaxnreg moves through the workgroup's pool): without it the launch allocation is "
        "the assembler's choice, and an increase the pool cannot meet waits forever");
  c.flag_attr(attr::kIncrease);
  if (!c.op.has_attr(attr::kIncrease)) c.fail("expects an integer attribute 'inc' (1 or 0)");
  std::optional<int64_t> n = c.int_attr_in(attr::kRegisters, 24, 256);
  if (n && *n % 8 != 0) c.fail("expects attribute 'registers' to be a multiple of 8, got ", *n);
}

}  // namespace

void check_wgmma_family(OpChecker& c) {
  TESSERA_CHECK(c.simt, "SIMT op '", c.op.name(), "' checked outside a SIMT function");
  switch (c.op.kind) {
    case OpKind::Wgmma:
      return check_wgmma(c);
    case OpKind::WgmmaWait:
      return check_wgmma_wait(c);
    case OpKind::WgmmaFence:
    case OpKind::WgmmaCommit:
      return check_warpgroup(c);
    case OpKind::FenceAsyncShared:
      return;
    case OpKind::SetMaxNReg:
      return check_setmaxnreg(c);
    default:
      TESSERA_CHECK(false, "not a wgmma op: ", c.op.name());
  }
}

void check_async_operands(OpChecker& c) {
  const OpKind k = c.op.kind;
  if (k == OpKind::WgmmaWait || k == OpKind::Yield) return;
  for (size_t i = 0; i < c.num_in(); ++i) {
    const Value* v = c.op.operands[i];
    if (!v->def || v->def->kind != OpKind::Wgmma) continue;
    if (k == OpKind::Wgmma && i > WgmmaOp(&c.op).b_slot()) continue;
    c.fail("reads operand #", i,
           ", a result of a wgmma, before a wgmma_wait settles it (only a "
           "wgmma's C, a wgmma_wait or a yield may)");
  }
}

}  // namespace tessera::ir::verifier_detail
