# \file Tessera as a package: the public headers under a tessera/ prefix, install rules, the CMake
# package (TesseraConfig.cmake, its version file, the exported Tessera::tessera) and the pkg-config
# file. Included at the end of the top-level CMakeLists.txt.
#
# Header layout, the same in the build tree (for add_subdirectory) and when installed:
#   include/tessera/tessera.h                 the one header a program includes
#   include/tessera/runtime/*.h               the runtime API it includes
#   include/tessera/core/{support,ir,lang,target}/*.h, *.def   what those include
# The public headers include each other by paths relative to themselves ("../ir/ir.h",
# "backend.h"), which resolve alike in the source tree, in the build tree's mirror and when
# installed; tessera.h includes <tessera/runtime/tessera.h>. So a consumer's one include path is
# the folder that holds tessera/ (${build}/include, or ${prefix}/include), every public header is
# reachable only as <tessera/...>, and no other folder of this repository (core/, runtime/) is
# visible: scripts/check-package checks that <core/ir/ir.h> and <runtime/buffer.h> do not compile.
# Tessera's own code keeps the repository root as its include path ("core/ir/ir.h").
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The public header set: runtime/tessera.h and everything it includes, by folder (the consumer
# check, scripts/check-package, compiles against exactly this set).
set(TESSERA_PUBLIC_HEADER_DIRS runtime core/support core/ir core/lang core/target)
set(tessera_public_headers)
foreach(dir ${TESSERA_PUBLIC_HEADER_DIRS})
  file(GLOB found CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}
       ${PROJECT_SOURCE_DIR}/${dir}/*.h ${PROJECT_SOURCE_DIR}/${dir}/*.def)
  list(APPEND tessera_public_headers ${found})
endforeach()

# Build tree: include/tessera/ links to tessera.h and each public header, so a subproject's
# consumer sees the installed layout and no other folder of this repository. The folders are real
# and only the files are links, so a header's "../ir/ir.h" names the mirror's link whether the
# compiler takes the includer's folder from the path it opened or from the link's target.
set(tessera_build_include ${PROJECT_BINARY_DIR}/include)
file(REMOVE_RECURSE ${tessera_build_include}/tessera)  # no link to a header that has gone
file(MAKE_DIRECTORY ${tessera_build_include}/tessera)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/tessera/tessera.h
     ${tessera_build_include}/tessera/tessera.h SYMBOLIC)
foreach(header ${tessera_public_headers})
  cmake_path(GET header PARENT_PATH dir)
  file(MAKE_DIRECTORY ${tessera_build_include}/tessera/${dir})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${header} ${tessera_build_include}/tessera/${header}
       SYMBOLIC)
endforeach()
foreach(library tessera tessera_runtime_lib)
  target_include_directories(${library} PUBLIC
    $<BUILD_INTERFACE:${tessera_build_include}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

if(NOT TESSERA_INSTALL)
  return()
endif()

set(tessera_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
install(TARGETS tessera tessera_runtime_lib EXPORT TesseraTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/include/tessera/tessera.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera COMPONENT development)
foreach(header ${tessera_public_headers})
  cmake_path(GET header PARENT_PATH dir)
  install(FILES ${PROJECT_SOURCE_DIR}/${header}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera/${dir} COMPONENT development)
endforeach()
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${tessera_cmake_dir}
        COMPONENT development)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesseraConfig.cmake INSTALL_DESTINATION ${tessera_cmake_dir})
# No ABI or API is promised across minor versions before 1.0 (the SONAME says the same).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
              ${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TesseraKernels.cmake
        DESTINATION ${tessera_cmake_dir} COMPONENT development)

# pkg-config: the prefix is found from the .pc file's own place, so `cmake --install --prefix`
# anywhere gives a working file.
set(tessera_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH tessera_pc_to_prefix /${tessera_pc_dir} /)
string(REGEX REPLACE "/$" "" tessera_pc_to_prefix "${tessera_pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera.pc.in ${PROJECT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tessera.pc DESTINATION ${tessera_pc_dir}
        COMPONENT development)

# NOTICE: the third-party code linked statically into libtessera, whose licenses ask for it.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
              ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

# The tool, when built, beside the library (found through its RUNPATH).
if(TARGET tessera_tool)
  file(RELATIVE_PATH tessera_bin_to_lib /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})
  set_target_properties(tessera_tool PROPERTIES INSTALL_RPATH "$ORIGIN/${tessera_bin_to_lib}")
  install(TARGETS tessera_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endif()
