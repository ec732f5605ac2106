/// \file Internal to the SIMT interpreter: the compiled form of a SIMT function and the workgroup
/// machine that runs it.
///
/// Design: lock-step over the whole workgroup. Before the first program runs, the function is
/// compiled once: every SSA value gets a *slot*, T contiguous per-thread elements of its dtype in
/// one arena, and every op becomes an Instr holding its operand and result slots and a handler
/// chosen for its kind and dtype. A handler runs its op for all T threads in one typed loop, so
/// dispatch costs one indirect call per op and workgroup, not per thread, and nothing is
/// allocated while a program runs. Which threads are active is a Mask (one byte per thread):
/// pure ops compute every thread (inactive threads' values are never read: SSA values only flow
/// out of a region through the masked merges of if/for/while results), ops with effects and the
/// merges honour it. Lock-step makes barriers and shuffles exact (every thread has finished the
/// ops before a barrier when it runs; a shuffle sees all lanes' operands), and the race detector
/// (simt_shared.cpp) finds the orderings lock-step hides. One fiber per thread would let threads
/// drift apart between synchronization points, but costs a context switch per thread and op
/// window and makes the per-thread loops scalar; lock-step keeps the interpreter as fast as the
/// tile interpreter while the detector still reports every missing barrier. The one exception
/// is warp_specialize: its roles wait for each other through mbarriers, so each runs in lock step
/// over its own threads as a cooperative task (simt_tasks.cpp); so do the workgroups of a
/// thread-block cluster, one Machine each, which reach each other's shared memory.
///
/// Constants, lane_id and subgroup_id are computed into their slots at compile time; bitcast,
/// multiple_of and max_contiguous share their operand's slot.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/interp/scalar.h"
#include "core/interp/simt.h"
#include "core/ir/simt.h"
#include "core/ir/tma.h"

namespace tessera::interp::simt {

/// An SSA value's storage: `threads` elements of `bytes` bytes, thread t's at data + t * bytes.
struct Slot {
  std::byte* data = nullptr;
  int bytes = 0;
  template <class S>
  S* as() const {
    return reinterpret_cast<S*>(data);
  }
};

/// The threads that run an op: on[t] is 1 for an active thread, 0 otherwise.
struct Mask {
  const uint8_t* on = nullptr;
  uint32_t count = 0;
};

class Machine;
struct Instr;
using Handler = void (*)(Machine&, const Instr&, const Mask&);

/// One compiled op.
struct Instr {
  Handler run = nullptr;
  const ir::Op* op = nullptr;
  std::vector<Slot> in;          ///< operand slots, in operand order
  std::vector<Slot> out;         ///< result slots
  int64_t imm[2] = {};           ///< op-specific immediates (see each family's selector)
  MathFn math = nullptr;         ///< unary math ops: the function
  MathFn2 math2 = nullptr;       ///< binary math ops: the function
  std::vector<uint32_t> blocks;  ///< control flow: the regions' blocks, in region order
  /// Control-flow and shuffle scratch, sized `threads` at compile time.
  mutable std::vector<uint8_t> masks[2];
  mutable std::vector<int64_t> lanes;
};

/// One compiled region: its ops (the terminator excluded), argument slots and the slots its
/// terminator passes on (yield or condition operands).
struct Block {
  std::vector<Instr> code;
  std::vector<Slot> args;
  std::vector<Slot> yields;
};

/// Per-element access history for the race detector, in barrier intervals ("epochs").
struct SharedAccess {
  int32_t unfenced = -1;       ///< the thread whose write no fence_async_shared followed yet, or -1
  uint32_t async_readers = 0;  ///< wgmma and tma_store ops in flight that read the element
  const ir::Op* async_op = nullptr;  ///< one of them
  uint32_t write_epoch = 0;
  uint32_t read_epoch = 0;
  uint32_t write_clock = 0;  ///< the writer's SyncClocks clock at the write
  uint32_t read_clock = 0;   ///< ... the reader's at its last read
  uint32_t read_clock2 = 0;  ///< ... reader2's
  int32_t writer = -1;
  int32_t reader = -1;   ///< the first reader in read_epoch
  int32_t reader2 = -1;  ///< another reader in read_epoch, if any
  const ir::Op* write_op = nullptr;
  const ir::Op* read_op = nullptr;
  const ir::Op* read_op2 = nullptr;
};

/// One shared buffer of the running workgroup and its access history.
struct SharedArray {
  ir::DType dtype = ir::DType::i32;
  int64_t count = 0;
  int elem_bytes = 0;
  std::vector<std::byte> data;
  std::vector<SharedAccess> access;  ///< empty unless races are checked
};

/// The workgroup's shared memory (simt_shared.cpp).
struct SharedMemory {
  std::vector<SharedArray> buffers;
  uint32_t epoch = 0;  ///< the current barrier interval; advances per barrier and workgroup

