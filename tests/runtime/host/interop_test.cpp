// \file Interop on the host and simt devices: wrapped host memory used by kernels and transfers,
// DLPack export and import (dtype, shape, strides, ownership), and the errors for handles and
// wraps that only other backends have.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "runtime/dlpack.h"
#include "runtime/tessera.h"
#include "tests/support/errors.h"

namespace tl = tessera::tl;
using tessera::Device;
using tessera::ErrorKind;

namespace {

using tessera::test::error_of;

void scale_add(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, 2.0f * tl::load(x + offs, mask) + 1.0f, mask);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#ifdef TESSERA_HAS_DLPACK
/// A DLManagedTensor over `data` (the caller's), counting deleter calls in `*deleted` and, when
/// `deleted_on` is set, recording there the thread that called the deleter.
struct Tensor {
  DLManagedTensor managed{};
  std::vector<int64_t> shape, strides;
  int* deleted = nullptr;
  std::thread::id* deleted_on = nullptr;
};
DLManagedTensor* make_tensor(float* data, std::vector<int64_t> shape, std::vector<int64_t> strides,
                             int* deleted, DLDevice device = {kDLCPU, 0}) {
  auto* t = new Tensor;
  t->shape = std::move(shape);
  t->strides = std::move(strides);
  t->deleted = deleted;
  DLTensor& d = t->managed.dl_tensor;
  d.data = data;
  d.device = device;
  d.ndim = static_cast<int32_t>(t->shape.size());
  d.dtype = {kDLFloat, 32, 1};
  d.shape = t->shape.data();
  d.strides = t->strides.empty() ? nullptr : t->strides.data();
  t->managed.manager_ctx = t;
  t->managed.deleter = [](DLManagedTensor* self) {
    auto* owner = static_cast<Tensor*>(self->manager_ctx);
    ++*owner->deleted;
    if (owner->deleted_on) *owner->deleted_on = std::this_thread::get_id();
    delete owner;
  };
  return &t->managed;
}
#endif

}  // namespace

TEST_CASE("interop: host and simt devices launch kernels on wrapped host memory") {
  for (std::string name : {"host", "simt:32"}) {
    CAPTURE(name);
    Device dev = Device::open(name);
    const int n = 300;
    std::vector<float> x(n), out(n, -1.0f);
    for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
    tessera::Buffer<float> bx = dev.wrap(x.data(), x.size());
    tessera::Buffer<float> bout = dev.wrap<float>(reinterpret_cast<uint64_t>(out.data()), n);
    CHECK(bx.address() == reinterpret_cast<uint64_t>(x.data()));
    CHECK(bx.size() == static_cast<size_t>(n));
    auto k = TESSERA_KERNEL(scale_add, x, out, n, BLOCK);
    k[{tessera::cdiv(n, 128)}](bx, bout, n, 128);
    dev.synchronize();
    CHECK(out[0] == 1.0f);
    CHECK(out[299] == 599.0f);  // written in place: the caller's vector holds the result
    // Transfers on wrapped memory, and a slice of it.
    bx.slice(10, 2).upload(std::vector<float>{-5.0f, -6.0f});
    CHECK(bx.download()[11] == -6.0f);
    CHECK(x[10] == -5.0f);
    // Kernels are bounds-checked against the wrapped range: one element past it is refused.
    std::string msg = error_of(
        [&] {
          k[{1}](bx.slice(0, 4), bout, 5, 128);  // reads x[4], outside the 4 wrapped elements
          dev.synchronize();
        },
        ErrorKind::DeviceFault);
    CHECK(contains(msg, "out-of-bounds load in kernel 'scale_add'"));
    CHECK(contains(msg, "the pointer from `x` is at byte 16 of its buffer of 16 bytes"));
  }
}

TEST_CASE("interop: wrap errors name the cause") {
  Device dev = Device::open("host");
  std::string msg = error_of([&] { dev.wrap<float>(uint64_t{0}, 4); }, ErrorKind::Argument);
  CHECK(msg == "wrap on host: the pointer is null");
  float one = 0;
  msg = error_of([&] { dev.wrap(&one, std::numeric_limits<size_t>::max() / 2); },
                 ErrorKind::Argument);
  CHECK(contains(msg, "wrap of 9223372036854775807 elements of 4 bytes: the byte count overflows"));
  msg = error_of([&] { dev.wrap<uint8_t>(~uint64_t{0} - 2, 8); }, ErrorKind::Argument);
  CHECK(contains(msg, "run past the end of the address space"));
}

