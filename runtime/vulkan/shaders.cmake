# \file The Vulkan backend's utility shaders (GLSL in runtime/vulkan/shaders/), compiled by glslc
# at build time into SPIR-V word lists that runtime/vulkan/utility.cpp includes, so no shader
# files ship beside the library. Included from runtime/CMakeLists.txt when the backend is built
# (cmake/TesseraBackends.cmake found TESSERA_GLSLC and TESSERA_VULKAN_INCLUDE).

set(TESSERA_VULKAN_SHADER_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated)

# tessera_vulkan_shader(<name> <source> [glslc flags...]) -> generated/vulkan_shaders/<name>.inc
function(tessera_vulkan_shader name source)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/vulkan/shaders/${source})
  set(out ${TESSERA_VULKAN_SHADER_DIR}/vulkan_shaders/${name}.inc)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${TESSERA_GLSLC} --target-env=vulkan1.3 -O -mfmt=num ${ARGN} -o ${out} ${src}
    DEPENDS ${src}
    COMMENT "glslc ${source} -> ${name}.inc"
    VERBATIM)
  target_sources(tessera_runtime PRIVATE ${out})
endfunction()

tessera_vulkan_shader(fill fill.comp)
tessera_vulkan_shader(copy_vec4 copy.comp -DVEC4)
tessera_vulkan_shader(copy_u32 copy.comp)
# Only utility.cpp includes them: the other files' commands name no build folder, so a second
# build of the same tree (scripts/check-package's subproject) finds them in ccache.
set_property(SOURCE vulkan/utility.cpp APPEND PROPERTY INCLUDE_DIRECTORIES
             ${TESSERA_VULKAN_SHADER_DIR})
