# \file The CUDA backend's sources see cuda.h (for its types only: libcuda.so.1 is opened at run
# time, never linked). Included from runtime/CMakeLists.txt when the backend is built
# (cmake/TesseraBackends.cmake found TESSERA_CUDA_INCLUDE).
file(GLOB tessera_cuda_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cuda/*.cpp)
set_source_files_properties(${tessera_cuda_sources} TARGET_DIRECTORY tessera_runtime PROPERTIES
  COMPILE_OPTIONS "-isystem;${TESSERA_CUDA_INCLUDE}")
