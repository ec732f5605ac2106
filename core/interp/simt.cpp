/// \file interp::run_simt: the grid loop over workgroups, the machine's fault messages and the
/// seeded thread orders of stores and atomics.
#include "core/interp/simt.h"

#include <cstring>
#include <memory>
#include <iostream>
#include <numeric>
#include <sstream>

#include "core/interp/simt_exec.h"

namespace tessera::interp {
namespace simt {
namespace {

constexpr int kNumOrders = 8;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint32_t checked_threads(const ir::Function& fn) {
  const int t = ir::simt_threads(fn), s = ir::simt_subgroup(fn);
  TESSERA_CHECK(t > 0 && s > 0 && t % s == 0, "SIMT function '", fn.name, "' has threads = ", t,
                ", subgroup = ", s);
  return static_cast<uint32_t>(t);
}

}  // namespace

Machine::Machine(const ir::Function& fn, const MemoryMap& memory, const SimtOptions& options,
                 Grid grid)
    : fn(fn),
      memory(memory),
      options(options),
      out(options.print_out ? *options.print_out : std::cout),
      grid(grid),
      threads(checked_threads(fn)),
      subgroup(static_cast<uint32_t>(ir::simt_subgroup(fn))),
      all_on_(threads, 1) {
  // A few fixed permutations, then a cheap pseudo-random pick per op: shuffling per op would
  // cost T random draws for every store.
  uint64_t state = options.schedule_seed;
  for (int k = 0; k < kNumOrders; ++k) {
    std::vector<uint32_t> order(threads);
    std::iota(order.begin(), order.end(), 0u);
    for (uint32_t i = threads; i > 1; --i) std::swap(order[i - 1], order[splitmix64(state) % i]);
    orders_.push_back(std::move(order));
  }
  order_state_ = splitmix64(state);
  shared.init(fn, options.check_races);
  sync.init(fn, threads, options.check_races);
}

const uint32_t* Machine::schedule() {
  return orders_[splitmix64(order_state_) % kNumOrders].data();
}

std::string Machine::program() const {
  return "program (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " +
         std::to_string(pid[2]) + ")";
}

std::string Machine::site(const ir::Op& op, int thread) const {
  std::ostringstream os;
  os << "in kernel '" << fn.name << "' at " << op.loc.str() << ", " << program();
  if (thread >= 0) os << ", thread " << thread;
  return os.str();
}

void Machine::fault(const ir::Op& op, int thread, std::string_view what,
                    std::string_view detail) const {
  fail(ErrorKind::DeviceFault, what, " ", site(op, thread), detail);
}

void copy_slot(const Slot& dst, const Slot& src, uint32_t threads) {
  if (dst.data != src.data) std::memcpy(dst.data, src.data, size_t{threads} * dst.bytes);
}

void copy_slot_masked(const Slot& dst, const Slot& src, const uint8_t* on, uint32_t threads) {
  if (dst.bytes > 8) {  // a cooperative matrix's share
    for (uint32_t t = 0; t < threads; ++t)
      if (on[t])
        std::memcpy(dst.data + size_t{t} * dst.bytes, src.data + size_t{t} * dst.bytes, dst.bytes);
    return;
  }
  with_elem_size(dst.bytes, [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (uint32_t t = 0; t < threads; ++t)
      if (on[t]) std::memcpy(dst.data + t * N, src.data + t * N, N);
  });
}

}  // namespace simt

void run_simt(const ir::Function& fn, std::span<const std::byte> params, Grid grid,
              const MemoryMap& memory, const SimtOptions& options) {
  if (!ir::is_simt(fn))
    fail(ErrorKind::User, "run_simt: kernel '", fn.name,
         "' is not a SIMT function (it has no attribute stage = \"simt\")");
  TESSERA_CHECK(fn.body, "kernel '", fn.name, "' has no body");
  const std::vector<RuntimeValue> values = read_params(fn, params);
  // One machine per program of a cluster (the function's attribute; none: one machine, and the
  // programs run on this thread one after another).
  const bool clustered = find_attr(fn.attrs, attr::kCluster) != nullptr;
  const uint32_t size = static_cast<uint32_t>(ir::simt_cluster(fn));
  if (grid.x % size != 0)
    fail(ErrorKind::User, "kernel '", fn.name, "' runs in clusters of ", size,
         " programs along x, but the grid's x is ", grid.x, " (not a multiple of it)");
  std::vector<std::unique_ptr<simt::Machine>> machines;
  for (uint32_t r = 0; r < size; ++r) {
    machines.push_back(std::make_unique<simt::Machine>(fn, memory, options, grid));
    simt::compile(*machines.back(), values);
    machines.back()->rank = r;
  }
  simt::Cluster cluster;
  for (const auto& m : machines) cluster.members.push_back(m.get());
  auto finish = [](simt::Machine& m) {
    uint32_t t = 0;
    if (const simt::PendingStore* p = m.tma.store_in_flight(&t))
      m.fault(*p->op, static_cast<int>(t), "a tma_store still in flight as the program ends",
              " (no tma_store_wait retired its group: the shared memory it reads goes with the "
              "program)");
  };
  const uint64_t total = uint64_t{grid.x} * grid.y * grid.z;
  for (uint64_t linear = 0; linear < total; linear += size) {
    for (uint32_t r = 0; r < size; ++r) {
      simt::Machine& m = *machines[r];
      m.pid = {static_cast<uint32_t>((linear + r) % grid.x),
               static_cast<uint32_t>((linear + r) / grid.x % grid.y),
               static_cast<uint32_t>((linear + r) / grid.x / grid.y)};
      if (options.deadline.passed())
        fail(ErrorKind::DeviceFault, options.deadline.describe(), " in kernel '", fn.name,
             "' before program (", m.pid[0], ", ", m.pid[1], ", ", m.pid[2], ") of grid (", grid.x,
             ", ", grid.y, ", ", grid.z, ")");
      m.shared.begin_workgroup();
      m.sync.begin_workgroup();
      m.async.begin_workgroup(m.threads);
      m.wgmma.begin_workgroup(m.threads, m.shared, ir::simt_maxnreg(m.fn));
      m.tma.begin_workgroup(m.threads, m.shared);
    }
    if (!clustered) {
      machines[0]->run_block(0, machines[0]->all());
      finish(*machines[0]);
      continue;
    }
    cluster.barriers.assign(size, 0);
    cluster.ended.assign(size, 0);
    for (const auto& m : machines) m->cluster = &cluster;
    simt::run_cluster(cluster, finish);
  }
}

}  // namespace tessera::interp
