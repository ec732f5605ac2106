/// \file warp_specialize in the SIMT interpreter: the roles of a warp-specialized workgroup (a
/// producer warpgroup and its consumers) run as cooperative tasks.
///
/// Lock-step runs the two sides of a divergent `if` one after the other, which cannot run a
/// producer that waits for its consumers to free a stage while they wait for it to fill the next:
/// whichever side ran first would wait forever. So each role gets a thread of its own (an OS
/// thread, used as a coroutine: exactly one runs at any time, the others block on a condition
/// variable, so the machine needs no locking and every run is the same). A role runs, in lock
/// step over its own threads, until an mbarrier_wait finds its phase incomplete; then the next
/// role in region order runs, and so on round the roles. A role whose turn comes back checks its
/// wait again. When every role that has not finished waits, and no mbarrier has changed since
/// each looked, nothing can complete any of the waits: on a GPU the workgroup hangs, here it is a
/// DeviceFault naming each role's wait. A fault in a role ends the others (each is woken to
/// unwind) and reaches the caller from the thread that ran warp_specialize.
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {

class Roles {
 public:
  Roles(Machine& m, const Instr& in, const Mask& mask) : m_(m), in_(in) {
    const std::vector<int64_t>& counts = in.op->ints_attr(attr::kRoles);
    TESSERA_CHECK(counts.size() == in.blocks.size(), "warp_specialize with ", in.blocks.size(),
                  " regions and ", counts.size(), " roles");
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
      roles_.push_back(std::move(r));
    }
    TESSERA_CHECK(first == m.threads, "warp_specialize roles of ", first,
                  " threads in a workgroup of ", m.threads);
  }

  /// Runs every role to its end (or the first fault, rethrown here).
  void run() {
    m_.roles = this;
    std::vector<std::thread> threads;
    threads.reserve(roles_.size());
    for (size_t k = 0; k < roles_.size(); ++k) threads.emplace_back([this, k] { role_main(k); });
    {
      std::lock_guard<std::mutex> lock(mu_);
      current_ = 0;
    }
    cv_.notify_all();
    for (std::thread& t : threads) t.join();
    m_.roles = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

  /// The running role cannot go on until another changes an mbarrier (wait_for_other_roles).
  void wait(const ir::Op& op, const std::string& what) {
    std::unique_lock<std::mutex> lock(mu_);
    const size_t k = current_;
    Role& r = roles_[k];
    r.waiting = &op;
    r.what = what;
    r.seen = m_.tma.changes;
    bool stuck = true;
    for (const Role& o : roles_)
      if (!o.done && (!o.waiting || o.seen != m_.tma.changes)) stuck = false;
    if (stuck) {
      const std::string detail = hang_report();
      lock.unlock();
      m_.fault(*in_.op, -1, "warp_specialize roles that all wait (a GPU hangs)", detail);
    }
    pass_on(k);
    cv_.wait(lock, [&] { return current_ == k || cancelled_; });
    if (cancelled_) throw Cancelled{};
    r.waiting = nullptr;
  }

 private:
  struct Role {
    uint32_t first = 0, count = 0, active = 0;
    std::vector<uint8_t> on;  ///< the mask of its threads
    bool done = false;
    const ir::Op* waiting = nullptr;  ///< the wait it is blocked at, or null
    std::string what;                 ///< ... and what it waits for
    uint64_t seen = 0;                ///< m.tma.changes when it last looked
  };
  struct Cancelled {};  ///< unwinds a role that another's fault ended

  /// The baton goes to the next role after `k` (in region order, round) that has not finished;
  /// if none is left, run() is woken to join. (Called with mu_ held.)
  void pass_on(size_t k) {
    for (size_t step = 1; step <= roles_.size(); ++step) {
      const size_t next = (k + step) % roles_.size();
      if (!roles_[next].done) {
        current_ = next;
        cv_.notify_all();
        return;
      }
    }
    current_ = kNone;
    cv_.notify_all();
  }

  void role_main(size_t k) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return current_ == k || cancelled_; });
      if (cancelled_) return finish(k, lock);
    }
    try {
      Role& r = roles_[k];
      if (r.active) m_.run_block(in_.blocks[k], {r.on.data(), r.active});
    } catch (const Cancelled&) {
    } catch (...) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      cancelled_ = true;
      return finish(k, lock);
    }
    std::unique_lock<std::mutex> lock(mu_);
    finish(k, lock);
  }

  void finish(size_t k, std::unique_lock<std::mutex>&) {
    roles_[k].done = true;
    if (cancelled_) {
      cv_.notify_all();
      return;
    }
    pass_on(k);
  }

  /// ": role 0 (threads 0 to 255) at LOC waits for WHAT; role 1 (...) ..." (mu_ held).
  std::string hang_report() const {
    std::string s = ":";
    for (size_t k = 0; k < roles_.size(); ++k) {
      const Role& r = roles_[k];
      if (r.done) continue;
      s += (s.size() > 1 ? "; role " : " role ") + std::to_string(k) + " (threads " +
           std::to_string(r.first) + " to " + std::to_string(r.first + r.count - 1) + ") at " +
           r.waiting->loc.str() + " waits for " + r.what;
    }
    return s;
  }

  static constexpr size_t kNone = static_cast<size_t>(-1);
  Machine& m_;
  const Instr& in_;
  std::vector<Role> roles_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t current_ = kNone;  ///< the role that runs
  bool cancelled_ = false;
  std::exception_ptr error_;
};

void run_warp_specialize(Machine& m, const Instr& in, const Mask& mask) {
  if (m.roles)
    m.fault(*in.op, -1, "warp_specialize inside a role of another", "");  // the verifier's rule
  Roles roles(m, in, mask);
  roles.run();
}

bool wait_for_other_roles(Machine& m, const ir::Op& op, const std::string& what) {
  if (!m.roles) return false;
  m.roles->wait(op, what);
  return true;
}

}  // namespace tessera::interp::simt
