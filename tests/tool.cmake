# \file The `tessera dump` stages: every stage of a sample kernel prints what it names.
foreach(stage_check "ir;func @softmax_kernel" "simt;stage = \"simt\"" "spirv;OpEntryPoint GLCompute"
                    "ptx;mma.sync.aligned")
  list(GET stage_check 0 stage)
  list(GET stage_check 1 expect)
  set(kernel softmax_kernel)
  set(extra)
  if(stage STREQUAL "ptx")
    set(kernel matmul_relu_kernel)  # its f32 dot is TF32 mma.sync on sm_90
  endif()
  add_test(NAME "tool: tessera dump ${kernel} --stage ${stage}"
           COMMAND tessera_tool dump ${kernel} --stage ${stage})
  set_tests_properties("tool: tessera dump ${kernel} --stage ${stage}" PROPERTIES
                       PASS_REGULAR_EXPRESSION "${expect}")
endforeach()

# The plans as `tessera dump --stage layouts` prints them (the matmul's dot on sm_80 tensor cores).
add_test(NAME "tool: tessera dump matmul_relu_kernel --stage layouts"
         COMMAND tessera_tool dump matmul_relu_kernel --stage layouts --target cuda-sm_80)
set_tests_properties("tool: tessera dump matmul_relu_kernel --stage layouts" PROPERTIES
                     PASS_REGULAR_EXPRESSION "dot %[0-9]+: mma_sync m16n8k8.tf32, warps 2x2")

# An unknown TESSERA_DUMP word stops the compile with an error that lists the valid words.
add_test(NAME "tool: an unknown TESSERA_DUMP word is an error"
         COMMAND ${CMAKE_COMMAND} -E env TESSERA_DUMP=ir,layout
                 $<TARGET_FILE:tessera_tool> conformance --device simt:32 --filter plumbing/program_id/axis0)
set_tests_properties("tool: an unknown TESSERA_DUMP word is an error" PROPERTIES
                     PASS_REGULAR_EXPRESSION "unknown word 'layout' \\(valid: ir, passes, times, layouts")

# TESSERA_CAPTURE writes what a launch compiles; `tessera dump FILE` compiles it again.
if(TARGET sample_01_vector_add)
add_test(NAME "tool: a kernel captured from a launch dumps again"
         COMMAND sh -c "rm -rf capture && TESSERA_CAPTURE=capture \"$1\" --device host >/dev/null && \
                        \"$0\" dump capture/vector_add_kernel.*.tir --stage ptx --target cuda-sm_80"
                 $<TARGET_FILE:tessera_tool> $<TARGET_FILE:sample_01_vector_add>
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties("tool: a kernel captured from a launch dumps again" PROPERTIES
                     PASS_REGULAR_EXPRESSION "\\.entry vector_add_kernel")
endif()
