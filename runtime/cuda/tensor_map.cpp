/// \file TMA tensor maps: encoding arguments from a launch, checks, cache (tensor_map.h).
#include "runtime/cuda/tensor_map.h"

#include <cstring>

#include "core/support/error.h"
#include "runtime/cuda/driver.h"

namespace tessera::rt::cuda {
namespace {

namespace e = tensor_map_enum;
using ir::DType;

/// TMA's limits on the values (cuTensorMapEncodeTiled's requirements).
constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr uint64_t kMaxStride = uint64_t{1} << 40;
constexpr uint64_t kAlign = 16;

/// Reads parameter `p` (a pointer or a scalar integer) from the block, sign-extended.
int64_t read_param(std::span<const std::byte> params, const ir::ParamLayout& layout, int p) {
  const ir::ParamSlot& s = layout.slots.at(static_cast<size_t>(p));
  TESSERA_CHECK(s.offset + s.size <= params.size(), "parameter ", p, " lies past the block");
  switch (s.size) {
    case 1: {
      int8_t v;
      std::memcpy(&v, params.data() + s.offset, 1);
      return v;
    }
    case 2: {
      int16_t v;
      std::memcpy(&v, params.data() + s.offset, 2);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, params.data() + s.offset, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, params.data() + s.offset, 8);
      return v;
    }
  }
}

std::string param_name(const std::vector<std::string>& names, int p) {
  return p >= 0 && static_cast<size_t>(p) < names.size() ? names[static_cast<size_t>(p)]
                                                         : "#" + std::to_string(p);
}

}  // namespace

uint32_t tensor_map_dtype(DType t) {
  switch (t) {
    case DType::f16:
      return e::kFloat16;
    case DType::bf16:
      return e::kBfloat16;
    case DType::f32:
      return e::kFloat32;
    case DType::f64:
      return e::kFloat64;
    case DType::i32:
      return e::kInt32;
    case DType::u32:
      return e::kUint32;
    case DType::i64:
      return e::kInt64;
    case DType::u64:
      return e::kUint64;
    default:
      break;
  }
  switch (ir::dtype_bytes(t)) {  // the other integers: their bits, unsigned
    case 1:
      return e::kUint8;
    case 2:
      return e::kUint16;
    case 4:
      return e::kUint32;
    default:
      return e::kUint64;
  }
}

TensorMapArgs tensor_map_args(const ir::TensorMapParam& map, std::span<const std::byte> params,
                              const ir::ParamLayout& layout, const std::vector<std::string>& names,
                              const std::string& kernel) {
  const std::string where = "kernel '" + kernel + "': tensor map of parameter '" +
                            param_name(names, map.base_param) + "' (tensor descriptor): ";
  auto value = [&](const ir::TensorMapValue& v) {
    return v.param >= 0 ? read_param(params, layout, v.param) : v.constant;
  };
  auto source = [&](const ir::TensorMapValue& v) {
    return v.param >= 0 ? " (parameter '" + param_name(names, v.param) + "')" : std::string();
  };
  TESSERA_CHECK(map.rank() >= 1 && map.rank() <= 5, "tensor map of rank ", map.rank());
  const uint64_t elem = ir::dtype_bytes(map.dtype);
  TensorMapArgs a;
  a.dtype = tensor_map_dtype(map.dtype);
  a.rank = static_cast<uint32_t>(map.rank());
  a.address = static_cast<uint64_t>(read_param(params, layout, map.base_param));
  if (a.address % kAlign != 0)
    fail(ErrorKind::Argument, where, "the base address 0x", std::hex, a.address,
         " is not 16-byte aligned");
  for (int d = 0; d < map.rank(); ++d) {
    const size_t inner = static_cast<size_t>(map.rank() - 1 - d);  // the driver's index
    const std::string name = "[" + std::to_string(d) + "]";
    const ir::TensorMapValue& dim = map.dims[static_cast<size_t>(d)];
    const int64_t n = value(dim);
    if (n < 1 || static_cast<uint64_t>(n) > kMaxDim)
      fail(ErrorKind::Argument, where, "shape", name, " = ", n, source(dim),
           ": every dimension must be 1 to 2^32");
    a.dims[inner] = static_cast<uint64_t>(n);
    a.box[inner] = static_cast<uint32_t>(map.box[static_cast<size_t>(d)]);
    if (inner == 0) continue;  // the innermost stride is one element
    const ir::TensorMapValue& stride = map.strides[static_cast<size_t>(d)];
    const int64_t s = value(stride);
    const uint64_t bytes = static_cast<uint64_t>(s) * elem;
    if (s < 1 || bytes % kAlign != 0 || bytes >= kMaxStride)
      fail(ErrorKind::Argument, where, "strides", name, " = ", s, source(stride), " (", s, " x ",
           elem,
           " bytes): every outer stride must be a positive multiple of 16 bytes "
           "below 2^40");
    a.strides[inner - 1] = bytes;
  }
  a.swizzle = map.swizzle == 0    ? e::kSwizzleNone
              : map.swizzle == 32 ? 1
              : map.swizzle == 64 ? 2
                                  : 3;
  return a;
}

EncodeTiledFn driver_encode_tiled() {
  const Driver* d = driver(nullptr);
  return d ? d->cuTensorMapEncodeTiled : nullptr;
}

