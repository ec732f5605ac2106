// \file device_print on a Vulkan device: the kernel appends records to the stream's print buffer
// and the stream writes them, once the launch has finished, in the host interpreter's lines and
// order; a full buffer drops records and says how many on stderr.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "tests/support/capture.h"
#include "vk_test.h"

namespace tl = tessera::tl;

namespace {

using tessera::test::capture;

/// A tile (1-D and 2-D), a scalar, a hex scalar, then a scalar and a tile in each pass of a loop.
void print_kernel(tl::ptr<float> x, tl::i32 n, tl::i32 reps, int BLOCK) {
  auto pid = tl::program_id(0);
  auto v = tl::load(x + pid * BLOCK + tl::arange(0, BLOCK));
  tl::device_print("v = ", {v});
  tl::device_print("m = ", {tl::reshape(v, {2, BLOCK / 2})});
  tl::device_print("pid = ", {pid});
  tl::device_print("n = ", {n}, true);
  for (auto i : tl::range(0, reps, 1)) {
    tl::device_print("i = ", {i});
    tl::device_print("w = ", {tl::arange(0, BLOCK) + i * 10});
  }
}

std::string run_prints(const tessera::Device& dev) {
  auto k = TESSERA_KERNEL(print_kernel, x, n, reps, BLOCK);
  // 1000.00183 needs all 9 digits of an f32.
  std::vector<float> host = {1000.00183f, -2.5f, 0.1f, 3.0f, 7.0f, 8.5f, -0.0f, 1e-3f};
  auto x = dev.upload(host);
  return capture(1, [&] {
    k[{2}](x, 255, 2, 4);
    dev.synchronize();
  });
}

}  // namespace

TEST_CASE("vulkan: device_print writes the interpreter's lines in its order") {
  VKTEST_DEVICE(dev);
  std::string got = run_prints(dev);
  std::string program0 =
      "pid (0, 0, 0) idx (0) v = 1000.00183\n"
      "pid (0, 0, 0) idx (1) v = -2.5\n"
      "pid (0, 0, 0) idx (2) v = 0.1\n"
      "pid (0, 0, 0) idx (3) v = 3\n"
      "pid (0, 0, 0) idx (0, 0) m = 1000.00183\n"
      "pid (0, 0, 0) idx (0, 1) m = -2.5\n"
      "pid (0, 0, 0) idx (1, 0) m = 0.1\n"
      "pid (0, 0, 0) idx (1, 1) m = 3\n"
      "pid (0, 0, 0) pid = 0\n"
      "pid (0, 0, 0) n = 0x000000ff\n"
      "pid (0, 0, 0) i = 0\n"
      "pid (0, 0, 0) idx (0) w = 0\n"
      "pid (0, 0, 0) idx (1) w = 1\n"
      "pid (0, 0, 0) idx (2) w = 2\n"
      "pid (0, 0, 0) idx (3) w = 3\n"
      "pid (0, 0, 0) i = 1\n"
      "pid (0, 0, 0) idx (0) w = 10\n"
      "pid (0, 0, 0) idx (1) w = 11\n"
      "pid (0, 0, 0) idx (2) w = 12\n"
      "pid (0, 0, 0) idx (3) w = 13\n";
  std::string program1 =
      "pid (1, 0, 0) idx (0) v = 7\n"
      "pid (1, 0, 0) idx (1) v = 8.5\n"
      "pid (1, 0, 0) idx (2) v = -0\n"
      "pid (1, 0, 0) idx (3) v = 0.001\n"
      "pid (1, 0, 0) idx (0, 0) m = 7\n"
      "pid (1, 0, 0) idx (0, 1) m = 8.5\n"
      "pid (1, 0, 0) idx (1, 0) m = -0\n"
      "pid (1, 0, 0) idx (1, 1) m = 0.001\n"
      "pid (1, 0, 0) pid = 1\n"
      "pid (1, 0, 0) n = 0x000000ff\n"
      "pid (1, 0, 0) i = 0\n"
      "pid (1, 0, 0) idx (0) w = 0\n"
      "pid (1, 0, 0) idx (1) w = 1\n"
      "pid (1, 0, 0) idx (2) w = 2\n"
      "pid (1, 0, 0) idx (3) w = 3\n"
      "pid (1, 0, 0) i = 1\n"
      "pid (1, 0, 0) idx (0) w = 10\n"
      "pid (1, 0, 0) idx (1) w = 11\n"
      "pid (1, 0, 0) idx (2) w = 12\n"
      "pid (1, 0, 0) idx (3) w = 13\n";
  CHECK(got == program0 + program1);
  // The host interpreter, the executable definition, prints the same lines in the same order.
  CHECK(run_prints(tessera::Device::open("host")) == got);
}

TEST_CASE("vulkan: a full print buffer drops records and says how many") {
  VKTEST_DEVICE(dev);
  auto k = TESSERA_KERNEL(print_kernel, x, n, reps, BLOCK);
  auto x = dev.upload(std::vector<float>(8, 1.0f));
  // 112 bytes: the 8-byte header and two 52-byte records; the kernel prints 20 per program.
  tessera::Stream stream = dev.create_stream();  // allocates its buffer at its first print
  setenv("TESSERA_PRINT_BUFFER", "112", 1);
  std::string out;
  std::string err = capture(2, [&] {
    out = capture(1, [&] {
      k[{2, {}, &stream}](x, 255, 2, 4);
      stream.synchronize();
    });
  });
  unsetenv("TESSERA_PRINT_BUFFER");
  CHECK(err == "dropped 38 print records (buffer of 112 bytes full)\n");
  CHECK(std::count(out.begin(), out.end(), '\n') == 2);
  // The stream goes on: the next launch's records are there again (the buffer was emptied).
  err = capture(2, [&] {
    out = capture(1, [&] {
      k[{1, {}, &stream}](x, 255, 0, 4);
      stream.synchronize();
    });
  });
  CHECK(err == "dropped 8 print records (buffer of 112 bytes full)\n");
  CHECK(std::count(out.begin(), out.end(), '\n') == 2);
}
