/// \file Fuzzing a device that may crash or hang: every check runs in a forked child that opens
/// the device itself and reports its verdict through a pipe. The parent never opens a device (a
/// process with a device's threads cannot fork safely).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/fuzz_run.h"

namespace tessera::tools::fuzz {
namespace {

void write_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

/// Runs `body` in a child and returns what it wrote, or nullopt (with `why`) if the child
/// crashed, exited early or stayed silent past the timeout.
std::optional<std::string> in_child(const std::function<std::string()>& body, double timeout_s,
                                    std::string& why) {
  int fds[2];
  if (::pipe(fds) != 0) fail(ErrorKind::Runtime, "fuzz: pipe failed: ", std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) fail(ErrorKind::Runtime, "fuzz: fork failed: ", std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    try {
      out = "1" + body();
    } catch (const std::exception& e) {
      out = "0" + std::string(e.what());
    }
    write_all(fds[1], out);
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  bool timed_out = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout_s * 1000)) == 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out)
    why = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
  else if (WIFSIGNALED(status))
    why = std::string("the process crashed: ") + strsignal(WTERMSIG(status));
  else if (out.empty())
    why = "the process exited with status " + std::to_string(WEXITSTATUS(status));
  else if (out[0] == '0')
    why = out.substr(1);
  else
    return out.substr(1);
  return std::nullopt;
}

}  // namespace

Checker isolated_checker(const std::string& device, bool exact, double timeout_s) {
  return [=](const ir::Module& m, const Program& p, const Buffers& inputs) {
    std::string why;
    std::optional<std::string> out = in_child(
        [&] {
          const Verdict v = check(Device::open(device), m, p, inputs, exact);
          return std::to_string(static_cast<int>(v.kind)) + " " + v.detail;
        },
        timeout_s, why);
    if (!out) return Verdict{Verdict::Kind::DeviceError, why};
    const size_t space = out->find(' ');
    return Verdict{static_cast<Verdict::Kind>(std::stoi(out->substr(0, space))),
                   out->substr(space + 1)};
  };
}

DeviceDesc describe_device(const std::string& name, bool isolate) {
  if (!isolate) {
    const Device dev = Device::open(name);
    return {dev.info().kind, dev.info().target};
  }
  std::string why;
  std::optional<std::string> out = in_child(
      [&] {
        const Device dev = Device::open(name);
        return dev.info().kind + "\n" + dev.info().target;
      },
      120, why);
  if (!out) fail(ErrorKind::Runtime, "fuzz: device '", name, "': ", why);
  const size_t nl = out->find('\n');
  return {out->substr(0, nl), out->substr(nl + 1)};
}

}  // namespace tessera::tools::fuzz
