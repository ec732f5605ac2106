# \file Tessera as a package, from outside the tree (scripts/check-package): this build installed
# to a temporary prefix, examples/consumer built against it with find_package and with pkg-config
# (and with clang++-19 or -16 where installed) and run on host and vulkan:0, then through
# add_subdirectory: the subproject rules checked at configure time, and the program built (the
# library's objects from ccache) and run. Not in a sanitizer build: the consumer is built without
# -fsanitize.
if(TESSERA_INSTALL AND NOT TESSERA_SANITIZE)
  set(package_devices host)
  if(TESSERA_HAS_VULKAN)
    list(APPEND package_devices vulkan:0)
  endif()
  add_test(NAME "package: install, find_package, pkg-config, add_subdirectory"
           COMMAND ${CMAKE_COMMAND} -E env CXX=${CMAKE_CXX_COMPILER}
                   ${PROJECT_SOURCE_DIR}/scripts/check-package ${PROJECT_BINARY_DIR}
                   ${package_devices})
endif()
