/// \file Cooperative matrices (core/ir/simt.h: coopmat_fill, coopmat_load, coopmat_store,
/// coopmat_mul_add) as SPV_KHR_cooperative_matrix: subgroup-scope OpTypeCooperativeMatrixKHR
/// values; loads and stores through a pointer to a shared buffer's element (such buffers are
/// arrays of scalars, so the IR's index and stride are the instruction's), NonPrivatePointer like
/// every shared access so that barriers order them; and OpCooperativeMatrixMulAddKHR, whose i8
/// inputs and i32 accumulators are signed. Before anything is emitted, check_coopmat refuses what
/// the target cannot run: matrices without the coopmat capability, matrix types and multiplies
/// outside the target's shapes; bf16 matrices are SPV_KHR_bfloat16's.
/// Workgroup-scope matrices (wgmat_*, VK_NV_cooperative_matrix2) are workgroup-scope
/// OpTypeCooperativeMatrixKHR values whose dimensions are multiples of one of the target's
/// workgroup shapes; coopmat_load_tensor is OpCooperativeMatrixLoadTensorNV from a
/// PhysicalStorageBuffer pointer through a 2-D tensor layout (dimensions, strides, a slice at the
/// block's offsets) of ClampMode Undefined (the fast path) or Constant with the default clamp
/// value 0 (the edge path).
#include <algorithm>

#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

using ir::DType;
using ir::MatUse;
using ir::OpKind;
using tessera::detail::concat;

namespace {

khr::MatrixUse khr_use(MatUse use) {
  if (use == MatUse::A) return khr::MatrixUse::A;
  if (use == MatUse::B) return khr::MatrixUse::B;
  return khr::MatrixUse::Accumulator;
}

/// Is a matrix of type `t` the A, B or accumulator of the M x N x K multiply `s`?
bool fits(const target::MatrixShape& s, const ir::Type& t) {
  const int64_t rows = t.shape[0], cols = t.shape[1];
  if (t.mat == MatUse::A) return t.dtype == s.a && rows == s.m && cols == s.k;
  if (t.mat == MatUse::B) return t.dtype == s.b && rows == s.k && cols == s.n;
  return t.dtype == s.c && rows == s.m && cols == s.n;
}

std::string shapes_text(const target::Target& target) {
  std::string out;
  for (const target::MatrixShape& s : target.matrix_shapes)
    out += (out.empty() ? "" : ", ") + s.str();
  return out.empty() ? "none" : out;
}

/// Is a workgroup-scope matrix of type `t` a whole number of granules of the A, B or
/// accumulator of workgroup shape `w`?
bool fits_workgroup(const target::WorkgroupShape& w, const ir::Type& t) {
  const target::MatrixShape& g = w.granularity;
  const int64_t rows = t.shape[0], cols = t.shape[1];
  if (t.mat == MatUse::A) return t.dtype == g.a && rows % g.m == 0 && cols % g.k == 0;
  if (t.mat == MatUse::B) return t.dtype == g.b && rows % g.k == 0 && cols % g.n == 0;
  return t.dtype == g.c && rows % g.m == 0 && cols % g.n == 0;
}

std::string workgroup_shapes_text(const target::Target& target) {
  std::string out;
  for (const target::WorkgroupShape& s : target.workgroup_shapes)
    out += (out.empty() ? "" : ", ") + s.str();
  return out.empty() ? "none" : out;
}

/// The matrix types among the op's results, operands and region arguments.
std::vector<const ir::Type*> matrix_types(const ir::Op& op) {
  std::vector<const ir::Type*> types;
  auto add = [&](const ir::Value* v) {
    if (v->type.is_mat()) types.push_back(&v->type);
  };
  for (const ir::Value* v : op.results) add(v);
  for (const ir::Value* v : op.operands) add(v);
  for (const ir::Region* r : op.regions)
    for (const ir::Value* v : r->args) add(v);
  return types;
}

}  // namespace