TEST_CASE("interop: handles and wraps of other backends are Argument errors naming the device") {
  Device dev = Device::open("simt:32");
  auto b = dev.alloc<float>(4);
  CHECK(error_of([&] { dev.cu_context(); }, ErrorKind::Argument) ==
        "CUcontext: device 'simt:32' (simt) has none; it belongs to cuda devices");
  CHECK(error_of([&] { dev.vk_device(); }, ErrorKind::Argument) ==
        "VkDevice: device 'simt:32' (simt) has none; it belongs to vulkan devices");
  CHECK(contains(error_of([&] { dev.default_stream().cu_stream(); }, ErrorKind::Argument),
                 "device 'simt:32' (simt) has no native stream"));
  CHECK(error_of([&] { b.cu_deviceptr(); }, ErrorKind::Argument) ==
        "cu_deviceptr: the buffer is on device 'simt:32' (simt), not a cuda device");
  CHECK(error_of([&] { b.vk_buffer_offset(); }, ErrorKind::Argument) ==
        "vk_buffer: the buffer is on device 'simt:32' (simt), not a vulkan device");
  CHECK(error_of([&] { dev.wrap_vk_buffer<float>(1, 0x1000, 4); }, ErrorKind::Argument) ==
        "wrap_vk_buffer: device 'simt:32' (simt) is not a vulkan device");
  CHECK(error_of([&] { dev.wrap_cu_stream(0x1234); }, ErrorKind::Argument) ==
        "wrap_cu_stream: device 'simt:32' (simt) is not a cuda device");
  dev.reset();  // nothing to reset: the device still works
  b.fill(3.0f);
  CHECK(b.download() == std::vector<float>(4, 3.0f));
}

#ifdef TESSERA_HAS_DLPACK  // runtime/dlpack.h: only where <dlpack/dlpack.h> is installed
TEST_CASE("dlpack: a host buffer exports with its shape and keeps the memory alive") {
  Device dev = Device::open("host");
  DLManagedTensor* t = nullptr;
  uint64_t address = 0;
  {
    auto b = dev.upload(std::vector<float>{1, 2, 3, 4, 5, 6});
    address = b.address();
    const int64_t shape[] = {2, 3};
    t = tessera::to_dlpack(b, shape);
    dev.synchronize();  // the upload may still be queued: a consumer reads after this
  }  // the tensor holds the memory now
  REQUIRE(t);
  CHECK(reinterpret_cast<uint64_t>(t->dl_tensor.data) == address);
  CHECK(t->dl_tensor.device.device_type == kDLCPU);
  CHECK(t->dl_tensor.ndim == 2);
  CHECK(t->dl_tensor.shape[0] == 2);
  CHECK(t->dl_tensor.shape[1] == 3);
  CHECK(t->dl_tensor.strides == nullptr);
  CHECK(t->dl_tensor.byte_offset == 0);
  CHECK(t->dl_tensor.dtype.code == kDLFloat);
  CHECK(t->dl_tensor.dtype.bits == 32);
  CHECK(t->dl_tensor.dtype.lanes == 1);
  CHECK(static_cast<const float*>(t->dl_tensor.data)[5] == 6.0f);
  // Round trip: imported on simt:32 (also kDLCPU), a kernel reads it.
  Device simt = Device::open("simt:32");
  auto back = tessera::from_dlpack<float>(simt, t);  // owns t now
  CHECK(back.size() == 6u);
  CHECK(back.address() == address);
  auto out = simt.alloc<float>(6);
  auto k = TESSERA_KERNEL(scale_add, x, out, n, BLOCK);
  k[{1}](back, out, 6, 128);
  CHECK(out.download() == std::vector<float>{3, 5, 7, 9, 11, 13});
  // A 1-D export of bf16 and of int64 maps the dtype.
  auto h = dev.alloc<tessera::bfloat16>(3);
  DLManagedTensor* th = tessera::to_dlpack(h);
  CHECK(th->dl_tensor.dtype.code == kDLBfloat);
  CHECK(th->dl_tensor.shape[0] == 3);
  th->deleter(th);
  DLManagedTensor* ti = tessera::to_dlpack(dev.alloc<int64_t>(2));
  CHECK(ti->dl_tensor.dtype.code == kDLInt);
  CHECK(ti->dl_tensor.dtype.bits == 64);
  ti->deleter(ti);
}

