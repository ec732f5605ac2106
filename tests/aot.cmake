# \file The ahead-of-time example (examples/aot: kernels compiled at build time by
# tessera_add_kernels, launched through libtessera_runtime) checks its results against a reference
# on the host and SIMT interpreters, on vulkan:0 (lavapipe in CI, with the Khronos validation
# layer) and on cuda:0; a device this machine lacks exits 77, which ctest reports as a skip.
if(TESSERA_BUILD_SAMPLES)
  set(aot_devices host simt:8 cuda:0)
  if(TESSERA_HAS_VULKAN)
    list(APPEND aot_devices vulkan:0)
  endif()
  foreach(device ${aot_devices})
    set(test "aot: aot_example on ${device}")
    add_test(NAME "${test}" COMMAND aot_example ${device})
    set_tests_properties("${test}" PROPERTIES SKIP_RETURN_CODE 77)
    if(device STREQUAL "vulkan:0")
      set_tests_properties("${test}" PROPERTIES ENVIRONMENT "TESSERA_VULKAN_VALIDATION=1"
                           FAIL_REGULAR_EXPRESSION "tessera: Vulkan validation"
                           SKIP_REGULAR_EXPRESSION "VK_LAYER_KHRONOS_validation is not installed")
    endif()
  endforeach()
endif()