EncodedTensorMap TensorMapCache::get(const TensorMapArgs& args, EncodeTiledFn encode,
                                     const std::string& kernel, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = maps_.find(args); it != maps_.end()) return it->second;
  if (!encode)
    fail(ErrorKind::Runtime, "kernel '", kernel, "': tensor map of parameter '", what,
         "': cuTensorMapEncodeTiled is missing (the driver is older than CUDA 12.0)");
  EncodedTensorMap out;
  const std::array<uint32_t, 5> element_strides = {1, 1, 1, 1, 1};
  const int r =
      encode(out.bytes.data(), args.dtype, args.rank,
             reinterpret_cast<void*>(static_cast<uintptr_t>(args.address)), args.dims.data(),
             args.strides.data(), args.box.data(), element_strides.data(), e::kInterleaveNone,
             args.swizzle, e::kL2Promotion128B, e::kOobFillZero);
  if (r != 0)
    fail(ErrorKind::Runtime, "cuTensorMapEncodeTiled failed: error ", r, " in kernel ", kernel,
         ": tensor map of parameter '", what, "' (rank ", args.rank, ", swizzle code ",
         args.swizzle, ")");
  if (maps_.size() >= kMaxEntries) maps_.clear();
  maps_.emplace(args, out);
  return out;
}

size_t TensorMapCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return maps_.size();
}

void write_tensor_maps(const std::vector<ir::TensorMapParam>& maps, std::span<std::byte> params,
                       const ir::ParamLayout& layout, const std::vector<std::string>& names,
                       const std::string& kernel, TensorMapCache& cache, EncodeTiledFn encode) {
  const size_t first = layout.slots.size() - maps.size();
  for (size_t i = 0; i < maps.size(); ++i) {
    const TensorMapArgs args = tensor_map_args(maps[i], params, layout, names, kernel);
    const EncodedTensorMap m =
        cache.get(args, encode, kernel, param_name(names, maps[i].base_param));
    const ir::ParamSlot& s = layout.slots[first + i];
    TESSERA_CHECK(s.size == ir::kTensorMapBytes && s.offset + s.size <= params.size() &&
                      s.offset % ir::kTensorMapAlign == 0,
                  "tensor map slot ", i, " at ", s.offset, " does not fit the block");
    std::memcpy(params.data() + s.offset, m.bytes.data(), ir::kTensorMapBytes);
  }
}

void check_tensor_map_slots(const std::vector<ir::TensorMapParam>& maps,
                            const ir::ParamLayout& layout, const std::string& kernel) {
  if (maps.empty()) return;
  const std::string who = "kernel '" + kernel + "': ";
  if (maps.size() >= layout.slots.size())
    fail(ErrorKind::Runtime, who, maps.size(), " tensor maps but ", layout.slots.size(),
         " parameter slots: the maps' slots follow the user's parameters");
  const size_t first = layout.slots.size() - maps.size();
  for (size_t i = 0; i < maps.size(); ++i) {
    const ir::TensorMapParam& m = maps[i];
    const ir::ParamSlot& s = layout.slots[first + i];
    std::string map = "tensor map " + std::to_string(i);
    const size_t rank = m.dims.size();
    if (rank < 1 || rank > 5 || m.strides.size() != rank || m.box.size() != rank)
      fail(ErrorKind::Runtime, who, map, ": rank ", rank, " with ", m.strides.size(),
           " strides and ", m.box.size(), " box sizes (1 to 5 of each, as many)");
    map += " (" + m.str() + ")";
    if (s.size != ir::kTensorMapBytes || s.offset % ir::kTensorMapAlign != 0 ||
        s.offset + s.size > layout.size)
      fail(ErrorKind::Runtime, who, map, ": its parameter slot ", first + i, " is ", s.size,
           " bytes at offset ", s.offset, ", not 128 bytes 64-byte aligned in the block");
    auto user = [&](int p) { return p >= 0 && static_cast<size_t>(p) < first; };
    if (!user(m.base_param) || layout.slots[static_cast<size_t>(m.base_param)].size != 8)
      fail(ErrorKind::Runtime, who, map, ": its base, parameter ", m.base_param,
           ", is not a pointer parameter of the kernel");
    for (size_t d = 0; d < rank; ++d) {
      for (const ir::TensorMapValue* v : {&m.dims[d], &m.strides[d]})
        if (v->param >= 0 && !user(v->param))
          fail(ErrorKind::Runtime, who, map, ": dimension ", d, " reads parameter ", v->param,
               ", which is not a user parameter of the kernel");
      if (m.box[d] < 1 || m.box[d] > 256)
        fail(ErrorKind::Runtime, who, map, ": box[", d, "] = ", m.box[d],
             " (TMA copies 1 to 256 elements per dimension)");
    }
  }
}

std::span<const std::byte> block_with_tensor_maps(const LaunchTensorMaps& k,
                                                  std::span<const std::byte> params,
                                                  const ir::ParamLayout& layout,
                                                  std::vector<std::byte>& copy,
                                                  TensorMapCache& cache, EncodeTiledFn encode) {
  if (k.maps.empty()) return params;
  copy.assign(params.begin(), params.end());
  write_tensor_maps(k.maps, copy, layout, k.names, k.kernel, cache, encode);
  return copy;
}

}  // namespace tessera::rt::cuda
