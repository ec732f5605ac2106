/// \file Test helpers for the CUDA backend: the device or a visible SKIP, SIMT kernels compiled
/// through the PTX target and loaded as artifacts, launches with packed parameters, and runs of
/// the same kernel on the GPU and in the SIMT interpreter (the oracle) for bitwise comparison.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/interp/simt.h"
#include "core/ir/abi.h"
#include "core/ir/parser.h"
#include "core/ir/verifier.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "runtime/cuda/api.h"
#include "runtime/tessera.h"
#include "targets/ptx/ptx.h"

namespace cuda_test {

using tessera::BufferBase;
using tessera::Device;
using tessera::Error;
using tessera::ErrorKind;
using tessera::Grid;

/// `cuda:0`, or nullopt after a SKIP message that says why there is none.
inline std::optional<Device> device_or_skip() {
  Device::Listing listing = Device::enumerate();
  for (const auto& d : listing.devices)
    if (d.kind == "cuda") return Device::open(d.name);
  std::string why = "no reason given";
  for (const std::string& u : listing.unavailable)
    if (u.starts_with("cuda")) why = u;
  MESSAGE("SKIP: no CUDA device: " << why);
  return std::nullopt;
}

#define CUDA_DEVICE_OR_SKIP(dev)       \
  auto dev##_found = device_or_skip(); \
  if (!dev##_found) return;            \
  Device dev = *dev##_found

inline tessera::target::Target target_of(const Device& dev) {
  std::string error;
  auto t = tessera::target::parse_target(dev.info().target, &error);
  REQUIRE_MESSAGE(t, error);
  return *t;
}

/// out[i] = x[i] + y[i] for i < n, 128 per program (kernel()'s parameters and body).
inline constexpr const char* kVectorAddParams =
    "%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32";
inline constexpr const char* kVectorAddBody = R"(
  %pid = program_id {axis = 0} : i32
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %c128 = constant {value = 128} : i32
  %base = mul %pid, %c128 : i32
  %i = add %base, %tid : i32
  %m = cmp_lt %i, %n : i1
  %px = ptr_add %x, %i : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %a = global_load %px, %m, %zero {align = 4, width = 1} : f32
  %py = ptr_add %y, %i : ptr<f32>
  %b = global_load %py, %m, %zero {align = 4, width = 1} : f32
  %s = add %a, %b : f32
  %po = ptr_add %out, %i : ptr<f32>
  global_store %po, %m, %s {align = 4, width = 1})";

/// A SIMT kernel `@k` (threads 128 unless given) with `params` and `body`.
inline std::string kernel(std::string_view params, std::string_view body,
                          std::string_view attrs = "", int threads = 128) {
  std::string text = "func @k(" + std::string(params) +
                     ") attributes {stage = \"simt\", threads = " + std::to_string(threads) +
                     ", subgroup = 32";
  if (!attrs.empty()) text += ", " + std::string(attrs);
  return text + "} {\n" + std::string(body) + "\n}\n";
}

inline std::unique_ptr<tessera::ir::Module> parse(std::string_view text) {
  auto m = tessera::ir::parse(text, "test.tir");
  tessera::ir::verify(*m);
  return m;
}

/// Emits PTX for the device's target and loads it.
inline std::shared_ptr<const tessera::rt::CompiledKernel> load(const Device& dev,
                                                               std::string_view text) {
  auto m = parse(text);
  tessera::target::Artifact a = tessera::ptx::emit(m->kernel(), target_of(dev));
  return tessera::rt::cuda::load(*dev.impl(), a);
}

/// A kernel argument: a buffer (its initial bytes; read back after the run) or a scalar.
struct Arg {
  bool buffer = false;
  std::vector<std::byte> bytes;
};
template <class T>
Arg buffer(const std::vector<T>& v) {
  Arg a{true, std::vector<std::byte>(v.size() * sizeof(T))};
  if (!v.empty()) std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}
template <class T>
Arg scalar(T v) {
  Arg a{false, std::vector<std::byte>(sizeof(T))};
  std::memcpy(a.bytes.data(), &v, sizeof(T));
  return a;
}
template <class T>
std::vector<T> as(const std::vector<std::byte>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

/// The packed block: buffer i's address from `addresses`, scalars as given.
inline std::vector<std::byte> pack(const tessera::ir::ParamLayout& layout,
                                   const std::vector<Arg>& args,
                                   const std::vector<uint64_t>& addresses) {
  REQUIRE(layout.slots.size() == args.size());
  std::vector<std::byte> block(layout.size);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].buffer) {
      std::memcpy(block.data() + layout.slots[i].offset, &addresses[i], 8);
    } else {
      REQUIRE(args[i].bytes.size() == layout.slots[i].size);
      std::memcpy(block.data() + layout.slots[i].offset, args[i].bytes.data(),
                  args[i].bytes.size());
    }
  }
  return block;
}

