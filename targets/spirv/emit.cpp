/// \file The SPIR-V target's entry point: what the target must support, the op table, the
/// IR-to-SPIR-V value and type mapping, and validation and optimization of the result.
#include <cmath>

#include "core/ir/abi.h"
#include "core/ir/builder.h"
#include "core/ir/op_table.h"
#include "core/support/float16.h"
#include "targets/spirv/emitter.h"
#include "targets/spirv/spirv.h"

namespace tessera::spirv {
namespace impl {

using ir::DType;
using ir::OpKind;
using tessera::detail::concat;

Emitter::Emitter(const ir::Function& function, const target::Target& tgt)
    : fn(function), target(tgt) {}

// --- values and types ----------------------------------------------------------------------------

Value Emitter::get(const ir::Value* v) const {
  auto it = values_.find(v);
  TESSERA_CHECK(it != values_.end(), "SPIR-V: value used before its definition in '", fn.name, "'");
  return it->second;
}

void Emitter::set(const ir::Value* v, Value value) {
  TESSERA_CHECK(value.type == value_type(v->type), "SPIR-V: value of the wrong type in '", fn.name,
                "'");
  values_[v] = value;
}

uint32_t Emitter::value_type(const ir::Type& type) {
  TESSERA_CHECK(!type.is_tile(), "SPIR-V: tile type ", type.str(), " in a SIMT function");
  if (type.is_mat()) return coopmat_type(type);
  if (type.is_ptr) return b.t_uint(64);
  switch (type.dtype) {
    case DType::i1:
      return b.t_bool();
    case DType::f16:
      return b.t_float(16);
    case DType::bf16:
    case DType::f32:
      return b.t_float(32);
    case DType::f64:
      return b.t_float(64);
    default:
      return b.t_int(static_cast<uint32_t>(ir::dtype_bits(type.dtype)),
                     ir::is_signed_int(type.dtype));
  }
}

uint32_t Emitter::memory_type(DType dtype) {
  if (dtype == DType::i1) return b.t_uint(8);
  if (dtype == DType::bf16) return b.t_uint(16);
  return value_type(dtype);
}

Value Emitter::constant(DType dtype, double value) {
  if (dtype == DType::i1) return b.c_bool(value != 0);
  if (dtype == DType::bf16)
    return b.c_float(b.t_float(32), bf16_to_double(bf16_from_double(value)));
  if (ir::is_float(dtype)) return b.c_float(value_type(dtype), value);
  return constant_int(dtype, static_cast<int64_t>(value));
}

Value Emitter::constant_int(DType dtype, int64_t value) {
  if (dtype == DType::i1) return b.c_bool(value & 1);
  TESSERA_CHECK(ir::is_int(dtype), "integer constant of ", ir::dtype_name(dtype));
  return b.c_int(value_type(dtype), static_cast<uint64_t>(ir::wrap_to_dtype(value, dtype)));
}

std::optional<int64_t> Emitter::constant_of(const ir::Value* v) const {
  if (!v->def || v->def->kind != OpKind::Constant || !v->type.is_int()) return std::nullopt;
  const int64_t* i = std::get_if<int64_t>(v->def->find_attr(attr::kValue));
  if (!i) return std::nullopt;
  return ir::wrap_to_dtype(*i, v->type.dtype);
}

void Emitter::unsupported(const ir::Op* op, const std::string& what) const {
  std::string where = op ? concat(" (", op->loc.str(), ": '", op->name(), "')") : "";
  fail(ErrorKind::Unsupported, "kernel '", fn.name, "': ", what, " on target '", target.name, "'",
       where);
}

void Emitter::require_cap(target::Cap cap, const ir::Op* op, const std::string& what) const {
  if (!target.has(cap))
    unsupported(op, what + " needs the '" + std::string(target::cap_name(cap)) + "' capability");
}

// --- the op table --------------------------------------------------------------------------------

/// program_id and num_programs come from the prologue; lane_id and subgroup_id are built-ins.
void Emitter::emit_identity(const ir::Op& op) {
  uint32_t i32 = b.t_int(32, true);
  switch (op.kind) {
    case OpKind::ProgramId:
      return set(op.result(), program_id_.at(op.int_attr(attr::kAxis)));
    case OpKind::NumPrograms:
      return set(op.result(), num_programs_.at(op.int_attr(attr::kAxis)));
    case OpKind::LaneId:
      return set(op.result(),
                 b.bitcast(i32, builtin(spv::BuiltInSubgroupLocalInvocationId, b.t_uint(32))));
    default:
      return set(op.result(), b.bitcast(i32, builtin(spv::BuiltInSubgroupId, b.t_uint(32))));
  }
}

namespace {

/// How SPIR-V emits each op kind. Identity: program and lane ids; Nothing: emits no code (cp_async
/// copies synchronously, `assume` promises what the interpreter checks); Hint: an identity;
/// Mma, Wgmma: Unsupported (CUDA's tensor-core ops); NotSimt: tile-IR ops and terminators, which
/// never reach emit_op (an internal error).
enum class Family : uint8_t {
  NotSimt,
  Identity,
  Constant,
  Binary,
  Compare,
  Unary,
  Math,
  Fma,
  Where,
  Cast,
  Bitcast,
  PtrAdd,
  GlobalLoad,
  GlobalStore,
  SharedLoad,
  SharedStore,
  CpAsync,
  Nothing,
  Mma,
  Wgmma,
  Tma,
  WarpSpecialize,
  AtomicRmw,
  AtomicCas,
  Shuffle,
  Barrier,
  CoopMat,
  For,
  If,
  While,
  Hint,
  Print,
  Assert,
  InlineAsm  ///< PTX inline assembly: Unsupported
};

/// Every op kind's family: the one place that decides what SPIR-V emits or refuses. Every `kMath`
/// row of ops.def (unary or binary) is emit_math's (emit_math.cpp's table says how); the
/// static_assert fails the build while a kind of ops.def has no family.
constexpr ir::OpTable<Family> kFamilies = [] {
  using K = OpKind;
  using F = Family;
  ir::OpTable<Family> t;
  t.add_trait(F::Math, ir::kMath);
  // clang-format off
  t.add(F::Identity, {K::ProgramId, K::NumPrograms, K::LaneId, K::SubgroupId});
  t.add(F::Constant, {K::Constant});
  t.add(F::Binary, {K::Add, K::Sub, K::Mul, K::Div, K::Rem, K::Min, K::Max, K::And, K::Or, K::Xor,
                    K::Shl, K::Shr});
  t.add(F::Compare, {K::CmpEq, K::CmpNe, K::CmpLt, K::CmpLe, K::CmpGt, K::CmpGe});
  t.add(F::Unary, {K::Neg, K::Not, K::Abs});
  t.add(F::Fma, {K::Fma});
  t.add(F::Where, {K::Where});
  t.add(F::Cast, {K::Cast});
  t.add(F::Bitcast, {K::Bitcast});
  t.add(F::PtrAdd, {K::PtrAdd});
  t.add(F::GlobalLoad, {K::GlobalLoad});
  t.add(F::GlobalStore, {K::GlobalStore});
  t.add(F::SharedLoad, {K::SharedLoad});
  t.add(F::SharedStore, {K::SharedStore});
  t.add(F::CpAsync, {K::CpAsync});
  t.add(F::Nothing, {K::CpAsyncCommit, K::CpAsyncWait, K::Assume});
  t.add(F::Mma, {K::Mma, K::LdMatrix});
  t.add(F::Wgmma, {K::Wgmma, K::WgmmaFence, K::WgmmaCommit, K::WgmmaWait, K::FenceAsyncShared,
                   K::SetMaxNReg});
  t.add(F::Tma, {K::MbarrierInit, K::MbarrierArriveTx, K::MbarrierWait, K::MbarrierInval,
                   K::TmaLoad, K::TmaStore, K::TmaStoreCommit, K::TmaStoreWait,
                   K::ClusterRank, K::ClusterBarrier});
  t.add(F::WarpSpecialize, {K::WarpSpecialize});
  t.add(F::AtomicRmw, {K::AtomicRmw});
  t.add(F::AtomicCas, {K::AtomicCas});
  t.add(F::Shuffle, {K::Shuffle});
  t.add(F::Barrier, {K::Barrier});
  t.add(F::CoopMat, {K::CoopMatFill, K::CoopMatLoad, K::CoopMatStore, K::CoopMatMulAdd,
                     K::CoopMatLoadTensor});
  t.add(F::For, {K::For});
  t.add(F::If, {K::If});
  t.add(F::While, {K::While});
  t.add(F::Hint, {K::MultipleOf, K::MaxContiguous});
  t.add(F::Print, {K::Print});
  t.add(F::Assert, {K::Assert});
  t.add(F::InlineAsm, {K::InlineAsm, K::InlineAsmImpure});
  t.add(F::NotSimt, {K::Arange, K::Splat, K::Broadcast, K::ExpandDims, K::Reshape, K::Permute,
                     K::Cat, K::Load, K::Store, K::DescLoad, K::DescStore, K::Reduce,
                     K::ReduceGeneric, K::Scan, K::ScanGeneric, K::Dot, K::DebugBarrier,
                     K::Yield, K::Condition});
  // clang-format on
  return t;
}();
static_assert(ir::complete(kFamilies), "an op kind of ops.def has no SPIR-V family");

}  // namespace

void Emitter::emit_region(const ir::Region& region) {
  if (print_offset_ >= 0) count_print_pass(region);
  for (const ir::Op* op : region.ops)
    if (!op->has(ir::kTerminator)) emit_op(*op);
}

void Emitter::emit_op(const ir::Op& op) {
  current_op_ = &op;
  // clang-format off
  switch (kFamilies[op.kind]) {
    case Family::Identity:    return emit_identity(op);
    case Family::Constant:    return emit_constant(op);
    case Family::Binary:      return emit_binary(op);
    case Family::Compare:     return emit_compare(op);
    case Family::Unary:       return emit_unary(op);
    case Family::Math:        return emit_math(op);
    case Family::Fma:         return emit_fma(op);
    case Family::Where:       return emit_where(op);
    case Family::Cast:        return emit_cast(op);
    case Family::Bitcast:     return emit_bitcast(op);
    case Family::PtrAdd:      return emit_ptr_add(op);
    case Family::GlobalLoad:  return emit_global_load(op);
    case Family::GlobalStore: return emit_global_store(op);
    case Family::SharedLoad:  return emit_shared_load(op);
    case Family::SharedStore: return emit_shared_store(op);
    case Family::CpAsync:     return emit_cp_async(op);
    case Family::Nothing:     return;
    case Family::Mma:
      unsupported(&op, concat("'", op.name(), "' (mma.sync fragments) needs the 'mma_sync' ",
                              "capability; Vulkan reaches tensor cores through cooperative ",
                              "matrices"));
    case Family::Wgmma:
      unsupported(&op, concat("'", op.name(), "' (Hopper's warpgroup matrix ops) needs the 'wgmma' ",
                              "capability; Vulkan reaches tensor cores through cooperative ",
                              "matrices"));
    case Family::Tma:
      unsupported(&op, concat("'", op.name(), "' (Hopper's TMA copies and mbarriers) needs the ",
                              "'tma' capability; Vulkan stages descriptor loads with ordinary ",
                              "loads"));
    case Family::WarpSpecialize:
      unsupported(&op, concat("'", op.name(), "' (roles that hand stages over through mbarriers) ",
                              "needs the 'tma' capability; Vulkan's workgroups run one role"));
    case Family::AtomicRmw:   return emit_atomic_rmw(op);
    case Family::AtomicCas:   return emit_atomic_cas(op);
    case Family::Shuffle:     return emit_shuffle(op);
    case Family::Barrier:     return emit_barrier(op);
    case Family::CoopMat:     return emit_coopmat(op);
    case Family::For:         return emit_for(op);
    case Family::If:          return emit_if(op);
    case Family::While:       return emit_while(op);
    case Family::Hint:        return set(op.result(), get(op.operand(0)));
    case Family::Print:       return emit_print(op);
    case Family::Assert:      return emit_assert(op);
    case Family::InlineAsm:
      unsupported(&op, "PTX inline assembly (tl::inline_asm_elementwise), which only CUDA targets "
                       "run,");
    case Family::NotSimt:
      TESSERA_CHECK(false, "SPIR-V: op '", op.name(), "' cannot appear in a SIMT function");
  }
  // clang-format on
}

// --- what the target must support ----------------------------------------------------------------

void Emitter::check_support() const {
  if (!target.isa.starts_with("spirv"))
    unsupported(nullptr,
                "SPIR-V needs a Vulkan target (isa spirv1.6), got isa '" + target.isa + "'");
  require_cap(target::Cap::BufferDeviceAddress, nullptr, "pointers (buffer device addresses)");
  require_cap(target::Cap::Int64, nullptr, "pointers (64-bit addresses)");
  int threads = ir::simt_threads(fn), subgroup = ir::simt_subgroup(fn);
  if (threads > target.max_threads)
    unsupported(nullptr,
                concat(threads, " threads per workgroup exceed the limit of ", target.max_threads));
  if (subgroup != target.subgroup_size)
    unsupported(nullptr, concat("a kernel lowered for subgroup size ", subgroup,
                                " cannot run with subgroup size ", target.subgroup_size));
  int64_t shared = ir::shared_memory_bytes(fn);
  if (shared > target.max_shared_bytes)
    unsupported(nullptr, concat(shared, " bytes of shared memory exceed the limit of ",
                                target.max_shared_bytes));
  auto check = [&](const ir::Op* op, const ir::Type& t) {
    if (t.is_ptr) return;
    if (ir::is_fp8(t.dtype))  // not emulated: no SPIR-V device Tessera targets converts fp8
      unsupported(op, concat("dtype ", ir::dtype_name(t.dtype),
                             " is not supported (SPIR-V has no fp8; fp8 runs on CUDA sm_89+ and "
                             "the interpreters)"));
    if (!target.supports_dtype(t.dtype))
      unsupported(op, concat("dtype ", ir::dtype_name(t.dtype), " is not supported"));
    if (t.dtype == DType::bf16)
      require_cap(target::Cap::Int16, op, "bf16 (stored as 16-bit integers)");
  };
  for (const ir::Param& p : fn.params) check(nullptr, p.value->type);
  for (const ir::SharedBuffer& s : ir::shared_buffers(fn))
    check(nullptr, ir::Type::scalar(s.dtype));
  ir::walk(fn.body, [&](const ir::Op* op) {
    check_coopmat(*op);
    for (const ir::Value* v : op->results) check(op, v->type);
    for (const ir::Value* v : op->operands) check(op, v->type);
    for (const ir::Region* r : op->regions)
      for (const ir::Value* v : r->args) check(op, v->type);
  });
}

std::vector<uint32_t> Emitter::build() {
  check_support();
  uint32_t function = b.begin_function(fn.name);
  declare_shared();
  emit_prologue();
  emit_region(*fn.body);
  report_loop_limit();
  b.ret();
  b.end_function();
  b.entry_point(spv::ExecutionModelGLCompute, function, fn.name, interface_);
  b.execution_mode(function, spv::ExecutionModeLocalSize,
                   {static_cast<uint32_t>(ir::simt_threads(fn)), 1u, 1u});
  // Without float controls a driver may assume no inf, NaN or -0 (lavapipe then computes 0/0
  // as 0 and sin(inf) as 1); the tile IR's semantics keep them.
  if (target.has(target::Cap::InfNanPreserve)) {
    for (uint32_t width : {16u, 32u, 64u}) {
      if (!b.has_float(width)) continue;
      b.require(spv::CapabilitySignedZeroInfNanPreserve);
      b.execution_mode(function, spv::ExecutionModeSignedZeroInfNanPreserve, {width});
    }
  }
  // f32 subnormals are values like any other in the tile IR; a driver may flush them unless
  // asked not to (NVIDIA's Vulkan driver turns -1e-40f into -0 in a cast to f64).
  if (target.has(target::Cap::DenormPreserve32) && b.has_float(32)) {
    b.require(spv::CapabilityDenormPreserve);
    b.execution_mode(function, spv::ExecutionModeDenormPreserve, {32u});
  }
  return b.assemble();
}

}  // namespace impl

target::Artifact emit(const ir::Function& fn, const target::Target& target,
                      const EmitOptions& options) {
  TESSERA_CHECK(ir::is_simt(fn), "SPIR-V: function '", fn.name, "' is not a SIMT function");
  impl::Emitter emitter(fn, target);
  std::vector<uint32_t> words = emitter.build();
  const bool tools_apply = !uses_cooperative_matrix(words);  // SPIRV-Tools 2023.1 cannot read it
  auto check = [&](const char* stage) {
    if (!options.validate || !tools_apply) return;
    std::string error = validate(words);
    TESSERA_CHECK(error.empty(), "SPIR-V ", stage, " of kernel '", fn.name,
                  "' does not validate: ", error);
  };
  check("emitted");
  if (options.optimize && tools_apply && !counts_loops(target)) {
    words = optimize(words, fn.name);
    check("optimized");
  }
  target::Artifact a;
  a.kernel = fn.name;
  a.isa = "spirv";
  a.spirv = std::move(words);
  a.target = target.str();
  a.params = ir::param_layout(fn);
  a.param_bytes = emitter.param_bytes();
  a.grid_offset = emitter.grid_offset();
  a.params_by_address = emitter.params_by_address();
  a.fault_offset = emitter.fault_offset();
  a.faults = emitter.faults();
  a.print_offset = emitter.print_offset();
  a.prints = emitter.prints();
  a.threads = static_cast<uint32_t>(ir::simt_threads(fn));
  a.subgroup = static_cast<uint32_t>(ir::simt_subgroup(fn));
  a.shared_bytes = static_cast<uint64_t>(ir::shared_memory_bytes(fn));
  return a;
}

}  // namespace tessera::spirv
