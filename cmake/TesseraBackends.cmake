# \file Which backends this build holds (TESSERA_CUDA, TESSERA_VULKAN: ON, OFF or AUTO), decided
# once for runtime/CMakeLists.txt and the package files: TESSERA_HAS_CUDA, TESSERA_HAS_VULKAN, and
# TESSERA_<B>_ABSENT_WHY, the reason a left-out backend gives at run time. A backend's driver is
# opened at run time either way (dlopen), so these need headers and tools, never a driver.
foreach(backend CUDA VULKAN)
  string(TOUPPER "${TESSERA_${backend}}" choice)
  if(NOT choice MATCHES "^(ON|OFF|AUTO)$")
    message(FATAL_ERROR "TESSERA_${backend} is '${TESSERA_${backend}}': say ON, OFF or AUTO")
  endif()
  set(tessera_${backend}_choice ${choice})
endforeach()

# CUDA: cuda.h, for the driver API's types (libcuda.so.1 is never linked).
set(TESSERA_HAS_CUDA OFF)
if(NOT tessera_CUDA_choice STREQUAL "OFF")
  find_path(TESSERA_CUDA_INCLUDE cuda.h
            PATHS $ENV{CUDA_HOME}/include $ENV{CUDA_PATH}/include /usr/local/cuda/include)
  if(TESSERA_CUDA_INCLUDE)
    set(TESSERA_HAS_CUDA ON)
  elseif(tessera_CUDA_choice STREQUAL "ON")
    message(FATAL_ERROR "TESSERA_CUDA=ON but cuda.h was not found: the CUDA backend needs the "
                        "CUDA toolkit's headers (/usr/local/cuda/include, or set CUDA_HOME), "
                        "or configure with -DTESSERA_CUDA=OFF")
  endif()
  set(TESSERA_CUDA_ABSENT_WHY "TESSERA_CUDA=AUTO and cuda.h was not found at build time")
else()
  set(TESSERA_CUDA_ABSENT_WHY "TESSERA_CUDA=OFF")
endif()

# Vulkan: the Vulkan headers (libvulkan-dev) and glslc for the utility shaders.
set(TESSERA_HAS_VULKAN OFF)
if(NOT tessera_VULKAN_choice STREQUAL "OFF")
  find_path(TESSERA_VULKAN_INCLUDE vulkan/vulkan_core.h)
  find_program(TESSERA_GLSLC glslc)
  set(missing)
  if(NOT TESSERA_VULKAN_INCLUDE)
    list(APPEND missing "the Vulkan headers (vulkan/vulkan_core.h)")
  endif()
  if(NOT TESSERA_GLSLC)
    list(APPEND missing "glslc")
  endif()
  if(NOT missing)
    set(TESSERA_HAS_VULKAN ON)
  else()
    list(JOIN missing " and " missing)
    if(tessera_VULKAN_choice STREQUAL "ON")
      message(FATAL_ERROR "TESSERA_VULKAN=ON but ${missing} not found (Debian: libvulkan-dev, "
                          "glslc; scripts/install-deps installs them), or configure with "
                          "-DTESSERA_VULKAN=OFF")
    endif()
    set(TESSERA_VULKAN_ABSENT_WHY "TESSERA_VULKAN=AUTO and ${missing} not found at build time")
  endif()
else()
  set(TESSERA_VULKAN_ABSENT_WHY "TESSERA_VULKAN=OFF")
endif()

message(STATUS "Tessera backends: host, cuda ${TESSERA_HAS_CUDA}, vulkan ${TESSERA_HAS_VULKAN}")
