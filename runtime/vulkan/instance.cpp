/// \file Creating the shared Vulkan 1.3 instance, with the validation layer and its messenger on
/// request (TESSERA_VULKAN_VALIDATION=1).
#include "runtime/vulkan/instance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tessera::rt::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool validation_requested() {
  const char* env = std::getenv("TESSERA_VULKAN_VALIDATION");
  return env && std::strcmp(env, "0") != 0 && *env != '\0';
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT types,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data,
                                          void* user) {
  // Loader chatter (general warnings about ICDs that find no hardware) is not a finding.
  bool general_only = types == VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  if (general_only && severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) return VK_FALSE;
  std::string text =
      severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning";
  if (data->pMessageIdName) text += std::string(" [") + data->pMessageIdName + "]";
  text += std::string(": ") + (data->pMessage ? data->pMessage : "");
  // Also on stderr, so that a program run with validation on shows what the layer found (the
  // samples' tests fail on this line).
  std::fprintf(stderr, "tessera: Vulkan validation %s\n", text.c_str());
  static_cast<ValidationLog*>(user)->add(std::move(text));
  return VK_FALSE;
}

/// The spec version of layer `name`, or 0 when it is not installed.
uint32_t layer_version(const GlobalFns& g, const char* name) {
  uint32_t count = 0;
  if (g.vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return 0;
  std::vector<VkLayerProperties> layers(count);
  if (g.vkEnumerateInstanceLayerProperties(&count, layers.data()) < 0) return 0;
  for (uint32_t i = 0; i < count; ++i)
    if (std::strcmp(layers[i].layerName, name) == 0) return layers[i].specVersion;
  return 0;
}

}  // namespace

void ValidationLog::add(std::string message) {
  std::lock_guard lock(mutex_);
  messages_.push_back(std::move(message));
}

std::vector<std::string> ValidationLog::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

void ValidationLog::clear() {
  std::lock_guard lock(mutex_);
  messages_.clear();
  reported_ = 0;
}

std::optional<std::string> ValidationLog::take_unreported() {
  std::lock_guard lock(mutex_);
  if (reported_ >= messages_.size()) return std::nullopt;
  std::string joined;
  for (size_t i = reported_; i < messages_.size(); ++i)
    joined += (joined.empty() ? "" : "\n") + messages_[i];
  reported_ = messages_.size();
  return joined;
}

std::shared_ptr<Instance> Instance::get(std::string* why) {
  // One instance for the whole process, never destroyed: destroying it unloads the drivers
  // (lavapipe takes its LLVM along) during exit, which has crashed processes elsewhere and turns
  // the drivers' reachable memory into leak-checker noise. Devices are still closed properly.
  static std::mutex mutex;
  static auto* shared = new std::shared_ptr<Instance>();
  std::lock_guard lock(mutex);
  if (*shared) return *shared;
  std::shared_ptr<Instance> inst(new Instance());
  if (!inst->create(why)) return nullptr;
  *shared = inst;
  return inst;
}

bool Instance::create(std::string* why) {
  loader_ = Loader::open(why);
  if (!loader_) return false;
  const GlobalFns& g = loader_->fns();
  uint32_t version = 0;
  if (g.vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_3) {
    *why = "the Vulkan loader supports only Vulkan " +
           std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
           std::to_string(VK_API_VERSION_MINOR(version)) + " (Tessera needs 1.3)";
    return false;
  }
  bool validate = validation_requested();
  if (validate) layer_version_ = layer_version(g, kValidationLayer);
  if (validate && layer_version_ == 0) {
    *why = std::string("TESSERA_VULKAN_VALIDATION=1 but ") + kValidationLayer +
           " is not installed (Debian: vulkan-validationlayers)";
    return false;
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = on_message;
  messenger.pUserData = &log_;
  if (!create_instance(validate ? &messenger : nullptr, why)) return false;
  if (!validate) return true;
  if (!fns_.vkCreateDebugUtilsMessengerEXT || !fns_.vkDestroyDebugUtilsMessengerEXT) {
    *why = "TESSERA_VULKAN_VALIDATION=1 but VK_EXT_debug_utils is unavailable";
    return false;
  }
  VkResult r = fns_.vkCreateDebugUtilsMessengerEXT(instance_, &messenger, nullptr, &messenger_);
  if (r != VK_SUCCESS) {
    messenger_ = VK_NULL_HANDLE;
    *why = describe_failure("vkCreateDebugUtilsMessengerEXT", r);
    return false;
  }
  return true;
}

bool Instance::create_instance(const VkDebugUtilsMessengerCreateInfoEXT* messenger,
                               std::string* why) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera";
  app.pEngineName = "tessera";
  app.apiVersion = VK_API_VERSION_1_3;
  // With validation: the layer, synchronization validation (it checks our barriers on the
  // transfers it can see) and a messenger that also covers instance creation.
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  features.pNext = messenger;
  const char* layers[] = {kValidationLayer};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  if (messenger) {
    info.pNext = &features;
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = layers;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = extensions;
  }
  VkResult r = loader_->fns().vkCreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    *why = describe_failure("vkCreateInstance", r);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
      *why = "no Vulkan 1.3 driver is installed (" + *why + ")";
    return false;
  }
  std::string missing;
  fns_ = loader_->load_instance(instance_, &missing);
  if (missing.empty()) return true;
  *why = "the Vulkan instance lacks " + missing;
  return false;
}

Instance::~Instance() {
  if (messenger_ != VK_NULL_HANDLE)
    fns_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_ != VK_NULL_HANDLE && fns_.vkDestroyInstance)
    fns_.vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
  uint32_t count = 0;
  check(fns_.vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(count);
  check(fns_.vkEnumeratePhysicalDevices(instance_, &count, devices.data()),
        "vkEnumeratePhysicalDevices");
  devices.resize(count);
  return devices;
}

}  // namespace tessera::rt::vk
