/// \file The process's Vulkan instance (shared by every Vulkan device) and, when
/// TESSERA_VULKAN_VALIDATION=1, the Khronos validation layer with a messenger that records every
/// message so that the next synchronizing call fails with it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/vulkan/loader.h"

namespace tessera::rt::vk {

/// Validation messages, in arrival order. Each message is reported (thrown) once; all of them
/// stay readable until cleared.
class ValidationLog {
 public:
  void add(std::string message);
  std::vector<std::string> messages() const;
  void clear();
  /// The messages not reported yet, joined, marking them reported; nullopt when there are none.
  std::optional<std::string> take_unreported();

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
  size_t reported_ = 0;
};

class Instance {
 public:
  /// The shared instance, created on first use; nullptr with `why` set when Vulkan is unusable
  /// ("libvulkan.so.1 not found (...)", "vkCreateInstance failed: ...").
  static std::shared_ptr<Instance> get(std::string* why);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  const InstanceFns& fns() const { return fns_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }
  /// Whether the validation layer (if on) knows an extension that came with header `version`:
  /// an older layer reports the extension, and its structs, as errors.
  bool validation_knows(uint32_t version) const {
    return !validation() || layer_version_ >= version;
  }
  ValidationLog& log() { return log_; }
  std::vector<VkPhysicalDevice> physical_devices() const;

 private:
  Instance() = default;
  bool create(std::string* why);
  bool create_instance(const VkDebugUtilsMessengerCreateInfoEXT* messenger, std::string* why);

  std::shared_ptr<Loader> loader_;
  VkInstance instance_ = VK_NULL_HANDLE;
  InstanceFns fns_;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t layer_version_ = 0;  ///< of the validation layer, when on
  ValidationLog log_;
};

}  // namespace tessera::rt::vk
