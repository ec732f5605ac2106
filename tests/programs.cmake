# \file Plain test programs (not doctest): their exit status is the verdict.
# exit_with_queued_work launches kernels on vulkan:0 and on the host and returns from main
# without synchronizing; run five times (an exit-time crash can be intermittent), each run must
# exit 0. Without a Vulkan device it exits 77, which ctest reports as a skip.
if(TESSERA_HAS_VULKAN)
  add_executable(exit_with_queued_work ${CMAKE_CURRENT_SOURCE_DIR}/programs/exit_with_queued_work.cpp)
  target_compile_options(exit_with_queued_work PRIVATE ${TESSERA_WARNINGS})
  target_link_libraries(exit_with_queued_work PRIVATE tessera)
  target_include_directories(exit_with_queued_work PRIVATE ${PROJECT_SOURCE_DIR})
  set_target_properties(exit_with_queued_work PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                         ${CMAKE_BINARY_DIR}/tests)
  foreach(run 1 2 3 4 5)
    set(test "programs: exit with Vulkan work queued (run ${run})")
    add_test(NAME "${test}" COMMAND exit_with_queued_work)
    set_tests_properties("${test}" PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
endif()

# exit_with_static_objects launches a kernel made before main (a namespace-scope TESSERA_KERNEL)
# and, with "keep", leaves a buffer, a stream and an event in statics: on each device kind, the
# process must exit 0 after its results check (77: the device is absent, a skip).
add_executable(exit_with_static_objects ${CMAKE_CURRENT_SOURCE_DIR}/programs/exit_with_static_objects.cpp)
target_compile_options(exit_with_static_objects PRIVATE ${TESSERA_WARNINGS})
target_link_libraries(exit_with_static_objects PRIVATE tessera)
target_include_directories(exit_with_static_objects PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(exit_with_static_objects PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                          ${CMAKE_BINARY_DIR}/tests)
foreach(device host vulkan:0 cuda:0)
  foreach(mode kernel keep)
    set(test "programs: exit with static objects on ${device} (${mode})")
    add_test(NAME "${test}" COMMAND exit_with_static_objects ${device} ${mode})
    set_tests_properties("${test}" PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
endforeach()
