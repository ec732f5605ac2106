// \file The runtime API on the host device: devices, buffers, streams, events, kernels and their
// caches, and the argument checks at launch.
#include <doctest/doctest.h>

#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/tessera.h"
#include "tests/support/errors.h"

namespace tl = tessera::tl;
using tessera::Device;
using tessera::ErrorKind;

namespace {

using tessera::test::error_of;

void vadd(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
}

int g_store_line = 0;
void out_of_bounds(tl::ptr<float> out, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  g_store_line = __LINE__; tl::store(out + offs, 1.0f);
}

void fill_iota(tl::pointer out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, offs, offs < n);
}

}  // namespace

TEST_CASE("runtime: the host device is always listed and opens by name") {
  auto listing = Device::enumerate();
  bool found = false;
  for (const auto& d : listing.devices) found = found || d.name == "host";
  CHECK(found);
  CHECK(Device::open("host").name() == "host");
  std::string msg = error_of([] { Device::open("gpu:7"); }, ErrorKind::Runtime);
  CHECK(msg.find("no device named 'gpu:7' (devices: ") == 0);
}

TEST_CASE("runtime: buffers upload, download, fill, copy and slice") {
  Device dev = Device::open("host");
  std::vector<int> data(1000);
  std::iota(data.begin(), data.end(), 0);
  auto a = dev.upload(data);
  CHECK(a.size() == 1000);
  CHECK(a.download() == data);
  auto b = dev.alloc<int>(1000);
  b.fill(-7);
  CHECK(b.download() == std::vector<int>(1000, -7));
  b.copy_from(a);
  CHECK(b.download() == data);
  auto part = b.slice(100, 10);
  part.fill(5);
  auto all = b.download();
  for (int i = 0; i < 1000; ++i) CHECK(all[static_cast<size_t>(i)] == (i >= 100 && i < 110 ? 5 : i));
  CHECK(part.address() == b.address() + 400);
  std::string msg = error_of([&] { b.slice(995, 10); }, ErrorKind::Argument);
  CHECK(msg == "slice [3980, 4020) bytes is outside a buffer of 4000 bytes");
  msg = error_of([&] { part.upload(data); }, ErrorKind::Argument);
  CHECK(msg == "buffer upload of 1000 elements into a buffer of 10");
}

TEST_CASE("runtime: sizes that overflow are errors, not huge or empty buffers") {
  Device dev = Device::open("host");
  // A negative count converted to size_t: the byte count overflows.
  std::string msg = error_of([&] { dev.alloc<float>(static_cast<size_t>(-1)); }, ErrorKind::Argument);
  CHECK(msg == "alloc of 18446744073709551615 elements of 4 bytes: the byte count overflows (a negative "
               "count converted to an unsigned size?)");
  // 2^62 floats: 2^64 bytes wrap to 0.
  msg = error_of([&] { dev.alloc<float>(size_t{1} << 62); }, ErrorKind::Argument);
  CHECK(msg == "alloc of 4611686018427387904 elements of 4 bytes: the byte count overflows");
  // Representable, but more than any device has (the allocators' rounding would wrap).
  msg = error_of([&] { dev.alloc<uint8_t>(static_cast<size_t>(-8)); }, ErrorKind::OutOfMemory);
  CHECK(msg == "host: cannot allocate 18446744073709551608 bytes (more than any device has)");
  auto b = dev.alloc<int>(10);
  // Slices whose offset or end wraps around.
  msg = error_of([&] { b.slice(static_cast<size_t>(-1), 2); }, ErrorKind::Argument);
  CHECK(msg.find("slice offset of 18446744073709551615 elements of 4 bytes: the byte count overflows") == 0);
  msg = error_of([&] { b.slice(2, (size_t{1} << 62) - 1); }, ErrorKind::Argument);
  CHECK(msg == "slice of 18446744073709551612 bytes at byte 8 is outside a buffer of 40 bytes");
  msg = error_of([&] { b.slice(size_t{1} << 61, size_t{1} << 61); }, ErrorKind::Argument);
  CHECK(msg == "slice of 9223372036854775808 bytes at byte 9223372036854775808 is outside a buffer of "
               "40 bytes");
  // The buffer is untouched and still works.
  b.fill(3);
  CHECK(b.download() == std::vector<int>(10, 3));
}