void Emitter::check_coopmat(const ir::Op& op) const {
  for (const ir::Type* t : matrix_types(op)) {
    if (t->workgroup) {
      require_cap(target::Cap::CooperativeMatrix2, &op,
                  concat("a workgroup-scope cooperative matrix (", t->str(), ")"));
      auto fit = [&](const target::WorkgroupShape& s) { return fits_workgroup(s, *t); };
      if (std::none_of(target.workgroup_shapes.begin(), target.workgroup_shapes.end(), fit))
        unsupported(&op, concat("the workgroup-scope matrix ", t->str(),
                                " is a multiple of none of the target's workgroup shapes (",
                                workgroup_shapes_text(target), ")"));
      continue;
    }
    require_cap(target::Cap::CooperativeMatrix, &op,
                concat("a cooperative matrix (", t->str(), ")"));
    auto fit = [&](const target::MatrixShape& s) { return fits(s, *t); };
    if (std::none_of(target.matrix_shapes.begin(), target.matrix_shapes.end(), fit))
      unsupported(&op, concat("the cooperative matrix ", t->str(),
                              " belongs to none of the target's matrix shapes (",
                              shapes_text(target), ")"));
  }
  // Tessera's bf16 scalars are f32 values: a bf16 matrix is loaded, never filled.
  if (op.kind == OpKind::CoopMatFill && op.result()->type.dtype == DType::bf16)
    unsupported(&op, "a bf16 cooperative matrix filled from a scalar (load it from memory)");
  if (op.kind != OpKind::CoopMatMulAdd || op.operand(0)->type.workgroup) return;
  const ir::Type &a = op.operand(0)->type, &bt = op.operand(1)->type, &c = op.operand(2)->type;
  const target::MatrixShape want{.m = static_cast<int>(a.shape[0]),
                                 .n = static_cast<int>(bt.shape[1]),
                                 .k = static_cast<int>(a.shape[1]),
                                 .a = a.dtype,
                                 .b = bt.dtype,
                                 .c = c.dtype};
  if (std::find(target.matrix_shapes.begin(), target.matrix_shapes.end(), want) ==
      target.matrix_shapes.end())
    unsupported(&op, concat("the matrix multiply ", want.str(), " is not among the target's (",
                            shapes_text(target), ")"));
}

/// One type id per (dtype, rows, cols, use), named after the IR's type in the disassembly.
uint32_t Emitter::coopmat_type(const ir::Type& type) {
  const std::string key = type.str();
  if (auto it = coopmat_types_.find(key); it != coopmat_types_.end()) return it->second;
  const char* use = type.mat == MatUse::A ? "a" : type.mat == MatUse::B ? "b" : "acc";
  // bf16 components are SPV_KHR_bfloat16's type (loaded from and stored to the buffers' 16-bit
  // integers, which hold the same bits).
  uint32_t component = value_type(type.dtype);
  if (type.dtype == DType::bf16) {
    component = b.t_bfloat16();
    b.require(khr::kCapabilityBFloat16CooperativeMatrix);
  }
  const uint32_t id = b.t_coopmat(component, static_cast<uint32_t>(type.shape[0]),
                                  static_cast<uint32_t>(type.shape[1]), khr_use(type.mat),
                                  type.workgroup ? spv::ScopeWorkgroup : spv::ScopeSubgroup);
  b.name(id, concat(type.workgroup ? "wgmat_" : "coopmat_", use, "_", type.shape[0], "x",
                    type.shape[1], "x", ir::dtype_name(type.dtype)));
  coopmat_types_.emplace(key, id);
  return id;
}

