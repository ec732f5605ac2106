/// \file Software pipelining of the matmul loop with cp.async. A `for` whose body loads A and B
/// tiles that feed (directly or transposed) only its one tensor-core dot keeps num_stages shared
/// buffers per operand: before the loop, stages 0 .. S-2 are prefetched (one cp.async group each);
/// each iteration waits for its own stage (cp_async_wait S-2, barrier), prefetches iteration
/// i + S - 1 into the stage iteration i - 1 read, and the dot reads its fragments straight from
/// stage i % S. Iterations past the end copy nothing (zero fill). The loads' pointers and masks
/// are recomputed for iteration j by substituting lb + j * step for the induction variable, and
/// init + j * inc for a loop-carried pointer tile that starts at a free init and advances by a
/// loop-invariant inc (so the copies may use a layout of their own: 16 bytes per thread). Any
/// other loop lowers plainly (lower_control.cpp).
#include <algorithm>
#include <cmath>

#include "core/ir/ops.h"
#include "core/lower/mma_operand.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

/// One operand's load, prefetched by cp.async.
struct PipelinedLoad {
  const ir::Op* load = nullptr;
  bool transposed = false;         ///< the dot reads permute(load, [1, 0])
  Layout layout;                   ///< the load's home, in the load's coordinates
  int64_t width = 1;               ///< elements per 16-byte copy
  int iter_arg = -1;               ///< the pointer is this iter arg (index in iter_args), or -1
  const ir::Value* init = nullptr; ///< ... starting at this free value
  const ir::Value* inc = nullptr;  ///< ... advanced by this loop-invariant offset
  Operand operand;                 ///< the stage tile (stage 0 at element 0 of its buffer)
};

struct Pipeline {
  const ir::Op* loop = nullptr;
  const ir::Op* dot = nullptr;
  MmaPlan plan;
  int stages = 2;
  PipelinedLoad a, b;
  ir::Value *lb = nullptr, *ub = nullptr, *step = nullptr;
  ir::Value *read = nullptr, *write = nullptr;  ///< this iteration's stages (body arguments)
  ir::Value* count = nullptr;                   ///< iterations before this one (a body argument)
};

namespace {

bool is_body_value(const ir::Region& body, const ir::Value* v) {
  if (v->is_arg()) return v->owner == &body;
  return v->def->parent == &body;
}

/// Does `v` change from one iteration of the loop to the next (a body argument, or computed from
/// one)?
bool varies(const ir::Region& body, const ir::Value* v) {
  if (v->is_arg()) return v->owner == &body;
  if (v->def->parent != &body) return false;
  for (const ir::Value* x : v->def->operands)
    if (varies(body, x)) return true;
  return false;
}

bool recomputable_kind(OpKind k) {
  switch (k) {
    case OpKind::Constant: case OpKind::Arange: case OpKind::Splat: case OpKind::Broadcast:
    case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Permute: case OpKind::MultipleOf:
    case OpKind::MaxContiguous:
      return true;
    default:
      return ir::has_trait(k, ir::kElementwise);
  }
}

/// Can `v` be evaluated at another iteration: from outside the loop, the induction variable, or
/// recomputable ops of such values?
bool shiftable(const ir::Region& body, const ir::Value* v) {
  if (!is_body_value(body, v)) return true;
  if (v->is_arg()) return v == body.args[0];
  if (!recomputable_kind(v->def->kind)) return false;
  for (const ir::Value* x : v->def->operands)
    if (!shiftable(body, x)) return false;
  return true;
}

int uses(const ir::Region& body, const ir::Value* v) {
  int n = 0;
  ir::walk(const_cast<ir::Region*>(&body), [&](const ir::Op* op) {
    for (const ir::Value* x : op->operands) n += x == v;
  });
  return n;
}

bool is_zero_constant(const ir::Value* v) {
  if (!v->def || v->def->kind != OpKind::Constant) return false;
  ir::ConstantOp c(v->def);
  return c.is_float() ? c.float_value() == 0.0 && !std::signbit(c.float_value()) : c.int_value() == 0;
}

/// Values of the loop body at iteration iv' (iv' given): recomputes what the body computes from
/// the induction variable (emitting at the builder's point); everything from outside the loop
/// comes from the lowering as usual.
class Shifted {
 public:
  Shifted(Lowerer& lw, const ir::Region& body, ir::Value* iv) : lw_(lw), body_(body), iv_(iv) {}

