/// \file TMA tensor maps on the host side (runtime/cuda/tensor_map.h): the encoding arguments a
/// launch's parameter block gives (innermost dimension first, strides in bytes), the errors that
/// name the argument breaking TMA's limits, and the cache (encoded once per argument set), with a
/// stand-in for the driver's cuTensorMapEncodeTiled. The real encoding runs in the CUDA tests.
#include <doctest/doctest.h>

#include <cstring>

#include "core/support/error.h"
#include "runtime/cuda/tensor_map.h"

namespace ir = tessera::ir;
namespace cuda = tessera::rt::cuda;

namespace {

/// Parameters (a: ptr<f16>, M: i32, K: i32, lda: i32) and one map over a [M, K] with row
/// stride lda and a 128 x 64 box swizzled by 128 bytes.
struct Launch {
  std::vector<ir::Type> types = {ir::Type::pointer(ir::DType::f16),
                                 ir::Type::scalar(ir::DType::i32), ir::Type::scalar(ir::DType::i32),
                                 ir::Type::scalar(ir::DType::i32)};
  std::vector<std::string> names = {"a", "M", "K", "lda"};
  ir::ParamLayout layout = ir::param_layout(types, 1);
  std::vector<std::byte> block = std::vector<std::byte>(layout.size);
  ir::TensorMapParam map{.base_param = 0,
                         .dtype = ir::DType::f16,
                         .dims = {{1, 0}, {2, 0}},
                         .strides = {{3, 0}, {-1, 1}},
                         .box = {128, 64},
                         .swizzle = 128};

  Launch(uint64_t a, int32_t m, int32_t k, int32_t lda) {
    std::memcpy(block.data() + layout.slots[0].offset, &a, 8);
    std::memcpy(block.data() + layout.slots[1].offset, &m, 4);
    std::memcpy(block.data() + layout.slots[2].offset, &k, 4);
    std::memcpy(block.data() + layout.slots[3].offset, &lda, 4);
  }
  cuda::TensorMapArgs args() const {
    return cuda::tensor_map_args(map, block, layout, names, "mm");
  }
  std::string error() const {
    try {
      args();
    } catch (const tessera::Error& e) {
      CHECK(e.kind() == tessera::ErrorKind::Argument);
      return e.what();
    }
    return "no error";
  }
};

int encodes = 0;
int fake_encode(void* map, uint32_t dtype, uint32_t rank, void* address, const uint64_t* dims,
                const uint64_t*, const uint32_t*, const uint32_t*, uint32_t, uint32_t swizzle,
                uint32_t, uint32_t) {
  ++encodes;
  auto* words = static_cast<uint64_t*>(map);
  words[0] = reinterpret_cast<uint64_t>(address);
  words[1] = dims[0];
  words[2] = dtype * 100 + rank * 10 + swizzle;
  return dims[1] == 7 ? 1 : 0;  // CUDA_ERROR_INVALID_VALUE for a test
}

}  // namespace

TEST_CASE("tensor map: encoding arguments innermost first, outer strides in bytes") {
  const cuda::TensorMapArgs a = Launch(0x7f0000001000, 300, 200, 256).args();
  CHECK(a.dtype == cuda::tensor_map_enum::kFloat16);
  CHECK(a.rank == 2);
  CHECK(a.address == 0x7f0000001000);
  CHECK(a.dims[0] == 200);  // K, the contiguous dimension
  CHECK(a.dims[1] == 300);
  CHECK(a.strides[0] == 512);  // lda f16
  CHECK(a.box[0] == 64);
  CHECK(a.box[1] == 128);
  CHECK(a.swizzle == 3);  // CU_TENSOR_MAP_SWIZZLE_128B
}

