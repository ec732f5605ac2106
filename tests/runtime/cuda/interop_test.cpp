/// \file Interop on cuda:0 (SKIPs without one): a cuMemAlloc'd pointer wrapped as a buffer, a
/// kernel launched on the caller's CUstream, native handles, DLPack kDLCUDA, the errors for memory
/// and streams of another context, and a fault that leaves a context shared with another user
/// unreset until Device::reset().
#include <dlfcn.h>

#include <type_traits>

#include "helpers.h"
#include "runtime/dlpack.h"
#include "tests/support/env.h"

namespace cuda_test {
namespace {

namespace tl = tessera::tl;

// The driver as another library sees it (no cuda.h here: the tests build without the toolkit).
using CUresult = int;
using CUcontext = void*;
using CUstream = void*;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;

/// The driver entry points the tests call, from libcuda.so.1 (loaded by Tessera already).
struct Driver {
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext*);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuCtxCreate)(CUcontext*, unsigned, CUdevice);
  CUresult (*cuCtxDestroy)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamQuery)(CUstream);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamGetCtx)(CUstream, CUcontext*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuDevicePrimaryCtxGetState)(CUdevice, unsigned*, int*);
};

const Driver& drv() {
  static const Driver d = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib);
    Driver r{};
    auto get = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      REQUIRE_MESSAGE(static_cast<bool>(fn), symbol);
    };
    get(r.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    get(r.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    get(r.cuCtxSynchronize, "cuCtxSynchronize");
    get(r.cuCtxCreate, "cuCtxCreate_v2");
    get(r.cuCtxDestroy, "cuCtxDestroy_v2");
    get(r.cuMemAlloc, "cuMemAlloc_v2");
    get(r.cuMemFree, "cuMemFree_v2");
    get(r.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    get(r.cuStreamCreate, "cuStreamCreate");
    get(r.cuStreamQuery, "cuStreamQuery");
    get(r.cuStreamDestroy, "cuStreamDestroy_v2");
    get(r.cuStreamGetCtx, "cuStreamGetCtx");
    get(r.cuDeviceGet, "cuDeviceGet");
    get(r.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(r.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    get(r.cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState");
    return r;
  }();
  return d;
}

void scale_add(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, 2.0f * tl::load(x + offs, mask) + 1.0f, mask);
}

const char* kWildStore =
    R"(func @wild_store(%p: ptr<i32>) attributes {stage = "simt", threads = 32, subgroup = 32} {
  %c = constant {value = 7} : i32
  %t = constant {value = 1} : i1
  global_store %p, %t, %c {align = 4, width = 1}
}
)";

/// Makes the device's primary context current for the scope, as another library would.
struct Current {
  explicit Current(const Device& dev) {
    REQUIRE(drv().cuCtxPushCurrent(reinterpret_cast<CUcontext>(dev.cu_context())) == CUDA_SUCCESS);
  }
  ~Current() {
    CUcontext popped = nullptr;
    drv().cuCtxPopCurrent(&popped);
  }
};

/// A context of its own (not the primary one), through the driver as a user would make it.
struct OtherContext {
  CUcontext ctx = nullptr;
  explicit OtherContext(const Device& dev) {
    REQUIRE(drv().cuCtxCreate(&ctx, 0, static_cast<CUdevice>(dev.cu_device())) == CUDA_SUCCESS);
    CUcontext popped = nullptr;
    drv().cuCtxPopCurrent(&popped);  // cuCtxCreate made it current
  }
  ~OtherContext() { drv().cuCtxDestroy(ctx); }
};

TEST_CASE("cuda interop: a cuMemAlloc pointer is wrapped and launched on and left to its owner") {
  CUDA_DEVICE_OR_SKIP(dev);
  const int n = 1000;
  CUdeviceptr x = 0, out = 0;
  {
    Current current(dev);
    REQUIRE(drv().cuMemAlloc(&x, n * sizeof(float)) == CUDA_SUCCESS);
    REQUIRE(drv().cuMemAlloc(&out, n * sizeof(float)) == CUDA_SUCCESS);
  }
  {
    auto bx = dev.wrap<float>(x, n);
    auto bout = dev.wrap<float>(out, n);
    CHECK(bx.cu_deviceptr() == x);
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i);
    bx.upload(host);
    auto k = TESSERA_KERNEL(scale_add, x, out, n, BLOCK);
    k[{tessera::cdiv(n, 256)}](bx, bout, n, 256);
    auto got = bout.download();
    CHECK(got[0] == 1.0f);
    CHECK(got[999] == 1999.0f);
  }  // the buffers go; the memory stays the caller's
  Current current(dev);
  float check = 0;
  CHECK(drv().cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(drv().cuMemcpyDtoH(&check, out + 4 * sizeof(float), sizeof check) == CUDA_SUCCESS);
  CHECK(check == 9.0f);
  CHECK(drv().cuMemFree(x) == CUDA_SUCCESS);  // not freed by Tessera: freeing it works
  CHECK(drv().cuMemFree(out) == CUDA_SUCCESS);
}

TEST_CASE(
    "cuda interop: wrap refuses host memory and ranges past the allocation and other contexts") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto [kind, what] = error_of([&] { dev.wrap<float>(uint64_t{0}, 4); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(what == "wrap on cuda:0: the pointer is null");
  std::vector<float> host(16);
  std::tie(kind, what) = error_of([&] { dev.wrap(host.data(), host.size()); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(contains(what, "is not memory the CUDA driver knows (cuPointerGetAttribute failed: "));
  auto owner = dev.alloc<float>(1000);  // 4000 bytes, in a block of 4096
  std::tie(kind, what) = error_of([&] { dev.wrap<float>(owner.address(), 2000); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(contains(what, ": 8000 bytes run past the end of its allocation ("));
  OtherContext other(dev);
  CUdeviceptr p = 0;
  REQUIRE(drv().cuCtxPushCurrent(other.ctx) == CUDA_SUCCESS);
  REQUIRE(drv().cuMemAlloc(&p, 256) == CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE(drv().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CUcontext popped = nullptr;
  drv().cuCtxPopCurrent(&popped);
  std::tie(kind, what) = error_of([&] { dev.wrap<float>(p, 64); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(contains(what, " belongs to another CUDA context (0x"));
  CHECK(contains(what, "), not to cuda:0's primary context (0x"));
  std::tie(kind, what) = error_of([&] { dev.wrap_cu_stream(reinterpret_cast<uint64_t>(s)); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(contains(what, "wrap_cu_stream on cuda:0: the CUstream belongs to another CUDA context"));
  std::tie(kind, what) = error_of([&] { dev.wrap_cu_stream(0); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(contains(what, "wrap_cu_stream on cuda:0: the CUstream 0x0 is null or a special stream"));
}

TEST_CASE("cuda interop: kernels run on the caller CUstream which Tessera leaves alive") {
  CUDA_DEVICE_OR_SKIP(dev);
  CUstream user = nullptr;
  {
    Current current(dev);
    REQUIRE(drv().cuStreamCreate(&user, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  }
  const int n = 512;
  auto x = dev.upload(std::vector<float>(n, 3.0f));
  auto out = dev.alloc<float>(n);
  {
    tessera::Stream s = dev.wrap_cu_stream(reinterpret_cast<uint64_t>(user));
    CHECK(s.cu_stream() == reinterpret_cast<uint64_t>(user));
    auto k = TESSERA_KERNEL(scale_add, x, out, n, BLOCK);
    k[{tessera::cdiv(n, 128), {}, &s}](x, out, n, 128);
    out.fill(0.0f, &s);  // ordered after the kernel on the same stream...
    k[{tessera::cdiv(n, 128), {}, &s}](x, out, n, 128);  // ...and this after the fill
    s.synchronize();
    CHECK(out.download(&s) == std::vector<float>(n, 7.0f));
  }
  Current current(dev);
  CHECK(drv().cuStreamQuery(user) == CUDA_SUCCESS);  // still a live stream
  CHECK(drv().cuStreamDestroy(user) == CUDA_SUCCESS);
}

TEST_CASE("cuda interop: native handles are the driver's") {
  CUDA_DEVICE_OR_SKIP(dev);
  CUdevice d = 0;
  REQUIRE(drv().cuDeviceGet(&d, 0) == CUDA_SUCCESS);
  CHECK(dev.cu_device() == static_cast<uint64_t>(d));
  CUcontext primary = nullptr;
  REQUIRE(drv().cuDevicePrimaryCtxRetain(&primary, d) == CUDA_SUCCESS);
  CHECK(dev.cu_context() == reinterpret_cast<uint64_t>(primary));
  drv().cuDevicePrimaryCtxRelease(d);
  tessera::Stream s = dev.create_stream();
  auto handle = reinterpret_cast<CUstream>(s.cu_stream());
  CHECK(handle != nullptr);
  CUcontext of = nullptr;
  CHECK(drv().cuStreamGetCtx(handle, &of) == CUDA_SUCCESS);
  CHECK(of == primary);
  auto [kind, what] = error_of([&] { dev.vk_device(); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(what == "VkDevice: device 'cuda:0' (cuda) has none; it belongs to vulkan devices");
  std::tie(kind, what) = error_of([&] { dev.alloc<float>(4).vk_buffer(); });
  CHECK(what == "vk_buffer: the buffer is on device 'cuda:0' (cuda), not a vulkan device");
}

#ifdef TESSERA_HAS_DLPACK  // runtime/dlpack.h: only where <dlpack/dlpack.h> is installed
TEST_CASE("cuda interop: DLPack kDLCUDA tensors round-trip without copies") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto b = dev.upload(std::vector<float>{1, 2, 3, 4, 5, 6});
  const int64_t shape[] = {3, 2};
  DLManagedTensor* t = tessera::to_dlpack(b, shape);
  CHECK(t->dl_tensor.device.device_type == kDLCUDA);
  CHECK(t->dl_tensor.device.device_id == 0);
  CHECK(reinterpret_cast<uint64_t>(t->dl_tensor.data) == b.cu_deviceptr());
  auto [kind, what] = error_of([&] { tessera::from_dlpack(Device::open("host"), t); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(what == "from_dlpack: the tensor is on kDLCUDA:0, not on device 'host' (kDLCPU)");
  auto back = tessera::from_dlpack<float>(dev, t);
  CHECK(back.address() == b.address());
  back.slice(5, 1).fill(-1.0f);
  CHECK(b.download() == std::vector<float>{1, 2, 3, 4, 5, -1});
}
#endif

TEST_CASE("cuda faults: a context another user holds is not reset until Device::reset") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda faults: a context another user holds is not reset until Device::reset"))
    return;
  // Another library (PyTorch, say) holds the primary context too.
  CUdevice d = static_cast<CUdevice>(dev.cu_device());
  CUcontext theirs = nullptr;
  REQUIRE(drv().cuDevicePrimaryCtxRetain(&theirs, d) == CUDA_SUCCESS);
  auto wild = load(dev, kWildStore);
  dev.impl()->default_stream()->launch(wild, Grid(1),
                                       pack(wild->params, {scalar(uint64_t{0x10})}, {0}), {});
  auto [kind, what] = error_of([&] { dev.synchronize(); });
  MESSAGE("fault: " << what);
  CHECK(kind == ErrorKind::DeviceFault);
  CHECK(contains(what, "CUDA_ERROR_ILLEGAL_ADDRESS (700) in kernel wild_store"));
  CHECK(contains(what,
                 "Tessera did not reset the primary context (other users in this process "
                 "still hold it: it stays unusable until Device::reset() or their own "
                 "cuDevicePrimaryCtxReset)"));
  unsigned flags = 0;
  int active = 0;
  CHECK(drv().cuDevicePrimaryCtxGetState(d, &flags, &active) == CUDA_SUCCESS);
  CHECK(active == 1);  // not reset: the other user's context (and memory) still exists
  // Tessera's next use says what to do.
  std::tie(kind, what) = error_of([&] { dev.alloc<int>(4); });
  MESSAGE("next use: " << what);
  CHECK(kind == ErrorKind::DeviceFault);
  bool told = contains(what, "cuda:0's primary context still holds the fault (") &&
              contains(what, "call Device::reset()");
  bool unusable = contains(what, "cuda:0 cannot be used again in this process");
  CHECK((told || unusable));
  runs_or_device_lost([&] {
    dev.reset();  // the user decides: now the context is reset
    auto out = dev.upload(std::vector<int>{1, 2, 3});
    dev.impl()->default_stream()->launch(
        wild, Grid(1), pack(wild->params, {scalar(out.address())}, {0}), {out.allocation()});
    const std::vector<int> got = out.download();  // outside CHECK (see runs_or_device_lost)
    CHECK(got == std::vector<int>{7, 2, 3});
  });
  drv().cuDevicePrimaryCtxRelease(d);
}

TEST_CASE("cuda faults: the reset-on-fault setting resets at once as before") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda faults: the reset-on-fault setting resets at once as before")) return;
  tessera::test::ScopedEnv reset("TESSERA_CUDA_RESET_ON_FAULT", "1");
  auto wild = load(dev, kWildStore);
  dev.impl()->default_stream()->launch(wild, Grid(1),
                                       pack(wild->params, {scalar(uint64_t{0x10})}, {0}), {});
  auto [kind, what] = error_of([&] { dev.synchronize(); });
  CHECK(kind == ErrorKind::DeviceFault);
  CHECK(contains(what,
                 "cuda:0 was reset (TESSERA_CUDA_RESET_ON_FAULT=1): buffers allocated "
                 "before the fault are invalid"));
  runs_or_device_lost([&] {
    // Outside CHECK, which would catch the lost device's error as a failed check.
    const int got = dev.upload(std::vector<int>{5}).download()[0];
    CHECK(got == 5);
  });
}

}  // namespace
}  // namespace cuda_test
