/// \file Kernels as compute pipelines: a compiled artifact becomes a shader module, a pipeline
/// layout with one push-constant range and a pipeline that requires the artifact's subgroup size
/// with full subgroups. Pipelines are created through a VkPipelineCache kept on disk
/// ($TESSERA_CACHE_DIR, default ~/.cache/tessera) per device UUID and driver version.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/target/artifact.h"
#include "runtime/backend.h"
#include "runtime/vulkan/context.h"

namespace tessera::rt::vk {

/// The on-disk pipeline cache: loaded when the device opens (a missing, foreign or corrupt file
/// is ignored), saved atomically (temporary file + rename) when it closes. A path that is not a
/// regular file (a directory, a FIFO, a device) is neither read nor written, with one warning.
class PipelineCache {
 public:
  explicit PipelineCache(std::shared_ptr<Context> ctx);
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  VkPipelineCache handle() const { return cache_.get(); }
  const std::string& path() const { return path_; }
  /// Bytes of cache data accepted from disk at open (0: none, or ignored).
  size_t loaded_bytes() const { return loaded_bytes_; }
  /// Writes the cache to disk now (also done on destruction). Failures are silent: a cache is
  /// an optimization.
  void save() const;

 private:
  std::shared_ptr<Context> ctx_;
  std::string path_;
  bool usable_ = false;  ///< path_ is set and was missing or a regular file at open
  size_t loaded_bytes_ = 0;
  UniquePipelineCache cache_;
};

/// A kernel loaded on a Vulkan device.
class VulkanKernel : public CompiledKernel {
 public:
  /// Checks the artifact against the device's limits (ErrorKind::Unsupported naming the kernel,
  /// the need and the limit) and creates its pipeline.
  VulkanKernel(std::shared_ptr<Context> ctx, VkPipelineCache cache,
               const target::Artifact& artifact);

  VkPipeline pipeline() const { return pipeline_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  uint32_t push_bytes() const { return push_bytes_; }    ///< the push-constant range (0: none)
  uint32_t param_bytes() const { return param_bytes_; }  ///< the whole parameter block
  int64_t grid_offset() const { return grid_offset_; }
  bool params_by_address() const { return params_by_address_; }
  /// Where the launch writes its fault record's address and tag (-1: the kernel has no fault
  /// channel), and what each fault code means (target::Artifact).
  int64_t fault_offset() const { return fault_offset_; }
  const std::vector<std::string>& faults() const { return faults_; }
  /// Where the launch writes its print buffer's address, capacity and tag (-1: the kernel does
  /// not print), and its print sites (target::Artifact).
  int64_t print_offset() const { return print_offset_; }
  const std::vector<target::Artifact::PrintSite>& prints() const { return prints_; }

  /// Destroys the pipeline and lets go of the device (VulkanDevice::close, at exit): a launch of
  /// the kernel afterwards is an error.
  void release();
  bool released() const { return !pipeline_; }

 private:
  std::shared_ptr<Context> ctx_;
  uint32_t push_bytes_ = 0;
  uint32_t param_bytes_ = 0;
  int64_t grid_offset_ = -1;
  bool params_by_address_ = false;
  int64_t fault_offset_ = -1;
  std::vector<std::string> faults_;
  int64_t print_offset_ = -1;
  std::vector<target::Artifact::PrintSite> prints_;
  UniqueShaderModule module_;
  UniquePipelineLayout layout_;
  UniquePipeline pipeline_;
};

}  // namespace tessera::rt::vk
