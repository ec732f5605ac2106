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
#include "core/ir/op_table.h"
#include "core/ir/simt.h"

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

/// Inline PTX has no meaning on the host (check_interpretable refuses it at compile time).
[[noreturn]] void exec_inline_asm(Exec& ex, const ir::Op&) {
  check_interpretable(ex.fn(), "host");
  std::abort();
}

/// Every op kind's family, from ops.def: its traits pick whole families (every `kMath` row, unary
/// or binary), the lists name the rest. The static_assert fails the build while a kind in ops.def
/// has no family: new ops get semantics first.
constexpr ir::OpTable<Handler> kHandlers = [] {
  using K = ir::OpKind;
  ir::OpTable<Handler> t;
  t.add_trait(exec_unary, ir::kMath);
  // clang-format off
  t.add(exec_tile, {K::ProgramId, K::NumPrograms, K::Constant, K::Arange, K::Splat, K::Broadcast,
                    K::ExpandDims, K::Reshape, K::Permute, K::Cat, K::PtrAdd, K::MultipleOf,
                    K::MaxContiguous});
  t.add(exec_arith, {K::Add, K::Sub, K::Mul, K::Div, K::Rem, K::Min, K::Max, K::And, K::Or, K::Xor,
                     K::Shl, K::Shr, K::CmpEq, K::CmpNe, K::CmpLt, K::CmpLe, K::CmpGt, K::CmpGe});
  t.add(exec_unary, {K::Neg, K::Not, K::Abs, K::Fma, K::Where});
  t.add(exec_cast, {K::Cast, K::Bitcast});
  t.add(exec_memory, {K::Load, K::Store, K::AtomicRmw, K::AtomicCas, K::DescLoad, K::DescStore});
  t.add(exec_reduce, {K::Reduce, K::Scan});
  t.add(exec_combine, {K::ReduceGeneric, K::ScanGeneric});
  t.add(exec_dot, {K::Dot});
  t.add(exec_debug, {K::Print, K::Assert, K::Assume, K::DebugBarrier});
  t.add(exec_control, {K::For, K::If, K::While});
  t.add(exec_terminator, {K::Yield, K::Condition});
  t.add_trait(exec_simt_only, ir::kSimt);
  t.add(exec_inline_asm, {K::InlineAsm, K::InlineAsmImpure});
  // clang-format on
  return t;
}();
static_assert(ir::complete(kHandlers), "an op kind of ops.def has no tile-interpreter family");

}  // namespace

void check_interpretable(const ir::Function& fn, std::string_view device) {
  ir::walk(fn.body, [&](const ir::Op* op) {
    if (ir::is_inline_asm(op->kind))
      fail(ErrorKind::Unsupported, op->loc.str(), ": error: '", op->name(),
           "' (tl::inline_asm_elementwise) is PTX inline assembly, which only CUDA devices run; ",
           "kernel '", fn.name, "' cannot run on device '", device, "' (the ",
           ir::is_simt(fn) ? "SIMT" : "tile", " interpreter)");
  });
}

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
  kHandlers[op.kind](*this, op);
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
