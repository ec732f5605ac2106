/// \file The lowering driver: scopes and insertion points, thread coordinates, on-demand
/// materialization of tile values in a layout, conversions, and the scalar ops (the elementwise
/// family is lower_elementwise.cpp).
#include "core/lower/lowerer.h"

#include <algorithm>
#include <sstream>

#include "core/ir/ops.h"
#include "core/ir/simt.h"
#include "core/support/error.h"

namespace tessera::lower::detail {

using ir::OpKind;
using ir::Type;

namespace {

void assign_depths(const ir::Region& r, int d, std::unordered_map<const ir::Value*, int>& depth) {
  for (const ir::Value* a : r.args) depth[a] = d;
  for (const ir::Op* op : r.ops) {
    for (const ir::Value* v : op->results) depth[v] = d;
    for (const ir::Region* sub : op->regions) assign_depths(*sub, d + 1, depth);
  }
}

}  // namespace

Lowerer::Lowerer(const LoweringPlan& plan)
    : plan_(plan),
      src_(plan.function()),
      target_(plan.target()),
      threads_(plan.threads()),
      subgroup_(plan.target().subgroup_size),
      b_(*(out_ = std::make_unique<ir::Module>())) {
  const ir::Function& src = src_;
  for (const ir::Param& p : src.params) depth_[p.value] = 0;
  assign_depths(*src.body, 0, depth_);
  int id = 0;
  ir::walk(src.body, [&](ir::Op* op) {
    for (ir::Value* v : op->results) ids_[v] = id++;
    for (ir::Region* r : op->regions)
      for (ir::Value* a : r->args) ids_[a] = id++;
  });
}

std::unique_ptr<ir::Module> Lowerer::run() {
  fn_ = out_->add_function(src_.name, src_.loc);
  fn_->set_attr(attr::kStage, std::string("simt"));
  const bool roles = plan_.warp_specialized_loop() != nullptr;
  fn_->set_attr(attr::kThreads, threads_ + plan_.producer_threads());
  fn_->set_attr(attr::kSubgroup, int64_t{subgroup_});
  fn_->set_attr(attr::kTarget, target_.str());
  if (roles)  // the launch count, which the roles' setmaxnreg move through the pool
    fn_->set_attr(attr::kMaxnreg, registers().launch);
  else if (plan_.options().maxnreg > 0)
    fn_->set_attr(attr::kMaxnreg, int64_t{plan_.options().maxnreg});
  if (plan_.cluster() > 1)  // the launch groups the programs (what crosses them: the rings')
    fn_->set_attr(attr::kCluster, int64_t{plan_.cluster()});
  scopes_.push_back(Scope{fn_->body});
  b_.set_insertion_end(fn_->body);
  for (const ir::Param& p : src_.params) {
    ir::Value* v = out_->add_arg(fn_->body, p.value->type);
    fn_->params.push_back(ir::Param{p.name, v, p.attrs});
    scopes_[0].scalars[p.value] = v;
  }
  b_.set_loc(src_.loc);
  lane_ = emit(OpKind::LaneId, {}, Type::scalar(ir::DType::i32));
  subgroup_id_ = emit(OpKind::SubgroupId, {}, Type::scalar(ir::DType::i32));
  tid_ = add(mul(subgroup_id_, const_int(ir::DType::i32, subgroup_)), lane_);
  if (roles) open_roles();
  lower_region(*src_.body, scopes_[0].dst);
  if (roles) {
    for (ir::Region* r : roles_->regions) {
      b_.set_insertion_end(r);
      b_.create(OpKind::Yield, {}, {});
    }
  }
  b_.set_insertion_end(fn_->body);
  for (const std::function<void()>& f : exits_) f();
  for (size_t i = 0; i < buffers_.size(); ++i)
    fn_->set_attr(ir::shared_buffer_attr(static_cast<int64_t>(i)),
                  Type::tile(buffers_[i].dtype, {buffers_[i].count}));
  check_shared_limit();
  return std::move(out_);
}

// --- emission helpers
// ------------------------------------------------------------------------------

ir::Value* Lowerer::emit(OpKind kind, std::vector<ir::Value*> operands, Type type,
                         std::vector<ir::Attribute> attrs) {
  return b_.create_value(kind, std::move(operands), std::move(type), std::move(attrs));
}

ir::Value* Lowerer::const_int(ir::DType t, int64_t v) {
  return b_.constant_int(Type::scalar(t), v);
}
ir::Value* Lowerer::const_float(ir::DType t, double v) {
  return b_.constant_float(Type::scalar(t), v);
}

ir::Value* Lowerer::add(ir::Value* a, ir::Value* b) {
  return emit(OpKind::Add, {a, b}, a->type);
}
ir::Value* Lowerer::mul(ir::Value* a, ir::Value* b) {
  return emit(OpKind::Mul, {a, b}, a->type);
}
ir::Value* Lowerer::and_(ir::Value* a, ir::Value* b) {
  return emit(OpKind::And, {a, b}, a->type);
}

void Lowerer::barrier(bool global) {
  std::vector<ir::Attribute> attrs;
  if (global) attrs.push_back({attr::kGlobal, int64_t{1}});
  if (roles_) {  // the consumers' own: named barrier 1
    attrs.push_back({attr::kBarrierId, int64_t{1}});
    attrs.push_back({attr::kThreadCount, threads_});
  }
  b_.create(OpKind::Barrier, {}, {}, std::move(attrs));
}

/// The kernel splits into the consumers' role (the kernel's warps: the whole body is lowered
/// into it, its register limit raised) and the producer warpgroup's (filled by the
/// warp-specialized loop's lowering, lower_pipeline.cpp). The producer keeps 40 registers per
/// thread; the consumers share the rest of the SM's 65,536, at most 256 each.
void Lowerer::open_roles() {
  roles_ = b_.create(OpKind::WarpSpecialize, {}, {},
                     {{attr::kRoles, std::vector<int64_t>{threads_, plan_.producer_threads()}}});
  ir::Region* consumers = b_.add_region(roles_);
  b_.add_region(roles_);
  scopes_[0].dst = consumers;
  b_.set_insertion_end(consumers);
  b_.create(OpKind::SetMaxNReg, {}, {},
            {{attr::kIncrease, int64_t{1}}, {attr::kRegisters, registers().consumers}});
}

RegisterSplit Lowerer::registers() const {
  return register_split(threads_, plan_.producer_threads(), plan_.options().maxnreg);
}

RegisterSplit register_split(int64_t consumer_threads, int64_t producer_threads, int maxnreg) {
  constexpr int64_t kRegistersPerSm = 65536, kMaxLaunch = 248, kMaxRaise = 256, kProducer = 40;
  const int64_t threads = consumer_threads + producer_threads;
  RegisterSplit s;
  s.launch = std::min(kMaxLaunch, kRegistersPerSm / threads / 8 * 8);
  if (maxnreg > 0) s.launch = std::max(kProducer, std::min<int64_t>(s.launch, maxnreg / 8 * 8));
  s.producer = std::min(kProducer, s.launch);
  const int64_t pool = threads * s.launch - producer_threads * s.producer;
  s.consumers = std::min(kMaxRaise, pool / consumer_threads / 8 * 8);
  return s;
}

int64_t Lowerer::tensor_map(const ir::TensorMapParam& map) {
  for (size_t i = 0; i < maps_.size(); ++i)
    if (maps_[i] == map) return static_cast<int64_t>(i);
  maps_.push_back(map);
  const int64_t index = ir::add_tensor_map(*fn_, map);
  TESSERA_CHECK(index == static_cast<int64_t>(maps_.size()) - 1,
                "tensor maps declared outside the lowering");
  return index;
}

// --- scopes and insertion points
// ----------------------------------------------------------------------

Lowerer::InsertPoint Lowerer::save() const {
  ir::Region* r = b_.region();
  long idx = b_.insertion_index();
  if (idx < 0 || idx >= static_cast<long>(r->ops.size())) return {r, nullptr};
  return {r, r->ops[static_cast<size_t>(idx)]};
}

void Lowerer::restore(const InsertPoint& p) {
  if (p.before)
    b_.set_insertion_before(p.before);
  else
    b_.set_insertion_end(p.region);
}

template <class F>
auto Lowerer::at_depth(int d, F&& f) {
  InsertPoint saved = save();
  Location loc = b_.loc();
  const Scope& s = scopes_[static_cast<size_t>(d)];
  if (d < depth() && s.open)
    b_.set_insertion_before(s.open);
  else if (d < depth())
    b_.set_insertion_end(s.dst);
  struct Restore {
    Lowerer* self;
    InsertPoint p;
    Location loc;
    ~Restore() {
      self->restore(p);
      self->b_.set_loc(loc);
    }
  } restore_guard{this, saved, loc};
  return f();
}

void Lowerer::push_scope(ir::Region* dst, ir::Op* owner) {
  scopes_.back().open = owner;
  scopes_.push_back(Scope{dst});
  b_.set_insertion_end(dst);
}

void Lowerer::pop_scope() {
  scopes_.pop_back();
  scopes_.back().open = nullptr;
  b_.set_insertion_end(scopes_.back().dst);
}

int Lowerer::depth_of(const ir::Value* v) const {
  auto it = depth_.find(v);
  TESSERA_CHECK(it != depth_.end(), "value of unknown depth");
  return std::min(it->second, depth());
}

std::string Lowerer::key(const ir::Value* v, const Layout& l) const {
  auto it = ids_.find(v);
  return std::to_string(it == ids_.end() ? -1 : it->second) + "|" + l.str();
}

const Regs* Lowerer::find(const ir::Value* v, const Layout& l) const {
  std::string k = key(v, l);
  for (int d = depth(); d >= 0; --d) {
    const auto& cache = scopes_[static_cast<size_t>(d)].cache;
    auto it = cache.find(k);
    if (it != cache.end()) return &it->second;
  }
  return nullptr;
}

// --- values
// ----------------------------------------------------------------------------------------

ir::Value* Lowerer::scalar(const ir::Value* v) {
  for (int d = depth(); d >= 0; --d) {
    const auto& m = scopes_[static_cast<size_t>(d)].scalars;
    auto it = m.find(v);
    if (it != m.end()) return it->second;
  }
  TESSERA_CHECK(false, "scalar used before it was lowered, in kernel '", src_.name, "'");
  return nullptr;
}

void Lowerer::define_scalar(const ir::Value* v, ir::Value* s) {
  scopes_.back().scalars[v] = s;
}

void Lowerer::define_tile(const ir::Value* v, const Layout& l, Regs r) {
  TESSERA_CHECK(static_cast<int>(r.size()) == l.num_regs(),
                "register count does not match the layout");
  scopes_.back().cache[key(v, l)] = std::move(r);
}

bool Lowerer::relabels(const ir::Value* v, const Layout& l) const {
  if (!v->def || l.mats || homes().home(v).mats) return false;
  switch (v->def->kind) {
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Permute:
      return true;
    default:
      return false;
  }
}

Regs Lowerer::regs(const ir::Value* v, const Layout& l) {
  TESSERA_CHECK(v->type.is_tile() && v->type.shape == l.shape, "layout ", l.str(),
                " does not fit value of type ", v->type.str());
  if (const Regs* r = find(v, l)) return *r;
  int d = depth_of(v);
  Regs out;
  if (homes().is_free(v) && l.mats) {
    // Recomputed in the linear twin, then made matrices (a splat: one coopmat_fill).
    const Layout twin = mat_twin(l, threads_);
    Regs lin = regs(v, twin);
    out = at_depth(d, [&] {
      b_.set_loc(v->def->loc);
      return fill_mats(lin, l);
    });
  } else if (homes().is_free(v) || relabels(v, l)) {
    out = at_depth(d, [&] {
      b_.set_loc(v->def->loc);
      return lower_free(*v->def, l);
    });
  } else {
    const Layout& h = homes().home(v);
    const Regs* home = find(v, h);
    TESSERA_CHECK(home, "tile value used before it was lowered, in kernel '", src_.name, "'");
    Regs hr = *home;
    out = at_depth(d, [&] { return convert(hr, v->type.element(), h, l); });
  }
  scopes_[static_cast<size_t>(d)].cache[key(v, l)] = out;
  return out;
}

ir::Value* Lowerer::thread_coord(const Layout& l, int dim) {
  std::ostringstream k;
  k << dim << ":";
  for (const DimBit& b : l.threads) k << b.dim << "." << b.bit << ",";
  auto it = thread_coords_.find(k.str());
  if (it != thread_coords_.end()) return it->second;
  ir::Value* v = at_depth(0, [&] {
    ir::Value* acc = nullptr;
    size_t i = 0;
    while (i < l.threads.size()) {
      if (l.threads[i].dim != dim) {
        ++i;
        continue;
      }
      // A run of thread bits i.. naming consecutive bits of `dim` becomes one shift-and-mask.
      size_t j = i + 1;
      while (j < l.threads.size() && l.threads[j].dim == dim &&
             l.threads[j].bit == l.threads[i].bit + static_cast<int>(j - i))
        ++j;
      ir::Value* part =
          emit(OpKind::Shr, {tid_, const_int(ir::DType::i32, static_cast<int64_t>(i))}, tid_->type);
      part = and_(part, const_int(ir::DType::i32, (int64_t{1} << (j - i)) - 1));
      part = emit(OpKind::Shl, {part, const_int(ir::DType::i32, l.threads[i].bit)}, tid_->type);
      acc = acc ? emit(OpKind::Or, {acc, part}, tid_->type) : part;
      i = j;
    }
    return acc ? acc : const_int(ir::DType::i32, 0);
  });
  thread_coords_[k.str()] = v;
  return v;
}

ir::Value* Lowerer::owner(const Layout& l) {
  int64_t mask = 0;
  for (size_t i = 0; i < l.threads.size(); ++i)
    if (l.threads[i].none()) mask |= int64_t{1} << i;
  if (mask == 0) return const_bool(true);
  std::string k = "owner:" + std::to_string(mask);
  auto it = thread_coords_.find(k);
  if (it != thread_coords_.end()) return it->second;
  ir::Value* v = at_depth(0, [&] {
    ir::Value* bits = and_(tid_, const_int(ir::DType::i32, mask));
    return emit(OpKind::CmpEq, {bits, const_int(ir::DType::i32, 0)}, Type::scalar(ir::DType::i1));
  });
  thread_coords_[k] = v;
  return v;
}

ir::Value* Lowerer::at_entry(const std::string& key, const std::function<ir::Value*()>& make) {
  auto it = thread_coords_.find(key);
  if (it != thread_coords_.end()) return it->second;
  ir::Value* v = at_depth(0, make);
  thread_coords_[key] = v;
  return v;
}

// --- shared memory
// --- op dispatch
// -------------------------------------------------------------------------------------

void Lowerer::lower_region(const ir::Region& src, ir::Region* dst) {
  (void)dst;
  for (const ir::Op* op : src.ops) {
    if (op->has(ir::kTerminator)) continue;
    b_.set_loc(op->loc);
    lower_op(*op);
  }
}

void Lowerer::lower_op(const ir::Op& op) {
  if (plan_.lowered_by_loop(op)) return;  // a ring's loads (lower_pipeline.cpp)
  switch (op.kind) {
    case OpKind::Load:
      return lower_load(op);
    case OpKind::Store:
      return lower_store(op);
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas:
      return lower_atomic(op);
    case OpKind::Print:
      return lower_print(op);
    case OpKind::Assert:
      return lower_assert(op);
    case OpKind::DebugBarrier:  // every thread waits; global memory is ordered too
      return barrier(/*global=*/true);
    case OpKind::Reduce:
      return lower_reduce(op);
    case OpKind::ReduceGeneric:
      return lower_reduce_generic(op);
    case OpKind::Scan:
    case OpKind::ScanGeneric:
      return lower_scan(op);
    case OpKind::Dot:
      return lower_dot(op);
    case OpKind::Cat:
      return lower_cat(op);
    case OpKind::For:
      return lower_for(op);
    case OpKind::If:
      return lower_if(op);
    case OpKind::While:
      return lower_while(op);
    case OpKind::InlineAsm:
    case OpKind::InlineAsmImpure:
      return lower_inline_asm(op);
    case OpKind::DescStore:  // kept only where the plan stores it by TMA
      return lower_tma_store(op);
    case OpKind::DescLoad:  // kept only where a plan takes it: passes::compile expands the others
      TESSERA_CHECK(false, op.loc.str(), ": '", op.name(),
                    "' reached the lowering; the `descriptors` step expands it");
    default:
      break;
  }
  if (op.results.empty()) {
    // assume: a scalar promise, kept for the targets that can use it.
    std::vector<ir::Value*> operands;
    for (const ir::Value* v : op.operands) operands.push_back(scalar(v));
    b_.create(op.kind, operands, {}, op.attrs);
    return;
  }
  const ir::Value* r = op.result();
  if (!r->type.is_tile()) {
    std::vector<ir::Value*> operands;
    for (const ir::Value* v : op.operands) operands.push_back(scalar(v));
    define_scalar(r, emit(op.kind, operands, r->type, op.attrs));
    return;
  }
  if (homes().is_free(r)) return;  // materialized when a consumer asks
  lower_elementwise(op);
}

// --- conversions
// -----------------------------------------------------------------------------------

Regs Lowerer::convert(const Regs& r, const ir::Type& elem, const Layout& from, const Layout& to,
                      bool through_shared) {
  if (from.mats || to.mats) {  // an opaque layout: through its linear twin
    if (from == to) return r;
    if (from.mats)
      return convert(mats_to_linear(r, from), elem, mat_twin(from, threads_), to, through_shared);
    return linear_to_mats(convert(r, elem, from, mat_twin(to, threads_), through_shared), to);
  }
  if (from == to && !through_shared) return r;
  if (from.threads == to.threads && !through_shared) {
    Regs out;
    for (int i = 0; i < to.num_regs(); ++i) {
      int j = from.reg_of(to.reg_coords(i));
      TESSERA_CHECK(j >= 0, "register permutation failed: ", from.str(), " -> ", to.str());
      out.push_back(r[static_cast<size_t>(j)]);
    }
    return out;
  }
  // Through shared memory: each owner writes its elements at their (padded) row-major index
  // (staging_strides), then every thread reads the elements of the new layout. Booleans travel
  // as u8, pointers as their u64 addresses.
  const ir::DType store_t = elem.is_ptr                   ? ir::DType::u64
                            : elem.dtype == ir::DType::i1 ? ir::DType::u8
                                                          : elem.dtype;
  const OpKind to_store = elem.is_ptr ? OpKind::Bitcast : OpKind::Cast;
  const size_t rank = from.shape.size();
  const std::vector<int64_t> strides = staging_strides(from.shape, ir::dtype_bytes(store_t));
  int buf = scratch(store_t, staging_elements(from.shape, ir::dtype_bytes(store_t)));
  auto linear = [&](const std::vector<int64_t>& c) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += c[d] * strides[d];
    return off;
  };
  auto thread_base = [&](const Layout& l) {
    ir::Value* base = const_int(ir::DType::i32, 0);
    for (int d = 0; d < l.rank(); ++d)
      base = add(base, mul(thread_coord(l, d),
                           const_int(ir::DType::i32, strides[static_cast<size_t>(d)])));
    return base;
  };
  ir::Value* wbase = thread_base(from);
  guarded(owner(from), [&] {
    for (int i = 0; i < from.num_regs(); ++i) {
      int64_t off = linear(from.reg_coords(i));
      ir::Value* idx = off ? add(wbase, const_int(ir::DType::i32, off)) : wbase;
      ir::Value* v = r[static_cast<size_t>(i)];
      if (store_t != elem.dtype || elem.is_ptr) v = emit(to_store, {v}, Type::scalar(store_t));
      b_.create(OpKind::SharedStore, {idx, v}, {},
                {{attr::kBuffer, int64_t{buf}}, {attr::kWidth, int64_t{1}}});
    }
  });
  barrier();
  ir::Value* rbase = thread_base(to);
  Regs out;
  for (int i = 0; i < to.num_regs(); ++i) {
    int64_t off = linear(to.reg_coords(i));
    ir::Value* idx = off ? add(rbase, const_int(ir::DType::i32, off)) : rbase;
    ir::Value* v = b_.create(OpKind::SharedLoad, {idx}, {Type::scalar(store_t)},
                             {{attr::kBuffer, int64_t{buf}}, {attr::kWidth, int64_t{1}}})
                       ->result();
    if (store_t != elem.dtype || elem.is_ptr) v = emit(to_store, {v}, elem);
    out.push_back(v);
  }
  barrier();
  return out;
}