TEST_CASE("dlpack: an imported tensor is deleted once, when its last buffer goes") {
  Device dev = Device::open("host");
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  int deleted = 0;
  {
    auto b = tessera::from_dlpack<float>(dev, make_tensor(data.data(), {2, 3}, {3, 1}, &deleted));
    auto s = b.slice(3, 3);
    b = {};
    CHECK(deleted == 0);  // the slice still refers to the memory
    s.fill(0.5f);
    CHECK(s.download() == std::vector<float>(3, 0.5f));
  }
  CHECK(deleted == 1);
  CHECK(data[5] == 0.5f);  // in place
  // Extents of 1 may have any stride (as PyTorch gives them).
  {
    auto b = tessera::from_dlpack<float>(dev, make_tensor(data.data(), {1, 6}, {99, 1}, &deleted));
    CHECK(b.size() == 6u);
  }
  CHECK(deleted == 2);
}

TEST_CASE(
    "dlpack: after a synchronizing call the stream holds no buffer, so dropping the last handle "
    "deletes the tensor at once, on the dropping thread") {
  // The host stream's worker used to destroy a finished task (and the buffer handles it
  // captured) only after counting it done: a download could return while the worker still held
  // the buffer, and the deleter then ran late, on the worker (about 1 run in 40 of the test above
  // under load). Many rounds here make such a window visible without load.
  std::vector<float> data(64, 0.0f);
  int deleted = 0;
  std::thread::id deleted_on;
  Device dev = Device::open("host");  // closed first: a late deleter finds the counters alive
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    deleted_on = {};
    DLManagedTensor* t = make_tensor(data.data(), {64}, {}, &deleted);
    static_cast<Tensor*>(t->manager_ctx)->deleted_on = &deleted_on;
    {
      auto b = tessera::from_dlpack<float>(dev, t);
      b.fill(static_cast<float>(round));
      REQUIRE(b.download()[63] == static_cast<float>(round));
    }
    REQUIRE(deleted == round + 1);
    REQUIRE(deleted_on == std::this_thread::get_id());
  }
}

TEST_CASE("dlpack: errors name the cause and leave the tensor the caller's") {
  Device dev = Device::open("host");
  std::vector<float> data(12);
  int deleted = 0;
  DLManagedTensor* t = make_tensor(data.data(), {3, 4}, {1, 3}, &deleted);  // column-major
  CHECK(error_of([&] { tessera::from_dlpack(dev, t); }, ErrorKind::Argument) ==
        "from_dlpack: stride 3 of dimension 1 is not contiguous (a compact row-major tensor of "
        "this shape has 1): make the tensor contiguous first");
  t->dl_tensor.strides = nullptr;
  t->dl_tensor.device = {kDLCUDA, 1};
  CHECK(error_of([&] { tessera::from_dlpack(dev, t); }, ErrorKind::Argument) ==
        "from_dlpack: the tensor is on kDLCUDA:1, not on device 'host' (kDLCPU)");
  t->dl_tensor.device = {kDLVulkan, 0};
  CHECK(contains(error_of([&] { tessera::from_dlpack(dev, t); }, ErrorKind::Unsupported),
                 "kDLVulkan:0 tensor: DLPack's Vulkan data pointer is no buffer device address"));
  t->dl_tensor.device = {kDLCPU, 0};
  CHECK(error_of([&] { tessera::from_dlpack<int32_t>(dev, t); }, ErrorKind::Argument) ==
        "from_dlpack: the tensor's dtype is f32, the buffer's i32");
  t->dl_tensor.dtype = {kDLFloat, 32, 4};
  CHECK(error_of([&] { tessera::from_dlpack(dev, t); }, ErrorKind::Unsupported) ==
        "from_dlpack: DLPack dtype (code 2, bits 32, lanes 4) has no Tessera type");
  t->dl_tensor.dtype = {kDLFloat, 32, 1};
  t->dl_tensor.data = nullptr;
  CHECK(error_of([&] { tessera::from_dlpack(dev, t); }, ErrorKind::Argument) ==
        "from_dlpack: the tensor's data pointer is null");
  CHECK(deleted == 0);  // every failed import left it alone
  t->deleter(t);
  CHECK(deleted == 1);
  // Export errors.
  auto b = dev.alloc<float>(6);
  const int64_t wrong[] = {4, 2};
  CHECK(error_of([&] { tessera::to_dlpack(b, wrong); }, ErrorKind::Argument) ==
        "to_dlpack: shape [4, 2] has 8 elements, the buffer 6");
  CHECK(error_of([&] { tessera::to_dlpack(dev.alloc<bool>(2)); }, ErrorKind::Unsupported) ==
        "to_dlpack: a i1 buffer: DLPack 0.6 has no bool type");
  CHECK(error_of([&] { tessera::to_dlpack(tessera::BufferBase()); }, ErrorKind::Argument) ==
        "to_dlpack: the buffer is empty (default-constructed)");
}
#endif
