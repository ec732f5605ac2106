/// \file Cooperative tasks in the SIMT interpreter: the roles of a warp-specialized workgroup (a
/// producer warpgroup and its consumers) and the workgroups of a thread-block cluster.
///
/// Lock-step runs the two sides of a divergent `if` one after the other, which cannot run a
/// producer that waits for its consumers to free a stage while they wait for it to fill the next:
/// whichever side ran first would wait forever. The same holds between the workgroups of a
/// cluster, which arrive on each other's mbarriers and meet at cluster barriers. So each role, and
/// each workgroup of a cluster, is a task with a thread of its own (an OS thread, used as a
/// coroutine: exactly one runs at any time, the others block on a condition variable, so the
/// machines need no locking and every run is the same). A task runs, in lock step over its own
/// threads, until a wait finds what it waits for incomplete (an mbarrier's phase, the register
/// pool, a cluster barrier); then the next task in spawn order runs, and so on round the tasks. A
/// task whose turn comes back checks its wait again. When every task that has not finished waits,
/// and nothing has changed since each looked (Tasks::Changes), nothing can end any of the waits:
/// on a GPU the workgroups hang, here it is a DeviceFault naming each task's wait. A fault in a
/// task ends the others (each is woken to unwind) and reaches the thread that ran them.
///
/// A cluster's workgroup that reaches warp_specialize adds its roles to the cluster's tasks: it
/// runs the first role itself and then waits for the others to end, so the roles of every
/// workgroup of the cluster take their turns together.
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {

class Tasks {
 public:
  /// Counts what can end a wait (mbarrier and pool changes, copies, cluster barrier arrivals);
  /// the tasks that have ended count too.
  using Changes = std::function<uint64_t()>;

  /// `hang` names the fault of tasks that all wait; with `anchor` (and its machine) the fault's
  /// site is that op (a warp_specialize), else the wait that found the hang.
  Tasks(Changes changes, std::string hang, Machine* anchor_machine = nullptr,
        const ir::Op* anchor = nullptr)
      : changes_(std::move(changes)),
        hang_(std::move(hang)),
        anchor_machine_(anchor_machine),
        anchor_(anchor) {}

  Tasks(const Tasks&) = delete;
  Tasks& operator=(const Tasks&) = delete;
  ~Tasks() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  /// Adds a task named `label` that runs `body`; it first runs when the baton reaches it. Called
  /// before run(), or by the running task.
  size_t spawn(std::string label, std::function<void()> body) {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t k = tasks_.size();
    tasks_.push_back(std::make_unique<Task>());
    tasks_[k]->label = std::move(label);
    threads_.emplace_back([this, k, body = std::move(body)] { task_main(k, body); });
    return k;
  }

  /// From a thread that is not one of the tasks: runs every task to its end (or the first fault,
  /// rethrown here).
  void run() {
    {
      std::unique_lock<std::mutex> lock(mu_);
      pass_on(tasks_.size() - 1);  // to the first task that has not ended
      cv_.wait(lock, [&] { return all_done(); });
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    if (error_) std::rethrow_exception(error_);
  }

  /// The running task's label is `label` from now on (a workgroup running its first role).
  void relabel(std::string label) {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_[current_]->label = std::move(label);
  }

  /// The running task cannot go on until another changes what it waits for: the others run until
  /// its turn comes back (or the DeviceFault of a hang, or Cancelled if another task faulted).
  void wait(Machine& m, const ir::Op& op, const std::string& what) {
    std::unique_lock<std::mutex> lock(mu_);
    const size_t k = current_;
    Task& r = *tasks_[k];
    r.waiting = &op;
    r.what = what;
    r.seen = now();
    bool stuck = true;
    for (const auto& o : tasks_)
      if (!o->done && (!o->waiting || o->seen != r.seen)) stuck = false;
    if (stuck) {
      const std::string detail = hang_report();
      lock.unlock();
      if (anchor_)
        anchor_machine_->fault(*anchor_, -1, hang_, detail);
      else
        m.fault(op, -1, hang_, detail);
    }
    pass_on(k);
    cv_.wait(lock, [&] { return current_ == k || cancelled_; });
    if (cancelled_) throw Cancelled{};
    r.waiting = nullptr;
  }

  /// The running task waits (`op`, in `m`) until the tasks `ids` have ended.
  void join(const std::vector<size_t>& ids, Machine& m, const ir::Op& op) {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        bool ended = true;
        for (size_t id : ids) ended = ended && tasks_[id]->done;
        if (ended) return;
      }
      wait(m, op, "its other roles to end");
    }
  }

 private:
  struct Task {
    std::string label;  ///< "role 1 (threads 256 to 383)", "program (1, 0, 0)"
    bool done = false;
    const ir::Op* waiting = nullptr;  ///< the wait it is blocked at, or null
    std::string what;                 ///< ... and what it waits for
    uint64_t seen = 0;                ///< now() when it last looked
  };
  struct Cancelled {};  ///< unwinds a task that another's fault ended

  uint64_t now() const { return changes_() + ended_; }
  bool all_done() const {
    for (const auto& t : tasks_)
      if (!t->done) return false;
    return true;
  }

  /// The baton goes to the next task after `k` (in spawn order, round) that has not ended; if
  /// none is left, run() is woken. (Called with mu_ held.)
  void pass_on(size_t k) {
    const size_t n = tasks_.size();
    for (size_t step = 1; step <= n; ++step) {
      const size_t next = (k + step) % n;
      if (!tasks_[next]->done) {
        current_ = next;
        cv_.notify_all();
        return;
      }
    }
    current_ = kNone;
    cv_.notify_all();
  }

  void task_main(size_t k, const std::function<void()>& body) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return current_ == k || cancelled_; });
      if (cancelled_) return finish(k);
    }
    try {
      body();
    } catch (const Cancelled&) {
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      cancelled_ = true;
      return finish(k);
    }
    std::lock_guard<std::mutex> lock(mu_);
    finish(k);
  }

  /// Task k has ended (mu_ held).
  void finish(size_t k) {
    tasks_[k]->done = true;
    ++ended_;
    if (cancelled_) {
      cv_.notify_all();
      return;
    }
    pass_on(k);
  }

  /// ": role 0 (threads 0 to 255) at LOC waits for WHAT; role 1 (...) ..." (mu_ held).
  std::string hang_report() const {
    std::string s = ":";
    for (const auto& t : tasks_) {
      if (t->done) continue;
      s += (s.size() > 1 ? "; " : " ") + t->label + " at " + t->waiting->loc.str() + " waits for " +
           t->what;
    }
    return s;
  }

  static constexpr size_t kNone = static_cast<size_t>(-1);
  const Changes changes_;
  const std::string hang_;
  Machine* const anchor_machine_;
  const ir::Op* const anchor_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t current_ = kNone;  ///< the task that runs
  uint64_t ended_ = 0;
  bool cancelled_ = false;
  std::exception_ptr error_;
};

