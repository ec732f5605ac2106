/// \file TMA on a CUDA device of sm_90 or later (a SKIP elsewhere): a tensor map encoded by the
/// runtime (runtime/cuda/tensor_map.h) in the parameter block's 64-byte aligned slot, read by a
/// hand-written PTX kernel through mbarrier.init, arrive.expect_tx, cp.async.bulk.tensor and a
/// try_wait.parity loop, and the shared-memory box it wrote compared byte for byte with the
/// semantics the SIMT interpreter uses (core/ir/tma.h: zero fill outside, 128-byte swizzle).
/// These are the instruction forms and the parameter ABI the TMA ring is to emit.
#include <cmath>
#include <cstring>
#include <tuple>

#include "core/ir/tma.h"
#include "core/lang/tl.h"
#include "runtime/cuda/tensor_map.h"
#include "tests/runtime/cuda/helpers.h"
#include "tests/targets/ptx/tma_box_ptx.h"

namespace {

using namespace cuda_test;
namespace ir = tessera::ir;
namespace rtc = tessera::rt::cuda;

constexpr int64_t kRows = 300, kCols = 200, kStride = 256;  // f16 elements; rows of 512 bytes

}  // namespace

TEST_CASE("cuda tma: a tensor map from the runtime, a box copied by TMA as the interpreter does") {
  CUDA_DEVICE_OR_SKIP(dev);
  const tessera::target::Target target = target_of(dev);
  if (!target.has(tessera::target::Cap::Tma)) {
    MESSAGE("SKIP: " << dev.info().name << " (" << target.name << ") has no TMA");
    return;
  }
  if (!rtc::driver_encode_tiled()) {
    MESSAGE("SKIP: the driver has no cuTensorMapEncodeTiled (older than CUDA 12.0)");
    return;
  }
  const std::vector<ir::Type> types = {ir::Type::pointer(ir::DType::u8),
                                       ir::Type::scalar(ir::DType::i32),
                                       ir::Type::scalar(ir::DType::i32)};
  tessera::target::Artifact a;
  a.kernel = "tma_box";
  a.isa = "ptx";
  a.ptx = tma_test::kTmaBoxPtx;
  a.target = target.str();
  a.params = ir::param_layout(types, 1);
  a.param_bytes = a.params.size;
  a.threads = 128;
  a.subgroup = 32;
  auto k = tessera::rt::cuda::load(*dev.impl(), a);

  // The tensor (value of element (r, c): r * 256 + c, as u16 bits), padded rows.
  std::vector<uint16_t> host(kRows * kStride, 0xdead);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) host[r * kStride + c] = static_cast<uint16_t>(r * 256 + c);
  BufferBase x = BufferBase::allocate(dev.impl(), host.size() * 2, ir::DType::u8);
  x.upload_bytes(host.data(), host.size() * 2, 0, nullptr);
  BufferBase out = BufferBase::allocate(dev.impl(), 16384, ir::DType::u8);
  const ir::TensorMapParam map{.base_param = 0,
                               .dtype = ir::DType::f16,
                               .dims = {{-1, kRows}, {-1, kCols}},
                               .strides = {{-1, kStride}, {-1, 1}},
                               .box = {128, 64},
                               .swizzle = 128};
  rtc::TensorMapCache cache;
  for (auto [row0, col0] : {std::pair{0, 0}, {250, 168}, {-5, -16}}) {
    CAPTURE(row0);
    CAPTURE(col0);
    std::vector<std::byte> block(a.params.size);
    const uint64_t xa = x.address(), oa = out.address();
    std::memcpy(block.data() + a.params.slots[0].offset, &oa, 8);  // out
    std::memcpy(block.data() + a.params.slots[1].offset, &row0, 4);
    std::memcpy(block.data() + a.params.slots[2].offset, &col0, 4);
    // The map's base is the tensor x, which is no parameter of this kernel: read from a block
    // whose parameter 0 is x's address.
    std::vector<std::byte> for_map = block;
    std::memcpy(for_map.data() + a.params.slots[0].offset, &xa, 8);
    // The driver encodes a map only with a context current (error 201 without one).
    rtc::in_context(*dev.impl(), [&] {
      rtc::write_tensor_maps({map}, for_map, a.params, {"x", "row0", "col0", "map"}, "tma_box",
                             cache, rtc::driver_encode_tiled());
    });
    std::memcpy(block.data() + a.params.slots[3].offset, for_map.data() + a.params.slots[3].offset,
                ir::kTensorMapBytes);
    std::vector<std::shared_ptr<tessera::rt::Allocation>> keep = {x.allocation(), out.allocation()};
    dev.impl()->default_stream()->launch_packed(k, Grid{1, 1, 1}, block, keep);
    std::vector<std::byte> got(16384);
    out.download_bytes(got.data(), got.size(), 0, nullptr);

    std::vector<std::byte> want(16384, std::byte{0x55});
    const ir::TmaCopy copy{.base = xa,
                           .dims = {kRows, kCols},
                           .strides = {kStride * 2, 2},
                           .box = {128, 64},
                           .coords = {row0, col0},
                           .elem_bytes = 2,
                           .swizzle = 128};
    ir::tma_copy(
        copy,
        [&](uint64_t address, std::byte* to, size_t n) {
          std::memcpy(to, reinterpret_cast<const std::byte*>(host.data()) + (address - xa), n);
        },
        want.data());
    CHECK(got == want);
  }
  CHECK(cache.size() == 1);  // one map, three launches
}

