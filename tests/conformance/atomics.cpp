/// \file Atomics: add, max, min, and, or, xor, xchg per dtype with duplicate addresses inside one
/// tile and across programs, masked-off lanes pointing out of bounds, every returned old value
/// checked for a serial order, cas (one winner per slot), a cas spin lock serializing 1000+
/// programs, and memory orders and scopes.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tests/conformance/framework.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

enum class AOp { Add, Max, Min, And, Or, Xor, Xchg };
const char* op_name(AOp op) {
  constexpr const char* kNames[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
  return kNames[static_cast<int>(op)];
}

tl::tensor apply(AOp op, const tl::tensor& p, const tl::Operand& v, const tl::Operand& m,
                 const tl::AtomicOptions& o) {
  switch (op) {
    case AOp::Add:
      return tl::atomic_add(p, v, m, o);
    case AOp::Max:
      return tl::atomic_max(p, v, m, o);
    case AOp::Min:
      return tl::atomic_min(p, v, m, o);
    case AOp::And:
      return tl::atomic_and(p, v, m, o);
    case AOp::Or:
      return tl::atomic_or(p, v, m, o);
    case AOp::Xor:
      return tl::atomic_xor(p, v, m, o);
    case AOp::Xchg:
      return tl::atomic_xchg(p, v, m, o);
  }
  return tl::atomic_add(p, v, m, o);
}

/// Lanes with a negative index are masked off (and would address out of bounds).
void rmw_kernel(tl::pointer out, tl::ptr<int32_t> idx, tl::pointer val, tl::pointer old, tl::i32 n,
                AOp OP, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto live = offs < n;
  auto i = tl::load(idx + offs, live, -1);
  auto m = live & (i >= 0);
  auto o = apply(OP, out + i, tl::load(val + offs, live), m, {});
  tl::store(old + offs, o, m);
}

void cas_kernel(tl::ptr<int32_t> slots, tl::ptr<int32_t> old, int NSLOTS) {
  auto pid = tl::program_id(0);
  auto o = tl::atomic_cas(slots + pid % NSLOTS, 0, pid + 1);
  tl::store(old + pid, o);
}

void lock_kernel(tl::ptr<int32_t> lock, tl::ptr<int32_t> count, tl::ptr<int32_t> order) {
  tl::while_([&] { return tl::atomic_cas(lock, 0, 1, {.sem = "acquire"}) != 0; }, [] {});
  // Inside the critical section: a plain read-modify-write, correct only if serialized. The
  // load is volatile so that no stale cached copy is read after the acquire.
  auto c = tl::load(count, true, 0, {.is_volatile = true});
  tl::store(count, c + 1);
  tl::store(order + c, tl::program_id(0));
  tl::atomic_xchg(lock, 0, true, {.sem = "release"});
}

void sem_kernel(tl::ptr<int32_t> counter, tl::ptr<int32_t> old, int SEM, int SCOPE) {
  const char* sems[] = {"relaxed", "acquire", "release", "acq_rel"};
  const char* scopes[] = {"cta", "gpu", "sys"};
  auto o = tl::atomic_add(counter + tl::arange(0, 4) % 2, 1, true, {sems[SEM], scopes[SCOPE]});
  tl::store(old + tl::program_id(0) * 4 + tl::arange(0, 4), o);
}

/// new = op(old, v) in dtype t, as the atomics define it (float max/min ignore NaN, -0 < +0).
uint64_t combine(AOp op, DType t, const HostArray& olds, size_t i, const HostArray& vals,
                 size_t j) {
  HostArray r(t, 1);
  if (ir::is_float(t)) {
    const double a = olds.f(i), b = vals.f(j);
    double v = b;
    if (op == AOp::Add) v = a + b;
    if (op == AOp::Max || op == AOp::Min) {
      if (std::isnan(b))
        v = a;
      else if (std::isnan(a))
        v = b;
      else if (a == b)
        v = (op == AOp::Max) == std::signbit(a) ? b : a;
      else
        v = (a > b) == (op == AOp::Max) ? a : b;
    }
    r.set_f(0, v);
    return r.bits(0);
  }
  const bool s = ir::is_signed_int(t);
  const uint64_t a = olds.u(i), b = vals.u(j);
  const int64_t sa = olds.i(i), sb = vals.i(j);
  uint64_t v = b;
  switch (op) {
    case AOp::Add:
      v = a + b;
      break;
    case AOp::Max:
      v = s ? static_cast<uint64_t>(std::max(sa, sb)) : std::max(a, b);
      break;
    case AOp::Min:
      v = s ? static_cast<uint64_t>(std::min(sa, sb)) : std::min(a, b);
      break;
    case AOp::And:
      v = a & b;
      break;
    case AOp::Or:
      v = a | b;
      break;
    case AOp::Xor:
      v = a ^ b;
      break;
    case AOp::Xchg:
      v = b;
      break;
  }
  r.set_int(0, static_cast<int64_t>(v));
  return r.bits(0);
}

HostArray rmw_values(Context& ctx, AOp op, DType t, size_t n) {
  if (ir::is_float(t)) {
    HostArray v = ctx.random(t, n, -1, 1);
    if (op == AOp::Max || op == AOp::Min) v.set_f(0, NAN), v.set_f(1, -0.0), v.set_f(2, 0.0);
    return v;
  }
  if (op == AOp::Add) return ctx.random(t, n, -1000, 1000);
  return ctx.random_full(t, n);
}

/// Runs `op` over lanes hitting `slots` addresses (with duplicates and masked-off lanes) and
/// checks the final memory and the old values: per address they must chain from the initial
/// to the final value in some serial order (multiset of olds + final == of news + initial).
void run_rmw(Context& ctx, AOp op, DType t) {
  auto k = TESSERA_KERNEL(rmw_kernel, out, idx, val, old, n, OP, BLOCK);
  const int n = static_cast<int>(ctx.size(1500, 500)), slots = 7;
  HostArray idx = ctx.random(DType::i32, n, -2, slots - 1);  // about 2 lanes in 9 masked off
  HostArray vals = rmw_values(ctx, op, t, n);
  HostArray init = ir::is_float(t) ? ctx.random(t, slots, -1, 1) : ctx.random_full(t, slots);
  DevArray dout = ctx.upload(init), di = ctx.upload(idx), dv = ctx.upload(vals),
           dold = ctx.poisoned(t, n);
  k[{cdiv(n, 128)}](dout.buf, di.buf, dv.buf, dold.buf, n, op, 128);
  HostArray fin = ctx.download(dout), olds = ctx.download(dold);
  const std::string what = std::string("atomic_") + op_name(op) + " " + dname(t);
  std::map<int, std::multiset<uint64_t>> lhs, rhs;  // olds + final, news + initial
  std::vector<double> sum(slots), mag(slots);
  for (int a = 0; a < slots; ++a)
    lhs[a].insert(fin.bits(a)), rhs[a].insert(init.bits(a)), sum[a] = init.f(a);
  for (int i = 0; i < n; ++i) {
    const int a = static_cast<int>(idx.i(i));
    if (a < 0) continue;
    lhs[a].insert(olds.bits(i));
    rhs[a].insert(combine(op, t, olds, i, vals, i));
    sum[a] += vals.f(i);
    mag[a] += std::fabs(vals.f(i));
  }
  int broken = -1;
  for (int a = 0; a < slots && broken < 0; ++a)
    if (lhs[a] != rhs[a]) broken = a;
  ctx.expect(broken < 0,
             what + ": the old values of address " + std::to_string(broken) +
                 " do not chain from its initial to its final value in any serial order");
  for (int i = 0; i < n; ++i)  // masked-off lanes store no old value
    if (idx.i(i) < 0) ctx.check_untouched(what + " old of masked-off lane", olds, i, i + 1);
  if (op == AOp::Add && ir::is_float(t)) {
    std::vector<double> scale;
    for (int a = 0; a < slots; ++a) scale.push_back(mag[a] + std::fabs(init.f(a)));
    ctx.check_close(what + " sums", fin, sum, tol::atomic_add(t, n), &scale);
  }
}

std::vector<Need> rmw_needs(AOp op, DType t) {
  std::vector<Need> n = needs_of({t});
  if (ir::dtype_bits(t) == 64) n.push_back(Need::Int64Atomics);
  if (ir::is_float(t) && op == AOp::Add) n.push_back(Need::FloatAtomicAdd);
  // Float max/min need no float atomics: every target runs them as compare-and-swap loops.
  return n;
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body, std::string maybe = "") {
  out.push_back(
      {"atomics/" + std::move(name), std::move(needs), std::move(maybe), std::move(body)});
}

void register_rmw(std::vector<Case>& out) {
  struct R {
    AOp op;
    std::vector<DType> types;
  };
  const std::vector<R> table = {
      {AOp::Add,
       {DType::i32, DType::u32, DType::i64, DType::u64, DType::f32, DType::f64, DType::f16,
        DType::bf16}},
      {AOp::Max, {DType::i32, DType::u32, DType::i64, DType::u64, DType::f32, DType::f64}},
      {AOp::Min, {DType::i32, DType::u32, DType::i64, DType::u64, DType::f32, DType::f64}},
      {AOp::And, {DType::i32, DType::u64}},
      {AOp::Or, {DType::u32, DType::i64}},
      {AOp::Xor, {DType::i32, DType::i64}},
      {AOp::Xchg, {DType::i32, DType::f32, DType::i64}}};
  for (const R& r : table) {
    for (DType t : r.types) {
      const bool narrow = t == DType::f16 || t == DType::bf16;
      add(
          out, std::string(op_name(r.op)) + "/" + dname(t), rmw_needs(r.op, t),
          [op = r.op, t](Context& ctx) { run_rmw(ctx, op, t); },
          narrow ? "16-bit float atomics are optional on GPUs" : "");
    }
  }
}

void cas_one_winner_case(Context& ctx) {
  auto k = TESSERA_KERNEL(cas_kernel, slots, old, NSLOTS);
  const int programs = 300, nslots = 13;
  HostArray zero(DType::i32, nslots);
  DevArray ds = ctx.upload(zero), dold = ctx.poisoned(DType::i32, programs);
  k[{programs}](ds.buf, dold.buf, nslots);
  HostArray slots = ctx.download(ds), olds = ctx.download(dold);
  for (int s = 0; s < nslots; ++s) {
    int winners = 0;
    bool winner_stored = false;
    for (int p = s; p < programs; p += nslots) {
      if (olds.i(p) == 0)
        ++winners, winner_stored = slots.i(s) == p + 1;
      else
        ctx.expect(olds.i(p) == slots.i(s), "slot " + std::to_string(s) + ": a loser saw " +
                                                std::to_string(olds.i(p)) +
                                                ", not the winner's value");
    }
    ctx.expect(winners == 1 && winner_stored,
               "slot " + std::to_string(s) + ": " + std::to_string(winners) +
                   " programs won the cas (the slot holds " + std::to_string(slots.i(s)) + ")");
  }
}

void cas_lock_case(Context& ctx) {
  auto k = TESSERA_KERNEL(lock_kernel, lock, count, order);
  const int programs = static_cast<int>(ctx.size(2048, 1024));
  DevArray lock = ctx.upload(HostArray(DType::i32, 1)),
           count = ctx.upload(HostArray(DType::i32, 1));
  DevArray order = ctx.poisoned(DType::i32, programs);
  k[{programs}](lock.buf, count.buf, order.buf);
  ctx.check_ints("count after serialized increments", ctx.download(count), {programs});
  ctx.check_ints("lock released", ctx.download(lock), {0});
  HostArray ord = ctx.download(order);
  std::vector<int64_t> seen;
  for (int i = 0; i < programs; ++i) seen.push_back(ord.i(i));
  std::sort(seen.begin(), seen.end());
  bool perm = true;
  for (int i = 0; i < programs; ++i) perm = perm && seen[i] == i;
  ctx.expect(perm, "the critical sections' order is not a permutation of the programs");
}

void orders_and_scopes_case(Context& ctx) {
  auto k = TESSERA_KERNEL(sem_kernel, counter, old, SEM, SCOPE);
  for (int sem = 0; sem < 4; ++sem) {
    for (int scope = 0; scope < 3; ++scope) {
      const int programs = 50;
      DevArray c = ctx.upload(HostArray(DType::i32, 2)), o = ctx.poisoned(DType::i32, 4 * programs);
      k[{programs}](c.buf, o.buf, sem, scope);
      ctx.check_ints("counters, sem " + std::to_string(sem) + " scope " + std::to_string(scope),
                     ctx.download(c), {2 * programs, 2 * programs});
      HostArray olds = ctx.download(o);
      std::vector<int64_t> seen[2];
      for (int i = 0; i < 4 * programs; ++i) seen[i % 2].push_back(olds.i(i));
      for (auto& s : seen) std::sort(s.begin(), s.end());
      bool ok = true;
      for (auto& s : seen)
        for (int i = 0; i < 2 * programs; ++i) ok = ok && s[i] == i;
      ctx.expect(ok, "the old values of a counter are not 0, 1, 2, ... once each");
    }
  }
}

void register_sync(std::vector<Case>& out) {
  add(out, "cas_one_winner", {}, cas_one_winner_case);
  add(out, "cas_lock", {}, cas_lock_case);
  add(out, "orders_and_scopes", {}, orders_and_scopes_case);
}

}  // namespace

void register_atomics(std::vector<Case>& out) {
  register_rmw(out);
  register_sync(out);
}

}  // namespace tessera::conformance
