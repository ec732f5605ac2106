/// \file PTX artifacts into kernels: the driver's JIT (cuLink) makes a cubin, cached on disk, which
/// is loaded per context; the launch facts (dynamic shared memory opt-in, the fault record, the
/// parameter layout the driver sees, whether a cluster fits, the register budget in
/// kernel_stats.cpp) are settled when the module is loaded.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/support/dump.h"
#include "core/support/error.h"
#include "runtime/artifact_cache.h"
#include "runtime/cuda/cubin_cache.h"
#include "runtime/cuda/device.h"

namespace tessera::rt::cuda {
namespace {

constexpr uint64_t kStaticSharedLimit = 48 * 1024;  // above: per-kernel opt-in

/// The artifact cache (runtime/artifact_cache.h) compiles and loads PTX for CUDA devices here.
[[maybe_unused]] const bool kArtifactBackend = register_artifact_backend({
    .owns =
        [](const DeviceImpl& device) {
          return dynamic_cast<const CudaDevice*>(&device) != nullptr;
        },
    .load =
        [](DeviceImpl& device, const target::Artifact& artifact) {
          return static_cast<CudaDevice&>(device).load(artifact);
        },
    .encodes_tensor_maps = true,
});

/// PTX -> cubin with the driver's JIT (the context must be current).
std::string jit(CudaDevice& dev, const std::shared_ptr<Context>& ctx, const target::Artifact& a) {
  const Driver& d = dev.driver();
  static thread_local char error_log[16384];
  static thread_local char info_log[4096];
  error_log[0] = info_log[0] = '\0';
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(sizeof error_log), info_log,
                    reinterpret_cast<void*>(sizeof info_log)};
  CUlinkState state = nullptr;
  dev.check_call(ctx, d.cuLinkCreate(4, options, values, &state), "cuLinkCreate", a.kernel);
  std::string cubin;
  // cuLinkAddData takes the PTX as `void*` (the C API has no const form); it only reads it.
  CUresult r = d.cuLinkAddData(state, CU_JIT_INPUT_PTX, const_cast<char*>(a.ptx.c_str()),
                               a.ptx.size() + 1, a.kernel.c_str(), 0, nullptr, nullptr);
  const char* call = "cuLinkAddData";
  void* image = nullptr;
  size_t size = 0;
  if (r == CUDA_SUCCESS) {
    call = "cuLinkComplete";
    r = d.cuLinkComplete(state, &image, &size);
  }
  if (r == CUDA_SUCCESS) cubin.assign(static_cast<const char*>(image), size);
  d.cuLinkDestroy(state);
  std::string log(error_log);
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0')) log.pop_back();
  dev.check_call(ctx, r, call, a.kernel, log);
  return cubin;
}

}  // namespace

CudaKernel::CudaKernel(CudaDevice* device, const target::Artifact& artifact, std::string cubin)
    : device_(device),
      cubin_(std::move(cubin)),
      // Only kernels that can fault (device_assert, checked accesses) declare the record; asking
      // the driver for a missing symbol is an API error that compute-sanitizer reports.
      has_fault_record_(artifact.ptx.find(ptx::kFaultRecordSymbol) != std::string::npos) {
  name = artifact.kernel;
  symbol_ = artifact.entry_symbol();
  who_ = "kernel '" + name + "'";
  params = artifact.params;
  threads_per_program = artifact.threads;
  shared_bytes = static_cast<uint32_t>(artifact.shared_bytes);
  cluster = artifact.cluster;
  // An artifact compiled elsewhere (ahead of time) may wait at its entry where this device's
  // driver cannot launch it so: it then launches in plain stream order (the wait is a no-op).
  dependent_launch =
      artifact.dependent_launch && device->target().has(target::Cap::DependentLaunch);
  for (const ir::ParamSlot& s : params.slots) param_end_ = std::max(param_end_, s.offset + s.size);
  check_tensor_map_slots(artifact.tensor_maps, params, name);
  tensor_maps_ = {artifact.tensor_maps, artifact.param_names, name};
  tensor_map_slots = static_cast<uint32_t>(artifact.tensor_maps.size());
}

CudaKernel::~CudaKernel() {
  std::lock_guard lock(mutex_);
  if (!module_ || !ctx_->alive) return;
  ContextScope scope(device_->driver(), *ctx_, std::nothrow);
  if (scope.entered()) device_->driver().cuModuleUnload(module_);
}

