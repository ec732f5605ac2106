# \file The CUDA backend's sources see cuda.h (for its types only: libcuda.so.1 is opened at run
# time, never linked). Included from runtime/CMakeLists.txt.
find_path(TESSERA_CUDA_INCLUDE cuda.h
          PATHS $ENV{CUDA_HOME}/include $ENV{CUDA_PATH}/include /usr/local/cuda/include)
if(NOT TESSERA_CUDA_INCLUDE)
  message(FATAL_ERROR "cuda.h not found: the CUDA backend needs the CUDA toolkit's headers "
                      "(/usr/local/cuda/include, or set CUDA_HOME)")
endif()
file(GLOB tessera_cuda_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cuda/*.cpp)
set_source_files_properties(${tessera_cuda_sources} TARGET_DIRECTORY tessera_runtime PROPERTIES
  COMPILE_OPTIONS "-isystem;${TESSERA_CUDA_INCLUDE}")
