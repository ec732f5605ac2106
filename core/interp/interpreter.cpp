/// \file interp::run: the grid loop, the parameter block, the environment and the one dispatch
/// table from op kind to op family.
#include "core/interp/interpreter.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "core/interp/exec.h"
#include "core/interp/scalar.h"
#include "core/ir/abi.h"

namespace tessera::interp {
namespace {

using Handler = void (*)(Exec&, const ir::Op&);

[[noreturn]] void exec_terminator(Exec&, const ir::Op& op) {
  TESSERA_CHECK(false, "'", op.name(), "' outside the end of a region");
  std::abort();
}

/// SIMT-IR ops have no tile semantics: the SIMT interpreter runs them.
void exec_simt_only(Exec&, const ir::Op& op) {
  fail(ErrorKind::User, op.loc.str(), ": error: '", op.name(),
       "' is a SIMT-IR op; the tile interpreter runs tile-IR kernels only");
}

/// Every op kind's family. A switch without a default, so a new kind in ops.def that is not
/// listed here is a compile warning (an error under -Werror): new ops get semantics first.
Handler handler_for(ir::OpKind kind) {
  using K = ir::OpKind;
  // clang-format off
  switch (kind) {
    case K::ProgramId: case K::NumPrograms: case K::Constant: case K::Arange: case K::Splat:
    case K::Broadcast: case K::ExpandDims: case K::Reshape: case K::Permute: case K::Cat:
    case K::PtrAdd: case K::MultipleOf: case K::MaxContiguous:
      return exec_tile;
    case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem: case K::Min: case K::Max:
    case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq: case K::CmpNe:
    case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe:
      return exec_arith;
    case K::Neg: case K::Not: case K::Abs: case K::Exp: case K::Exp2: case K::Log: case K::Log2:
    case K::Sqrt: case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh: case K::Erf:
    case K::Log1p: case K::Floor: case K::Ceil: case K::Fma: case K::Where:
    case K::Expm1: case K::Log10: case K::Sinh: case K::Cosh: case K::Asin: case K::Acos:
    case K::Atan: case K::Cbrt: case K::Pow: case K::Atan2: case K::Hypot:
      return exec_unary;
    case K::Cast: case K::Bitcast:
      return exec_cast;
    case K::Load: case K::Store: case K::AtomicRmw: case K::AtomicCas: case K::DescLoad:
    case K::DescStore:
      return exec_memory;
    case K::Reduce: case K::Scan:
      return exec_reduce;
    case K::ReduceGeneric: case K::ScanGeneric:
      return exec_combine;
    case K::Dot:
      return exec_dot;
    case K::Print: case K::Assert: case K::Assume: case K::DebugBarrier:
      return exec_debug;
    case K::For: case K::If: case K::While:
      return exec_control;
    case K::Yield: case K::Condition:
      return exec_terminator;
    case K::LaneId: case K::SubgroupId: case K::Barrier: case K::Shuffle: case K::SharedLoad:
    case K::SharedStore: case K::GlobalLoad: case K::GlobalStore: case K::Mma: case K::LdMatrix:
    case K::CpAsync: case K::CpAsyncCommit: case K::CpAsyncWait: case K::Wgmma:
    case K::WgmmaFence: case K::WgmmaCommit: case K::WgmmaWait: case K::FenceAsyncShared:
    case K::CoopMatFill: case K::CoopMatLoad: case K::CoopMatStore: case K::CoopMatMulAdd:
      return exec_simt_only;
  }
  // clang-format on
  return exec_terminator;
}

constexpr int kNumKinds = 0
#define OP(name, text, min_ops, max_ops, results, regions, traits) +1
#include "core/ir/ops.def"
#undef OP
    ;

const std::array<Handler, kNumKinds>& handlers() {
  static const auto table = [] {
    std::array<Handler, kNumKinds> t{};
    for (int i = 0; i < kNumKinds; ++i) t[i] = handler_for(static_cast<ir::OpKind>(i));
    return t;
  }();
  return table;
}

}  // namespace

std::vector<RuntimeValue> read_params(const ir::Function& fn, std::span<const std::byte> block) {
  const ir::ParamLayout layout = ir::param_layout(fn);
  std::vector<RuntimeValue> values;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::ParamSlot& slot = layout.slots[i];
    if (slot.offset + slot.size > block.size())
      fail(ErrorKind::Argument, "parameter block of ", block.size(), " bytes is too small for ",
           "kernel '", fn.name, "' (parameter '", fn.params[i].name, "' ends at byte ",
           slot.offset + slot.size, ")");
    RuntimeValue v = RuntimeValue::of_type(fn.params[i].value->type);
    std::memcpy(v.raw(), block.data() + slot.offset, slot.size);
    if (!v.is_ptr && v.dtype == ir::DType::i1) v.data<uint8_t>()[0] = v.data<uint8_t>()[0] != 0;
    values.push_back(std::move(v));
  }
  return values;
}

