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