namespace {

/// kTmaBoxPtx with the tensor x, its shape and its row stride as parameters before the map, so
/// that the artifact's map reads them: (x, out, row0, col0, rows, cols, stride, map).
std::string tma_box_with_tensor_ptx() {
  std::string ptx = tma_test::kTmaBoxPtx;
  auto insert = [&](const std::string& before, const std::string& text) {
    const size_t at = ptx.find(before);
    REQUIRE(at != std::string::npos);
    ptx.insert(at, text);
  };
  insert("    .param .u64 out,", "    .param .u64 x,\n");
  insert("    .param .align 64 .b8 tmap[128]",
         "    .param .u32 rows,\n    .param .u32 cols,\n    .param .u32 stride,\n");
  return ptx;
}

}  // namespace

TEST_CASE("cuda tma: the launch encodes the artifact's tensor map (plain launches and a graph)") {
  CUDA_DEVICE_OR_SKIP(dev);
  const tessera::target::Target target = target_of(dev);
  if (!target.has(tessera::target::Cap::Tma)) {
    MESSAGE("SKIP: " << dev.info().name << " (" << target.name << ") has no TMA");
    return;
  }
  if (!rtc::driver_encode_tiled()) {
    MESSAGE("SKIP: the driver has no cuTensorMapEncodeTiled (older than CUDA 12.0)");
    return;
  }
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  const std::vector<ir::Type> types = {
      ir::Type::pointer(ir::DType::f16), ir::Type::pointer(ir::DType::u8), i32, i32, i32, i32, i32};
  tessera::target::Artifact a;
  a.kernel = "tma_box";
  a.isa = "ptx";
  a.ptx = tma_box_with_tensor_ptx();
  a.target = target.str();
  a.params = ir::param_layout(types, 1);
  a.param_bytes = a.params.size;
  a.threads = 128;
  a.subgroup = 32;
  // x's [rows, cols] with row stride `stride` (parameters 4, 5, 6), a 128 x 64 box.
  a.tensor_maps = {{.base_param = 0,
                    .dtype = ir::DType::f16,
                    .dims = {{4, 0}, {5, 0}},
                    .strides = {{6, 0}, {-1, 1}},
                    .box = {128, 64},
                    .swizzle = 128}};
  a.param_names = {"x", "out", "row0", "col0", "rows", "cols", "stride"};
  auto k = tessera::rt::cuda::load(*dev.impl(), a);

  std::vector<uint16_t> host(kRows * kStride, 0xdead);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) host[r * kStride + c] = static_cast<uint16_t>(r * 256 + c);
  BufferBase x = BufferBase::allocate(dev.impl(), host.size() * 2, ir::DType::u8);
  x.upload_bytes(host.data(), host.size() * 2, 0, nullptr);
  BufferBase out = BufferBase::allocate(dev.impl(), 16384, ir::DType::u8);
  const uint64_t xa = x.address(), oa = out.address();
  auto block_for = [&](int32_t row0, int32_t col0, int32_t stride) {
    std::vector<std::byte> block(a.params.size, std::byte{0x77});  // the map's slot: garbage
    auto put = [&](size_t p, const void* v, size_t n) {
      std::memcpy(block.data() + a.params.slots[p].offset, v, n);
    };
    const int32_t rows = kRows, cols = kCols;
    put(0, &xa, 8);
    put(1, &oa, 8);
    put(2, &row0, 4);
    put(3, &col0, 4);
    put(4, &rows, 4);
    put(5, &cols, 4);
    put(6, &stride, 4);
    return block;
  };
  auto want_for = [&](int64_t row0, int64_t col0) {
    std::vector<std::byte> want(16384, std::byte{0x55});
    const ir::TmaCopy copy{.base = xa,
                           .dims = {kRows, kCols},
                           .strides = {kStride * 2, 2},
                           .box = {128, 64},
                           .coords = {row0, col0},
                           .elem_bytes = 2,
                           .swizzle = 128};
    ir::tma_copy(
        copy,
        [&](uint64_t address, std::byte* to, size_t n) {
          std::memcpy(to, reinterpret_cast<const std::byte*>(host.data()) + (address - xa), n);
        },
        want.data());
    return want;
  };
  auto stream = dev.impl()->default_stream();
  const size_t cached = rtc::tensor_maps_cached(*dev.impl());
  for (auto [row0, col0] : {std::pair{0, 0}, {250, 168}, {-5, -16}}) {
    CAPTURE(row0);
    CAPTURE(col0);
    const std::vector<std::byte> block = block_for(row0, col0, kStride);
    std::vector<std::shared_ptr<tessera::rt::Allocation>> keep = {x.allocation(), out.allocation()};
    stream->launch_packed(k, Grid{1, 1, 1}, block, keep);
    CHECK(block == block_for(row0, col0, kStride));  // the caller's block is left as it was
    std::vector<std::byte> got(16384);
    out.download_bytes(got.data(), got.size(), 0, nullptr);
    CHECK(got == want_for(row0, col0));
  }
  // One argument set (the coordinates are not the map's): encoded once for three launches.
  CHECK(rtc::tensor_maps_cached(*dev.impl()) == cached + 1);

  // Captured into a graph (on a created stream, as Stream::capture does): the map is encoded
  // at capture and replayed with it.
  const std::byte zero{0};
  out.fill_bytes(&zero, 1, nullptr);
  stream->synchronize();
  std::shared_ptr<tessera::rt::StreamImpl> capture = dev.impl()->create_stream();
  capture->begin_capture();
  {
    std::vector<std::shared_ptr<tessera::rt::Allocation>> keep = {x.allocation(), out.allocation()};
    capture->launch_packed(k, Grid{1, 1, 1}, block_for(100, 40, kStride), keep);
  }
  std::shared_ptr<tessera::rt::GraphImpl> graph = capture->end_capture();
  CHECK(graph->launches() == 1);
  graph->replay(*capture);
  capture->synchronize();
  std::vector<std::byte> got(16384);
  out.download_bytes(got.data(), got.size(), 0, nullptr);
  CHECK(got == want_for(100, 40));

  // A row stride TMA cannot take is an Argument error naming the kernel and the parameter.
  std::vector<std::shared_ptr<tessera::rt::Allocation>> keep = {x.allocation(), out.allocation()};
  try {
    stream->launch_packed(k, Grid{1, 1, 1}, block_for(0, 0, 204), keep);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Argument);
    CHECK(std::string(e.what()).starts_with(
        "kernel 'tma_box': tensor map of parameter 'x' (tensor descriptor): strides[0] = 204 "
        "(parameter 'stride')"));
  }
}