TEST_CASE("runtime: a kernel launches, and is traced once per specialization") {
  Device dev = Device::open("host");
  const int n = 3000;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    hx[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i);
    hy[static_cast<size_t>(i)] = 2.0f;
  }
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  auto k = TESSERA_KERNEL(vadd, x, y, out, n, BLOCK);
  k[{tessera::cdiv(n, 256)}](x, y, out, n, 256);
  auto r = out.download();
  for (int i = 0; i < n; ++i) CHECK(r[static_cast<size_t>(i)] == hx[static_cast<size_t>(i)] + 2.0f);
  k[{tessera::cdiv(n, 256)}](x, y, out, n, 256);
  CHECK(k.traced_count() == 1);
  k[{tessera::cdiv(n, 128)}](x, y, out, n, 128);  // another BLOCK: another specialization
  CHECK(k.traced_count() == 2);
  k[{tessera::cdiv(2048, 128)}](x, y, out, 2048, 128);  // n divisible by 16: another class
  CHECK(k.traced_count() == 3);
  k[{tessera::cdiv(n, 128)}](x.slice(1, n - 1), y, out, n - 1, 128);  // a misaligned pointer
  CHECK(k.traced_count() == 4);
  k[{{0}}](x, y, out, n, 128);  // an empty grid launches nothing
}

