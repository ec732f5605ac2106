/// \file Kernel launches: argument checks by parameter name, specialization, the in-memory
/// caches of traced and compiled kernels, and the packed parameter block.
#include "runtime/kernel.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include "core/ir/printer.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "core/support/error.h"
#include "runtime/artifact_cache.h"

namespace tessera {
namespace {

using tl::ParamClass;
using Kind = KernelArg::Kind;

bool is_number(const KernelArg& a) {
  return a.kind != Kind::Buffer && a.kind != Kind::DType;
}

bool fits(int64_t v, bool from_unsigned, ir::DType t) {
  if (ir::is_float(t)) return true;
  if (t == ir::DType::i1) return v == 0 || v == 1;
  int bits = ir::dtype_bits(t);
  if (ir::is_signed_int(t)) {
    if (from_unsigned && v < 0) return false;
    return bits == 64 || (v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1)));
  }
  if (!from_unsigned && v < 0) return false;
  return bits == 64 || static_cast<uint64_t>(v) < (uint64_t{1} << bits);
}

template <class T>
void put(std::span<std::byte> block, uint32_t offset, T value) {
  std::memcpy(block.data() + offset, &value, sizeof(T));
}

/// Stores a scalar argument in the block in its parameter's dtype.
void put_scalar(std::span<std::byte> block, uint32_t offset, ir::DType t, const KernelArg& a) {
  double f = a.kind == Kind::Float ? a.f : static_cast<double>(a.i);
  int64_t i = a.kind == Kind::Float ? static_cast<int64_t>(a.f) : a.i;
  switch (t) {
    case ir::DType::i1:
      put<uint8_t>(block, offset, i != 0);
      break;
    case ir::DType::i8:
    case ir::DType::u8:
      put<uint8_t>(block, offset, static_cast<uint8_t>(i));
      break;
    case ir::DType::i16:
    case ir::DType::u16:
      put<uint16_t>(block, offset, static_cast<uint16_t>(i));
      break;
    case ir::DType::i32:
    case ir::DType::u32:
      put<uint32_t>(block, offset, static_cast<uint32_t>(i));
      break;
    case ir::DType::i64:
    case ir::DType::u64:
      put<uint64_t>(block, offset, static_cast<uint64_t>(i));
      break;
    case ir::DType::f16:
      put<uint16_t>(block, offset, f16_from_double(f));
      break;
    case ir::DType::bf16:
      put<uint16_t>(block, offset, bf16_from_double(f));
      break;
    case ir::DType::f8e4m3:
      put<uint8_t>(block, offset, f8e4m3_from_double(f));
      break;
    case ir::DType::f8e5m2:
      put<uint8_t>(block, offset, f8e5m2_from_double(f));
      break;
    case ir::DType::f32:
      put<float>(block, offset, static_cast<float>(f));
      break;
    case ir::DType::f64:
      put<double>(block, offset, f);
      break;
  }
}

/// The most programs a launch's grid may have along each axis on `device`, from its target
/// description (DeviceInfo::target: the live device's limits where the backend reads them), parsed
/// at its first launch. SPIR-V devices are the exception: Vulkan folds a grid past its workgroup
/// counts into the ones it has (runtime/vulkan/stream.cpp) for Tessera's kernels, which carry the
/// logical grid, so no axis is limited there below Grid's 2^32-1 and the backend refuses a grid
/// that does not fold (ErrorKind::Unsupported).
/// (Not std::call_once: libstdc++'s sets thread-local state on every call.)
const std::array<int64_t, 3>& grid_limits(rt::DeviceImpl& device) {
  if (device.grid_limits_known.load(std::memory_order_acquire)) return device.grid_limits;
  std::lock_guard<std::mutex> lock(device.grid_limits_mutex);
  if (!device.grid_limits_known.load(std::memory_order_relaxed)) {
    const DeviceInfo& info = device.info();
    std::string error;
    std::optional<target::Target> t = target::parse_target(info.target, &error);
    TESSERA_CHECK(t.has_value(), "device '", info.name, "': its target description '", info.target,
                  "' does not parse: ", error);
    device.grid_limits = {t->max_grid[0], t->max_grid[1], t->max_grid[2]};
    if (t->isa.starts_with("spirv")) device.grid_limits.fill(std::numeric_limits<uint32_t>::max());
    device.grid_limits_known.store(true, std::memory_order_release);
  }
  return device.grid_limits;
}

}  // namespace

