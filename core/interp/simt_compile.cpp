/// \file Compiles a SIMT function for the machine once per run: a slot per SSA value in one arena,
/// an Instr per op with its handler, and the values known before any program runs (parameters,
/// constants, lane and subgroup ids) written into their slots.
#include <cstring>
#include <unordered_map>

#include "core/interp/simt_exec.h"
#include "core/ir/op_table.h"

namespace tessera::interp::simt {
namespace {

using ir::OpKind;

/// The SIMT interpreter's op families. `Special` kinds are compiled before family selection
/// (constants, ids, bitcasts, hints, terminators).
enum class Family : uint8_t {
  Special,
  Scalar,
  Memory,
  Shared,
  Control,
  Debug,
  Matrix,
  Wgmma,
  Tma,
  CoopMat,
  TileOnly,
  InlineAsm  ///< PTX only: refused (check_interpretable)
};

/// Every op kind's family: traits pick whole families (every math row is scalar), the lists name
/// the rest; the static_assert fails the build while a kind of ops.def has none.
constexpr ir::OpTable<Family> kFamilies = [] {
  using K = OpKind;
  using F = Family;
  ir::OpTable<Family> t;
  t.add_trait(F::Scalar, ir::kMath);
  // clang-format off
  t.add(F::Scalar, {K::ProgramId, K::NumPrograms, K::Add, K::Sub, K::Mul, K::Div, K::Rem, K::Min,
                    K::Max, K::And, K::Or, K::Xor, K::Shl, K::Shr, K::CmpEq, K::CmpNe, K::CmpLt,
                    K::CmpLe, K::CmpGt, K::CmpGe, K::Neg, K::Not, K::Abs, K::Fma, K::Where,
                    K::Cast, K::PtrAdd});
  t.add(F::Memory, {K::AtomicRmw, K::AtomicCas, K::GlobalLoad, K::GlobalStore});
  t.add(F::Shared, {K::SharedLoad, K::SharedStore});
  t.add(F::Control, {K::For, K::If, K::While, K::Barrier, K::Shuffle, K::WarpSpecialize});
  t.add(F::Debug, {K::Print, K::Assert, K::Assume});
  t.add(F::Matrix, {K::Mma, K::LdMatrix, K::CpAsync, K::CpAsyncCommit, K::CpAsyncWait});
  t.add(F::Wgmma, {K::Wgmma, K::WgmmaFence, K::WgmmaCommit, K::WgmmaWait, K::FenceAsyncShared,
                   K::SetMaxNReg});
  t.add(F::Tma, {K::MbarrierInit, K::MbarrierArriveTx, K::MbarrierWait, K::MbarrierInval,
                  K::TmaLoad, K::TmaStore, K::TmaStoreCommit, K::TmaStoreWait,
                  K::ClusterRank, K::ClusterBarrier});
  t.add(F::CoopMat, {K::CoopMatFill, K::CoopMatLoad, K::CoopMatStore, K::CoopMatMulAdd,
                      K::CoopMatLoadTensor});
  t.add(F::TileOnly, {K::Arange, K::Splat, K::Broadcast, K::ExpandDims, K::Reshape, K::Permute,
                      K::Cat, K::Load, K::Store, K::Reduce, K::ReduceGeneric, K::Scan,
                      K::ScanGeneric, K::Dot, K::DescLoad, K::DescStore, K::DebugBarrier});
  t.add(F::InlineAsm, {K::InlineAsm, K::InlineAsmImpure});
  t.add(F::Special, {K::Constant, K::LaneId, K::SubgroupId, K::Bitcast, K::MultipleOf,
                     K::MaxContiguous, K::Yield, K::Condition});
  // clang-format on
  return t;
}();
static_assert(ir::complete(kFamilies), "an op kind of ops.def has no SIMT-interpreter family");

class Compiler {
 public:
  explicit Compiler(Machine& m) : m_(m), t_(m.threads) {}

  void run(const std::vector<RuntimeValue>& params) {
    size_t bytes = 0;
    auto count = [&](const ir::Value* v) { bytes += footprint(v->type); };
    for (const ir::Value* a : m_.fn.body->args) count(a);
    ir::walk(m_.fn.body, [&](const ir::Op* op) {
      for (const ir::Value* r : op->results) count(r);
      for (const ir::Region* region : op->regions)
        for (const ir::Value* a : region->args) count(a);
    });
    m_.arena.assign(bytes / 8, 0);
    next_ = reinterpret_cast<std::byte*>(m_.arena.data());
    compile_region(*m_.fn.body);
    TESSERA_CHECK(params.size() == m_.fn.body->args.size(), "kernel '", m_.fn.name, "' takes ",
                  m_.fn.body->args.size(), " parameters, given ", params.size());
    for (size_t i = 0; i < params.size(); ++i) fill(m_.blocks[0].args[i], params[i].raw());
  }

