// \file A program outside Tessera's tree that uses it as a package: one kernel (a scaled vector
// add, its tail masked) run on each device named on the command line ("host" if none), checked
// element by element against the same sum on the CPU. Prints the library's version and one line
// per device; exit status 0 only if every device gave every element.
#include <tessera/tessera.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tl = tessera::tl;

void axpy_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);  // [BLOCK] i32
  auto mask = offs < n;                                          // [BLOCK] i1
  tl::store(out + offs, 2.0f * tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
}

/// Runs the kernel on `name`; the number of elements that differ from the CPU's result.
int mismatches_on(const std::string& name) {
  const int n = 1000, BLOCK = 128;  // 8 programs, the last one masked
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = 0.5f * i, hy[i] = 1000.0f - i;
  tessera::Device dev = tessera::Device::open(name);
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  out.fill(-1.0f);
  auto axpy = TESSERA_KERNEL(axpy_kernel, x, y, out, n, BLOCK);
  axpy[{tessera::cdiv(n, BLOCK)}](x, y, out, n, BLOCK);
  std::vector<float> got = out.download();
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += got[i] != 2.0f * hx[i] + hy[i];  // exact: small integers
  return bad;
}

int main(int argc, char** argv) {
  std::printf("tessera %s\n", std::string(tessera::version()).c_str());
  std::vector<std::string> names(argv + 1, argv + argc);
  if (names.empty()) names.push_back("host");
  int failed = 0;
  for (const std::string& name : names) {
    try {
      int bad = mismatches_on(name);
      std::printf("%s: %s\n", name.c_str(), bad ? "WRONG" : "ok");
      if (bad) std::printf("  %d of 1000 elements differ\n", bad);
      failed += bad != 0;
    } catch (const tessera::Error& e) {
      std::printf("%s: error: %s\n", name.c_str(), e.what());
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}