void Grid::set(int64_t gx, int64_t gy, int64_t gz) {
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  if (gx < 0 || gy < 0 || gz < 0 || gx > kMax || gy > kMax || gz > kMax)
    fail(ErrorKind::Argument, "grid (", gx, ", ", gy, ", ", gz,
         ") is invalid: each dimension must be in 0..2^32-1");
  x = static_cast<uint32_t>(gx);
  y = static_cast<uint32_t>(gy);
  z = static_cast<uint32_t>(gz);
}

std::string KernelArg::describe() const {
  switch (kind) {
    case Kind::Buffer:
      return "a buffer of " + std::string(ir::dtype_name(dtype)) + " on " +
             (buffer.device() ? buffer.device()->info().name : "no device");
    case Kind::Int:
      return "the integer " + std::to_string(i);
    case Kind::UInt:
      return "the unsigned integer " + std::to_string(static_cast<uint64_t>(i));
    case Kind::Float:
      return "the float " + std::to_string(f);
    case Kind::Bool:
      return i ? "true" : "false";
    case Kind::DType:
      return "the dtype " + std::string(ir::dtype_name(static_cast<ir::DType>(i)));
  }
  return "?";
}

std::vector<std::string> split_param_names(std::string_view names) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < names.size()) {
    size_t end = names.find(',', pos);
    if (end == std::string_view::npos) end = names.size();
    std::string_view n = names.substr(pos, end - pos);
    while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
    while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
    if (!n.empty()) out.emplace_back(n);
    pos = end + 1;
  }
  return out;
}

KernelBase::KernelBase(std::string name, std::vector<std::string> param_names,
                       std::vector<tl::ParamDesc> params)
    : name_(std::move(name)), param_names_(std::move(param_names)), params_(std::move(params)) {
  // TESSERA_KERNEL(ns::fn, ...) names the kernel "fn".
  if (size_t colon = name_.rfind("::"); colon != std::string::npos) name_ = name_.substr(colon + 2);
  if (param_names_.size() != params_.size())
    fail(ErrorKind::Argument, "kernel '", name_, "' has ", params_.size(), " parameters but ",
         param_names_.size(), " parameter names were given");
}

std::string KernelBase::param_label(size_t i) const {
  return "argument " + std::to_string(i + 1) + " '" + param_names_[i] + "' (" +
         params_[i].cpp_type + ") of kernel '" + (name_.empty() ? std::string("<kernel>") : name_) +
         "'";
}

std::vector<tl::ArgSpec> KernelBase::check_and_specialize(std::span<const KernelArg> args) const {
  std::vector<tl::ArgSpec> specs(args.size());
  specialize(args, specs);
  return specs;
}

void KernelBase::specialize(std::span<const KernelArg> args, std::span<tl::ArgSpec> specs) const {
  if (args.size() != params_.size()) {
    std::string list;
    for (size_t i = 0; i < param_names_.size(); ++i) list += (i ? ", " : "") + param_names_[i];
    fail(ErrorKind::Argument, "kernel '", name_, "' takes ", params_.size(), " arguments (", list,
         "), got ", args.size());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const tl::ParamDesc& p = params_[i];
    const KernelArg& a = args[i];
    tl::ArgSpec& s = specs[i];  // value-initialized by the caller
    if (p.cls == ParamClass::Pointer) {
      if (a.kind != Kind::Buffer)
        fail(ErrorKind::Argument, param_label(i), " must be a buffer, got ", a.describe());
      if (p.dtype && *p.dtype != a.dtype)
        fail(ErrorKind::Argument, param_label(i), " must be a buffer of ", ir::dtype_name(*p.dtype),
             ", got ", a.describe());
      if (!a.buffer.valid()) fail(ErrorKind::Argument, param_label(i), " is an empty buffer");
      s.dtype = a.dtype;
      s.divisible_by_16 = a.buffer.address() % 16 == 0;
    } else if (p.cls == ParamClass::Scalar) {
      if (!is_number(a))
        fail(ErrorKind::Argument, param_label(i), " must be a number, got ", a.describe());
      s.dtype = p.dtype ? *p.dtype : a.dtype;
      if (a.kind == Kind::Float && !ir::is_float(s.dtype))
        fail(ErrorKind::Argument, param_label(i), " is an integer parameter, got ", a.describe());
      if (a.kind != Kind::Float && !fits(a.i, a.kind == Kind::UInt, s.dtype))
        fail(ErrorKind::Argument, param_label(i), ": ", a.describe(), " does not fit ",
             ir::dtype_name(s.dtype));
      if (!ir::is_float(s.dtype) && a.kind != Kind::Float && s.dtype != ir::DType::i1) {
        s.divisible_by_16 = a.i % 16 == 0;
        s.equal_to_one = a.i == 1;
      }
    } else {
      using CK = tl::ConstValue::Kind;
      bool ok = (p.const_kind == CK::Int &&
                 (a.kind == Kind::Int || a.kind == Kind::UInt || a.kind == Kind::Bool)) ||
                (p.const_kind == CK::Float &&
                 (a.kind == Kind::Float || a.kind == Kind::Int || a.kind == Kind::UInt)) ||
                (p.const_kind == CK::Bool && (a.kind == Kind::Bool || a.kind == Kind::Int)) ||
                (p.const_kind == CK::DType && a.kind == Kind::DType);
      if (!ok)
        fail(ErrorKind::Argument, param_label(i), " is a compile-time ", p.cpp_type, ", got ",
             a.describe());
      s.value.kind = p.const_kind;
      s.value.i = a.i;
      s.value.f = a.kind == Kind::Float ? a.f : static_cast<double>(a.i);
    }
  }
}