namespace {

namespace tl = tessera::tl;

/// C = A @ B through tensor descriptors (A [M x K], B [K x N] row-major, f16; C f32), one
/// BLOCK_M x BLOCK_N tile per program: on sm_90 its K loop is the wgmma ring with TMA copies.
inline void desc_matmul_kernel(tl::ptr<tessera::half> a_ptr, tl::ptr<tessera::half> b_ptr,
                               tl::ptr<float> c_ptr, tl::i32 M, tl::i32 N, tl::i32 K, int BLOCK_M,
                               int BLOCK_N, int BLOCK_K) {
  auto a_desc = tl::make_tensor_descriptor(a_ptr, {M, K}, {K, 1}, {BLOCK_M, BLOCK_K});
  auto b_desc = tl::make_tensor_descriptor(b_ptr, {K, N}, {N, 1}, {BLOCK_K, BLOCK_N});
  auto c_desc = tl::make_tensor_descriptor(c_ptr, {M, N}, {N, 1}, {BLOCK_M, BLOCK_N});
  auto m0 = tl::program_id(0) * BLOCK_M, n0 = tl::program_id(1) * BLOCK_N;
  auto acc = tl::zeros<float>({BLOCK_M, BLOCK_N});
  for (auto k : tl::range(0, K, BLOCK_K))
    acc = tl::dot(a_desc.load({m0, k}), b_desc.load({k, n0}), acc);
  c_desc.store({m0, n0}, acc);
}

}  // namespace

