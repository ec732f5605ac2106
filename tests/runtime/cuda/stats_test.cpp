/// \file The register budget the driver reports: TESSERA_DUMP=ptxstats prints one line per loaded
/// kernel (from the JIT and from the cubin cache alike), and CompiledKernel::stats() gives the
/// same numbers to programs.
#include <iostream>
#include <sstream>

#include "helpers.h"
#include "samples/kernels/matmul_relu.h"
#include "tests/support/env.h"

namespace cuda_test {
namespace {

using tessera::test::ScopedEnv;

/// What std::cerr receives in the scope.
class CaptureCerr {
 public:
  CaptureCerr() : old_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CaptureCerr() { std::cerr.rdbuf(old_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_;
};

/// One parsed ptxstats line.
struct Line {
  std::string kernel, device;
  int sm = 0;
  int registers = -1, local = -1, shared = -1, static_shared = -1, dynamic = -1, threads = -1,
      max_threads = -1;
};

std::vector<Line> ptxstats_lines(const std::string& text) {
  static const std::regex re(
      R"(// ptxstats kernel '([^']+)' on (\S+) \(sm_(\d+)a?\): (\d+) registers, (\d+) bytes local )"
      R"(\(spills\), (\d+) bytes shared \((\d+) static, (\d+) dynamic\), (\d+) threads, max )"
      R"((\d+) threads per block(?:, clusters of \d+ programs)?\n)");
  std::vector<Line> lines;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    lines.push_back({m[1], m[2], std::stoi(m[3]), std::stoi(m[4]), std::stoi(m[5]), std::stoi(m[6]),
                     std::stoi(m[7]), std::stoi(m[8]), std::stoi(m[9]), std::stoi(m[10])});
  }
  return lines;
}

/// The line agrees with the kernel's stats() and with what the kernel was compiled for.
void check_line(const Line& line, const tessera::rt::CompiledKernel& k, const Device& dev) {
  CHECK(line.kernel == k.name);
  CHECK(line.device == dev.info().name);
  CHECK(line.sm == target_of(dev).sm);
  std::optional<tessera::rt::KernelStats> s = k.stats();
  REQUIRE(s);
  CHECK(line.registers == s->registers);
  CHECK(line.local == s->local_bytes);
  CHECK(line.static_shared == s->static_shared_bytes);
  CHECK(line.max_threads == s->max_threads_per_block);
  CHECK(line.dynamic == static_cast<int>(k.shared_bytes));
  CHECK(line.shared == line.static_shared + line.dynamic);
  CHECK(line.threads == static_cast<int>(k.threads_per_program));
  CHECK(line.registers > 0);
  CHECK(line.registers <= 255);  // the most a thread can have on sm_80 .. sm_90
  CHECK(line.local >= 0);
  CHECK(line.max_threads >= line.threads);  // else the launch could not run
  CHECK(line.max_threads <= 1024);
}

TEST_CASE("cuda: TESSERA_DUMP=ptxstats prints registers and spills, as stats() gives them") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::string text = kernel(kVectorAddParams, kVectorAddBody);
  std::shared_ptr<const tessera::rt::CompiledKernel> k, again;
  std::string printed;
  {
    ScopedEnv dump("TESSERA_DUMP", "ptxstats");
    CaptureCerr capture;
    k = load(dev, text);      // JIT (or the disk cache)
    again = load(dev, text);  // the disk cache, where there is one: printed all the same
    printed = capture.text();
  }
  MESSAGE(printed);
  std::vector<Line> lines = ptxstats_lines(printed);
  REQUIRE(lines.size() == 2);
  check_line(lines[0], *k, dev);
  check_line(lines[1], *again, dev);
  CHECK(lines[1].registers == lines[0].registers);
  CHECK(lines[0].static_shared == 0);  // the kernel declares no shared memory
  CHECK(lines[0].dynamic == 0);

  int n = 1000;
  std::vector<float> x(n, 1.5f), y(n, 2.0f);
  auto out = run(dev, k, Grid((n + 127) / 128),
                 {buffer(x), buffer(y), buffer(std::vector<float>(n, -1)), scalar(n)});
  CHECK(as<float>(out[2]) == std::vector<float>(n, 3.5f));
  CHECK(k->stats()->registers == lines[0].registers);  // unchanged by the launch
}

TEST_CASE("cuda: a traced matmul's ptxstats line counts its shared memory, unset, no line") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto matmul = TESSERA_KERNEL(samples::matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                               stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M,
                               BLOCK_N, BLOCK_K);
  auto b = dev.alloc<float>(16);
  auto traced = matmul.traced(b, b, b, 100, 100, 100, 100, 1, 100, 1, 100, 1, 64, 64, 32);
  std::shared_ptr<const tessera::rt::CompiledKernel> k;
  std::string printed;
  {
    ScopedEnv dump("TESSERA_DUMP", "ptxstats");
    CaptureCerr capture;
    k = dev.impl()->compile(*traced, {});
    printed = capture.text();
  }
  MESSAGE(printed);
  std::vector<Line> lines = ptxstats_lines(printed);
  REQUIRE(lines.size() == 1);
  check_line(lines[0], *k, dev);
  CHECK(lines[0].kernel == "matmul_relu_kernel");
  CHECK(lines[0].shared > 0);  // the dot stages its tiles in shared memory

  {
    ScopedEnv dump("TESSERA_DUMP", std::nullopt);
    CaptureCerr capture;
    auto quiet = dev.impl()->compile(*traced, {});
    CHECK(capture.text().find("ptxstats") == std::string::npos);
    REQUIRE(quiet->stats());  // read on every load, printed or not
    CHECK(quiet->stats()->registers == lines[0].registers);
  }
}

}  // namespace
}  // namespace cuda_test