namespace {

/// The tensor layout of a coopmat_load_tensor: the tensor's dimensions and strides, sliced to
/// the block at its offsets (32-bit values: the offsets wrap, so a negative one lies outside).
Value tensor_layout_of(Emitter& e, const ir::CoopMatLoadTensorOp& load) {
  Builder& b = e.b;
  const ir::Type& t = load.op->result()->type;
  const auto clamp = load.clamp_zero() ? nv::ClampMode::Constant : nv::ClampMode::Undefined;
  Value layout = b.tensor_layout(b.t_tensor_layout(2, clamp));
  layout = b.tensor_layout_dimensions(layout, {e.get(load.dim(0)), e.get(load.dim(1))});
  layout = b.tensor_layout_strides(layout, {e.get(load.stride(0)), e.get(load.stride(1))});
  const uint32_t i32 = e.value_type(DType::i32);
  const Value rows = b.c_int(i32, static_cast<uint64_t>(t.shape[0]));
  const Value cols = b.c_int(i32, static_cast<uint64_t>(t.shape[1]));
  return b.tensor_layout_slice(layout, {e.get(load.offset(0)), rows, e.get(load.offset(1)), cols});
}

void emit_load_tensor(Emitter& e, const ir::Op& op) {
  Builder& b = e.b;
  ir::CoopMatLoadTensorOp load(&op);
  const ir::Type& t = op.result()->type;
  const uint32_t type = e.value_type(t);
  // The elements nothing reads (none: the layout's clamp value covers the edges) come from a
  // zero matrix.
  const uint32_t component = t.dtype == DType::bf16 ? b.t_bfloat16() : e.value_type(t.dtype);
  const Value zero = ir::is_float(t.dtype) ? b.c_float_bits(component, 0) : b.c_int(component, 0);
  const Value object = b.c_composite(type, {zero});
  const Value pointer = e.psb_pointer(e.get(load.base()), e.memory_type(t.dtype));
  const Value layout = tensor_layout_of(e, load);
  e.set(op.result(), b.coopmat_load_tensor(type, pointer, object, layout,
                                           static_cast<uint32_t>(ir::dtype_bytes(t.dtype)), true));
}

}  // namespace

void Emitter::emit_coopmat(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::CoopMatFill: {
      // One constituent fills every element (the KHR rule); a constant stays a constant.
      const uint32_t type = value_type(op.result()->type);
      const Value x = get(op.operand(0));
      const ir::Op* def = op.operand(0)->def;
      const bool constant = def && def->kind == OpKind::Constant;
      return set(op.result(), constant ? b.c_composite(type, {x}) : b.construct(type, {x}));
    }
    case OpKind::CoopMatLoad: {
      ir::CoopMatLoadOp load(&op);
      const Value pointer = shared_scalar_pointer(load.buffer(), get(load.index()));
      return set(op.result(),
                 b.coopmat_load(value_type(op.result()->type), pointer,
                                load.col_major() ? khr::Layout::ColumnMajor : khr::Layout::RowMajor,
                                static_cast<uint32_t>(load.stride()), true));
    }
    case OpKind::CoopMatStore: {
      ir::CoopMatStoreOp store(&op);
      const Value pointer = shared_scalar_pointer(store.buffer(), get(store.index()));
      return b.coopmat_store(pointer, get(store.value()),
                             store.col_major() ? khr::Layout::ColumnMajor : khr::Layout::RowMajor,
                             static_cast<uint32_t>(store.stride()), true);
    }
    case OpKind::CoopMatLoadTensor:
      return emit_load_tensor(*this, op);
    default: {
      // Integer components are unsigned unless marked: the IR's i8 and i32 are signed.
      const bool is_signed = op.operand(0)->type.dtype == DType::i8;
      const uint32_t signs = is_signed ? khr::kMatrixASigned | khr::kMatrixBSigned |
                                             khr::kMatrixCSigned | khr::kMatrixResultSigned
                                       : 0;
      return set(op.result(), b.coopmat_mul_add(get(op.operand(0)), get(op.operand(1)),
                                                get(op.operand(2)), signs));
    }
  }
}

}  // namespace tessera::spirv::impl