void CudaKernel::verify_params(CUfunction f) const {
  const Driver& d = device_->driver();
  if (!d.cuFuncGetParamInfo) {  // drivers before 12.4 cannot say: tensor maps go by pointer
    by_pointer_ = std::ranges::any_of(
        params.slots, [](const ir::ParamSlot& s) { return s.size == ir::kTensorMapBytes; });
    return;
  }
  bool same = true;
  for (size_t i = 0; i < params.slots.size(); ++i) {
    size_t offset = 0, size = 0;
    CUresult r = d.cuFuncGetParamInfo(f, i, &offset, &size);
    TESSERA_CHECK(r == CUDA_SUCCESS && size == params.slots[i].size, "kernel '", name,
                  "': the driver has parameter ", i, " of ", size, " bytes, the parameter block ",
                  params.slots[i].size);
    same &= offset == params.slots[i].offset;
  }
  by_pointer_ = !same;
  // Extra parameters past the block are not probed: asking for index n would be an API error
  // (CUDA_ERROR_INVALID_VALUE) that compute-sanitizer reports; the emitter writes exactly one
  // parameter per slot.
}

CUlaunchConfig CudaKernel::launch_config(Grid grid, CUstream stream, LaunchAttributes& attributes,
                                         bool dependent) const {
  attributes = {};
  unsigned n = 0;
  if (cluster > 1) {
    CUlaunchAttribute& a = attributes[n++];
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = cluster;
    a.value.clusterDim.y = 1;
    a.value.clusterDim.z = 1;
  }
  if (dependent && dependent_launch) {
    CUlaunchAttribute& a = attributes[n++];
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
  CUlaunchConfig config{};
  config.gridDimX = grid.x;
  config.gridDimY = grid.y;
  config.gridDimZ = grid.z;
  config.blockDimX = threads_per_program;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = shared_bytes;
  config.hStream = stream;
  config.attrs = attributes.data();
  config.numAttrs = n;
  return config;
}

CUresult CudaKernel::fits_cluster(CUfunction f, std::string& detail) const {
  // One cluster's grid: the query asks how many clusters of the launch's shape fit at once.
  LaunchAttributes attributes;
  const CUlaunchConfig config =
      launch_config(Grid(cluster), nullptr, attributes, /*dependent=*/false);
  int clusters = 0;
  const CUresult r = device_->driver().cuOccupancyMaxActiveClusters(&clusters, f, &config);
  if (r == CUDA_SUCCESS && clusters == 0)
    detail = who_ + ": a cluster of " + std::to_string(cluster) + " programs of " +
             std::to_string(threads_per_program) + " threads and " + std::to_string(shared_bytes) +
             " bytes of shared memory each cannot be co-scheduled on " + device_->info().name +
             ", " + device_->info().description +
             " (cuOccupancyMaxActiveClusters reports 0 clusters); lower cluster, BLOCK sizes or "
             "num_stages";
  return r;
}

CUfunction CudaKernel::function(const std::shared_ptr<Context>& ctx) const {
  std::lock_guard lock(mutex_);
  if (ctx_ == ctx && function_) return function_;
  const Driver& d = device_->driver();
  ContextScope scope(d, *ctx);
  CUmodule module = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  device_->check_call(ctx, d.cuModuleLoadData(&module, cubin_.data()), "cuModuleLoadData", name);
  if (dump_enabled("loads"))
    std::fprintf(
        stderr, "// loads cuda %s: cuModuleLoadData %.3f ms\n", name.c_str(),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  CUfunction f = nullptr;
  CUresult r = d.cuModuleGetFunction(&f, module, symbol_.c_str());
  if (r != CUDA_SUCCESS) d.cuModuleUnload(module);
  device_->check_call(ctx, r, "cuModuleGetFunction", name);
  if (shared_bytes > kStaticSharedLimit)
    device_->check_call(ctx,
                        d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             static_cast<int>(shared_bytes)),
                        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", name,
                        std::to_string(shared_bytes) + " bytes");
  // After the opt-in above: the query counts the kernel's dynamic shared memory.
  if (cluster > 1) {
    std::string refused;
    const CUresult r = fits_cluster(f, refused);
    if (r != CUDA_SUCCESS || !refused.empty()) d.cuModuleUnload(module);
    device_->check_call(ctx, r, "cuOccupancyMaxActiveClusters", name,
                        "clusters of " + std::to_string(cluster) + " programs");
    if (!refused.empty()) fail(ErrorKind::Unsupported, refused);
  }
  CUdeviceptr record = 0;
  size_t record_bytes = 0;
  if (has_fault_record_) {
    device_->check_call(
        ctx, d.cuModuleGetGlobal(&record, &record_bytes, module, ptx::kFaultRecordSymbol),
        "cuModuleGetGlobal(fault record)", name);
    uint64_t address = ctx->fault_device;
    device_->check_call(ctx, d.cuMemcpyHtoD(record, &address, sizeof address),
                        "cuMemcpyHtoD(fault record)", name);
  }
  verify_params(f);
  query_stats(f);
  ctx_ = ctx;
  module_ = module;
  function_ = f;
  return f;
}

void CudaDevice::check_cluster(const target::Artifact& a) const {
  if (a.cluster == 1) return;
  if (a.cluster == 0 || a.cluster > 8)
    fail(ErrorKind::Unsupported, info_.name, ": kernel '", a.kernel, "' asks for clusters of ",
         a.cluster, " programs; clusters hold 1 to 8");
  if (target_.sm < 90)
    fail(ErrorKind::Unsupported, info_.name, ": kernel '", a.kernel, "' runs in clusters of ",
         a.cluster, " programs, but ", info_.description,
         " has no thread-block clusters (sm_90 and newer)");
  if (!d_.cuLaunchKernelEx || !d_.cuOccupancyMaxActiveClusters)
    fail(ErrorKind::Unsupported, info_.name, ": kernel '", a.kernel, "' runs in clusters of ",
         a.cluster, " programs, but the CUDA driver (", d_.version / 1000, ".",
         d_.version % 1000 / 10,
         ") lacks cuLaunchKernelEx or cuOccupancyMaxActiveClusters (CUDA 11.8 or newer is "
         "needed)");
}

std::shared_ptr<const CompiledKernel> CudaDevice::load(const target::Artifact& artifact) {
  if (artifact.isa != "ptx" || artifact.ptx.empty())
    fail(ErrorKind::Argument, info_.name, ": kernel '", artifact.kernel, "' is a ", artifact.isa,
         " artifact; CUDA devices load PTX");
  if (artifact.subgroup != 32)
    fail(ErrorKind::Unsupported, info_.name, ": kernel '", artifact.kernel, "' was lowered for ",
         artifact.subgroup, "-lane subgroups; CUDA warps have 32");
  if (artifact.threads == 0 || static_cast<int>(artifact.threads) > target_.max_threads)
    fail(ErrorKind::Unsupported, info_.name, ": kernel '", artifact.kernel, "' needs ",
         artifact.threads, " threads per block; the device allows ", target_.max_threads);
  if (static_cast<int64_t>(artifact.shared_bytes) > target_.max_shared_bytes)
    fail(ErrorKind::Unsupported, info_.name, ": kernel '", artifact.kernel, "' needs ",
         artifact.shared_bytes, " bytes of shared memory; the device allows ",
         target_.max_shared_bytes, " per block (lower BLOCK sizes, num_warps or num_stages)");
  check_cluster(artifact);
  std::shared_ptr<Context> ctx = context();
  ContextScope scope(d_, *ctx);
  std::string key = cubin_key(artifact.ptx, info_.description, d_.version);
  std::shared_ptr<CudaKernel> kernel;
  if (std::optional<std::string> cached = cubin_read(key)) {
    kernel = std::make_shared<CudaKernel>(this, artifact, std::move(*cached));
    try {
      kernel->function(ctx);
    } catch (const Error& e) {
      // A fault, or a cluster the device cannot co-schedule: compiling again would not help.
      if (e.kind() == ErrorKind::DeviceFault || e.kind() == ErrorKind::Unsupported) throw;
      cubin_remove(key);  // a stale or damaged entry: compile again
      kernel.reset();
    }
  }
  if (!kernel) {
    kernel = std::make_shared<CudaKernel>(this, artifact, jit(*this, ctx, artifact));
    kernel->function(ctx);
    cubin_write(key, kernel->cubin());
  }
  dump_stats(*kernel, *this);
  return kernel;
}

}  // namespace tessera::rt::cuda