TEST_CASE("runtime: launch arguments are checked by parameter name") {
  Device dev = Device::open("host");
  auto x = dev.alloc<float>(16);
  auto ix = dev.alloc<int>(16);
  auto k = TESSERA_KERNEL(vadd, x, y, out, n, BLOCK);
  std::string msg = error_of([&] { k[{1}](x, x, x, 16); }, ErrorKind::Argument);
  CHECK(msg == "kernel 'vadd' takes 5 arguments (x, y, out, n, BLOCK), got 4");
  msg = error_of([&] { k[{1}](ix, x, x, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "argument 1 'x' (tl::ptr<f32>) of kernel 'vadd' must be a buffer of f32, got a buffer of i32 on host");
  msg = error_of([&] { k[{1}](x, x, x, x, 16); }, ErrorKind::Argument);
  CHECK(msg == "argument 4 'n' (tl::i32) of kernel 'vadd' must be a number, got a buffer of f32 on host");
  msg = error_of([&] { k[{1}](x, x, 3, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "argument 3 'out' (tl::ptr<f32>) of kernel 'vadd' must be a buffer, got the integer 3");
  msg = error_of([&] { k[{1}](x, x, x, 16, x); }, ErrorKind::Argument);
  CHECK(msg == "argument 5 'BLOCK' (int) of kernel 'vadd' is a compile-time int, got a buffer of f32 on host");
  msg = error_of([&] { k[{1}](x, x, x, 2.5, 16); }, ErrorKind::Argument);
  CHECK(msg == "argument 4 'n' (tl::i32) of kernel 'vadd' is an integer parameter, got the float 2.500000");
  msg = error_of([&] { k[{1}](x, x, x, int64_t{1} << 40, 16); }, ErrorKind::Argument);
  CHECK(msg == "argument 4 'n' (tl::i32) of kernel 'vadd': the integer 1099511627776 does not fit i32");
  msg = error_of([&] { k[{-1}](x, x, x, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "grid (-1, 1, 1) is invalid: each dimension must be in 0..2^32-1");
  msg = error_of([&] { k[{{1}, {.num_warps = 3}}](x, x, x, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "kernel 'vadd': num_warps must be a power of two in 1..32, got 3");
  msg = error_of([&] { k[{{1}, {.maxnreg = 8}}](x, x, x, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "kernel 'vadd': maxnreg must be 0 (no limit) or in 16..255, got 8");
  msg = error_of([&] { k[{{1}, {.maxnreg = 256}}](x, x, x, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "kernel 'vadd': maxnreg must be 0 (no limit) or in 16..255, got 256");
  // The interpreters have no register limit: maxnreg is accepted and changes nothing.
  k[{{1}, {.maxnreg = 32}}](x, x, x, 16, 16);
  msg = error_of([&] { k[{{2}, {.cluster = 3}}](x, x, x, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "kernel 'vadd': cluster must be 1, 2, 4 or 8, got 3");
  msg = error_of([&] { k[{{3}, {.cluster = 2}}](x, x, x, 16, 16); }, ErrorKind::Argument);
  CHECK(msg == "kernel 'vadd': cluster = 2 groups the grid's x into clusters of 2 programs, but "
               "grid x = 3 is not a multiple of it");
  // The host device has no clusters: the same grid runs without them.
  k[{{2}, {.cluster = 2}}](x, x, x, 16, 16);
}

TEST_CASE("runtime: each grid axis is checked against the device's own limits") {
  // host and simt devices describe their grid limits as CUDA's (2^31-1, 65535, 65535): a launch
  // past one is an Argument error naming the kernel, the axis, the value and the limit, as on
  // CUDA, rather than running a grid the GPU would refuse. Empty grids (x = 0) launch nothing,
  // so the limits themselves can be launched without running 65535^2 programs.
  for (const char* name : {"host", "simt:32", "simt:cuda-sm_90a"}) {
    CAPTURE(name);
    Device dev = Device::open(name);
    auto x = dev.alloc<float>(16);
    auto k = TESSERA_KERNEL(vadd, x, y, out, n, BLOCK);
    const std::string limits = "limits 2147483647, 65535, 65535)";
    std::string msg =
        error_of([&] { k[{tessera::Grid(1, 65536, 1)}](x, x, x, 16, 16); }, ErrorKind::Argument);
    CHECK(msg == std::string("kernel 'vadd': grid y = 65536 exceeds ") + name +
                     "'s limit of 65535 (grid (1, 65536, 1); " + limits);
    msg = error_of([&] { k[{tessera::Grid(0, 1, 70000)}](x, x, x, 16, 16); }, ErrorKind::Argument);
    CHECK(msg == std::string("kernel 'vadd': grid z = 70000 exceeds ") + name +
                     "'s limit of 65535 (grid (0, 1, 70000); " + limits);
    msg = error_of([&] { k[{tessera::Grid(int64_t{1} << 31, 1, 1)}](x, x, x, 16, 16); },
                   ErrorKind::Argument);
    CHECK(msg == std::string("kernel 'vadd': grid x = 2147483648 exceeds ") + name +
                     "'s limit of 2147483647 (grid (2147483648, 1, 1); " + limits);
    k[{tessera::Grid(0, 65535, 65535)}](x, x, x, 16, 16);  // at the limits: accepted, empty
    x.fill(1.0f);
    k[{tessera::Grid(1, 1, 1)}](x, x, x, 16, 16);
    for (float v : x.download()) REQUIRE(v == 2.0f);
  }
}

TEST_CASE("runtime: generic pointer parameters take the buffer's dtype") {
  Device dev = Device::open("host");
  auto k = TESSERA_KERNEL(fill_iota, out, n, BLOCK);
  auto a = dev.alloc<int64_t>(100);
  auto b = dev.alloc<int16_t>(100);
  k[{1}](a, 100, 128);
  k[{1}](b, 100, 128);
  auto ra = a.download();
  auto rb = b.download();
  for (int i = 0; i < 100; ++i) {
    CHECK(ra[static_cast<size_t>(i)] == i);
    CHECK(rb[static_cast<size_t>(i)] == i);
  }
  CHECK(k.traced_count() == 2);
}

TEST_CASE("runtime: an out-of-bounds store is a device fault naming kernel, line, program and address") {
  Device dev = Device::open("host");
  auto out = dev.alloc<float>(100);
  auto k = TESSERA_KERNEL(out_of_bounds, out, BLOCK);
  std::string msg = error_of(
      [&] {
        k[{2}](out, 64);
        dev.synchronize();
      },
      ErrorKind::DeviceFault);
  std::string where = std::string(__FILE__) + ":" + std::to_string(g_store_line);
  // The host checks each pointer against its own buffer (core/passes/bounds.h).
  CHECK_MESSAGE(msg.find("out-of-bounds store in kernel 'out_of_bounds' at " + where +
                         ", program (1, 0, 0), index (36): the pointer from `out` is at byte 400 "
                         "of its buffer of 400 bytes (address 0x") == 0,
                msg);
  // The stream is usable again after the error was reported.
  out.fill(0.0f);
  CHECK(out.download()[0] == 0.0f);
}

TEST_CASE("runtime: streams order their work and events time it") {
  Device dev = Device::open("host");
  tessera::Stream s = dev.create_stream();
  auto k = TESSERA_KERNEL(fill_iota, out, n, BLOCK);
  auto a = dev.alloc<int>(4096);
  tessera::Event start = dev.create_event(), stop = dev.create_event();
  start.record(s);
  for (int i = 0; i < 5; ++i) k[{{4}, {}, &s}](a, 4096, 1024);
  stop.record(s);
  a.fill(3, &s);  // after the launches, on the same stream
  CHECK(a.download(&s) == std::vector<int>(4096, 3));
  CHECK(stop.elapsed_since(start) >= 0.0);
}

TEST_CASE("runtime: bool buffers round-trip (std::vector<bool> is widened to bytes)") {
  Device dev = Device::open("host");
  std::vector<bool> flags = {true, false, false, true, true};
  auto b = dev.upload(flags);
  CHECK(b.size() == 5);
  CHECK(b.download() == flags);
}

namespace kt {
template <class T, int SCALE>
void scale_kernel(tl::ptr<T> x, tl::ptr<T> y, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(y + offs, tl::load(x + offs, mask) * SCALE, mask);
}
}  // namespace kt

TEST_CASE("runtime: TESSERA_KERNEL takes a template of several arguments in parentheses") {
  Device dev = Device::open("host");
  const int n = 1000;
  std::vector<float> hx(n);
  std::vector<int> hi(n);
  for (int i = 0; i < n; ++i) {
    hx[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i) - 7.0f;
    hi[static_cast<size_t>(i)] = 3 * i - 500;
  }
  auto x = dev.upload(hx);
  auto ix = dev.upload(hi);
  auto y = dev.alloc<float>(n);
  auto iy = dev.alloc<int>(n);

  auto scale3 = TESSERA_KERNEL((kt::scale_kernel<float, 3>), x, y, n, BLOCK);
  CHECK(scale3.name() == "scale_kernel<float, 3>");
  scale3[{tessera::cdiv(n, 128)}](x, y, n, 128);
  auto r = y.download();
  for (int i = 0; i < n; ++i) CHECK(r[static_cast<size_t>(i)] == hx[static_cast<size_t>(i)] * 3.0f);

  auto scale_int = TESSERA_KERNEL((kt::scale_kernel<int, -5>), x, y, n, BLOCK);
  CHECK(scale_int.name() == "scale_kernel<int, -5>");
  scale_int[{tessera::cdiv(n, 256)}](ix, iy, n, 256);
  auto ri = iy.download();
  for (int i = 0; i < n; ++i) CHECK(ri[static_cast<size_t>(i)] == hi[static_cast<size_t>(i)] * -5);
  // The parameter names still reach argument errors.
  std::string msg = error_of([&] { scale_int[{1}](x, iy, n, 256); }, ErrorKind::Argument);
  CHECK(msg.find("argument 1 'x' (tl::ptr<i32>) of kernel 'scale_kernel<int, -5>'") == 0);
}

TEST_CASE("runtime: TESSERA_KERNEL's name drops parentheses and qualifiers, also in arguments") {
  using tessera::detail::kernel_macro_name;
  CHECK(kernel_macro_name("gelu_kernel") == "gelu_kernel");
  CHECK(kernel_macro_name("samples::gelu_kernel") == "gelu_kernel");
  CHECK(kernel_macro_name("(scale<float, 4>)") == "scale<float, 4>");
  CHECK(kernel_macro_name("((::ns::scale<ns::T, std::int8_t>))") == "scale<T, int8_t>");
  CHECK(kernel_macro_name("ns :: f<a :: b, 2>") == "f<b, 2>");
}

namespace {
/// `depth` ifs inside one another, each adding 1 when the value is positive.
void nest_ifs(tl::tensor& v, int depth) {
  if (depth == 0) return;
  tl::if_(v > 0.0f, [&] {
    v += 1.0f;
    nest_ifs(v, depth - 1);
  });
}
void deepest_kernel(tl::ptr<float> x) {
  auto v = tl::load(x);
  nest_ifs(v, 256);
  tl::store(x, v);
}
}  // namespace

TEST_CASE("runtime: a kernel at the region nesting limit (256) compiles and runs (host, simt:32)") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(name);
    Device dev = Device::open(name);
    auto x = dev.upload(std::vector<float>{0.5f});
    auto k = TESSERA_KERNEL(deepest_kernel, x);
    k[{1}](x);
    CHECK(x.download() == std::vector<float>{256.5f});
  }
}

namespace {

/// out[i] = i + depth: `depth` loops of one pass each, nested, carrying the tile.
void nested_loops(tl::ptr<int32_t> out, int DEPTH, int BLOCK) {
  auto acc = tl::arange(0, BLOCK);
  std::function<void(int)> nest = [&](int depth) {
    if (depth == 0) return;
    for (auto i : tl::range(0, 1)) {
      acc = acc + 1 + i;
      nest(depth - 1);
    }
  };
  nest(DEPTH);
  tl::store(out + tl::arange(0, BLOCK), acc);
}

}  // namespace

TEST_CASE("runtime: loops nested as deep as the limit allows compile and run") {
  // The layout step walked each loop body twice per level (2^depth walks: 24 levels took about
  // a second, 256 never finished); it walks twice only when a carried value waits for its home.
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(std::string(name));
    Device dev = Device::open(name);
    auto out = dev.alloc<int32_t>(32);
    static auto k = TESSERA_KERNEL(nested_loops, out, DEPTH, BLOCK);
    k[{1}](out, 256, 32);
    auto got = out.download();
    for (int i = 0; i < 32; ++i) REQUIRE(got[static_cast<size_t>(i)] == i + 256);
  }
}

namespace {

/// y = where(cols < n, x, -1) and out[0] = its sum over the tile: with n divisible by 16 the mask
/// is constant over runs of 16 elements, and the lowering compares once per run of a thread's
/// registers (core/lower/lower_elementwise.cpp); the sum is tree-shaped (lower_reduce.cpp).
void masked_where_sum(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                      int BLOCK) {
  auto cols = tl::arange(0, BLOCK);
  auto kept = tl::where(cols < n, tl::load(x + cols), -1.0f);
  tl::store(y + cols, kept);
  tl::store(out, tl::sum(kept, 0));
}

}  // namespace

TEST_CASE("runtime: a mask compared once per run of registers keeps every element's value") {
  // n = 16..256 (divisible by 16: the runs) and n = 40 (no run fact) against the host's loop,
  // at 1 and 2 warps (8 and 4 registers per thread); integers, so every summation order is exact.
  constexpr int kBlock = 256;
  std::vector<float> hx(kBlock);
  for (int i = 0; i < kBlock; ++i) hx[static_cast<size_t>(i)] = static_cast<float>(i % 7 + 1);
  for (const char* name : {"host", "simt:32", "simt:8"}) {
    Device dev = Device::open(name);
    auto x = dev.upload(hx);
    auto y = dev.alloc<float>(kBlock);
    auto out = dev.alloc<float>(1);
    auto k = TESSERA_KERNEL(masked_where_sum, x, y, out, n, BLOCK);
    for (int warps : {1, 2})
      for (int n : {16, 48, 112, 256, 40}) {
        CAPTURE(name);
        CAPTURE(warps);
        CAPTURE(n);
        k[{{1}, tessera::LaunchOptions{.num_warps = warps}}](x, y, out, n, kBlock);
        std::vector<float> got = y.download();
        float sum = 0.0f;
        for (int i = 0; i < kBlock; ++i) {
          const float want = i < n ? hx[static_cast<size_t>(i)] : -1.0f;
          REQUIRE(got[static_cast<size_t>(i)] == want);
          sum += want;
        }
        CHECK(out.download()[0] == sum);
      }
  }
}