  void init(const ir::Function& fn, bool check_races);
  /// Poisons every buffer (0xCD bytes) and starts a fresh interval.
  void begin_workgroup();
  void barrier();
};

/// Happens-before through mbarriers, for the race detector (on when races are checked and the
/// function arrives on mbarriers, as the roles of a warp_specialize synchronize): each thread's
/// clock advances at its arrivals; seen(t, u) is the latest clock of thread u that thread t is
/// ordered after, through an mbarrier phase that u's arrival helped complete and t waited on. An
/// access by u at clock c is ordered before t's when seen(t, u) >= c, even without a barrier
/// between. (Barriers are the epochs' business: SharedMemory::epoch.)
struct SyncClocks {
  bool on = false;
  uint32_t threads = 0;
  std::vector<uint32_t> own;   ///< per thread: its clock (from 1)
  std::vector<uint32_t> seen;  ///< threads x threads

  void init(const ir::Function& fn, uint32_t threads, bool check_races);
  void begin_workgroup();
  /// The threads whose `on` byte is set meet at a barrier: each is ordered after what all of
  /// them did before it.
  void meet(const uint8_t* on);
  uint32_t now(uint32_t t) const { return on ? own[t] : 0; }
  bool ordered(uint32_t t, int32_t u, uint32_t clock) const {
    return on && seen[size_t{t} * threads + static_cast<uint32_t>(u)] >= clock;
  }
};

/// Thread t's shared-memory access of element `elem` of buffer `buffer` by `op`, for the race
/// detector (call only when buf.access is not empty); a race is a DeviceFault. A write is checked
/// before `bytes` replace `old` (the element's current contents) and, while a wgmma is in flight,
/// recorded in m.wgmma.unfenced.
void on_shared_read(const Machine& m, const ir::Op& op, int64_t buffer, uint32_t t,
                    SharedArray& buf, int64_t elem);
void on_shared_write(Machine& m, const ir::Op& op, int64_t buffer, uint32_t t, SharedArray& buf,
                     int64_t elem, const std::byte* old, const std::byte* bytes);
/// The checks of a write by an asynchronous copy that thread t issues (a TMA copy, which may
/// land at any time after its issue): no asynchronous read of the element in flight, and no read
/// by another thread since the last barrier. Nothing is recorded (its bytes land later, through
/// the async proxy, so no fence is due).
void on_async_write(const Machine& m, const ir::Op& op, int64_t buffer, uint32_t t,
                    const SharedArray& buf, int64_t elem);
/// The first element of a `width`-element access at `index` of `buf` by thread t: a DeviceFault
/// when it leaves the buffer or is not a multiple of `width`. `access` is "load" or "store".
int64_t checked_shared_index(const Machine& m, const ir::Op& op, int64_t buffer, uint32_t t,
                             std::string_view access, const SharedArray& buf, int32_t index,
                             int width);

/// One cp_async whose bytes have not landed in shared memory yet (simt_matrix.cpp).
struct AsyncCopy {
  uint64_t group = 0;  ///< the issuing thread's group number
  int64_t buffer = 0;
  int64_t index = 0;  ///< first element
  const ir::Op* op = nullptr;
  std::array<std::byte, 16> bytes{};
};

/// The cp_async copies in flight, per thread: they land when the thread's cp_async_wait retires
/// their group, so a missing or too weak wait reads stale (poisoned) shared memory.
struct AsyncCopies {
  std::vector<std::vector<AsyncCopy>> pending;  ///< per thread, in issue order
  std::vector<uint64_t> committed;              ///< per thread: groups committed so far

  void begin_workgroup(uint32_t threads) {
    pending.assign(threads, {});
    committed.assign(threads, 0);
  }
};

/// One wgmma in flight: its warpgroup's group number and the shared elements it reads, which
/// nothing may write before a wgmma_wait retires the group (simt_wgmma.cpp; the race detector
/// checks every write against them).
struct PendingWgmma {
  uint64_t group = 0;
  const ir::Op* op = nullptr;
  std::vector<std::pair<int64_t, int64_t>> reads;  ///< (buffer, element)
};

/// The wgmma state of each warpgroup, and each thread's shared writes not yet fenced for them.
struct WgmmaState {
  std::vector<uint64_t> committed;                 ///< per warpgroup: groups committed so far
  std::vector<std::vector<PendingWgmma>> pending;  ///< per warpgroup, in issue order
  /// Per thread, (buffer, element) written since its last fence_async_shared (race checks on).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> unfenced;
  bool used = false;  ///< the function has wgmma ops
  /// setmaxnreg's accounts: per warpgroup its register limit per thread, and the workgroup's
  /// pool (registers that lowered limits gave up and no raise has taken).
  std::vector<int64_t> registers;
  int64_t register_pool = 0;