TEST_CASE("tensor map: arguments TMA cannot take are errors naming the parameter") {
  CHECK(Launch(0x7f0000001008, 300, 200, 256).error() ==
        "kernel 'mm': tensor map of parameter 'a' (tensor descriptor): the base address "
        "0x7f0000001008 is not 16-byte aligned");
  CHECK(Launch(0x7f0000001000, 300, 0, 256).error() ==
        "kernel 'mm': tensor map of parameter 'a' (tensor descriptor): shape[1] = 0 (parameter "
        "'K'): every dimension must be 1 to 2^32");
  CHECK(Launch(0x7f0000001000, 300, 200, 204).error() ==
        "kernel 'mm': tensor map of parameter 'a' (tensor descriptor): strides[0] = 204 "
        "(parameter 'lda') (204 x 2 bytes): every outer stride must be a positive multiple of "
        "16 bytes below 2^40");
}

TEST_CASE("tensor map: encoded once per argument set, written into the block's map slot") {
  cuda::TensorMapCache cache;
  encodes = 0;
  Launch l(0x7f0000001000, 300, 200, 256);
  cuda::write_tensor_maps({l.map}, l.block, l.layout, l.names, "mm", cache, fake_encode);
  cuda::write_tensor_maps({l.map}, l.block, l.layout, l.names, "mm", cache, fake_encode);
  CHECK(encodes == 1);
  CHECK(cache.size() == 1);
  uint64_t words[3];
  std::memcpy(words, l.block.data() + l.layout.slots[4].offset, sizeof(words));
  CHECK(words[0] == 0x7f0000001000);
  CHECK(words[1] == 200);
  CHECK(words[2] == cuda::tensor_map_enum::kFloat16 * 100 + 2 * 10 + 3);
  Launch other(0x7f0000002000, 300, 200, 256);
  cuda::write_tensor_maps({other.map}, other.block, other.layout, other.names, "mm", cache,
                          fake_encode);
  CHECK(encodes == 2);
}

TEST_CASE("tensor map: a refused encoding and a missing entry point are runtime errors") {
  cuda::TensorMapCache cache;
  Launch l(0x7f0000001000, 7, 200, 256);
  try {
    cuda::write_tensor_maps({l.map}, l.block, l.layout, l.names, "mm", cache, fake_encode);
    FAIL("no error");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == tessera::ErrorKind::Runtime);
    CHECK(std::string(e.what()) ==
          "cuTensorMapEncodeTiled failed: error 1 in kernel mm: tensor map of parameter 'a' "
          "(rank 2, swizzle code 3)");
  }
  try {
    cuda::write_tensor_maps({l.map}, l.block, l.layout, l.names, "mm", cache, nullptr);
    FAIL("no error");
  } catch (const tessera::Error& e) {
    CHECK(std::string(e.what()) ==
          "kernel 'mm': tensor map of parameter 'a': "
          "cuTensorMapEncodeTiled is missing (the driver is older than "
          "CUDA 12.0)");
  }
}

TEST_CASE("tensor map: a launch's block gets its maps in a copy, a block without maps goes as is") {
  cuda::TensorMapCache cache;
  encodes = 0;
  Launch l(0x7f0000001000, 300, 200, 256);
  const std::vector<std::byte> caller = l.block;
  std::vector<std::byte> copy;
  // No maps: the caller's block itself, nothing copied or encoded.
  const cuda::LaunchTensorMaps none{{}, l.names, "mm"};
  std::span<const std::byte> got =
      cuda::block_with_tensor_maps(none, l.block, l.layout, copy, cache, fake_encode);
  CHECK(got.data() == l.block.data());
  CHECK(got.size() == l.block.size());
  CHECK(copy.empty());
  CHECK(encodes == 0);
  // One map: a copy with the map in the last slot; the caller's block is untouched.
  const cuda::LaunchTensorMaps one{{l.map}, l.names, "mm"};
  for (int launch = 0; launch < 3; ++launch) {
    got = cuda::block_with_tensor_maps(one, l.block, l.layout, copy, cache, fake_encode);
    CHECK(got.data() == copy.data());
    REQUIRE(got.size() == l.block.size());
    CHECK(l.block == caller);
    // Everything but the map's slot is the caller's.
    const ir::ParamSlot& slot = l.layout.slots[4];
    CHECK(std::memcmp(got.data(), caller.data(), slot.offset) == 0);
    uint64_t words[3];
    std::memcpy(words, got.data() + slot.offset, sizeof(words));
    CHECK(words[0] == 0x7f0000001000);
    CHECK(words[1] == 200);
  }
  CHECK(encodes == 1);  // three launches, one argument set
  // An argument error names the kernel and the parameter, and leaves the caller's block.
  Launch bad(0x7f0000001000, 300, 200, 204);
  try {
    cuda::block_with_tensor_maps(one, bad.block, bad.layout, copy, cache, fake_encode);
    FAIL("no error");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == tessera::ErrorKind::Argument);
    CHECK(std::string(e.what()).starts_with(
        "kernel 'mm': tensor map of parameter 'a' (tensor descriptor): strides[0] = 204 "
        "(parameter 'lda')"));
  }
}