std::vector<ir::Value*> Lowerer::apply_combine(const ir::Region& combine,
                                               const std::vector<ir::Value*>& lhs,
                                               const std::vector<ir::Value*>& rhs) {
  std::unordered_map<const ir::Value*, ir::Value*> map;
  for (size_t i = 0; i < lhs.size(); ++i) map[combine.args[i]] = lhs[i];
  for (size_t i = 0; i < rhs.size(); ++i) map[combine.args[lhs.size() + i]] = rhs[i];
  std::vector<ir::Value*> out;
  for (const ir::Op* op : combine.ops) {
    std::vector<ir::Value*> operands;
    for (const ir::Value* v : op->operands) {
      auto it = map.find(v);
      operands.push_back(it != map.end() ? it->second : scalar(v));
    }
    if (op->kind == OpKind::Yield) return operands;
    if (!op->regions.empty())
      fail(ErrorKind::Unsupported, op->loc.str(), ": error: '", op->name(),
           "': control flow inside a reduce/scan combine function is not supported");
    std::vector<Type> types;
    for (const ir::Value* res : op->results) types.push_back(res->type);
    ir::Op* copy = b_.create(op->kind, operands, types, op->attrs);
    for (size_t i = 0; i < op->results.size(); ++i) map[op->results[i]] = copy->result(i);
  }
  return out;
}

}  // namespace tessera::lower::detail