TEST_CASE("cuda tma: a descriptor matmul's ring copies by TMA and matches the exact product") {
  CUDA_DEVICE_OR_SKIP(dev);
  const tessera::target::Target target = target_of(dev);
  if (!target.has(tessera::target::Cap::Tma)) {
    MESSAGE("SKIP: " << dev.info().name << " (" << target.name << ") has no TMA");
    return;
  }
  // M ragged (TMA fills rows past M with zeros); K = 5 iterations over 3 stages (each mbarrier
  // used twice); K = 64 (one iteration: the prologue's second copy never issued); K and N
  // ragged too (boxes past the end of a row, the innermost dimension; 208: TMA needs a
  // multiple of 16 the specialization can prove).
  for (const auto& [M, N, K] : {std::tuple{200, 256, 320}, {128, 256, 64}, {200, 208, 208}}) {
    CAPTURE(M);
    CAPTURE(N);
    CAPTURE(K);
    std::vector<tessera::half> ha(size_t(M) * K), hb(size_t(K) * N);
    for (size_t i = 0; i < ha.size(); ++i) ha[i] = tessera::half(float(int(i % 7) - 3));
    for (size_t i = 0; i < hb.size(); ++i) hb[i] = tessera::half(float(i % 5) * 0.5f);
    auto a = dev.upload(ha), b = dev.upload(hb);
    auto c = dev.alloc<float>(size_t(M) * N);
    c.fill(NAN);
    const size_t cached = rtc::tensor_maps_cached(*dev.impl());
    auto mm =
        TESSERA_KERNEL(desc_matmul_kernel, a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K);
    mm[{{tessera::cdiv(M, 128), tessera::cdiv(N, 128)}, {.num_warps = 4, .num_stages = 3}}](
        a, b, c, M, N, K, 128, 128, 64);
    const std::vector<float> got = c.download();
    // Two maps encoded for this argument set: the ring copied A and B by TMA.
    CHECK(rtc::tensor_maps_cached(*dev.impl()) == cached + 2);
    int wrong = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double want = 0;
        for (int k = 0; k < K; ++k)
          want += double(ha[size_t(i) * K + k]) * double(hb[size_t(k) * N + j]);
        wrong += got[size_t(i) * N + j] != float(want);
      }
    CHECK(wrong == 0);
  }
}
