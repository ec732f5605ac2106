/// \file Opening libvulkan.so.1 and loading the entry-point tables (one function per table, each
/// naming every entry point it could not find); VkResult names for error messages.
#include "runtime/vulkan/loader.h"

#include <dlfcn.h>

namespace tessera::rt::vk {
namespace {

/// Appends `name` to a comma-separated list.
void note_missing(std::string* list, const char* name) {
  if (!list->empty()) *list += ", ";
  *list += name;
}

}  // namespace

std::shared_ptr<Loader> Loader::open(std::string* why) {
  void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    *why = std::string("libvulkan.so.1 not found (") + (err ? err : "dlopen failed") + ")";
    return nullptr;
  }
  std::shared_ptr<Loader> loader(new Loader());
  loader->library_ = lib;
  loader->get_instance_proc_ =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!loader->get_instance_proc_) {
    *why = "libvulkan.so.1 has no vkGetInstanceProcAddr";
    return nullptr;
  }
  std::string missing;
#define X(name)                                                                        \
  loader->fns_.name =                                                                  \
      reinterpret_cast<PFN_##name>(loader->get_instance_proc_(VK_NULL_HANDLE, #name)); \
  if (!loader->fns_.name) note_missing(&missing, #name);
  TESSERA_VK_GLOBAL_FNS(X)
#undef X
  if (!missing.empty()) {
    *why = "libvulkan.so.1 lacks " + missing + " (a Vulkan 1.1+ loader is needed)";
    return nullptr;
  }
  return loader;
}

Loader::~Loader() {
  if (library_) dlclose(library_);
}

InstanceFns Loader::load_instance(VkInstance instance, std::string* missing) const {
  InstanceFns f;
#define X(name)                                                               \
  f.name = reinterpret_cast<PFN_##name>(get_instance_proc_(instance, #name)); \
  if (!f.name) note_missing(missing, #name);
  TESSERA_VK_INSTANCE_FNS(X)
#undef X
#define X(name) f.name = reinterpret_cast<PFN_##name>(get_instance_proc_(instance, #name));
  TESSERA_VK_OPTIONAL_INSTANCE_FNS(X)
#undef X
  return f;
}

DeviceFns Loader::load_device(const InstanceFns& ifns, VkDevice device, std::string* missing) {
  DeviceFns f;
#define X(name)                                                                   \
  f.name = reinterpret_cast<PFN_##name>(ifns.vkGetDeviceProcAddr(device, #name)); \
  if (!f.name) note_missing(missing, #name);
  TESSERA_VK_DEVICE_FNS(X)
#undef X
#define X(name) f.name = reinterpret_cast<PFN_##name>(ifns.vkGetDeviceProcAddr(device, #name));
  TESSERA_VK_OPTIONAL_DEVICE_FNS(X)
#undef X
  return f;
}

/// The VkResult codes a compute runtime can meet, by name.
#define TESSERA_VK_RESULTS(X)                \
  X(VK_SUCCESS)                              \
  X(VK_NOT_READY)                            \
  X(VK_TIMEOUT)                              \
  X(VK_EVENT_SET)                            \
  X(VK_EVENT_RESET)                          \
  X(VK_INCOMPLETE)                           \
  X(VK_ERROR_OUT_OF_HOST_MEMORY)             \
  X(VK_ERROR_OUT_OF_DEVICE_MEMORY)           \
  X(VK_ERROR_INITIALIZATION_FAILED)          \
  X(VK_ERROR_DEVICE_LOST)                    \
  X(VK_ERROR_MEMORY_MAP_FAILED)              \
  X(VK_ERROR_LAYER_NOT_PRESENT)              \
  X(VK_ERROR_EXTENSION_NOT_PRESENT)          \
  X(VK_ERROR_FEATURE_NOT_PRESENT)            \
  X(VK_ERROR_INCOMPATIBLE_DRIVER)            \
  X(VK_ERROR_TOO_MANY_OBJECTS)               \
  X(VK_ERROR_FORMAT_NOT_SUPPORTED)           \
  X(VK_ERROR_FRAGMENTED_POOL)                \
  X(VK_ERROR_UNKNOWN)                        \
  X(VK_ERROR_OUT_OF_POOL_MEMORY)             \
  X(VK_ERROR_INVALID_EXTERNAL_HANDLE)        \
  X(VK_ERROR_FRAGMENTATION)                  \
  X(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) \
  X(VK_PIPELINE_COMPILE_REQUIRED)            \
  X(VK_ERROR_VALIDATION_FAILED_EXT)          \
  X(VK_ERROR_INVALID_SHADER_NV)              \
  X(VK_ERROR_NOT_PERMITTED_KHR)

std::string_view result_name(VkResult result) {
  switch (result) {
#define X(name) \
  case name:    \
    return #name;
    TESSERA_VK_RESULTS(X)
#undef X
    default:
      return "VkResult";
  }
}

std::string describe_failure(std::string_view call, VkResult result, std::string_view kernel) {
  std::string s = std::string(call) + " failed: " + std::string(result_name(result)) + " (" +
                  std::to_string(static_cast<int>(result)) + ")";
  if (!kernel.empty()) s += " in kernel " + std::string(kernel);
  return s;
}

ErrorKind error_kind(VkResult result) {
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTATION:
      return ErrorKind::OutOfMemory;
    case VK_ERROR_DEVICE_LOST:
      return ErrorKind::DeviceFault;
    default:
      return ErrorKind::Runtime;
  }
}

void check(VkResult result, std::string_view call, std::string_view kernel) {
  if (result >= 0) return;
  throw Error(error_kind(result), describe_failure(call, result, kernel));
}

}  // namespace tessera::rt::vk