  ir::Value* scalar(const ir::Value* v) {
    if (!is_body_value(body_, v)) return lw_.scalar(v);
    if (v == body_.args[0]) return iv_;
    auto it = scalars_.find(v);
    if (it != scalars_.end()) return it->second;
    const ir::Op& op = *v->def;
    ir::Value* out = nullptr;
    if (op.kind == OpKind::Constant) {
      ir::ConstantOp c(const_cast<ir::Op*>(&op));
      out = c.is_float() ? lw_.const_float(v->type.dtype, c.float_value()) : lw_.const_int(v->type.dtype, c.int_value());
    } else {
      std::vector<ir::Value*> operands;
      for (const ir::Value* x : op.operands) operands.push_back(scalar(x));
      out = lw_.emit(op.kind, operands, v->type, op.attrs);
    }
    return scalars_[v] = out;
  }

  Regs regs(const ir::Value* v, const Layout& l) {
    if (!v->type.is_tile()) return Regs(static_cast<size_t>(l.num_regs()), scalar(v));
    if (!is_body_value(body_, v)) return lw_.regs(v, l);
    const std::string key = std::to_string(reinterpret_cast<uintptr_t>(v)) + "|" + l.str();
    auto it = tiles_.find(key);
    if (it != tiles_.end()) return it->second;
    return tiles_[key] = compute(*v->def, l);
  }