rt::DeviceImpl* KernelBase::launch_device(const LaunchConfig& config,
                                          std::span<const KernelArg> args) const {
  // Raw: the stream or the buffers (which the launch holds) keep the device alive.
  rt::DeviceImpl* device = config.stream ? config.stream->impl()->device() : nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != Kind::Buffer) continue;
    rt::DeviceImpl* d = args[i].buffer.device();
    if (!device) {
      device = d;
      continue;
    }
    if (d != device)
      fail(ErrorKind::Argument, param_label(i), " is a buffer on device '", d->info().name,
           "', but the launch is on '", device->info().name, "'");
  }
  if (!device)
    fail(ErrorKind::Argument, "kernel '", name_,
         "': cannot tell which device to launch on (no buffer arguments); launch on a stream: "
         "kernel[{grid, {}, &stream}](...)");
  return device;
}

std::shared_ptr<const ir::Module> KernelBase::module_for(
    const std::vector<tl::ArgSpec>& specs) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = traced_.find(specs);
    if (it != traced_.end()) return it->second;
  }
  std::shared_ptr<const ir::Module> m = trace(specs);
  std::lock_guard<std::mutex> lock(mutex_);
  if (name_.empty()) name_ = m->kernel().name;
  auto [it, inserted] = traced_.emplace(specs, std::move(m));
  return it->second;
}

std::shared_ptr<const ir::Module> KernelBase::traced_for(std::span<const KernelArg> args) const {
  return module_for(check_and_specialize(args));
}

std::shared_ptr<const ir::Module> KernelBase::ir_for(std::span<const KernelArg> args) const {
  // The tile steps of the pipeline; the host target asks nothing of the lowering.
  return passes::compile(*traced_for(args), *target::profile("host"), {}, passes::Stage::Tile).tile;
}

namespace {

/// TESSERA_DEBUG, read once (at the first launch): "1" turns debug mode on for every launch.
bool debug_from_env() {
  static const bool on = [] {
    const char* text = std::getenv("TESSERA_DEBUG");
    const std::string v = text ? text : "";
    if (v.empty() || v == "0") return false;
    if (v == "1") return true;
    fail(ErrorKind::Argument, "TESSERA_DEBUG='", v, "' is neither 0 nor 1");
  }();
  return on;
}

}  // namespace

void KernelBase::pack(const rt::CompiledKernel& compiled, std::span<const KernelArg> args,
                      bool debug, std::span<std::byte> block) const {
  size_t slot = 0;
  const std::vector<ir::ParamSlot>& slots = compiled.params.slots;
  auto next_offset = [&]() -> uint32_t {
    TESSERA_CHECK(slot < slots.size(), "kernel '", name_, "': more parameters than the ",
                  slots.size(), " slots of its layout");
    return slots[slot++].offset;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (params_[i].cls == ParamClass::Constexpr) continue;
    uint32_t offset = next_offset();
    if (params_[i].cls == ParamClass::Pointer) {
      put<uint64_t>(block, offset, args[i].buffer.address());
    } else {
      ir::DType t = params_[i].dtype ? *params_[i].dtype : args[i].dtype;
      put_scalar(block, offset, t, args[i]);
    }
  }
  // Debug mode: each pointer's buffer, as the hidden parameters after the user's say
  // (core/passes/bounds.h): its address and size.
  for (size_t i = 0; debug && i < args.size(); ++i) {
    if (params_[i].cls != ParamClass::Pointer) continue;
    put<uint64_t>(block, next_offset(), args[i].buffer.address());
    put<uint64_t>(block, next_offset(), args[i].buffer.bytes());
  }
  // The tensor maps' slots, last, are the backend's to fill at launch.
  TESSERA_CHECK(slot + compiled.tensor_map_slots == slots.size(), "kernel '", name_, "': ", slot,
                " parameters packed for ", slots.size() - compiled.tensor_map_slots, " slots");
}

