// \file A program whose kernel is a static made before main (as a TESSERA_KERNEL at namespace scope
// is, and the launchers tessera_add_kernels generates), launched on the device named by argv[1];
// with "keep", a buffer, a stream and an event made in main are kept in statics too. The process
// must exit normally (status 0) with the right results. The hazard: such statics are destroyed
// after the device registry and after the drivers' own exit-time teardown, so the driver objects
// they hold (a CUDA module, a Vulkan pipeline and the VkDevice it kept) were destroyed on a
// driver already gone: an abort in cuCtxPushCurrent on CUDA, a segfault on NVIDIA's Vulkan (the
// AOT example on the H200). The registry now closes every device before the drivers go
// (DeviceImpl::close), and what outlives it touches no driver. Exits 77 (a ctest skip) where the
// device does not exist.
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "runtime/tessera.h"

namespace tl = tessera::tl;

namespace {

void scale_kernel(tl::ptr<float> x_ptr, tl::ptr<float> out_ptr, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out_ptr + offs, tl::load(x_ptr + offs, mask) * 3.0f, mask);
}

// Constructed before main, destroyed after everything main made and the device registry.
const auto g_scale = TESSERA_KERNEL(scale_kernel, x_ptr, out_ptr, n, BLOCK);
std::optional<tessera::Buffer<float>> g_buffer;
std::optional<tessera::Stream> g_stream;
std::optional<tessera::Event> g_event;

}  // namespace

/// LeakSanitizer (the ASan build): lavapipe now and then leaks a small block of its own, as in
/// tests/support/main.cpp; with "keep", what the statics hold after the device is closed is the
/// driver's to reclaim.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libVkLayer_khronos_validation.so\n"
         "leak:libvulkan_lvp.so\n";
}

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[2], "kernel") != 0 && std::strcmp(argv[2], "keep") != 0)) {
    std::fprintf(stderr, "usage: exit_with_static_objects DEVICE kernel|keep\n");
    return 2;
  }
  const bool keep = std::strcmp(argv[2], "keep") == 0;
  std::optional<tessera::Device> dev;
  try {
    dev = tessera::Device::open(argv[1]);
  } catch (const tessera::Error& e) {
    std::printf("SKIP: no %s (%s)\n", argv[1], e.what());
    return 77;
  }
  const int n = 5000;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 97) - 40.0f;
  auto x = dev->upload(h);
  auto out = dev->alloc<float>(n);
  for (int block : {128, 1024}) g_scale[{tessera::cdiv(n, block)}](x, out, n, block);
  std::vector<float> got = out.download();
  for (int i = 0; i < n; ++i)
    if (got[i] != h[i] * 3.0f) {
      std::printf("FAIL: out[%d] = %g, expected %g\n", i, got[i], h[i] * 3.0f);
      return 1;
    }
  if (keep) {
    g_stream = dev->create_stream();
    g_scale[{tessera::cdiv(n, 256), {}, &*g_stream}](x, out, n, 256);
    g_event = dev->create_event();
    g_event->record(*g_stream);
    g_buffer = out;
  }
  std::printf("%s: results ok; returning from main with a static kernel%s\n", argv[1],
              keep ? ", buffer, stream and event" : "");
  return 0;
}