  /// Forgets the last workgroup's groups and unfenced writes (clearing their marks in `shared`);
  /// every warpgroup starts with `maxnreg` registers per thread, the pool with none.
  void begin_workgroup(uint32_t threads, SharedMemory& shared, int64_t maxnreg);
};

/// One TMA copy whose bytes have not landed in shared memory yet (simt_tma.cpp).
struct PendingTma {
  std::pair<int64_t, int64_t> barrier;  ///< (buffer, element) of the mbarrier it completes on
  int64_t buffer = 0;                   ///< the destination buffer
  int64_t byte_offset = 0;              ///< ... and its first byte
  std::vector<std::byte> bytes;         ///< the box, swizzled, as it will land
};

/// One tma_store whose group no tma_store_wait has retired: it reads shared memory (and writes
/// the tensor) when retired (simt_tma.cpp).
struct PendingStore {
  const ir::Op* op = nullptr;
  ir::TmaCopy copy;
  int64_t buffer = 0;                              ///< the source buffer
  int64_t byte_offset = 0;                         ///< ... and its first byte
  std::vector<std::pair<int64_t, int64_t>> reads;  ///< (buffer, element) marked as read (races)
};

/// One mbarrier's SyncClocks: the join of what its current phase's arrivals have seen (each
/// arriving thread's own clock included), and that of the last completed phase, which a wait
/// that sees the phase complete joins into its thread's view.
struct BarrierClocks {
  int64_t phase = 0;
  std::vector<uint32_t> arriving;
  std::vector<uint32_t> completed;
};

/// The workgroup's mbarriers (by buffer and element) and its TMA copies in flight: a copy lands,
/// and completes its bytes on its mbarrier, when a thread next arrives at or waits on that
/// mbarrier, so a missing wait reads stale (poisoned) shared memory. Each thread's tensor stores
/// wait in their groups until a tma_store_wait retires them.
struct TmaState {
  std::map<std::pair<int64_t, int64_t>, ir::MBarrier> barriers;
  std::map<std::pair<int64_t, int64_t>, BarrierClocks> clocks;  ///< when SyncClocks are on
  std::vector<PendingTma> pending;
  /// Counts what can end a role's wait (mbarrier inits, arrivals, copies issued and landed, and
  /// registers a setmaxnreg gave to the pool): a warp_specialize role that waits again with the
  /// count unchanged cannot have been helped.
  uint64_t changes = 0;
  std::vector<std::vector<PendingStore>> open_stores;  ///< per thread, since its last commit
  std::vector<std::deque<std::vector<PendingStore>>> store_groups;  ///< per thread, committed

  /// Forgets the last workgroup's state (clearing its stores' read marks in `shared`).
  void begin_workgroup(uint32_t threads, SharedMemory& shared);
  /// The first store of the workgroup still in flight, or null (the thread in *thread).
  const PendingStore* store_in_flight(uint32_t* thread) const;
};

class Tasks;
class Machine;

/// The workgroups of one thread-block cluster (function attribute `cluster`), run together as
/// cooperative tasks (simt_tasks.cpp): each a Machine of its own, by rank.
struct Cluster {
  std::vector<Machine*> members;
  std::vector<uint64_t> barriers;  ///< cluster_barriers each member has arrived at
  std::vector<uint8_t> ended;      ///< members whose program has ended
  uint64_t changes = 0;            ///< cluster_barrier arrivals (what can end another's wait)
};

class Machine {
 public:
  Machine(const ir::Function& fn, const MemoryMap& memory, const SimtOptions& options, Grid grid);

  const ir::Function& fn;
  const MemoryMap& memory;
  const SimtOptions& options;
  std::ostream& out;
  const Grid grid;
  const uint32_t threads;   ///< T
  const uint32_t subgroup;  ///< S
  std::array<uint32_t, 3> pid{};

  std::vector<Block> blocks;    ///< blocks[0] is the function body
  std::vector<uint64_t> arena;  ///< every slot's storage (8-byte aligned)
  SharedMemory shared;
  AsyncCopies async;
  WgmmaState wgmma;
  TmaState tma;
  SyncClocks sync;
  /// The cooperative tasks this workgroup runs as (a warp_specialize's roles, a cluster's
  /// workgroups: simt_tasks.cpp), or null: it runs alone on the caller's thread.
  Tasks* tasks = nullptr;
  bool in_roles = false;       ///< inside a warp_specialize's roles
  Cluster* cluster = nullptr;  ///< its thread-block cluster, or null (no attribute `cluster`)
  uint32_t rank = 0;           ///< its rank in the cluster