namespace {

/// Arguments, buffers and parameter bytes a launch keeps on the stack; larger launches use the
/// heap.
constexpr size_t kInlineArgs = 16;
constexpr size_t kInlineParamBytes = 512;

/// `n` value-initialized elements of T: on the stack when n <= N (only those n are constructed),
/// else on the heap.
template <class T, size_t N>
class SmallArray {
 public:
  explicit SmallArray(size_t n) : n_(n) {
    if (n <= N) {
      data_ = std::uninitialized_value_construct_n(reinterpret_cast<T*>(raw_), n) - n;
    } else {
      heap_.resize(n);
      data_ = heap_.data();
    }
  }
  ~SmallArray() {
    if (n_ <= N) std::destroy_n(data_, n_);
  }
  SmallArray(const SmallArray&) = delete;
  SmallArray& operator=(const SmallArray&) = delete;
  std::span<T> span() { return std::span<T>(data_, n_); }

 private:
  alignas(T) std::byte raw_[N * sizeof(T)];
  std::vector<T> heap_;
  T* data_;
  size_t n_;
};

}  // namespace

void KernelBase::launch(const LaunchConfig& config, std::span<const KernelArg> args) const {
  // The steady path (a specialization compiled before) allocates nothing: the key is built on
  // the stack and looked up as a view, the block is packed on the stack, and the backend gets
  // spans (StreamImpl::launch_packed).
  SmallArray<tl::ArgSpec, kInlineArgs> spec_storage(args.size());
  const std::span<tl::ArgSpec> specs = spec_storage.span();
  specialize(args, specs);
  rt::DeviceImpl* device = launch_device(config, args);
  if (config.options.num_warps < 1 || config.options.num_warps > 32 ||
      (config.options.num_warps & (config.options.num_warps - 1)) != 0)
    fail(ErrorKind::Argument, "kernel '", name_,
         "': num_warps must be a power of two in 1..32, got ", config.options.num_warps);
  if (config.options.num_stages < 1)
    fail(ErrorKind::Argument, "kernel '", name_, "': num_stages must be at least 1, got ",
         config.options.num_stages);
  if (config.options.maxnreg != 0 && (config.options.maxnreg < 16 || config.options.maxnreg > 255))
    fail(ErrorKind::Argument, "kernel '", name_,
         "': maxnreg must be 0 (no limit) or in 16..255, got ", config.options.maxnreg);
  const int cluster = config.options.cluster;
  if (cluster != 1 && cluster != 2 && cluster != 4 && cluster != 8)
    fail(ErrorKind::Argument, "kernel '", name_, "': cluster must be 1, 2, 4 or 8, got ", cluster);
  if (config.grid.x % static_cast<uint32_t>(cluster) != 0)
    fail(ErrorKind::Argument, "kernel '", name_, "': cluster = ", cluster,
         " groups the grid's x into clusters of ", cluster,
         " programs, but grid x = ", config.grid.x, " is not a multiple of it");
  const std::array<int64_t, 3>& max_grid = grid_limits(*device);
  const uint32_t grid[3] = {config.grid.x, config.grid.y, config.grid.z};
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] > max_grid[axis])
      fail(ErrorKind::Argument, "kernel '", name_, "': grid ", "xyz"[axis], " = ", grid[axis],
           " exceeds ", device->info().name, "'s limit of ", max_grid[axis], " (grid (", grid[0],
           ", ", grid[1], ", ", grid[2], "); limits ", max_grid[0], ", ", max_grid[1], ", ",
           max_grid[2], ")");
  LaunchOptions options = config.options;
  options.debug = options.debug || debug_from_env() || device->info().checks_bounds;
  const CompiledKeyView view{device, device->serial, specs, &options};
  const CompiledMap::value_type* entry = last_compiled_.load(std::memory_order_acquire);
  if (!entry || !CompiledEqual{}(view, entry->first)) {
    entry = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = compiled_.find(view);
      if (it != compiled_.end()) entry = &*it;
    }
    if (!entry) {
      CompiledKey key{device, device->serial, std::vector<tl::ArgSpec>(specs.begin(), specs.end()),
                      options};
      std::shared_ptr<const rt::CompiledKernel> compiled = compile_for(*device, key.specs, options);
      std::lock_guard<std::mutex> lock(mutex_);
      entry = &*compiled_.emplace(std::move(key), std::move(compiled)).first;
    }
    last_compiled_.store(entry, std::memory_order_release);
  }
  const std::shared_ptr<const rt::CompiledKernel>& compiled = entry->second;
  size_t buffers = 0;
  for (const KernelArg& a : args) buffers += a.kind == Kind::Buffer;
  SmallArray<std::shared_ptr<rt::Allocation>, kInlineArgs> keep_storage(buffers);
  const std::span<std::shared_ptr<rt::Allocation>> keep = keep_storage.span();
  size_t kept = 0;
  for (const KernelArg& a : args)
    if (a.kind == Kind::Buffer) keep[kept++] = a.buffer.allocation();
  if (config.grid.programs() == 0) return;  // an empty grid launches nothing
  SmallArray<std::byte, kInlineParamBytes> block_storage(compiled->params.size);  // zeroed
  const std::span<std::byte> block = block_storage.span();
  pack(*compiled, args, options.debug, block);
  std::shared_ptr<rt::StreamImpl> default_stream;
  const std::shared_ptr<rt::StreamImpl>* given = config.stream ? &config.stream->impl() : nullptr;
  if (!given) given = &(default_stream = device->default_stream());
  if ((*given)->capturing()) {  // recorded into the capture's graph, ordered when replayed
    (*given)->launch_packed(compiled, config.grid, block, keep);
    return;
  }
  std::shared_ptr<rt::StreamImpl> stream = rt::ordered_stream(*device, given);
  rt::CountEnqueued counted(*device, *stream);
  stream->launch_packed(compiled, config.grid, block, keep);
}