/// Launches a loaded kernel with `args` on the device's default stream; returns the buffers'
/// contents after it ran (in argument order; empty for scalars).
inline std::vector<std::vector<std::byte>> run(
    const Device& dev, const std::shared_ptr<const tessera::rt::CompiledKernel>& k, Grid grid,
    const std::vector<Arg>& args) {
  std::vector<BufferBase> buffers(args.size());
  std::vector<uint64_t> addresses(args.size());
  std::vector<std::shared_ptr<tessera::rt::Allocation>> keep;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].buffer) continue;
    buffers[i] = BufferBase::allocate(dev.impl(), std::max<size_t>(args[i].bytes.size(), 1),
                                      tessera::ir::DType::u8);
    if (!args[i].bytes.empty())
      buffers[i].upload_bytes(args[i].bytes.data(), args[i].bytes.size(), 0, nullptr);
    addresses[i] = buffers[i].address();
    keep.push_back(buffers[i].allocation());
  }
  dev.impl()->default_stream()->launch(k, grid, pack(k->params, args, addresses), keep);
  std::vector<std::vector<std::byte>> out(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].buffer) continue;
    out[i].resize(args[i].bytes.size());
    if (!out[i].empty()) buffers[i].download_bytes(out[i].data(), out[i].size(), 0, nullptr);
  }
  return out;
}

/// Host buffers as the interpreter's live memory.
class HostMemory : public tessera::interp::MemoryMap {
 public:
  void add(const std::vector<std::byte>& b) {
    auto begin = reinterpret_cast<uint64_t>(b.data());
    ranges_.push_back({begin, begin + b.size()});
  }
  bool contains(uint64_t address, uint64_t bytes) const override {
    for (const auto& [b, e] : ranges_)
      if (address >= b && address <= e && bytes <= e - address) return true;
    return false;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

/// The same kernel in the SIMT interpreter: the buffers' contents after it ran.
inline std::vector<std::vector<std::byte>> run_interpreter(std::string_view text, Grid grid,
                                                           std::vector<Arg> args) {
  auto m = parse(text);
  HostMemory memory;
  std::vector<uint64_t> addresses(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].buffer) continue;
    if (args[i].bytes.empty()) args[i].bytes.resize(1);
    memory.add(args[i].bytes);
    addresses[i] = reinterpret_cast<uint64_t>(args[i].bytes.data());
  }
  std::vector<std::byte> block = pack(tessera::ir::param_layout(m->kernel()), args, addresses);
  tessera::interp::run_simt(m->kernel(), block, tessera::interp::Grid{grid.x, grid.y, grid.z},
                            memory);
  std::vector<std::vector<std::byte>> out(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].buffer) out[i] = args[i].bytes;
  return out;
}

/// The kind and message of what `fn` throws ("(no error)" if nothing).
template <class F>
std::pair<ErrorKind, std::string> error_of(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  return {ErrorKind::Internal, "(no error)"};
}

inline bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

/// A device fault can leave the CUDA driver unusable for the rest of its process (driver 580
/// does), so tests that cause one run again in a child process: in the parent this runs the test
/// case `name` (no commas) in a child, checks that all of its checks passed, shows its output and
/// returns true; in the child it returns false and the test case does its work.
inline bool ran_in_child(const std::string& name) {
  if (std::getenv("TESSERA_CUDA_TEST_CHILD")) return false;
  char self[4096] = {};
  REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
  std::string cmd = "TESSERA_CUDA_TEST_CHILD=1 '" + std::string(self) + "' -tc='" + name + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buf[1024];
  while (fgets(buf, sizeof buf, pipe)) out += buf;
  int status = pclose(pipe);
  MESSAGE("child process (" << name << "):\n" << out);
  CHECK(contains(out, "Status: SUCCESS!"));
  CHECK(std::regex_search(out, std::regex(R"(test cases: +1 \| +1 passed)")));  // it ran
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  return true;
}

/// After a fault, work on the device either runs (the driver let the context be remade) or fails
/// with the DeviceFault that says the device is unusable in this process. `fn` must compute what
/// it checks outside CHECK: doctest's CHECK catches an exception of its expression and reports it
/// as a failed check, so the lost device's error would never reach this function.
template <class F>
void runs_or_device_lost(F fn) {
  try {
    fn();
    MESSAGE("the device recovered after the fault");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::DeviceFault);
    CHECK(
        contains(e.what(),
                 "cuda:0 cannot be used again in this process: the CUDA driver keeps its fault ("));
    MESSAGE("after the fault: " << std::string(e.what()));
  }
}

}  // namespace cuda_test