 private:
  /// Bytes one thread's share of a value of `type` takes.
  int elem_bytes(const ir::Type& type) const {
    TESSERA_CHECK(!type.is_tile(), "a SIMT function holds a value of type ", type.str());
    if (type.is_mat()) return coopmat_slot_bytes(type, m_.subgroup, t_);
    return type.is_ptr ? 8 : ir::dtype_bytes(type.dtype);
  }

  size_t footprint(const ir::Type& type) const {
    return (size_t{t_} * elem_bytes(type) + 7) / 8 * 8;
  }

  Slot define(const ir::Value* v) {
    Slot s{next_, elem_bytes(v->type)};
    next_ += footprint(v->type);
    slots_[v] = s;
    return s;
  }

  Slot use(const ir::Value* v) const {
    auto it = slots_.find(v);
    TESSERA_CHECK(it != slots_.end(), "value of type ", v->type.str(),
                  " used before it is defined");
    return it->second;
  }

  /// Every thread's element of `s` := the element at `bits`.
  void fill(const Slot& s, const std::byte* bits) const {
    for (uint32_t t = 0; t < t_; ++t) std::memcpy(s.data + size_t{t} * s.bytes, bits, s.bytes);
  }

  uint32_t compile_region(const ir::Region& region) {
    const auto index = static_cast<uint32_t>(m_.blocks.size());
    m_.blocks.emplace_back();  // reserve the index; nested regions append after it
    Block block;
    for (const ir::Value* a : region.args) block.args.push_back(define(a));
    const ir::Op* term = region.terminator();
    for (const ir::Op* op : region.ops) {
      if (op != term) {
        compile_op(*op, block.code);
        continue;
      }
      for (const ir::Value* v : op->operands) block.yields.push_back(use(v));
    }
    m_.blocks[index] = std::move(block);
    return index;
  }

  void compile_op(const ir::Op& op, std::vector<Instr>& code) {
    switch (op.kind) {
      case OpKind::Constant:
        return fill(define(op.result()), constant_value(op).raw());
      case OpKind::LaneId:
      case OpKind::SubgroupId:
        return thread_ids(op);
      case OpKind::Bitcast:  // the same bits: share the operand's slot
      case OpKind::MultipleOf:
      case OpKind::MaxContiguous:
        slots_[op.result()] = use(op.operand(0));
        return;
      default:
        break;
    }
    Instr instr;
    instr.op = &op;
    for (const ir::Value* v : op.operands) instr.in.push_back(use(v));
    for (const ir::Value* r : op.results) instr.out.push_back(define(r));
    for (const ir::Region* r : op.regions) instr.blocks.push_back(compile_region(*r));
    instr.run = select(instr);
    TESSERA_CHECK(instr.run, "no SIMT handler for '", op.name(), "' on ",
                  op.operands.empty() ? "no operands" : op.operand(0)->type.str());
    code.push_back(std::move(instr));
  }

  void thread_ids(const ir::Op& op) {
    const Slot s = define(op.result());
    TESSERA_CHECK(s.bytes == 4, "'", op.name(), "' of type ", op.result()->type.str());
    int32_t* ids = s.as<int32_t>();
    const uint32_t sg = m_.subgroup;
    for (uint32_t t = 0; t < t_; ++t)
      ids[t] = static_cast<int32_t>(op.kind == OpKind::LaneId ? t % sg : t / sg);
  }

  /// Every op kind's family (kFamilies, from ops.def), then an exhaustive switch over families.
  Handler select(Instr& instr) const {
    const ir::Op& op = *instr.op;
    switch (kFamilies[op.kind]) {
      case Family::Scalar:
        return select_scalar(instr);
      case Family::Memory:
        return select_memory(instr);
      case Family::Shared:
        return select_shared(instr, m_.shared);
      case Family::Control:
        return select_control(instr, t_);
      case Family::Debug:
        return select_debug(instr);
      case Family::Matrix:
        return select_matrix(instr, m_.shared);
      case Family::Wgmma:
        return select_wgmma(instr, m_);
      case Family::Tma:
        return select_tma(instr, m_);
      case Family::CoopMat:
        return select_coopmat(instr);
      case Family::TileOnly:
        fail(ErrorKind::User, op.loc.str(), ": error: '", op.name(),
             "' is a tile-IR op; the SIMT interpreter runs SIMT functions only");
      case Family::InlineAsm:
        check_interpretable(m_.fn, "simt");
        break;
      case Family::Special:
        break;
    }
    TESSERA_CHECK(false, "'", op.name(), "' has no SIMT handler");
    return nullptr;
  }

  Machine& m_;
  const uint32_t t_;
  std::byte* next_ = nullptr;
  std::unordered_map<const ir::Value*, Slot> slots_;
};

}  // namespace

void compile(Machine& m, const std::vector<RuntimeValue>& params) {
  Compiler(m).run(params);
}

}  // namespace tessera::interp::simt
