// \file Kernels compiled ahead of time: vector_add and row_sum were traced and compiled at build
// time (CMakeLists.txt: tessera_add_kernels) for the host interpreter, Vulkan (lavapipe, NVIDIA)
// and CUDA (sm_80, sm_90), and this program, linked with libtessera_runtime (no compiler inside),
// launches them as it would JIT kernels. Usage: aot_example [DEVICE] (default: host). Prints one
// line per check and "DEVICE: ok"; exits 0 when every result matches the reference, 1 when one
// does not, 77 (a visible skip) when DEVICE does not exist on this machine.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "aot_example_kernels.h"  // generated: aot::vector_add, aot::row_sum

namespace {

/// The largest |a - b| / max(1, |b|).
double max_err(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(a[i] - b[i]) / std::fmax(1.0, std::fabs(b[i]));
    worst = std::isnan(e) ? INFINITY : std::fmax(worst, e);
  }
  return worst;
}

bool check(const char* what, double err, double tolerance) {
  std::printf("%-38s max error %.3g (tolerance %.3g): %s\n", what, err, tolerance,
              err <= tolerance ? "ok" : "FAILED");
  return err <= tolerance;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "host";
  std::optional<tessera::Device> opened;
  try {
    opened = tessera::Device::open(name);
  } catch (const tessera::Error& e) {
    std::printf("SKIP: no device %s here (%s)\n", name.c_str(), e.what());
    return 77;
  }
  const tessera::Device& dev = *opened;
  bool ok = true;
  // vector_add, built with BLOCK=1024: n is not a multiple of it, so the tail's mask matters.
  const int n = 100003;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = 0.5f * (i % 97) - 7, hy[i] = 0.25f * (i % 31) + 1;
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  out.fill(NAN);
  aot::vector_add[{tessera::cdiv(n, 1024)}](x, y, out, n, 1024);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = double(hx[i]) + double(hy[i]);
  ok &= check("vector_add BLOCK=1024", max_err(out.download(), ref), 0);

  // row_sum, built twice: BLOCK=64 and BLOCK=256 (the compile-time parameter).
  const int rows = 37, cols = 1000;
  std::vector<float> hm(size_t{rows} * cols);
  for (size_t i = 0; i < hm.size(); ++i) hm[i] = static_cast<float>((i * 7919) % 1000) / 500 - 1;
  std::vector<double> sums(rows);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) sums[r] += hm[static_cast<size_t>(r) * cols + c];
  auto m = dev.upload(hm);
  for (int block : {64, 256}) {
    auto s = dev.alloc<float>(rows);
    s.fill(NAN);
    aot::row_sum[{rows}](m, s, cols, block);
    ok &= check(("row_sum BLOCK=" + std::to_string(block)).c_str(), max_err(s.download(), sums),
                1e-4);
  }

  // A specialization that was not built is an error naming the kernel and what was built.
  try {
    aot::row_sum[{rows}](m, out, cols, 128);
    ok = check("row_sum BLOCK=128 (not built) refused", 1, 0);
  } catch (const tessera::Error& e) {
    const std::string what = e.what();
    const bool names =
        what.find("row_sum") != std::string::npos && what.find("BLOCK=256") != std::string::npos;
    ok &= check("row_sum BLOCK=128 (not built) refused", names ? 0 : 1, 0);
    std::printf("  %s\n", what.c_str());
  }
  std::printf("%s: %s\n", dev.info().name.c_str(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