TEST_CASE("tensor map: names missing from the artifact are numbered in errors") {
  Launch l(0x7f0000001008, 300, 200, 256);
  l.names.clear();
  CHECK(l.error() ==
        "kernel 'mm': tensor map of parameter '#0' (tensor descriptor): the base address "
        "0x7f0000001008 is not 16-byte aligned");
}

TEST_CASE("tensor map: the cache starts over past its limit") {
  cuda::TensorMapCache cache;
  encodes = 0;
  Launch l(0x7f0000001000, 300, 200, 256);
  for (size_t i = 0; i <= cuda::TensorMapCache::kMaxEntries; ++i) {
    cuda::TensorMapArgs a = l.args();
    a.address += 16 * i;
    cache.get(a, fake_encode, "mm", "a");
  }
  CHECK(encodes == static_cast<int>(cuda::TensorMapCache::kMaxEntries) + 1);
  CHECK(cache.size() == 1);  // cleared when full, then the last one added
}

TEST_CASE("tensor map: a kernel's maps must match its parameter slots when it is loaded") {
  Launch l(0x7f0000001000, 300, 200, 256);
  auto error = [&](const std::vector<ir::TensorMapParam>& maps, const ir::ParamLayout& layout) {
    try {
      cuda::check_tensor_map_slots(maps, layout, "mm");
    } catch (const tessera::Error& e) {
      CHECK(e.kind() == tessera::ErrorKind::Runtime);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error({l.map}, l.layout) == "no error");
  CHECK(error({}, ir::param_layout(l.types)) == "no error");
  // The layout without a map slot: the map would land on 'lda'.
  CHECK(error({l.map}, ir::param_layout(l.types)) ==
        "kernel 'mm': tensor map 0 (" + l.map.str() +
            "): its parameter slot 3 is 4 bytes at offset 16, not 128 bytes 64-byte aligned in "
            "the block");
  ir::TensorMapParam m = l.map;
  m.base_param = 1;  // 'M', an i32
  CHECK(error({m}, l.layout) == "kernel 'mm': tensor map 0 (" + m.str() +
                                    "): its base, parameter 1, is not a pointer parameter of the "
                                    "kernel");
  m = l.map;
  m.dims[0] = {4, 0};  // the map's own slot
  CHECK(error({m}, l.layout) == "kernel 'mm': tensor map 0 (" + m.str() +
                                    "): dimension 0 reads parameter 4, which is not a user "
                                    "parameter of the kernel");
  m = l.map;
  m.box[1] = 512;
  CHECK(error({m}, l.layout) == "kernel 'mm': tensor map 0 (" + m.str() +
                                    "): box[1] = 512 (TMA copies 1 to 256 elements per "
                                    "dimension)");
  m = l.map;
  m.strides.pop_back();
  CHECK(error({m}, l.layout) ==
        "kernel 'mm': tensor map 0: rank 2 with 1 strides and 2 box sizes (1 to 5 of each, as "
        "many)");
  CHECK(error({l.map, l.map, l.map, l.map, l.map}, l.layout) ==
        "kernel 'mm': 5 tensor maps but 5 parameter slots: the maps' slots follow the user's "
        "parameters");
}
