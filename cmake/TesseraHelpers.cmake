# \file Helpers shared by the folders' CMakeLists.
find_package(Threads REQUIRED)

# Project code builds with every warning as an error.
set(TESSERA_WARNINGS -Wall -Wextra -Werror -Wno-missing-field-initializers)
# GCC 12 at -O3 reports false -Wrestrict / -Wstringop-overflow on std::string concatenation and
# small std::vector copies (GCC bugs 105329, 105651); the ASan build checks the real thing.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND TESSERA_WARNINGS -Wno-restrict -Wno-stringop-overflow)
endif()
# Clang (19 on Debian 12) with GCC 12's libstdc++ reports libstdc++'s own call of the deprecated
# std::get_temporary_buffer inside std::stable_sort; GCC builds still report Tessera's own uses.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  list(APPEND TESSERA_WARNINGS -Wno-deprecated-declarations)
endif()

# tessera_object_library(<name> DIRS <dir>... [EXCLUDE <file or dir>...]): an OBJECT library of
# every .cpp under the dirs (globbed, so adding a file needs no CMake edit) but those excluded
# (paths relative to the current source folder; a folder excludes everything under it).
function(tessera_object_library name)
  cmake_parse_arguments(ARG "" "" "DIRS;EXCLUDE" ${ARGN})
  set(sources)
  foreach(dir ${ARG_DIRS})
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.cpp)
    list(APPEND sources ${found})
  endforeach()
  foreach(excluded ${ARG_EXCLUDE})
    cmake_path(ABSOLUTE_PATH excluded BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
    set(kept)
    foreach(src ${sources})
      cmake_path(IS_PREFIX excluded ${src} NORMALIZE under)
      if(NOT under)
        list(APPEND kept ${src})
      endif()
    endforeach()
    set(sources ${kept})
  endforeach()
  if(NOT sources)
    set(sources ${PROJECT_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(${name} OBJECT ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE ${TESSERA_WARNINGS})
  # A sanitizer build is Debug (-O0); the library's code, which every test runs, is built at -O1
  # there: the sanitized tests take about half the time, and the sanitizers see the same code.
  # GCC 12 with -fsanitize=address at -O1 reports two false positives that the Release build
  # (which keeps both warnings) does not: -Wmaybe-uninitialized inside std::variant's move
  # constructor, and -Wmismatched-new-delete on LLVM's GlobalVariable (its sized operator new and
  # delete are a matching pair that GCC's inlining at -O1 loses track of).
  if(TESSERA_SANITIZE)
    target_compile_options(${name} PRIVATE -O1)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${name} PRIVATE -Wno-maybe-uninitialized -Wno-mismatched-new-delete)
    endif()
  endif()
endfunction()

# Third-party libraries linked into libtessera (filled in by targets/ and runtime/).
add_library(tessera_third_party INTERFACE)
