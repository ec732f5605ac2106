// \file A program that launches kernels on vulkan:0 and on the host and returns from main without
// synchronizing: the process must exit normally (status 0), its queued work finished. Exits 77 (a
// ctest skip) where there is no Vulkan device. The hazard: the driver registers exit handlers of
// its own when the VkDevice is made (Mesa's thread queues, killed by an atexit handler), after the
// device registry's destructor, so they ran first and the registry then waited for work on a
// driver already torn down; the runtime now drains every device before them
// (runtime/vulkan/device.cpp: ExitDrain).
#include <cstdio>
#include <optional>
#include <vector>

#include "runtime/tessera.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/softmax.h"

namespace tl = tessera::tl;

namespace {

void add_kernel(tl::ptr<float> x_ptr, tl::ptr<float> y_ptr, tl::ptr<float> out_ptr, tl::i32 n,
                int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out_ptr + offs, tl::load(x_ptr + offs, mask) + tl::load(y_ptr + offs, mask), mask);
}

/// Queues additions of n elements on `dev`, one launch at each of several block sizes (each a
/// kernel the device has not run before), and returns without waiting for them.
void queue_work(const tessera::Device& dev, int n) {
  std::vector<float> h(n, 1.0f);
  auto x = dev.upload(h), y = dev.upload(h);
  auto out = dev.alloc<float>(n);
  auto add = TESSERA_KERNEL(add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
  for (int block : {64, 128, 256, 512}) add[{tessera::cdiv(n, block)}](x, y, out, n, block);
  auto gelu = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
  for (int block : {128, 1024}) gelu[{tessera::cdiv(n, block)}](x, out, n, block);
  auto softmax = TESSERA_KERNEL(samples::softmax_kernel, x_ptr, y_ptr, x_row_stride, y_row_stride,
                                num_cols, BLOCK_SIZE);
  softmax[{n / 1024}](x, out, 1024, 1024, 1024, 1024);
}

}  // namespace

/// LeakSanitizer (the ASan build): lavapipe now and then leaks a small block of its own, as in
/// tests/support/main.cpp.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libVkLayer_khronos_validation.so\n"
         "leak:libvulkan_lvp.so\n";
}

int main() {
  std::optional<tessera::Device> vk;
  try {
    vk = tessera::Device::open("vulkan:0");
  } catch (const tessera::Error& e) {
    std::printf("SKIP: no vulkan:0 (%s)\n", e.what());
    return 77;
  }
  queue_work(tessera::Device::open("host"), 4096);
  queue_work(*vk, 1 << 20);
  std::printf("returning from main with Vulkan work queued\n");
  return 0;
}
