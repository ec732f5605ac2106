# \file Tessera as a package, from outside the tree (scripts/check-package): this build installed
# to a temporary prefix, its exported include path checked (include/ only), examples/consumer
# built against it with find_package and with pkg-config (and with clang++-19 or -16 where
# installed) and run on host and vulkan:0, examples/aot built with the package's
# tessera_add_kernels and Tessera::runtime and run on the same devices, then configured through add_subdirectory with the
# subproject rules checked; with each of these, <tessera/tessera.h> must compile and
# <core/ir/ir.h> and <runtime/buffer.h> must not. A second test builds the program with the
# library as a subproject (its objects from ccache) and runs it, or reports SKIP with the reason
# when they are not in ccache. Not in a sanitizer build: the consumer is built without
# -fsanitize.
if(TESSERA_INSTALL AND NOT TESSERA_SANITIZE)
  set(package_devices host)
  if(TESSERA_HAS_VULKAN)
    list(APPEND package_devices vulkan:0)
  endif()
  add_test(NAME "package: install, find_package, pkg-config, add_subdirectory, include paths"
           COMMAND ${CMAKE_COMMAND} -E env CXX=${CMAKE_CXX_COMPILER}
                   ${PROJECT_SOURCE_DIR}/scripts/check-package ${PROJECT_BINARY_DIR}
                   ${package_devices})
  set(package_subproject "package: the consumer built and run with the library as a subproject")
  add_test(NAME ${package_subproject}
           COMMAND ${CMAKE_COMMAND} -E env CXX=${CMAKE_CXX_COMPILER}
                   ${PROJECT_SOURCE_DIR}/scripts/check-package --subproject-build
                   ${PROJECT_BINARY_DIR} ${package_devices})
  set_tests_properties(${package_subproject} PROPERTIES SKIP_RETURN_CODE 77)
endif()