 private:
  Regs compute(const ir::Op& op, const Layout& l) {
    switch (op.kind) {
      case OpKind::Constant: case OpKind::Arange:
        return lw_.lower_free(op, l);
      case OpKind::Splat:
        return Regs(static_cast<size_t>(l.num_regs()), scalar(op.operand(0)));
      case OpKind::Broadcast: {
        const ir::Value* x = op.operand(0);
        Layout lx = unbroadcast(l, x->type.shape);
        Regs rx = regs(x, lx);
        Regs out;
        for (int i = 0; i < l.num_regs(); ++i) {
          std::vector<int64_t> c = l.reg_coords(i);
          for (size_t d = 0; d < c.size(); ++d)
            if (x->type.shape[d] == 1) c[d] = 0;
          out.push_back(rx[static_cast<size_t>(lx.reg_of(c))]);
        }
        return out;
      }
      case OpKind::ExpandDims:
        return regs(op.operand(0), slice(l, static_cast<int>(op.int_attr("axis"))));
      case OpKind::Reshape:
        return regs(op.operand(0), reshape(l, op.operand(0)->type.shape));
      case OpKind::Permute: {
        const std::vector<int64_t>& order = op.ints_attr("order");
        std::vector<int64_t> inv(order.size());
        for (size_t i = 0; i < order.size(); ++i) inv[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
        return regs(op.operand(0), permute(l, inv));
      }
      case OpKind::MultipleOf: case OpKind::MaxContiguous:
        return regs(op.operand(0), l);
      default:
        break;
    }
    std::vector<Regs> operands;
    for (const ir::Value* x : op.operands) operands.push_back(regs(x, l));
    Regs out;
    for (int i = 0; i < l.num_regs(); ++i) {
      std::vector<ir::Value*> ops;
      for (const Regs& o : operands) ops.push_back(o[static_cast<size_t>(i)]);
      out.push_back(lw_.emit(op.kind, ops, op.result()->type.element(), op.attrs));
    }
    return out;
  }

  Lowerer& lw_;
  const ir::Region& body_;
  ir::Value* iv_;
  std::unordered_map<const ir::Value*, ir::Value*> scalars_;
  std::unordered_map<std::string, Regs> tiles_;
};

/// The load behind dot operand `v` (v itself or its transpose), if cp.async can prefetch it.
std::optional<PipelinedLoad> find_load(const Lowerer& lw, const ir::ForOp& f, const ir::Value* v) {
  const ir::Region& body = *f.body();
  PipelinedLoad p;
  if (v->def && v->def->kind == OpKind::Permute && v->def->parent == &body &&
      v->def->ints_attr("order") == std::vector<int64_t>{1, 0} && uses(body, v) == 1) {
    p.transposed = true;
    v = v->def->operand(0);
  }
  if (!v->def || v->def->kind != OpKind::Load || v->def->parent != &body || uses(body, v) != 1)
    return std::nullopt;
  const ir::Op& load = *v->def;
  ir::LoadOp ld(const_cast<ir::Op*>(&load));
  if (load.int_attr_or("volatile", 0) != 0) return std::nullopt;
  if (ld.other() && !is_zero_constant(ld.other())) return std::nullopt;
  if (ld.mask() && !shiftable(body, ld.mask())) return std::nullopt;
  const ir::Value* ptr = ld.ptr();
  for (size_t i = 0; i < f.iter_args().size(); ++i) {
    if (ptr != f.iter_args()[i]) continue;
    // A carried pointer tile: its next value must be ptr_add(it, loop-invariant increment).
    const ir::Value* next = body.terminator()->operand(i);
    if (!next->def || next->def->kind != OpKind::PtrAdd || next->def->operand(0) != ptr) return std::nullopt;
    p.inc = next->def->operand(1);
    if (varies(body, p.inc) || !shiftable(body, p.inc)) return std::nullopt;
    p.init = f.inits()[i];
    if (!lw.homes().is_free(p.init)) return std::nullopt;
    p.iter_arg = static_cast<int>(i);
  }
  if (p.iter_arg < 0 && !shiftable(body, ptr)) return std::nullopt;
  p.load = &load;
  // Copies go straight to shared memory and their pointers are recomputed, so they may use any
  // layout: 16 bytes per thread along the home's contiguous dimension (threads past the tile hold
  // copies and skip).
  p.layout = lw.homes().home(v);
  const int fast = fast_dim(p.layout);
  if (fast >= 0)
    p.layout = blocked(v->type.shape, {fast, 1 - fast}, static_cast<int>(16 / ir::dtype_bytes(v->type.dtype)),
                       lw.threads());
  p.width = access_width(lw, p.layout, ptr, ld.mask(), ld.other());
  if (p.width * ir::dtype_bytes(v->type.dtype) != 16) return std::nullopt;
  return p;
}

/// The layout of `p`'s load in the dot operand's coordinates.
Layout operand_layout(const PipelinedLoad& p) {
  return p.transposed ? permute(p.layout, {1, 0}) : p.layout;
}

/// step > 0 ? it < ub : it > ub (the loop's own test).
ir::Value* in_range(Lowerer& lw, ir::Value* it, ir::Value* ub, ir::Value* step) {
  const Type i1 = Type::scalar(DType::i1);
  ir::Value* up = lw.emit(OpKind::CmpGt, {step, lw.const_int(step->type.dtype, 0)}, i1);
  ir::Value* below = lw.emit(OpKind::CmpLt, {it, ub}, i1);
  ir::Value* above = lw.emit(OpKind::CmpGt, {it, ub}, i1);
  return lw.emit(OpKind::Where, {up, below, above}, i1);
}

/// The pointers of `p`'s load at iteration `j` (an integer scalar; `at` evaluates the body there).
Regs pointers(Lowerer& lw, const PipelinedLoad& p, Shifted& at, ir::Value* j) {
  ir::LoadOp ld(const_cast<ir::Op*>(p.load));
  if (p.iter_arg < 0) return at.regs(ld.ptr(), p.layout);
  Regs ptrs = lw.regs(p.init, p.layout), inc = at.regs(p.inc, p.layout);
  for (size_t i = 0; i < ptrs.size(); ++i) {
    ir::Value* n = j->type == inc[i]->type ? j : lw.emit(OpKind::Cast, {j}, inc[i]->type);
    ptrs[i] = lw.emit(OpKind::PtrAdd, {ptrs[i], lw.mul(inc[i], n)}, ptrs[i]->type);
  }
  return ptrs;
}

/// cp_async of one operand's tile of iteration `j` (evaluated by `at`) into the stage at element
/// offset `stage`; `valid`: the iteration exists.
void issue(Lowerer& lw, const PipelinedLoad& p, Shifted& at, ir::Value* j, ir::Value* stage,
           ir::Value* valid) {
  ir::LoadOp ld(const_cast<ir::Op*>(p.load));
  Regs ptrs = pointers(lw, p, at, j);
  Regs masks = ld.mask() ? at.regs(ld.mask(), p.layout) : Regs{};
  const Operand& o = p.operand;
  const Layout lo = operand_layout(p);
  ir::Value* base = lw.at_entry("cp:" + o.tile.key() + "|" + std::to_string(o.row_dim) + "|" + lo.str(), [&] {
    return o.tile.index(lw, lw.thread_coord(lo, o.row_dim), lw.thread_coord(lo, 1 - o.row_dim));
  });
  ir::Value* dst = lw.add(base, stage);
  lw.guarded(lw.owner(lo), [&] {
    for (int i = 0; i < lo.num_regs(); i += static_cast<int>(p.width)) {
      std::vector<int64_t> c = lo.reg_coords(i);
      const int64_t off = o.tile.offset(c[static_cast<size_t>(o.row_dim)], c[static_cast<size_t>(1 - o.row_dim)]);
      ir::Value* idx = off ? lw.emit(OpKind::Xor, {dst, lw.const_int(DType::i32, off)}, dst->type) : dst;
      ir::Value* pred = masks.empty() ? valid : lw.and_(masks[static_cast<size_t>(i)], valid);
      lw.b().create(OpKind::CpAsync, {idx, ptrs[static_cast<size_t>(i)], pred}, {},
                    {{"buffer", int64_t{o.tile.buffer}}});
    }
  });
}

}  // namespace

std::shared_ptr<Pipeline> Lowerer::plan_pipeline(const ir::Op& loop) {
  if (options_.num_stages < 2 || !target_.has(target::Cap::CpAsync)) return nullptr;
  ir::ForOp f(const_cast<ir::Op*>(&loop));
  const ir::Region& body = *f.body();
  const ir::Op* dot = nullptr;
  for (const ir::Op* op : body.ops) {
    if (op->kind != OpKind::Dot) continue;
    if (dot) return nullptr;  // one dot per pipelined loop
    dot = op;
  }
  if (!dot) return nullptr;
  std::optional<MmaPlan> plan = mma_plan(*dot, target_, threads_);
  if (!plan) return nullptr;
  ir::DotOp d(const_cast<ir::Op*>(dot));
  std::optional<PipelinedLoad> a = find_load(*this, f, d.lhs()), b = find_load(*this, f, d.rhs());
  if (!a || !b) return nullptr;
  // num_stages buffers of both operands, and room for one f32 accumulator conversion after.
  const int64_t elem = ir::dtype_bytes(d.lhs()->type.dtype);
  const int64_t per_stage = (d.lhs()->type.numel() + d.rhs()->type.numel()) * elem;
  int stages = options_.num_stages;
  while (stages >= 2 && stages * per_stage + dot->result()->type.numel() * 4 > target_.max_shared_bytes) --stages;
  if (stages < 2) return nullptr;
  auto p = std::make_shared<Pipeline>();
  p->loop = &loop;
  p->dot = dot;
  p->plan = *plan;
  p->stages = stages;
  p->a = *a;
  p->b = *b;
  const ir::Value* operands[2] = {d.lhs(), d.rhs()};
  PipelinedLoad* loads[2] = {&p->a, &p->b};
  for (int i = 0; i < 2; ++i) {
    const ir::Value* v = operands[i];
    PipelinedLoad& l = *loads[i];
    const int buf = new_buffer(v->type.dtype, stages * v->type.numel());
    l.operand = make_operand(i == 0, v->type.dtype, v->type.shape, fast_dim(operand_layout(l)), p->plan, buf, 0, threads_);
    pipelined_ops_.insert(l.load);
    if (l.transposed) pipelined_ops_.insert(v->def);
  }
  return p;
}

std::vector<ir::Value*> Lowerer::pipeline_prologue(Pipeline& p, ir::Value* lb, ir::Value* ub,
                                                   ir::Value* step) {
  ir::ForOp f(const_cast<ir::Op*>(p.loop));
  p.lb = lb, p.ub = ub, p.step = step;
  for (int s = 0; s + 1 < p.stages; ++s) {
    ir::Value* it = s ? add(lb, mul(step, const_int(step->type.dtype, s))) : lb;
    ir::Value* valid = in_range(*this, it, ub, step);
    Shifted at(*this, *f.body(), it);
    for (const PipelinedLoad* l : {&p.a, &p.b})
      issue(*this, *l, at, const_int(DType::i32, s), const_int(DType::i32, s * l->operand.tile.size()), valid);
    b().create(OpKind::CpAsyncCommit, {}, {});
  }
  return {const_int(DType::i32, 0), const_int(DType::i32, p.stages - 1), const_int(DType::i32, 0)};
}

void Lowerer::pipeline_enter(Pipeline& p, ir::Value* iv, const std::vector<ir::Value*>& extra) {
  ir::ForOp f(const_cast<ir::Op*>(p.loop));
  p.read = extra.at(0);
  p.write = extra.at(1);
  p.count = extra.at(2);
  b().create(OpKind::CpAsyncWait, {}, {}, {{"pending", int64_t{p.stages - 2}}});
  barrier();
  // Prefetch iteration i + S - 1 into the stage iteration i - 1 read (every thread is past it).
  const int64_t ahead = p.stages - 1;
  ir::Value* it = add(iv, mul(p.step, const_int(p.step->type.dtype, ahead)));
  ir::Value* valid = in_range(*this, it, p.ub, p.step);
  ir::Value* j = add(p.count, const_int(DType::i32, ahead));
  Shifted at(*this, *f.body(), it);
  auto staged = std::make_shared<StagedDot>();
  for (const PipelinedLoad* l : {&p.a, &p.b}) {
    ir::Value* size = const_int(DType::i32, l->operand.tile.size());
    issue(*this, *l, at, j, mul(p.write, size), valid);
    Operand o = l->operand;
    prepare_reads(*this, o, mul(p.read, size));
    (l == &p.a ? staged->a : staged->b) = o;
  }
  b().create(OpKind::CpAsyncCommit, {}, {});
  staged_dots_[p.dot] = staged;
}

std::vector<ir::Value*> Lowerer::pipeline_next(Pipeline& p) {
  auto next = [&](ir::Value* s) {
    ir::Value* n = add(s, const_int(DType::i32, 1));
    ir::Value* wrap = emit(OpKind::CmpEq, {n, const_int(DType::i32, p.stages)}, Type::scalar(DType::i1));
    return emit(OpKind::Where, {wrap, const_int(DType::i32, 0), n}, n->type);
  };
  return {next(p.read), next(p.write), add(p.count, const_int(DType::i32, 1))};
}

void Lowerer::pipeline_exit(Pipeline& p) {
  // The copies of iterations past the end are still in flight: land them before the buffers are
  // used again (an enclosing loop's next prologue), after every thread's last read.
  (void)p;
  b().create(OpKind::CpAsyncWait, {}, {}, {{"pending", int64_t{0}}});
  barrier();
}

}  // namespace tessera::lower::detail
