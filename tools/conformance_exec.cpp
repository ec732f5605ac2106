/// \file Running conformance cases: the PASS/FAIL/SKIP rules for one case, per-case seeds, and
/// child processes that report results through a pipe (a crash or hang fails one case only).
#include "tools/conformance_exec.h"

#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tessera::tools {
namespace {

using conformance::Case;
using conformance::Context;
using conformance::DeviceFacts;

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A case's own seed: the run's seed and its name, so a filtered replay sees the same inputs.
uint64_t case_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return mix(seed ^ h);
}

Result run_case(const Case& c, const Device& dev, const DeviceFacts& facts, uint64_t seed,
                bool quick) {
  Result r;
  for (conformance::Need n : c.needs) {
    if (facts.has(n)) continue;
    return {Status::Skip, "needs " + std::string(conformance::need_name(n)), 0, 0};
  }
  Context ctx(dev, facts, case_seed(seed, c.name), quick);
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  try {
    c.body(ctx);
    if (!ctx.is_device_spent()) dev.synchronize();
  } catch (const Error& e) {
    // A fault may leave the device unusable in this process (CUDA keeps it): open it afresh.
    if (e.kind() == ErrorKind::DeviceFault) ctx.device_spent();
    try {
      dev.synchronize();  // drop the stream's kept error, so the next case starts clean
    } catch (const Error&) {
    }
    if (e.kind() == ErrorKind::Unsupported && !c.may_be_unsupported.empty() && !facts.is_host())
      return {Status::Skip, "unsupported (" + c.may_be_unsupported + "): " + e.what(), 0, 0};
    error = std::string(to_string(e.kind())) + " error: " + e.what();
  } catch (const std::exception& e) {
    error = std::string("exception: ") + e.what();
  }
  r.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.max_err = ctx.max_error();
  if (!error.empty())
    r = {Status::Fail, ctx.failed() ? error + "; and " + ctx.failure() : error, r.max_err, r.ms};
  else if (ctx.failed())
    r.status = Status::Fail, r.detail = ctx.failure();
  else if (ctx.checks() == 0)
    r.status = Status::Fail, r.detail = "the case checked nothing";
  r.device_spent = ctx.is_device_spent();
  return r;
}

// --- the child's report: one line per case ------------------------------------------------------

std::string encode(size_t index, const Result& r) {
  std::string detail;
  for (char ch : r.detail) {
    if (ch == '\n')
      detail += "\\n";
    else if (ch == '\\')
      detail += "\\\\";
    else
      detail += ch;
  }
  char head[96];
  std::snprintf(head, sizeof head, "R %zu %d %.17g %.17g ", index, static_cast<int>(r.status),
                r.max_err, r.ms);
  return head + detail + "\n";
}

bool decode(const std::string& line, size_t& index, Result& r) {
  int status = 0, used = 0;
  if (std::sscanf(line.c_str(), "R %zu %d %lg %lg %n", &index, &status, &r.max_err, &r.ms, &used) <
      4)
    return false;
  r.status = static_cast<Status>(status);
  r.detail.clear();
  for (size_t i = static_cast<size_t>(used); i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size())
      r.detail += line[++i] == 'n' ? '\n' : line[i];
    else
      r.detail += line[i];
  }
  return true;
}

void write_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

[[noreturn]] void child_main(int fd, const std::string& device,
                             const std::vector<const Case*>& cases, size_t first,
                             const ExecOptions& o) {
  try {
    Device dev = Device::open(device);
    const DeviceFacts facts = facts_for(dev);
    for (size_t i = first; i < cases.size(); ++i) {
      const Result r = run_case(*cases[i], dev, facts, o.seed, o.quick);
      write_all(fd, encode(i, r));
      if (r.device_spent) break;  // the parent starts a new child for the next case
    }
  } catch (const std::exception& e) {
    std::string msg = e.what();
    for (char& ch : msg)
      if (ch == '\n') ch = ' ';
    write_all(fd, "E " + msg + "\n");
  }
  std::fflush(nullptr);
  ::_exit(0);  // no static destructors: the parent owns the process's exit
}

/// Reads the child's report lines until it exits (or stays silent for the timeout, when it is
/// killed). Returns the index of the next case without a result.
size_t read_child(int fd, pid_t pid, size_t next, const ExecOptions& o,
                  const std::function<void(size_t, const Result&)>& done, bool& timed_out,
                  std::string& open_error) {
  std::string buf;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(o.timeout_s * 1000)) == 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      return next;
    }
    char tmp[4096];
    const ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n <= 0) return next;
    buf.append(tmp, static_cast<size_t>(n));
    for (size_t pos; (pos = buf.find('\n')) != std::string::npos; buf.erase(0, pos + 1)) {
      const std::string line = buf.substr(0, pos);
      size_t index = 0;
      Result r;
      if (line.starts_with("E "))
        open_error = line.substr(2);
      else if (decode(line, index, r))
        done(index, r), next = index + 1;
    }
  }
}

void run_isolated(const std::string& device, const std::vector<const Case*>& cases,
                  const ExecOptions& o, const std::function<void(size_t, const Result&)>& done) {
  for (size_t next = 0; next < cases.size();) {
    int fds[2];
    if (::pipe(fds) != 0)
      fail(ErrorKind::Runtime, "conformance: pipe failed: ", std::strerror(errno));
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) fail(ErrorKind::Runtime, "conformance: fork failed: ", std::strerror(errno));
    if (pid == 0) {
      ::close(fds[0]);
      child_main(fds[1], device, cases, next, o);
    }
    ::close(fds[1]);
    bool timed_out = false;
    std::string open_error;
    next = read_child(fds[0], pid, next, o, done, timed_out, open_error);
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!open_error.empty())
      fail(ErrorKind::Runtime, "conformance: device '", device, "': ", open_error);
    if (next >= cases.size()) break;
    if (open_error.empty() && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      continue;  // the child stopped after a case that spent the device
    const std::string why =
        timed_out ? "timed out after " + std::to_string(static_cast<int>(o.timeout_s)) + " s"
        : WIFSIGNALED(status)
            ? std::string("the process crashed: ") + strsignal(WTERMSIG(status))
            : "the process exited with status " + std::to_string(WEXITSTATUS(status));
    done(next, Result{Status::Fail, why + " (rerun with --no-isolate under a debugger)", 0, 0});
    ++next;
  }
}

}  // namespace

DeviceFacts facts_for(const Device& dev) {
  DeviceFacts f{dev.info().name, dev.info().kind, {}};
  std::string err;
  if (auto t = target::parse_target(dev.info().target, &err)) {
    f.target = *t;
    return f;
  }
  if (auto t = target::profile(dev.info().kind)) {  // a device whose target text does not parse
    std::fprintf(
        stderr, "conformance: device %s: target '%s' does not parse (%s); using the '%s' profile\n",
        f.name.c_str(), dev.info().target.c_str(), err.c_str(), dev.info().kind.c_str());
    f.target = *t;
    return f;
  }
  fail(ErrorKind::Runtime, "device ", f.name, ": cannot parse its target '", dev.info().target,
       "': ", err);
}

void run_cases(const std::string& device, const std::vector<const Case*>& cases,
               const ExecOptions& options, const std::function<void(size_t, const Result&)>& done) {
  if (options.isolate) return run_isolated(device, cases, options, done);
  Device dev = Device::open(device);
  const DeviceFacts facts = facts_for(dev);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Result r = run_case(*cases[i], dev, facts, options.seed, options.quick);
    done(i, r);
    if (r.device_spent) dev = Device::open(device);
  }
}

}  // namespace tessera::tools