std::shared_ptr<const rt::CompiledKernel> KernelBase::compile_for(
    rt::DeviceImpl& device, const std::vector<tl::ArgSpec>& specs,
    const LaunchOptions& options) const {
  std::shared_ptr<const ir::Module> traced = module_for(specs);
  capture(*traced, options);
  return rt::compile_cached(device, *traced, options);
}

void KernelBase::capture(const ir::Module& traced, const LaunchOptions& options) const {
  const char* dir = std::getenv("TESSERA_CAPTURE");
  if (!dir || !*dir) return;
  const std::string text =
      "// options: " + describe(options, OptionsText::Capture) + "\n" + ir::print(traced);
  uint64_t h = 1469598103934665603ull;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  std::string stem = name_.empty() ? std::string("kernel") : name_;
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  const std::filesystem::path path = std::filesystem::path(dir) / (stem + "." + hex + ".tir");
  if (std::filesystem::exists(path)) return;
  // Written beside, then renamed: a reader never sees half a file, writers of one text agree.
  const std::filesystem::path tmp =
      path.string() + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(this));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) fail(ErrorKind::Runtime, "TESSERA_CAPTURE: cannot write ", tmp.string());
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    fail(ErrorKind::Runtime, "TESSERA_CAPTURE: cannot rename ", tmp.string(), ": ", ec.message());
}

size_t KernelBase::traced_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return traced_.size();
}

size_t KernelBase::compiled_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiled_.size();
}

size_t KernelBase::SpecHash::operator()(std::span<const tl::ArgSpec> specs) const {
  size_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const tl::ArgSpec& s : specs) {
    mix(static_cast<uint64_t>(s.dtype) | (uint64_t{s.divisible_by_16} << 8) |
        (uint64_t{s.equal_to_one} << 9) | (static_cast<uint64_t>(s.value.kind) << 10));
    mix(static_cast<uint64_t>(s.value.i));
    uint64_t fb;
    std::memcpy(&fb, &s.value.f, 8);
    mix(fb);
  }
  return h;
}

size_t KernelBase::CompiledHash::operator()(const CompiledKeyView& k) const {
  return SpecHash{}(k.specs) ^ (k.serial * 31) ^ static_cast<size_t>(options_hash(*k.options));
}

size_t KernelBase::CompiledHash::operator()(const CompiledKey& k) const {
  return (*this)(CompiledKeyView{k.device, k.serial, k.specs, &k.options});
}

bool KernelBase::CompiledEqual::operator()(const CompiledKeyView& a, const CompiledKey& b) const {
  return a.serial == b.serial && *a.options == b.options &&
         std::equal(a.specs.begin(), a.specs.end(), b.specs.begin(), b.specs.end());
}

}  // namespace tessera