namespace {

/// One role of a warp_specialize: its threads and which of them are active.
struct Role {
  uint32_t first = 0, count = 0, active = 0;
  std::vector<uint8_t> on;
};

std::vector<Role> roles_of(Machine& m, const Instr& in, const Mask& mask) {
  const std::vector<int64_t>& counts = in.op->ints_attr(attr::kRoles);
  TESSERA_CHECK(counts.size() == in.blocks.size(), "warp_specialize with ", in.blocks.size(),
                " regions and ", counts.size(), " roles");
  std::vector<Role> roles;
  uint32_t first = 0;
  for (int64_t n : counts) {
    Role r;
    r.first = first;
    r.count = static_cast<uint32_t>(n);
    r.on.assign(m.threads, 0);
    for (uint32_t t = first; t < first + r.count && t < m.threads; ++t) {
      r.on[t] = mask.on[t];
      r.active += mask.on[t];
    }
    first += r.count;
    roles.push_back(std::move(r));
  }
  TESSERA_CHECK(first == m.threads, "warp_specialize roles of ", first,
                " threads in a workgroup of ", m.threads);
  return roles;
}

std::string role_label(const Machine& m, size_t k, const Role& r) {
  return (m.cluster ? m.program() + ", " : std::string()) + "role " + std::to_string(k) +
         " (threads " + std::to_string(r.first) + " to " + std::to_string(r.first + r.count - 1) +
         ")";
}

void run_role(Machine& m, const Instr& in, size_t k, const Role& r) {
  if (r.active) m.run_block(in.blocks[k], {r.on.data(), r.active});
}

/// Sets a pointer for a scope and puts the old value back at its end (also when a fault unwinds).
template <class T>
class Scoped {
 public:
  Scoped(T& slot, T value) : slot_(slot), old_(slot) { slot_ = value; }
  ~Scoped() { slot_ = old_; }
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;

 private:
  T& slot_;
  T old_;
};

}  // namespace

void run_warp_specialize(Machine& m, const Instr& in, const Mask& mask) {
  if (m.in_roles)
    m.fault(*in.op, -1, "warp_specialize inside a role of another", "");  // the verifier's rule
  // (Shared with the role tasks, which a fault may leave running after this frame unwinds.)
  auto roles = std::make_shared<const std::vector<Role>>(roles_of(m, in, mask));
  Scoped<bool> in_roles(m.in_roles, true);
  if (m.tasks) {  // a cluster's workgroup: its roles join the cluster's tasks
    std::vector<size_t> others;
    for (size_t k = 1; k < roles->size(); ++k)
      others.push_back(m.tasks->spawn(role_label(m, k, (*roles)[k]),
                                      [&m, &in, k, roles] { run_role(m, in, k, (*roles)[k]); }));
    m.tasks->relabel(role_label(m, 0, (*roles)[0]));
    run_role(m, in, 0, (*roles)[0]);
    m.tasks->join(others, m, *in.op);
    m.tasks->relabel(m.program());
    return;
  }
  Tasks tasks([&m] { return m.tma.changes; }, "warp_specialize roles that all wait (a GPU hangs)",
              &m, in.op);
  Scoped<Tasks*> running(m.tasks, &tasks);
  for (size_t k = 0; k < roles->size(); ++k)
    tasks.spawn(role_label(m, k, (*roles)[k]),
                [&m, &in, k, roles] { run_role(m, in, k, (*roles)[k]); });
  tasks.run();
}

bool wait_for_other_roles(Machine& m, const ir::Op& op, const std::string& what) {
  if (!m.tasks) return false;
  m.tasks->wait(m, op, what);
  return true;
}

void run_cluster(Cluster& cluster, const std::function<void(Machine&)>& finish) {
  Tasks tasks(
      [&cluster] {
        uint64_t n = cluster.changes;
        for (const Machine* m : cluster.members) n += m->tma.changes;
        return n;
      },
      "the workgroups of a cluster that all wait (a GPU hangs)");
  for (Machine* m : cluster.members) m->tasks = &tasks;
  struct Reset {
    Cluster& c;
    ~Reset() {
      for (Machine* m : c.members) m->tasks = nullptr;
    }
  } reset{cluster};
  for (size_t r = 0; r < cluster.members.size(); ++r) {
    Machine* m = cluster.members[r];
    tasks.spawn(m->program(), [m, r, &cluster, &finish] {
      m->run_block(0, m->all());
      finish(*m);
      cluster.ended[r] = 1;
    });
  }
  tasks.run();
}

}  // namespace tessera::interp::simt
