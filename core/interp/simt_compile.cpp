/// \file Compiles a SIMT function for the machine once per run: a slot per SSA value in one arena,
/// an Instr per op with its handler, and the values known before any program runs (parameters,
/// constants, lane and subgroup ids) written into their slots.
#include <cstring>
#include <unordered_map>

#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {
namespace {

using ir::OpKind;

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
    if (type.is_mat()) return coopmat_slot_bytes(type, m_.subgroup);
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
    for (size_t i = 0; i < op.regions.size(); ++i) instr.blocks[i] = compile_region(*op.region(i));
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

  /// Every op kind's family: a switch without a default, so that a new kind in ops.def is a
  /// compile error here until it has SIMT semantics.
  Handler select(Instr& instr) const {
    const ir::Op& op = *instr.op;
    using K = OpKind;
    // clang-format off
    switch (op.kind) {
      case K::ProgramId: case K::NumPrograms: case K::Add: case K::Sub: case K::Mul: case K::Div:
      case K::Rem: case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl:
      case K::Shr: case K::CmpEq: case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt:
      case K::CmpGe: case K::Neg: case K::Not: case K::Abs: case K::Exp: case K::Exp2: case K::Log:
      case K::Log2: case K::Sqrt: case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh:
      case K::Erf: case K::Floor: case K::Ceil: case K::Fma: case K::Where: case K::Cast:
      case K::Log1p: case K::PtrAdd:
      case K::Expm1: case K::Log10: case K::Sinh: case K::Cosh: case K::Asin: case K::Acos:
      case K::Atan: case K::Cbrt: case K::Pow: case K::Atan2: case K::Hypot:
        return select_scalar(instr);
      case K::AtomicRmw: case K::AtomicCas: case K::GlobalLoad: case K::GlobalStore:
        return select_memory(instr);
      case K::SharedLoad: case K::SharedStore:
        return select_shared(instr, m_.shared);
      case K::For: case K::If: case K::While: case K::Barrier: case K::Shuffle:
        return select_control(instr, t_);
      case K::Print: case K::Assert: case K::Assume:
        return select_debug(instr);
      case K::Mma: case K::LdMatrix: case K::CpAsync: case K::CpAsyncCommit: case K::CpAsyncWait:
        return select_matrix(instr, m_.shared);
      case K::Wgmma: case K::WgmmaFence: case K::WgmmaCommit: case K::WgmmaWait:
      case K::FenceAsyncShared:
        return select_wgmma(instr, m_);
      case K::CoopMatFill: case K::CoopMatLoad: case K::CoopMatStore: case K::CoopMatMulAdd:
        return select_coopmat(instr);
      case K::Arange: case K::Splat: case K::Broadcast: case K::ExpandDims: case K::Reshape:
      case K::Permute: case K::Cat: case K::Load: case K::Store: case K::Reduce:
      case K::ReduceGeneric: case K::Scan: case K::ScanGeneric: case K::Dot: case K::DescLoad:
      case K::DescStore: case K::DebugBarrier:
        fail(ErrorKind::User, op.loc.str(), ": error: '", op.name(),
             "' is a tile-IR op; the SIMT interpreter runs SIMT functions only");
      case K::Constant: case K::LaneId: case K::SubgroupId: case K::Bitcast: case K::MultipleOf:
      case K::MaxContiguous: case K::Yield: case K::Condition:
        break;
    }
    // clang-format on
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
