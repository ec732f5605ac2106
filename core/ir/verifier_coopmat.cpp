/// \file Verifier rules of the cooperative-matrix ops (core/ir/simt.h): coopmat_fill,
/// coopmat_load, coopmat_store, coopmat_mul_add and coopmat_load_tensor.
#include "core/ir/simt.h"
#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {
namespace {

const Type kI32 = Type::scalar(DType::i32);

/// The matrix at `t` (named `what`), reported unless it is a cooperative matrix of 2-D shape.
bool expect_mat(OpChecker& c, std::string_view what, const Type& t) {
  if (t.is_mat() && t.shape.size() == 2 && t.shape[0] > 0 && t.shape[1] > 0) return true;
  return c.fail("expects ", what, " to be a cooperative matrix, got ", t.str());
}

/// The buffer, stride and col_major of a load or store of matrix type `m`.
void check_access(OpChecker& c, const Type& m) {
  c.expect_type("operand #0 (the index)", c.in(0), kI32);
  c.flag_attr(attr::kColMajor);
  std::optional<int64_t> stride = c.int_attr(attr::kStride);
  const SharedBuffer* buffer = buffer_attr(c);
  if (!buffer || !stride) return;
  if (buffer->dtype != m.dtype)
    c.fail("expects a buffer of the matrix's dtype ", dtype_name(m.dtype), ", got ",
           dtype_name(buffer->dtype));
  const bool col_major = c.op.int_attr_or(attr::kColMajor, 0) != 0;
  const int64_t line = col_major ? m.shape[0] : m.shape[1];  // elements one stride step holds
  const int64_t bytes = dtype_bytes(m.dtype);
  if (*stride < line || (*stride * bytes) % 16)
    c.fail("expects attribute 'stride' to be at least ", line,
           " elements and a multiple of 16 bytes, got ", *stride);
}

}  // namespace

void check_coopmat_family(OpChecker& c) {
  TESSERA_CHECK(c.simt, "SIMT op '", c.op.name(), "' checked outside a SIMT function");
  switch (c.op.kind) {
    case OpKind::CoopMatFill:
      if (!expect_mat(c, "the result", c.out())) return;
      c.expect_type("operand #0 (the value)", c.in(0), Type::scalar(c.out().dtype));
      return;
    case OpKind::CoopMatLoad:
      if (expect_mat(c, "the result", c.out())) check_access(c, c.out());
      return;
    case OpKind::CoopMatStore:
      if (expect_mat(c, "operand #1 (the matrix)", c.in(1))) check_access(c, c.in(1));
      return;
    case OpKind::CoopMatMulAdd: {
      const Type &a = c.in(0), &b = c.in(1), &acc = c.in(2);
      if (!expect_mat(c, "operand #0 (A)", a) || !expect_mat(c, "operand #1 (B)", b) ||
          !expect_mat(c, "operand #2 (C)", acc))
        return;
      if (a.mat != MatUse::A || b.mat != MatUse::B || acc.mat != MatUse::Acc)
        return void(c.fail("expects operands coopmat_a, coopmat_b, coopmat_acc; got ", a.str(),
                           ", ", b.str(), ", ", acc.str()));
      if (a.workgroup != b.workgroup || a.workgroup != acc.workgroup)
        return void(c.fail("expects A, B and C of one scope, got ", a.str(), ", ", b.str(), ", ",
                           acc.str()));
      if (a.dtype != b.dtype)
        return void(c.fail("expects A and B of one dtype, got ", a.str(), " and ", b.str()));
      const bool fp = a.dtype == DType::f16 || a.dtype == DType::bf16;
      if (!fp && a.dtype != DType::i8)
        return void(c.fail("expects A and B of f16, bf16 or i8, got ", dtype_name(a.dtype)));
      const DType want = fp ? DType::f32 : DType::i32;
      if (acc.dtype != want)
        return void(c.fail("expects C of ", dtype_name(want), " for ", dtype_name(a.dtype),
                           " inputs, got ", acc.str()));
      if (a.shape[1] != b.shape[0] || a.shape[0] != acc.shape[0] || b.shape[1] != acc.shape[1])
        return void(c.fail("expects A MxK, B KxN and C MxN, got ", a.str(), ", ", b.str(), ", ",
                           acc.str()));
      c.expect_type("the result", c.out(), acc);
      return;
    }
    case OpKind::CoopMatLoadTensor: {
      if (!expect_mat(c, "the result", c.out())) return;
      const Type& m = c.out();
      if (!m.workgroup || (m.mat != MatUse::A && m.mat != MatUse::B))
        return void(c.fail("expects a result wgmat_a or wgmat_b, got ", m.str()));
      const Type& base = c.in(0);
      if (!base.is_ptr || !base.shape.empty() || base.dtype != m.dtype)
        return void(c.fail("expects operand #0 (the base) of type ptr<", dtype_name(m.dtype),
                           ">, got ", base.str()));
      static constexpr const char* kWhat[] = {"dim0", "dim1", "stride0", "stride1", "off0", "off1"};
      for (size_t i = 0; i < 6; ++i)
        c.expect_type(std::string("operand #") + std::to_string(i + 1) + " (" + kWhat[i] + ")",
                      c.in(i + 1), kI32);
      c.flag_attr(attr::kClampZero);
      return;
    }
    default:
      TESSERA_CHECK(false, "not a cooperative-matrix op: ", c.op.name());
  }
}

}  // namespace tessera::ir::verifier_detail
