# \file Every sample is also a test: it must print PASS on the host interpreter, on the SIMT
# interpreter at subgroup sizes 8, 32 and 64, and on vulkan:0 (lavapipe in CI) with the Khronos
# validation layer on (a validation message fails the run; without the layer installed, as on
# the GPU machines, those five tests report as skipped, naming the missing layer).
if(TESSERA_BUILD_SAMPLES)
  file(GLOB sample_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/samples/[0-9][0-9]_*.cpp)
  set(sample_devices host simt:8 simt:32 simt:64)
  if(TESSERA_HAS_VULKAN)  # a build without the Vulkan backend has no vulkan:0
    list(APPEND sample_devices vulkan:0)
  endif()
  foreach(src ${sample_sources})
    get_filename_component(name ${src} NAME_WE)
    foreach(device ${sample_devices})
      set(test "sample: ${name} on ${device}")
      add_test(NAME "${test}" COMMAND sample_${name} --device ${device})
      set_tests_properties("${test}" PROPERTIES PASS_REGULAR_EXPRESSION "^PASS ")
      if(device STREQUAL "vulkan:0")
        set_tests_properties("${test}" PROPERTIES ENVIRONMENT "TESSERA_VULKAN_VALIDATION=1"
                             FAIL_REGULAR_EXPRESSION "tessera: Vulkan validation"
                             SKIP_REGULAR_EXPRESSION "VK_LAYER_KHRONOS_validation is not installed")
      endif()
    endforeach()
  endforeach()
endif()