Exec::Exec(const ir::Function& fn, const MemoryMap& memory, const RunOptions& options, Grid grid)
    : fn_(fn),
      memory_(memory),
      out_(options.print_out ? *options.print_out : std::cout),
      grid_(grid),
      deadline_(options.deadline) {}

void Exec::begin_program(uint32_t x, uint32_t y, uint32_t z) {
  pid_ = {x, y, z};
  env_.clear();
}

const RuntimeValue& Exec::get(const ir::Value* v) const {
  auto it = env_.find(v);
  TESSERA_CHECK(it != env_.end(), "value of type ", v->type.str(), " used before it is defined");
  return it->second;
}

void Exec::set(const ir::Value* v, RuntimeValue value) {
  env_[v] = std::move(value);
}

RuntimeValue Exec::take(const ir::Value* v) {
  auto it = env_.find(v);
  TESSERA_CHECK(it != env_.end(), "value of type ", v->type.str(), " used before it is defined");
  return std::move(it->second);
}

void Exec::exec(const ir::Op& op) {
  handlers()[static_cast<size_t>(op.kind)](*this, op);
}

std::vector<RuntimeValue> Exec::run_region(const ir::Region& region,
                                           std::vector<RuntimeValue> args) {
  TESSERA_CHECK(args.size() == region.args.size(), "region takes ", region.args.size(),
                " arguments, given ", args.size());
  for (size_t i = 0; i < args.size(); ++i) set(region.args[i], std::move(args[i]));
  const ir::Op* term = region.terminator();
  for (const ir::Op* op : region.ops)
    if (op != term) exec(*op);
  std::vector<RuntimeValue> out;
  if (!term) return out;
  // Yielded values defined by this region's own ops are dead after the yield: move them out
  // (unless yielded twice); anything else is copied.
  for (size_t i = 0; i < term->operands.size(); ++i) {
    const ir::Value* v = term->operands[i];
    bool repeated = false;
    for (size_t j = i + 1; j < term->operands.size(); ++j) repeated |= term->operands[j] == v;
    const bool local = v->def && v->def->parent == &region;
    out.push_back(local && !repeated ? take(v) : get(v));
  }
  return out;
}

std::string Exec::site(const ir::Op& op) const {
  std::ostringstream os;
  os << "in kernel '" << fn_.name << "' at " << op.loc.str() << ", program (" << pid_[0] << ", "
     << pid_[1] << ", " << pid_[2] << ")";
  return os.str();
}

void Exec::fault(const ir::Op& op, std::string_view what, std::string_view detail) const {
  fail(ErrorKind::DeviceFault, what, " ", site(op), detail);
}

void run(const ir::Function& fn, std::span<const std::byte> params, Grid grid,
         const MemoryMap& memory, const RunOptions& options) {
  TESSERA_CHECK(fn.body, "kernel '", fn.name, "' has no body");
  const std::vector<RuntimeValue> args = read_params(fn, params);
  Exec ex(fn, memory, options, grid);
  const uint64_t total = uint64_t{grid.x} * grid.y * grid.z;
  const uint64_t last = std::min(total, options.last_program);
  for (uint64_t linear = options.first_program; linear < last; ++linear) {
    const auto x = static_cast<uint32_t>(linear % grid.x);
    const auto y = static_cast<uint32_t>(linear / grid.x % grid.y);
    const auto z = static_cast<uint32_t>(linear / grid.x / grid.y);
    ex.begin_program(x, y, z);
    if (ex.deadline().passed())
      fail(ErrorKind::DeviceFault, ex.deadline().describe(), " in kernel '", fn.name,
           "' before program (", x, ", ", y, ", ", z, ") of grid (", grid.x, ", ", grid.y, ", ",
           grid.z, ")");
    ex.run_region(*fn.body, args);
  }
}

Deadline Deadline::after(double seconds, const char* setting) {
  Deadline d;
  d.seconds = seconds;
  d.setting = setting;
  if (!(seconds > 0)) return d;
  // Limits beyond a century are none (and would overflow the clock's arithmetic).
  if (seconds > 3.2e9) return d;
  d.at = std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
  return d;
}

std::string Deadline::describe() const {
  std::ostringstream os;
  os << "timed out: still running after the time limit of " << seconds << " s";
  if (setting) os << " (" << setting << ")";
  return os.str();
}

}  // namespace tessera::interp
