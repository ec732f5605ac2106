/// \file Dependent launches on cuda:0: on sm_90 and newer every kernel waits at its entry for the
/// grid before it in its stream (PTX griddepcontrol) and launches with programmatic stream
/// serialization, so its launch overlaps the end of the one before. A chain of kernels of several
/// waves, each reading what another program of the kernel before wrote, must see every write,
/// eagerly and replayed from a graph; on older devices the same chain runs in plain stream order.
#include "helpers.h"
#include "runtime/artifact_cache.h"

namespace cuda_test {
namespace {

namespace tl = tessera::tl;

/// dst[i] = src[n - 1 - i] + 1: program p reads what program (programs - 1 - p) of the launch
/// before wrote, which ran in another wave.
void mirror_add_kernel(tl::ptr<float> src_ptr, tl::ptr<float> dst_ptr, tl::i32 n, int BLOCK) {
  auto offsets = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offsets < n;
  tl::store(dst_ptr + offsets, tl::load(src_ptr + (n - 1 - offsets), mask) + 1.0f, mask);
}

constexpr int kBlock = 1024;
constexpr int kLinks = 64;  // even: the mirror twice is the identity

/// Elements of `buffer` that differ from i + kLinks.
int wrong_after_chain(const tessera::Buffer<float>& buffer) {
  const std::vector<float> h = buffer.download();
  int wrong = 0;
  for (size_t i = 0; i < h.size(); ++i) wrong += h[i] != static_cast<float>(i) + kLinks;
  return wrong;
}

TEST_CASE("cuda dependent launches: a chain of 64 kernels of many waves sees every write") {
  CUDA_DEVICE_OR_SKIP(dev);
  const int n = 1 << 22;  // 4096 programs: several waves on any GPU
  std::vector<float> init(n);
  for (int i = 0; i < n; ++i) init[i] = static_cast<float>(i);
  auto mirror = TESSERA_KERNEL(mirror_add_kernel, src_ptr, dst_ptr, n, BLOCK);
  const tessera::Grid grid(tessera::cdiv(n, kBlock));

  auto a = dev.upload(init), b = dev.alloc<float>(n);
  for (int i = 0; i < kLinks; ++i) {
    if (i % 2 == 0)
      mirror[{grid}](a, b, n, kBlock);
    else
      mirror[{grid}](b, a, n, kBlock);
  }
  CHECK(wrong_after_chain(a) == 0);

  auto c = dev.upload(init), d = dev.alloc<float>(n);
  tessera::Stream s = dev.create_stream();
  tessera::Graph g = s.capture([&] {
    for (int i = 0; i < kLinks; ++i) {
      if (i % 2 == 0)
        mirror[{grid, {}, &s}](c, d, n, kBlock);
      else
        mirror[{grid, {}, &s}](d, c, n, kBlock);
    }
  });
  CHECK(g.launches() == kLinks);
  g.replay(s);
  s.synchronize();
  CHECK(wrong_after_chain(c) == 0);
  c.upload(init, &s);
  g.replay(s);  // again, behind the upload in the stream
  s.synchronize();
  CHECK(wrong_after_chain(c) == 0);

  // The compile for this device waits at entry where the target has dependent launches (sm_90+
  // with a driver that launches them), and the loaded kernel launches so.
  const tessera::target::Target t = target_of(dev);
  const bool want = t.has(tessera::target::Cap::DependentLaunch);
  MESSAGE(dev.info().description << ": dependent launches " << std::string(want ? "on" : "off"));
  if (t.sm >= 90 && !want)
    MESSAGE(
        "sm_90+ without dependent launches: TESSERA_DEPENDENT_LAUNCH=0 or "
        "a driver before CUDA 12.3");
  const tessera::target::Artifact art =
      tessera::rt::jit_compile(*mirror.traced(a, b, n, kBlock), t, tessera::CompileOptions{});
  CHECK(art.dependent_launch == want);
  CHECK((art.ptx.find("griddepcontrol.wait;") != std::string::npos) == want);
  auto k = tessera::rt::cuda::load(*dev.impl(), art);
  CHECK(k->dependent_launch == want);
}

}  // namespace
}  // namespace cuda_test
