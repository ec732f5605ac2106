// \file The doctest main shared by every test executable.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

/// LeakSanitizer (scripts/test's ASan build) ignores two guests that are not ours to fix:
/// - Debian's Khronos validation layer 1.3.239 leaks a few kilobytes of its own state per device.
/// - Mesa 22.3's lavapipe now and then leaks one small block of its own (160 bytes, seen once in a
///   CI run of "vulkan ordering: a launch on another stream then download() returns finished
///   data", which passed). Its allocations carry no frames of ours (the driver has no frame
///   pointers), so the rule names the driver. A Vulkan object that Tessera forgets to destroy is
///   still found: the validation layer's object tracker reports it when the device is destroyed
///   (runtime/vulkan/context.cpp prints such late messages).
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libVkLayer_khronos_validation.so\n"
         "leak:libvulkan_lvp.so\n";
}