  Mask all() const { return {all_on_.data(), threads}; }
  void run_block(uint32_t block, const Mask& mask) {
    for (const Instr& in : blocks[block].code) in.run(*this, in, mask);
  }
  /// The order in which the threads of one op apply their stores or atomics: a permutation of
  /// [0, threads), one of a few drawn from the schedule seed, varying from call to call.
  const uint32_t* schedule();

  /// "program (x, y, z)": the running program's ids.
  std::string program() const;
  /// "in kernel 'k' at file:line, program (x, y, z)[, thread t]" (no thread when t < 0).
  std::string site(const ir::Op& op, int thread) const;
  /// Throws a DeviceFault "<what> <site><detail>".
  [[noreturn]] void fault(const ir::Op& op, int thread, std::string_view what,
                          std::string_view detail) const;
  /// Counts one iteration of loop `op`; every 256th looks at the deadline (a DeviceFault naming
  /// the loop once it has passed).
  void tick(const ir::Op& op) {
    if ((++ticks_ & 255) == 0 && options.deadline.passed())
      fault(op, -1, options.deadline.describe(), "");
  }

 private:
  std::vector<uint8_t> all_on_;
  uint64_t ticks_ = 0;
  std::vector<std::vector<uint32_t>> orders_;
  uint64_t order_state_ = 0;
};

/// warp_specialize {roles} (simt_tasks.cpp): each region runs its role's threads as a cooperative
/// task, in region order, one at a time.
void run_warp_specialize(Machine& m, const Instr& in, const Mask& mask);
/// Called by a wait that cannot complete yet (mbarrier_wait, setmaxnreg.inc, cluster_barrier):
/// where the workgroup runs as a task (a warp_specialize role, a cluster's workgroup), the other
/// tasks run until this one's turn comes back, then true (check the wait again); else false
/// (nothing else can complete it). `what` says what it waits for; when every task waits and
/// nothing has changed since each last looked (mbarriers, copies, the register pool, cluster
/// barriers), the DeviceFault (the hang a GPU shows) names each task's wait.
bool wait_for_other_roles(Machine& m, const ir::Op& op, const std::string& what);
/// Runs the programs of one cluster (`members`, by rank, each begun) together, each as a task,
/// to their end; the first fault is rethrown. A program's end is checked by `finish` (run on its
/// task).
void run_cluster(Cluster& cluster, const std::function<void(Machine&)>& finish);
/// The cluster's member of rank `rank` as a target of `op` by thread `t` of `m` (faults for a
/// rank outside the cluster, or a member whose program has ended).
Machine& cluster_member(Machine& m, const ir::Op& op, uint32_t t, int64_t rank);

/// Compiles `m.fn` into m.blocks with the parameters' values (simt_compile.cpp).
void compile(Machine& m, const std::vector<RuntimeValue>& params);

/// Copies a whole slot (all threads), or only the threads whose `on` byte is set.
void copy_slot(const Slot& dst, const Slot& src, uint32_t threads);
void copy_slot_masked(const Slot& dst, const Slot& src, const uint8_t* on, uint32_t threads);

// Handler selection, one family per file. Each returns the handler of `instr.op` (whose slots are
// set) and fills the immediates its handler reads.
Handler select_scalar(Instr& instr);  ///< simt_scalar.cpp: ids, elementwise, math, casts
Handler select_memory(Instr& instr);  ///< simt_memory.cpp: global_load/store, atomics
Handler select_shared(Instr& instr, const SharedMemory& shared);  ///< simt_shared.cpp
Handler select_control(Instr& instr, uint32_t threads);           ///< simt_control.cpp
Handler select_debug(Instr& instr);  ///< simt_debug.cpp: print, assert, assume
/// simt_matrix.cpp: mma, ldmatrix, cp_async, cp_async_commit, cp_async_wait
Handler select_matrix(Instr& instr, const SharedMemory& shared);
/// simt_wgmma.cpp: wgmma, wgmma_fence, wgmma_commit, wgmma_wait, fence_async_shared
Handler select_wgmma(Instr& instr, Machine& m);
/// simt_tma.cpp: mbarrier_init, mbarrier_arrive_tx, mbarrier_wait, tma_load, the tma_store family
/// (and, through select_cluster, the cluster ops)
Handler select_tma(Instr& instr, Machine& m);
/// simt_cluster.cpp: cluster_rank, cluster_barrier
Handler select_cluster(Instr& instr);
/// simt_coopmat.cpp: coopmat_fill, coopmat_load, coopmat_store, coopmat_mul_add,
/// coopmat_load_tensor
Handler select_coopmat(Instr& instr);
/// Bytes of one thread's share of a cooperative matrix of `type` (simt_coopmat.cpp): a
/// subgroup's matrix spread over `subgroup` lanes, a workgroup's over `threads`.
int coopmat_slot_bytes(const ir::Type& type, uint32_t subgroup, uint32_t threads);

}  // namespace tessera::interp::simt
